#!/usr/bin/env python3
"""A recorded program that forks and vforks (e2e_fork: a fork child that
exits, a vfork child that execs /bin/true) behaves as it does natively:
the children are not recorded but run normally (each recorder traps rdtsc,
which a child inherits: ld.so's rdtsc after the exec killed it). Its
replay, which makes no children (the recorded pids are given back), shows
full state after the forks: reverse-continue from the end to work() and
the parent's variables there, compared with what the recorded run printed.

usage: fork_recorded.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_fork')
    native = subprocess.run([prog], capture_output=True, text=True, timeout=60)
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'fork_%s.ptrev' % backend)
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            prog], capture_output=True, text=True, timeout=300)
        check(r.returncode == native.returncode == 0 and r.stdout == native.stdout,
              '%s: recorded run does what the native one does (%r, exit %d)'
              % (backend, r.stdout.strip(), r.returncode))
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60',
                            '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace),
                            '-ex', 'break work', '-ex', 'reverse-continue', '-ex', 'up',
                            '-ex', 'print forked', '-ex', 'print vforked',
                            prog], capture_output=True, text=True, timeout=300)
        out = g.stdout + g.stderr
        got = re.findall(r'^\$\d+ = .*$', out, re.M)
        check(got[:2] == ['$1 = 0', '$2 = 0'] and 'diverged' not in out
              and 'cannot be replayed' not in out,
              '%s: the replay goes through fork and vfork and shows the parent\'s state after '
              'them (%s)' % (backend, got or out.strip().splitlines()[-3:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
