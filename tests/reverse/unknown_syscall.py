#!/usr/bin/env python3
"""A syscall the syscall table cannot describe is still recorded whole
(issue 12, item 2): sys_unknown makes TIOCGLCKTRMIOS on a pseudo-terminal,
which writes a struct the table does not know. With one thread running,
the recorder compares the program's writable memory before and after the
call and records what changed, and says so. Each backend's recording,
replayed through gdb, must show at done() the result and the bytes the
program printed (a sum over them), with every register and all memory
available; before, nothing after the call had state. With a second thread
alive the event recorder keeps the CPU through the call and compares the
same way (full state again); the sw recorder leaves the call unknown, and
its replay says why.

usage: unknown_syscall.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, full_state_said  # noqa: E402

SUM = ('python\nv = gdb.parse_and_eval("locked")\ns = 0\n'
       'for i in range(60):\n    s = (s * 31 + int(v[i])) & 0xffffffff\n'
       'print("@sum %d" % s)\nend\n')


def replayed_at_done(ptrev, prog, work, name, printed):
    """gdb on the replay of NAME.ptrev, at done(): does it show the result
    and the bytes the ioctl wrote as PRINTED, with full state?"""
    script = os.path.join(work, name + '.gdb')
    with open(script, 'w') as f:
        f.write('target remote | %s replay --stdio %s\nbreak done\nreverse-continue\n'
                'print result\n%smonitor why\n'
                % (ptrev, os.path.join(work, name + '.ptrev'), SUM))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    got = re.search(r'^@sum (\d+)$', g.stdout, re.M)
    ok = (len(printed) == 2 and got and got.group(1) == printed[1] and
          re.search(r'^\$1 = 0$', g.stdout, re.M) and
          full_state_said(g.stdout))
    if not ok:
        print(g.stdout[-2500:])
    return bool(ok)


def recorded_compared(ptrev, prog, work, backend, name, args):
    """Record PROG ARGS into NAME.ptrev; did the recorder compare memory
    for the ioctl, and say so? The program's printed words."""
    r = record(ptrev, backend, os.path.join(work, name + '.ptrev'), [prog] + args)
    printed = r.stdout.split()
    check(r.returncode == 0 and len(printed) == 2 and printed[0] == '0',
          '%s: recorded, the ioctl succeeded (%d, %r)' % (name, r.returncode, r.stdout))
    check(re.search(r"ioctl \(16, request 0x5456\) at position \d+ of thread \d+ is not in "
                    r"ptrev's syscall table: what it wrote \(\d+ places?\) was found by "
                    r"comparing", r.stderr) is not None,
          '%s: the recorder says how it recorded the unknown call (%r)'
          % (name, r.stderr.strip()))
    return printed


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    for backend in ('event', 'sw'):
        name = 'unknown-%s' % backend
        printed = recorded_compared(ptrev, prog, work, backend, name, [])
        check(replayed_at_done(ptrev, prog, work, name, printed),
              '%s: at done() in the replay, the result and the bytes the ioctl wrote as '
              'printed (%s), with full state' % (name, printed[1:]))
    # With a second thread alive, the event recorder keeps the CPU for the
    # call (no other thread runs its own code until it returns), so the
    # comparison is the call's alone: the same full state.
    name = 'unknown-threads-event'
    printed = recorded_compared(ptrev, prog, work, 'event', name, ['thread'])
    check(replayed_at_done(ptrev, prog, work, name, printed),
          '%s: at done() in the replay, the result and the bytes as printed (%s), with full '
          'state' % (name, printed[1:]))
    # The sw recorder does not (its threads take turns by instruction
    # counts): the comparison would take the other thread's writes for the
    # call's, so the call stays unknown, and its replay says why.
    trace = os.path.join(work, 'unknown-threads-sw.ptrev')
    r = record(ptrev, 'sw', trace, [prog, 'thread'])
    check(r.returncode == 0 and 'was found by comparing' not in r.stderr,
          'sw, two threads: recorded, the call not compared (%d, %r)'
          % (r.returncode, r.stderr.strip()))
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                        % (ptrev, trace), '-ex', 'monitor why', prog],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    check('Registers and memory are unavailable here' in g.stdout,
          'sw, two threads: the replay says why it has no state (%s)'
          % g.stdout.strip()[-600:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
