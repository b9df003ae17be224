#!/usr/bin/env python3
"""A recording and its replay run the program on one CPU with ptrev (a
ptrace stop across two CPUs of a VM costs an inter-processor interrupt:
bench/event_record_bench.sh shows the effect), and a fork child, which
ptrev lets go, gets the CPUs the program had. cpu_count prints both
counts, natively and under `ptrev record` (event and sw). A replay
emulates the program's syscalls, so its binding is read from outside:
/proc of the replaying process while gdb holds it at main. Skipped where
only one CPU is allowed.

usage: cpu_bind.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, shell_each_below_gdb  # noqa: E402


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    n = len(os.sched_getaffinity(0))
    if n < 2:
        print('SKIP: one CPU allowed')
        return 77
    prog = os.path.join(progdir, 'cpu_count')
    native = subprocess.run([prog], capture_output=True, text=True, timeout=60).stdout
    check(native == 'program %d\nchild %d\n' % (n, n), 'native: %r' % native)
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'cpu_%s.ptrev' % backend)
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            prog], capture_output=True, text=True, timeout=300)
        check(r.returncode == 0 and r.stdout == 'program 1\nchild %d\n' % n,
              '%s: the recorded program runs on one CPU, its fork child on all %d (%r)'
              % (backend, n, r.stdout))
    # The replay: gdb holds the replayed program at main; its affinity is
    # read from outside.
    trace = os.path.join(work, 'cpu_event.ptrev')
    script = os.path.join(work, 'affinity.gdb')
    with open(script, 'w') as f:
        f.write('set remotetimeout 60\n'
                'target remote | %s replay --stdio %s\n'
                'break main\nreverse-continue\n' % (ptrev, trace)
                + shell_each_below_gdb(
                    'cpu_count', 'echo "replayed $(grep -h Cpus_allowed_list /proc/$p/status)"'))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], capture_output=True,
                       text=True, timeout=300)
    got = re.findall(r'^replayed Cpus_allowed_list:\s*(\S+)$', g.stdout, re.M)
    check(got != [] and all(re.fullmatch(r'\d+', c) for c in got),
          'the replayed program runs on one CPU (%s)' % (got or g.stdout[-300:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
