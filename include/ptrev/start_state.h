/* A traced process standing at its first instruction after execve, before
 * ld.so or the program ran: reading the start state the kernel gave it
 * (its /proc files, its auxiliary vector), and making it start the way
 * recordings need (the vDSO's clock functions turned into syscalls).
 *
 * Part of the ptrace layer because both sides need the same code at the
 * same moment: the recorder (server/record/record_startup.c writes the
 * state into the recording's META records) and the replayer
 * (replay/replayer_start.c launches the program again and checks that it
 * starts the same). */
#ifndef PTREV_START_STATE_H
#define PTREV_START_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The whole of /proc/PID/NAME (environ, auxv: files without a size), to
 * free(); *len its length. NULL when it cannot be read. */
uint8_t *start_state_read_proc(pid_t pid, const char *name, size_t *len);

/* The value of entry `type` (AT_*) in an auxv image (the bytes of
 * /proc/PID/auxv), 0 when it has none. */
uint64_t start_state_auxv_value(const uint8_t *auxv, size_t len, uint64_t type);

/* Keep the program's clock reads off kernel data: the vDSO's functions
 * read the vvar page, which no syscall log sees, so a replay would compute
 * other times. Each clock function of pid's vDSO is rewritten into
 * `mov $NR, %eax; syscall; ret`, as rr does: the program still sees the
 * vDSO (its layout, its libc set-up, its stack contents stay exactly as in
 * a normal run) but every clock read becomes a syscall that the recorder
 * logs and a replay reproduces. Done to the recorded process and, again,
 * to every replay of it. pid must stand at its first instruction after
 * execve. Returns 0, -1 if the vDSO could not be found or patched. */
int start_state_hide_vdso(pid_t pid);

#endif
