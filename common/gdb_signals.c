#include "ptrev/gdb_signals.h"

#include <signal.h>
#include <stddef.h>

/* Pairs of (host signal, gdb signal) from gdb's signals.def numbering. */
static const struct {
	int host;
	int gdb;
} table[] = {
	{SIGHUP, 1},   {SIGINT, 2},     {SIGQUIT, 3},   {SIGILL, 4},
	{SIGTRAP, 5},  {SIGABRT, 6},    {SIGFPE, 8},    {SIGKILL, 9},
	{SIGBUS, 10},  {SIGSEGV, 11},   {SIGSYS, 12},   {SIGPIPE, 13},
	{SIGALRM, 14}, {SIGTERM, 15},   {SIGURG, 16},   {SIGSTOP, 17},
	{SIGTSTP, 18}, {SIGCONT, 19},   {SIGCHLD, 20},  {SIGTTIN, 21},
	{SIGTTOU, 22}, {SIGIO, 23},     {SIGXCPU, 24},  {SIGXFSZ, 25},
	{SIGVTALRM, 26}, {SIGPROF, 27}, {SIGWINCH, 28}, {SIGUSR1, 30},
	{SIGUSR2, 31}, {SIGPWR, 32},
#ifdef SIGSTKFLT
	/* gdb has no SIGSTKFLT; it reports it as unknown. */
#endif
};

enum { GDB_SIGNAL_REALTIME_33 = 45, GDB_SIGNAL_REALTIME_32 = 77,
       GDB_SIGNAL_REALTIME_64 = 78, GDB_SIGNAL_UNKNOWN = 143 };

int gdb_signal_from_host(int hostsig)
{
	if (hostsig == 0)
		return 0;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].host == hostsig)
			return table[i].gdb;
	/* Linux real-time signals: 32 is gdb's REALTIME_32, 33..63 are
	 * contiguous from 45, 64 and up continue from 78. */
	if (hostsig == 32)
		return GDB_SIGNAL_REALTIME_32;
	if (hostsig >= 33 && hostsig <= 63)
		return GDB_SIGNAL_REALTIME_33 + (hostsig - 33);
	if (hostsig == 64)
		return GDB_SIGNAL_REALTIME_64;
	return GDB_SIGNAL_UNKNOWN;
}

int gdb_signal_to_host(int gdbsig)
{
	if (gdbsig == 0)
		return 0;
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].gdb == gdbsig)
			return table[i].host;
	if (gdbsig == GDB_SIGNAL_REALTIME_32)
		return 32;
	if (gdbsig >= GDB_SIGNAL_REALTIME_33 && gdbsig <= GDB_SIGNAL_REALTIME_33 + 30)
		return 33 + (gdbsig - GDB_SIGNAL_REALTIME_33);
	if (gdbsig == GDB_SIGNAL_REALTIME_64)
		return 64;
	return 0;
}
