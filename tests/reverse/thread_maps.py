#!/usr/bin/env python3
"""Threads that map and unmap memory at the same time (thread_maps): a
replay runs mmap and munmap again, in the order the recording gives their
threads, so the recorder must let no other thread run while one is in such
a syscall, or the kernel's order and the recording's differ and the replay
gets other addresses ("replay diverged ... syscall 9 returned ..."). Each
of three event recordings, replayed through gdb, must show at its end the
sums and last addresses the program printed, with full state.

usage: thread_maps.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    for n in range(3):
        trace = os.path.join(work, 'maps%d.ptrev' % n)
        r = record(ptrev, 'event', trace, [prog])
        printed = r.stdout.split()
        check(r.returncode == 0 and len(printed) == 4, 'recording %d: thread_maps ran (%d, %r)'
              % (n, r.returncode, r.stdout))
        if len(printed) != 4:
            continue
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                            % (ptrev, trace), '-ex', 'print sums', '-ex', 'print/x last',
                            '-ex', 'monitor why', prog], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        want_sums = '{%s, %s}' % (printed[0], printed[1])
        want_last = '{%s, %s}' % (printed[2], printed[3])
        ok = (re.search(r'^\$1 = %s$' % re.escape(want_sums), g.stdout, re.M) and
              re.search(r'^\$2 = %s$' % re.escape(want_last), g.stdout, re.M) and
              'Every register and all memory are available here.' in g.stdout)
        check(bool(ok), 'recording %d: its replay ends with the sums %s and addresses %s the '
              'program printed, with full state' % (n, want_sums, want_last))
        if not ok:
            print(g.stdout[-3000:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
