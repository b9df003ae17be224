#!/usr/bin/env python3
"""A multi-threaded program's state in the past, in both threads, against a
live run under gdbserver (issue 12, item 3).

thread_diff has two threads take strict turns at step() under one mutex, so
every stop at step()'s last line has one true state whatever the
scheduler did: which thread stands there, its registers, each thread's own
frames (the waiting one is always inside pthread_cond_wait called from the
program's wait_for) with their arguments and locals, and the shared
results. The oracle is the same program run forwards under gdbserver,
stopping at each of the six turns. An event recording of the whole run,
replayed with `ptrev replay`, must show the same six states going back
from the end (reverse-continue: the last turn first, each in its own
thread) and again going forwards from the first (continue).

gdb's `record full` cannot serve as the oracle here: it cannot record the
thread's creation (clone3, syscall 435, is not in its table), and recording
from after it, gdb 13 loops on IGNORE events at the first futex wait and
never returns, with the other thread resumed outside the recording.

With PTREV_HOLD_ANCHOR_MIN=0 and PTREV_HOLD_ANCHOR_SAY set (the test
thread_diff_anchor), every state comes from a replay that ran natively to
a place inside the run holding the position, counted from the history,
and stepped from there (replay/timeline_anchor.c): the same states, and
ptrev's lines saying the anchors were reached.

usage: thread_diff.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402

TURNS = 6
ENV = {'PATH': '/usr/bin:/bin', 'HOME': '/nonexistent'}

# A gdb command printing what must be the same in both sessions: for every
# thread, by gdb's number, each of the program's own frames with its line,
# arguments and locals (glibc's frames inside pthread_cond_wait depend on
# timing and are left out); the stopped thread's frame registers; the
# program's shared variables.
DUMP = r'''
python
import gdb
OWN = ('step', 'wait_for', 'pass_to', 'take_turns', 'worker', 'main')
def frame_vars(f):
    out = []
    b = f.block()
    while b is not None:
        for s in b:
            if s.is_argument or s.is_variable:
                out.append('%s=%s' % (s.name, f.read_var(s)))
        if b.function is not None:
            break
        b = b.superblock
    return ' '.join(sorted(out))
class DumpTurn(gdb.Command):
    def __init__(self):
        super().__init__('dump-turn', gdb.COMMAND_USER)
    def invoke(self, arg, tty):
        cur = gdb.selected_thread()
        print('@turn stopped in thread %d' % cur.num)
        for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
            t.switch()
            f = gdb.newest_frame()
            while f is not None:
                fn = f.function()
                if fn is not None and fn.name in OWN:
                    print('@turn thread %d: %s:%d %s' % (t.num, fn.name, f.find_sal().line,
                                                          frame_vars(f)))
                f = f.older()
        cur.switch()
        for r in ('rip', 'rsp', 'rbp', 'rax'):
            print('@turn %s %s' % (r, gdb.parse_and_eval('$' + r)))
        for v in ('results', 'steps_taken', 'turn'):
            print('@turn %s = %s' % (v, gdb.parse_and_eval(v)))
DumpTurn()
end
'''


def stop_line(src):
    with open(src) as f:
        for n, line in enumerate(f, 1):
            if '/* stop: every local set */' in line:
                return n
    raise SystemExit('no stop line in ' + src)


def run_gdb(prog, target, moves, work, name):
    script = os.path.join(work, name + '.gdb')
    with open(script, 'w') as f:
        f.write('set pagination off\nset confirm off\n' + DUMP)
        f.write('target remote %s\n' % target)
        f.write('break thread_diff.c:%d\n' % stop_line(SRC))
        for m in moves:
            f.write('%s\necho @move\\n\ndump-turn\n' % m)
        f.write('info registers\n')
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    return g.stdout


def turns(out):
    """The @turn lines of each move, in order."""
    parts = out.split('@move\n')[1:]
    return [[l for l in p.splitlines() if l.startswith('@turn')] for p in parts]


SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'programs', 'thread_diff.c')


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)

    live = run_gdb(prog, '| env -i PATH=%s HOME=%s gdbserver --no-startup-with-shell - %s' % (ENV['PATH'], ENV['HOME'], prog),
                   ['continue'] * TURNS, work, 'gdbserver')
    oracle = turns(live)
    check(len(oracle) == TURNS and all(len(t) > 8 for t in oracle),
          'gdbserver stopped at %d turns with full state' % len(oracle))
    if len(oracle) != TURNS:
        print(live)
        return finish()
    stopped = [re.search(r'stopped in thread (\d+)', t[0]).group(1) for t in oracle]
    check(stopped == ['2', '1'] * 3, 'the turns alternate between the threads: %s' % stopped)

    trace = os.path.join(work, 'thread_diff.ptrev')
    r = record(ptrev, 'event', trace, [prog], env=ENV)
    check(r.returncode == 0, 'thread_diff recorded with the event backend (%d)' % r.returncode)
    moves = ['reverse-continue'] * TURNS + ['continue'] * (TURNS - 1)
    out = run_gdb(prog, '| %s replay --stdio %s' % (ptrev, trace), moves, work, 'replay')
    got = turns(out)
    want = oracle[::-1] + oracle[1:]
    for i, (m, w) in enumerate(zip(moves, want)):
        g = got[i] if i < len(got) else []
        if g != w:
            print('\n'.join(['  want: ' + l for l in w] + ['  got:  ' + l for l in g]))
        check(g == w, 'move %d (%s) stops at turn %d with the state gdbserver showed there'
              % (i + 1, m, oracle.index(w) + 1))
    check('<unavailable>' not in out, 'no register is unavailable at the end')
    if '<unavailable>' in out or len(got) != len(moves):
        print(out[-3000:])
    if os.environ.get('PTREV_HOLD_ANCHOR_SAY'):
        # Run with every held position reached through an anchor
        # (PTREV_HOLD_ANCHOR_MIN=0): the states above came that way.
        n = out.count('reached natively to its anchor')
        check(n >= TURNS and 'not reached natively' not in out and
              "is not the history's" not in out,
              'the held replays ran natively to their anchors (%d times), none failed' % n)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
