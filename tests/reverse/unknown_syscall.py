#!/usr/bin/env python3
"""A syscall the syscall table cannot describe is still recorded whole
(issue 12, item 2): sys_unknown makes TIOCGLCKTRMIOS on a pseudo-terminal,
which writes a struct the table does not know. With one thread running,
the recorder compares the program's writable memory before and after the
call and records what changed, and says so. Each backend's recording,
replayed through gdb, must show at done() the result and the bytes the
program printed (a sum over them), with every register and all memory
available; before, nothing after the call had state. With a second thread
alive the call stays unknown, and each replay says why.

usage: unknown_syscall.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402

SUM = ('python\nv = gdb.parse_and_eval("locked")\ns = 0\n'
       'for i in range(60):\n    s = (s * 31 + int(v[i])) & 0xffffffff\n'
       'print("@sum %d" % s)\nend\n')


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'unknown-%s.ptrev' % backend)
        r = record(ptrev, backend, trace, [prog])
        printed = r.stdout.split()
        check(r.returncode == 0 and len(printed) == 2 and printed[0] == '0',
              '%s: recorded, the ioctl succeeded (%d, %r)' % (backend, r.returncode, r.stdout))
        check(re.search(r"ioctl \(16, request 0x5456\) at position \d+ of thread \d+ is not in "
                        r"ptrev's syscall table: what it wrote \(\d+ places?\) was found by "
                        r"comparing", r.stderr) is not None,
              '%s: the recorder says how it recorded the unknown call (%r)'
              % (backend, r.stderr.strip()))
        script = os.path.join(work, 'unknown-%s.gdb' % backend)
        with open(script, 'w') as f:
            f.write('target remote | %s replay --stdio %s\nbreak done\nreverse-continue\n'
                    'print result\n%smonitor why\n' % (ptrev, trace, SUM))
        g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        got = re.search(r'^@sum (\d+)$', g.stdout, re.M)
        ok = (len(printed) == 2 and got and got.group(1) == printed[1] and
              re.search(r'^\$1 = 0$', g.stdout, re.M) and
              'Every register and all memory are available here.' in g.stdout)
        check(bool(ok), '%s: at done() in the replay, the result and the bytes the ioctl wrote '
              'as printed (%s), with full state' % (backend, printed[1:]))
        if not ok:
            print(g.stdout[-2500:])
    # With a second thread alive the comparison would take its writes for
    # the call's: the call stays unknown. An event recording's replay,
    # which shows the end first, then cannot open, and says why and what
    # to do; an sw recording's opens, with the reason in monitor why.
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'unknown-threads-%s.ptrev' % backend)
        r = record(ptrev, backend, trace, [prog, 'thread'])
        check(r.returncode == 0 and 'was found by comparing' not in r.stderr,
              '%s, two threads: recorded, the call not compared (%d, %r)'
              % (backend, r.returncode, r.stderr.strip()))
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                            % (ptrev, trace), '-ex', 'monitor why', prog],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        named = re.search(r'ioctl \(16, request 0x5456\) at position \d+ of thread \d+', g.stdout)
        if backend == 'event':
            ok = named and 'cannot re-execute this event recording to its end' in g.stdout and \
                '--backend sw' in g.stdout
        else:
            ok = 'Registers and memory are unavailable here' in g.stdout
        check(bool(ok), '%s, two threads: the replay says why it has no state (%s)'
              % (backend, g.stdout.strip()[-600:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
