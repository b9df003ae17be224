#!/usr/bin/env python3
"""A reverse-continue to a breakpoint hit early in a long stretch steps the
stretch only up to the hit (issue 11: materialise only what a move needs).

The native search finds the stretch of the last hit and how many hits came
before it there; one more native replay stops at that hit
(event_end_hit_point) and describes the place as a STATE point, and the
piece of the history made ends there (materialise_cut_at): what follows
the hit in its stretch is not stepped. tail_work's round_done comes right
after each round's write, at the start of the next round's computation.

The oracle is the same session on the whole history made at the first move
(PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0): every hit, register,
variable and backtrace the same, while moving around the hit; back past
the piece's start (into the write before: a longer piece that ends at the
same hit); forwards onto the piece's end by a step (the end is the hit,
not a move to make again); past it (a longer piece, to a point further
on in the stretch, each time four times further: event_end_point_after);
back to an earlier hit (another such piece) and on from there with
continue. PTREV_HIT_POINT=1 ends every piece at its hit. (A hit in the
stretch that the first tail begins inside, before its point:
tail_history.py's split session.)

usage: hit_piece.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, gdb_replay, ptrev_lines  # noqa: E402
from ptrev_checks import record  # noqa: E402

# Round 2's round_done lies in the last stretch (the tail); round 1's and
# round 0's each begin a round's computation, whose write ends the stretch.
SESSION = '''break round_done
reverse-continue
print round
reverse-continue
print round
print acc
print total
bt
info registers
reverse-stepi 3
info registers rip rsp
stepi 3
info registers rip rsp
print round
stepi
info registers rip
stepi 3000
info registers
print i
print acc
stepi 40000
print i
reverse-stepi 50
info registers rip rsp rax
reverse-continue
print round
reverse-continue
print round
info registers
reverse-stepi 30
info registers rip rsp rax
stepi 30
info registers rip rsp
print acc
finish
print total
continue
print round
continue
print round
continue
info registers rip
'''


def gdb(ptrev, trace, prog, env):
    # Growth from the piece's start, whatever its size (grow_start).
    return gdb_replay(ptrev, trace, prog, SESSION, dict(PTREV_BACKGROUND_HISTORY='0',
                                                        PTREV_GROW_FROM_END='0', **env),
                      'set pagination off\nset remotetimeout 120\n')


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'tail_work')
    trace = os.path.join(work, 'hit.ptrev')
    r = record(ptrev, 'event', trace, [prog, '3', '30000'])
    check(r.returncode in (0, 1) and 'round 2:' in r.stdout,
          'tail_work 3 30000 recorded (%s)' % r.stdout[-80:])

    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'})
    rounds = re.findall(r'^\$\d+ = (\d+)$', whole, re.M)
    check(rounds[:2] == ['2', '1'] and whole.count('Breakpoint 1, round_done') >= 6,
          'the oracle stops at round_done of rounds 2 and 1, and on (%s)' % rounds)

    hit = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                   'PTREV_HIT_POINT': '1'})
    lines = ptrev_lines(hit)
    to_hit = [re.match(r'ptrev: going back to the last breakpoint hit \(found natively\): made '
                       r'the history from event (\d+) to the hit only, inside the stretch '
                       r'before event (\d+): (\d+) instructions', ln) for ln in lines]
    to_hit = [m for m in to_hit if m]
    # A round of 30,000 passes is about a quarter of a million
    # instructions; the piece to round_done, right after the write, holds
    # a few thousand.
    check(len(to_hit) == 2 and all(int(m.group(3)) < 50000 for m in to_hit)
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'the reverse-continues to rounds 1 and 0 make the history up to each hit only, a '
          'few thousand instructions, not the whole history (%s)' % lines)
    inside = [int(m.group(1)) for m in (re.match(
        r'ptrev: going on past the history made, a longer piece: made the history from event '
        r'\d+ to a point after the hit only, inside the stretch before event \d+: (\d+) '
        r'instructions', ln) for ln in lines) if m]
    check(len(inside) >= 2 and inside[0] < inside[1] < 200000,
          'steps past the hit make the piece longer inside its stretch, each time more, '
          'never the whole stretch for them (%s)' % lines)
    check_shown_as(whole, hit, 'at and around the hits, every register, variable and backtrace '
                   'as on the whole history')

    return finish()


if __name__ == '__main__':
    sys.exit(main())
