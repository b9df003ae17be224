#!/usr/bin/env python3
"""Threads that block every signal, found at their STATE points (issue 11).

A replay lets a thread's passes through a hot loop go in runs timed by the
thread's CPU clock (cpu_timer.c), whose SIGPROF a thread that blocks every
signal would keep pending: each run then went on to the tracer's much
later stop, past the point, and the search counted the passes one by one
(3 min 21 s for this case; xz -T2: 306 s, then `<unavailable>` with "its
CPU-time timer's signal did not come"). The replay lets SIGPROF through
the thread's mask for its timed runs only.

blocked_pool's two workers block every signal and loop 3,000,000 times,
recorded with a 1 ms time slice until the recording holds a point; gdb
opening the replay has full state at the end and the program's result,
no timer signal is lost and no run goes past a point (the replay would
start again). The program is hot_loop's twin with the mask: hot_loop
itself stays as state_hot_loop and replay_cpu measure it.

usage: blocked_threads.py PTREV BLOCKED_POOL WORK_DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_said  # noqa: E402
from state_hot_loop import record_with_point  # noqa: E402


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'blocked.ptrev')
    points, printed = record_with_point(ptrev, trace, [prog, '3000000'], '1')
    check(points > 0, 'a recording with a STATE point in a worker that blocks every signal '
          '(%d)' % points)
    if points:
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 600', '-ex',
                            'target remote | %s replay --stdio %s' % (ptrev, trace),
                            '-ex', 'monitor why', '-ex', 'print sums', prog],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=600)
        out = g.stdout + g.stderr
        check(full_state_said(out), 'full state at the end (%r)' % out[-800:])
        check('$1 = {%s}' % ', '.join(printed.split()) in out,
              'the result as the program printed it (%r)' % printed)
        said = [l for l in out.splitlines() if 'did not come' in l or 'replaying again' in l]
        check(not said, 'no timer signal lost, no run past a point (%r)' % said)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
