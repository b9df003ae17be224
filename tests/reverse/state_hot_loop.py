#!/usr/bin/env python3
"""A replay that looks for a STATE point inside a hot loop says so while it
looks: a point is found by a trap at every pass of its PC since its
thread's previous event (tens of microseconds each), so a point the
recorder took inside a loop of millions of iterations can take minutes,
which gdb otherwise shows as a silent wait (bench/state_point_bench.sh
measures it). hot_loop's two threads, each in a loop of 3,000,000
iterations, recorded with a 1 ms time slice until the recording holds a
point (each does, most of the time); gdb opening its replay must see
ptrev's line naming the thread, the point and the passes so far within a
minute.

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
from ptrev_checks import check, finish, record  # noqa: E402


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


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'hot.ptrev')
    env = dict(os.environ, PTREV_EVENT_SLICE_MS='1')
    points = 0
    for _ in range(8):
        r = record(ptrev, 'event', trace, [prog, '3000000'], env=env)
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True).stdout
        m = re.search(r'^state points: (\d+)$', info, re.M)
        points = int(m.group(1)) if m else 0
        if r.returncode == 0 and points:
            break
    check(points > 0, 'a recording with a STATE point in the loop (%d)' % points)
    if not points:
        return finish()
    # gdb waits on the replay; read what it shows until the line comes,
    # then end gdb and everything below it (the replay would go on
    # looking for minutes).
    g = subprocess.Popen(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 120', '-ex',
                          'target remote | %s replay --stdio %s' % (ptrev, trace), prog],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
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
    check(said is not None, 'the replay says why it takes long (%r)' % out[-800:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
