#!/usr/bin/env python3
"""A replay starts the program with the signal state it was recorded with
(ignored and blocked signals, inherited across exec), not with what
`ptrev replay`'s own starter passes on: gdb ignores SIGPIPE and SIGXFSZ in
what it starts, a shell may ignore others. sig_state reads its state and
makes a number of syscalls that depends on it; recorded with SIGUSR2
ignored (and SIGPIPE, SIGXFSZ at their defaults; ptrev starts a program
with no signal blocked, so SIGUSR1 blocked in its starter is not seen),
replayed under gdb, the replay must reach done() with the state the
recording printed (full state there needs the re-execution to follow the
recording).

usage: start_signals.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'sig_state')
    trace = os.path.join(work, 'sig_state.ptrev')
    if os.path.exists(trace):
        os.unlink(trace)

    def started_so():
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    for backend in ('event', 'sw'):
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            prog], capture_output=True, text=True, timeout=300,
                           preexec_fn=started_so)
        m = re.search(r'state=(\d+)', r.stdout)
        check(r.returncode == 0 and m is not None and m.group(1) == '1',
              '%s: recorded with SIGUSR2 ignored, nothing blocked (%r)'
              % (backend, r.stdout.strip()))
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60',
                            '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace),
                            '-ex', 'break done', '-ex', 'reverse-continue', '-ex', 'print state',
                            prog], capture_output=True, text=True, timeout=300)
        out = g.stdout + g.stderr
        check(re.search(r'^\$1 = 1$', out, re.M) is not None and 'diverged' not in out,
              '%s: the replay under gdb starts with the recorded signal state and reaches '
              'done() with it (%s)' % (backend, re.findall(r'^\$1 = .*|.*diverged.*', out, re.M)))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
