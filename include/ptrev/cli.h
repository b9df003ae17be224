/* The command line: `ptrev serve|record|replay|info|decode ...`, each
 * subcommand's main (server/cli/). argv[0] is the subcommand; each returns
 * the process exit status. */
#ifndef PTREV_CLI_H
#define PTREV_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct trace_data;

int cli_main(int argc, char **argv);

/* `ptrev decode --raw PT [--image FILE[:OFF[-END]]:ADDR]... [--pages
 * ADDRFILE:DUMPFILE]... [--elf FILE[:BIAS]]... [--cpu F/M[/S]] [--count]`:
 * 0 when the trace decoded without errors, 1 on bad arguments, unreadable
 * input, or any decode error. */
int decode_raw_main(int argc, char **argv);
/* `ptrev decode FILE [--insn]` (options in any order): 0 when every thread
 * decoded without errors, 1 on bad arguments or as trace_decode_print. */
int trace_decode_main(int argc, char **argv);
/* `ptrev decode ...`: one of the two by its arguments. */
int decode_main(int argc, char **argv);
/* `ptrev record [--backend auto|pt|sw] [--psb-period BYTES] [--no-copy]
 * -o FILE -- PROG [ARGS...]`; argv[0] is "record". Returns the program's
 * exit status (128+signal when killed), 2 for usage and start-up errors,
 * 130/143 when ptrev itself was interrupted by SIGINT/SIGTERM. */
int record_main(int argc, char **argv);

/* Read the recording at path for a command that shows its history; an
 * event recording's history is made now (materialise.h). 0, or -1 with
 * err (td is then empty). */
int cli_open_recording(const char *path, struct trace_data *td, char *err, size_t errlen);
/* Say once on stderr that path ends inside a record (td->torn), and that
 * what precedes it is used; nothing for a whole file. */
void cli_say_torn(const char *path, const struct trace_data *td);
/* ...that its program read the TSC unseen (recorded where rdtsc does not
 * trap: ptrev/tsc_trap.h), where a replay's state can differ (replay
 * says it; decode shows the history, the same either way). */
void cli_say_untrapped_tsc(const char *path, const struct trace_data *td);
/* Was td recorded where rdtsc does not trap (its META says so)? */
bool cli_recorded_untrapped_tsc(const struct trace_data *td);

/* ptrev info --machine (machine_cmd.c): what this machine offers, on
 * stdout. */
int machine_info_main(void);

/* PROG as execve needs it in out: with a slash as given, else ./PROG when
 * the current directory has a regular file of that name (as gdbserver),
 * else the first executable regular file of that name in PATH. 0, or -1 when there is none
 * (out then holds PROG). */
int cli_find_program(const char *prog, char *out, size_t len);
/* The event recorder's STATE bounds (event_record_opts) from
 * PTREV_EVENT_SIGNAL_MS and PTREV_EVENT_SLICE_MS; 0 where unset. */
void cli_event_bounds(unsigned *signal_us, unsigned *slice_us);

/* May a recording be written to path (-o)? An existing file that is not
 * a recording only with force. 0, or -1 with err. */
int cli_check_output(const char *path, bool force, char *err, size_t errlen);

/* Make pgrp (the program's process group) the foreground group of the
 * terminal on ptrev's stderr, as gdbserver does, when ptrev holds that
 * terminal in the foreground; ptrev takes it back when it exits
 * (terminal.c). */
void cli_give_terminal(pid_t pgrp);

/* While `ptrev replay --stdio` reads and opens its recording, before the
 * session begins: a byte gdb passes over, on fd at once and every half
 * second, so that gdb, which has sent its first packet, waits for the ack
 * as long as the opening takes (stdio_keepalive.c). NULL where no thread
 * could be started. */
struct cli_keepalive;
struct cli_keepalive *cli_keepalive_start(int fd);
/* Stop it (NULL: nothing); nothing is sent after it returns. */
void cli_keepalive_stop(struct cli_keepalive *k);

#endif
