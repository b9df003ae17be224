/* GDB numbers signals its own way (enum gdb_signal); the remote protocol uses
 * those numbers, the kernel uses host numbers. Convert at the protocol edge. */
#ifndef PTREV_GDB_SIGNALS_H
#define PTREV_GDB_SIGNALS_H

/* Host signal -> gdb signal number (GDB_SIGNAL_UNKNOWN = 143 if none). */
int gdb_signal_from_host(int hostsig);
/* gdb signal number -> host signal, or 0 if it has no host equivalent. */
int gdb_signal_to_host(int gdbsig);

#endif
