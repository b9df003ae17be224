#!/usr/bin/env python3
"""STATE points inside hot loops (replay/event_skip.c). The recorder stops
a thread wherever it is when another has waited a time slice, and a
replay finds such a point with a breakpoint at its PC, a trap (tens of
microseconds) at every pass since the thread's previous event; the
replay lets passes go uncounted where the registers and the stack words
the record holds say they cannot be the point.

hot_loop's two threads, each in a loop of 3,000,000 iterations (compiled
without optimisation: the counter is on the stack), recorded with a 1 ms
time slice until the recording holds a point:
  - gdb opening the replay sees full state at the end and the program's
    result, and no pass-by-pass search (ptrev's line "not reached yet",
    said at 2^17 traps, or a replay again counting every pass);
  - with PTREV_STATE_SKIP=0 (every pass counted, as before) the search
    takes minutes, and ptrev's line naming the thread, the point and the
    passes so far comes within a minute.
hot_loop with its loop nested in one whose counter is a global (nothing
the replay reads says which outer pass it is in), replayed with passes
let go from 4,096 ahead (PTREV_STATE_SKIP=4096; by default 65,536, where
the first run, timed by the thread's CPU clock, cannot go past a point):
a run goes past the point, or the pass the registers name is not the
point; the replay says so, replays again counting every pass, and has
full state and the result.

usage: state_hot_loop.py PTREV HOT_LOOP WORK_DIR
"""
import os
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, full_state_said  # noqa: E402


def descendants(pid):
    kids = {}
    for d in os.listdir('/proc'):
        try:
            with open('/proc/%s/stat' % d) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_tree(pid):
    for p in descendants(pid) + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def record_with_point(ptrev, trace, argv, slice_ms):
    """Record until the recording holds a STATE point (most do); how many."""
    env = dict(os.environ, PTREV_EVENT_SLICE_MS=slice_ms)
    points, out = 0, ''
    for _ in range(12):
        r = record(ptrev, 'event', trace, argv, env=env)
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True).stdout
        m = re.search(r'^state points: (\d+)$', info, re.M)
        points = int(m.group(1)) if m else 0
        out = r.stdout
        if r.returncode == 0 and points:
            break
    return points, out


def open_replay(ptrev, prog, trace, env=None):
    """gdb opens the replay, asks what it has and prints the result."""
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 600', '-ex',
                        'target remote | %s replay --stdio %s' % (ptrev, trace),
                        '-ex', 'monitor why', '-ex', 'print result', prog],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=600, env=env)
    return g.stdout + g.stderr


def result_of(printed):
    return '$1 = {%s}' % ', '.join(printed.split())


def full_state(out, printed, what):
    check(full_state_said(out),
          '%s: full state at the end (%r)' % (what, out[-800:]))
    check(result_of(printed) in out,
          '%s: the result as the program printed it (%r)' % (what, printed))


def counted_slowly(ptrev, prog, trace):
    """With every pass counted, ptrev's line comes; then gdb and everything
    below it are ended (the replay would go on looking for minutes)."""
    env = dict(os.environ, PTREV_STATE_SKIP='0')
    g = subprocess.Popen(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 120', '-ex',
                          'target remote | %s replay --stdio %s' % (ptrev, trace), prog],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    out = ''
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and 'not reached yet' not in out:
        ready, _, _ = select.select([g.stdout], [], [], 1)
        if ready:
            line = g.stdout.readline()
            if not line:
                break
            out += line
    kill_tree(g.pid)
    g.wait()
    said = re.search(r"ptrev: replay: thread \d+'s STATE point at 0x[0-9a-f]+ \(its event \d+\) "
                     r"is not reached yet: passed its PC \d+ times; the recorder stopped the "
                     r"thread inside a loop", out)
    check(said is not None, 'counting every pass, the replay says why it takes long (%r)'
          % out[-800:])


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)

    trace = os.path.join(work, 'hot.ptrev')
    points, printed = record_with_point(ptrev, trace, [prog, '3000000'], '1')
    check(points > 0, 'a recording with a STATE point in the loop (%d)' % points)
    if points:
        out = open_replay(ptrev, prog, trace)
        full_state(out, printed, 'hot loop')
        check('not reached yet' not in out and 'counting every pass' not in out,
              'no pass-by-pass search (%r)' % out[-1500:])
        counted_slowly(ptrev, prog, trace)

    # The nested loop: the model names the wrong outer pass. A point in
    # the first outer pass is found right away; record again until one
    # is not (most are).
    nested = os.path.join(work, 'nested.ptrev')
    missed = False
    for _ in range(6):
        points, printed = record_with_point(ptrev, nested, [prog, '120000', '20000'], '0.05')
        if not points:
            continue
        out = open_replay(ptrev, prog, nested, dict(os.environ, PTREV_STATE_SKIP='4096'))
        full_state(out, printed, 'nested loop')
        missed = re.search(r"ptrev: replay: thread \d+'s STATE point at 0x[0-9a-f]+ \(its "
                           r"event \d+\) was looked for letting passes of a loop go "
                           r"uncounted, and .*; replaying again, ", out) is not None
        if missed:
            check('counting every pass' in out, 'at last every pass counted (%r)' % out[-1500:])
            break
    check(missed, 'a nested loop\'s point the prediction missed, found again')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
