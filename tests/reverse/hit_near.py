#!/usr/bin/env python3
"""Breakpoint hits in the middle of a long stretch: only the way between
two hits is stepped (issue 11: materialise only what a move needs).

tail_work calls fold every 256 passes of a round's computation, one
stretch of the recording. Going back to fold's last hit in a round, the
piece of the history made begins at the hit before it in that stretch
(one more native replay stops there, event_end_hit_point, and describes
it as a STATE point), not at the stretch's start; stepping back past that
start begins at a hit further back, twice as many hits each time
(history_event_widen_back). Going on with continue from such a piece's
end, the next hit in the same stretch is found natively (its number
there: the piece's own, or counted by a native replay to the end where
the piece was grown past its hit or the breakpoints changed) and the
piece is the way from the end to it; into the next stretch, the piece
ends at that stretch's first hit. A hit at the point a search runs to is
not one before it (erp_run_to_point), so a reverse-continue from a
piece's start goes on to the hit before. gdb's step over the breakpoint
before a continue makes a piece that ends at a hit end at the next one
where that comes soon after (to_next_hit). Where the way to the hit from
the one before (or from the stretch's start) ran long, the piece begins
shortly before the hit instead, at a point found by time
(point_before_hit): tail_work's snprintf after each round's loop.

The oracle is the same session on the whole history made at the first
move (PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0): every hit,
register, variable and backtrace the same. PTREV_HIT_POINT=1 ends every
piece at its hit.

usage: hit_near.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, gdb_replay, ptrev_lines  # noqa: E402
from ptrev_checks import record  # noqa: E402

# round_done(1) begins round 2's stretch; fold's hits before it are round
# 1's, 117 in its stretch. Then on through round 2's with continue, with
# a second breakpoint half-way (other points: the hits before the end
# counted anew), and to the end.
SESSION = '''break round_done
reverse-continue
reverse-continue
print round
delete
break fold
reverse-continue
print i
bt
reverse-continue
print i
reverse-stepi 3
info registers rip rsp rax
print i
reverse-next
print i
print acc
continue
print i
continue
print i
continue
print i
print acc
bt
continue
print i
break round_done
continue
print i
info registers
reverse-continue
print i
set $n = 0
while $n < 40
  continue
  print i
  set $n = $n + 1
end
info registers
bt
delete
continue
info registers rip
'''


# The snprintf after each round's loop: one hit late in the round's
# stretch, none before it there.
LATE = '''break tail_work.c:38
reverse-continue
reverse-continue
print round
print acc
info registers
reverse-stepi 3
info registers rip rsp rax
reverse-next
print i
stepi 4
info registers rip
continue
print round
reverse-continue
print round
bt
'''


# Back to fold's hits near the end of round 1, then on with continue:
# gdb steps over the breakpoint first, and where the next hit comes soon
# after (a quarter of a first tail's run; PTREV_HIT_NEXT_US here: any)
# that step makes the piece end at it, so the continue needs no search.
ON = '''break fold
reverse-continue
reverse-continue
reverse-continue
print i
continue
print i
continue
print i
info registers
continue
print i
continue
info registers rip
'''

# The same, then stepping back past where a continue's piece began: a
# piece that took long to make grows from its end, where the thread
# stands (PTREV_GROW_FROM_END=1 here: always), not from its start again.
GROW = '''break fold
reverse-continue
reverse-continue
reverse-continue
print i
continue
print i
continue
print i
stepi
stepi
info registers rip
reverse-stepi
reverse-stepi
reverse-stepi
info registers rip rsp
print i
reverse-continue
print i
continue
print i
continue
print i
'''


def gdb(ptrev, trace, prog, env, session=SESSION):
    # Growth from the piece's start unless a session says otherwise
    # (grow_start; GROW).
    return gdb_replay(ptrev, trace, prog, session,
                      dict(dict(PTREV_BACKGROUND_HISTORY='0', PTREV_GROW_FROM_END='0'), **env),
                      'set pagination off\nset remotetimeout 120\n')


def made(lines, move, what):
    """Instruction counts of the histories made for move, from what."""
    pat = (r'ptrev: %s(?: \(found natively\))?: made the history from %s to the hit only, '
           r'inside the stretch before event \d+: (\d+) instructions' % (move, what))
    return [int(m.group(1)) for m in (re.match(pat, ln) for ln in lines) if m]


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'tail_work')
    trace = os.path.join(work, 'near.ptrev')
    r = record(ptrev, 'event', trace, [prog, '3', '30000'])
    check(r.returncode in (0, 1) and 'round 2:' in r.stdout,
          'tail_work 3 30000 recorded (%s)' % r.stdout[-80:])

    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'})
    values = re.findall(r'^\$\d+ = (\d+)$', whole, re.M)
    check(values[:4] == ['1', '29951', '29695', '29439'] and '255' in values,
          'the oracle stops at round 1\'s last folds and on in round 2 (%s)' % values)

    # A step past a piece's end grows it to a point, never to the next
    # hit (PTREV_HIT_NEXT_US=0), so that continues search (ON below).
    near = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                    'PTREV_HIT_POINT': '1', 'PTREV_HIT_NEXT_US': '0'})
    lines = ptrev_lines(near)
    # A round of 30,000 passes is about a quarter of a million
    # instructions, 256 passes a few thousand.
    back = made(lines, 'going back to the last breakpoint hit', 'an earlier point')
    check(back and all(n < 20000 for n in back),
          'the reverse-continue to fold makes the history from the hit before only, a few '
          'thousand instructions, not the stretch (%s)' % lines)
    wider = [ln for ln in lines if ln.startswith(
        'ptrev: going back past the history made: made the history from an earlier point')]
    check(wider, 'stepping back past that piece\'s start begins at an earlier hit, not at the '
          'stretch\'s start (%s)' % lines)
    first = made(lines, 'going on to the next breakpoint hit',
                 r'(?:event \d+|an earlier point)')
    check(first and all(n < 20000 for n in first),
          'a continue into the next stretch makes the history up to its first hit only (%s)'
          % lines)
    inside = [i for i, ln in enumerate(lines)
              if 'in the stretch the history made ends inside' in ln]
    check(inside and any(made(lines[i + 1:i + 2], 'going on to the next breakpoint hit',
                              'an earlier point') for i in inside),
          'a continue past a piece\'s end makes the way to the next hit in the same stretch '
          '(%s)' % lines)
    check_shown_as(whole, near, 'at and around the hits, every register, variable and '
                   'backtrace as on the whole history')

    # A first tail's run here is 1 us: the way to the snprintf, tens of
    # microseconds, runs far longer.
    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'}, LATE)
    tiny = {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1', 'PTREV_HIT_POINT': '1'}
    late = gdb(ptrev, trace, prog, tiny, LATE)
    lines = ptrev_lines(late)
    back = made(lines, 'going back to the last breakpoint hit', 'an earlier point')
    from_start = made(ptrev_lines(gdb(ptrev, trace, prog, dict(tiny, PTREV_HIT_NEAR='0'), LATE)),
                      'going back to the last breakpoint hit', r'event \d+')
    # (The last try for a point goes half the way back: with the timer's
    # overshoot, a piece of a little more than half the stretch.)
    check(back and from_start and all(n < from_start[0] * 3 // 4 for n in back),
          'a reverse-continue to a hit late in its stretch, none before it there, makes the '
          'history from a point shortly before it, not from the stretch\'s start (%s; from the '
          'stretch\'s start: %s)' % (lines, from_start))
    check_shown_as(whole, late, 'around that hit, every register, variable and backtrace as '
                   'on the whole history')

    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'}, ON)
    on = gdb(ptrev, trace, prog, dict(tiny, PTREV_HIT_NEXT_US='1000000'), ON)
    lines = ptrev_lines(on)
    grown = made(lines, 'going on past the history made, a longer piece',
                 r'(?:event \d+|an earlier point)')
    check(grown, 'the step over the breakpoint makes the piece end at the next hit (%s)' % lines)
    check_shown_as(whole, on, 'on from hit to hit, every register and variable as on the whole '
                   'history')

    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'}, GROW)
    for next_us in ('0', '1000000'):
        grow = gdb(ptrev, trace, prog, dict(tiny, PTREV_GROW_FROM_END='1',
                                            PTREV_HIT_NEXT_US=next_us), GROW)
        lines = ptrev_lines(grow)
        check(any(ln.startswith('ptrev: going on from where the history made ends: made the '
                                'history ') for ln in lines)
              and not any(ln.startswith('ptrev: going on past the history made, a longer '
                                        'piece: made the history from an earlier point')
                          for ln in lines),
              'the step over the breakpoint grows the piece from its end, not from its start '
              '(PTREV_HIT_NEXT_US=%s: %s)' % (next_us, lines))
        check_shown_as(whole, grow, 'grown from its end, then back past that (PTREV_HIT_NEXT_US'
                       '=%s): every register and variable as on the whole history' % next_us)

    return finish()


if __name__ == '__main__':
    sys.exit(main())
