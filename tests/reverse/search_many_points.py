#!/usr/bin/env python3
"""Native searches for more breakpoints than the debug registers hold
(issue 11). A reverse-continue or continue past the history made finds
the hit natively with the breakpoints armed; DR1-DR3 hold three, and gdb
adds its own breakpoint in the dynamic loader to every session on a
dynamically linked program, so two breakpoints of the user's, one of
them with two locations, were already too many: the search was not made
and the history was made by stepping instead (a python3 one-liner,
`break write` then `break PyDict_SetItem`: 185 s for one
reverse-continue, where the search takes 0.1 s). Breakpoints beyond the
registers are int3s now (replay/event_soft.c), as where the registers
do not trap.

tail_work (dynamically linked): breakpoints on round_done, write,
snprintf and abort (never hit), with gdb's own five points; reverse-
continues from the end and a continue. Every move that needs a search
finds its hit natively, and every stop, variable and register is as on
the whole history (made by stepping: the oracle).

usage: search_many_points.py PTREV TAIL_WORK WORK_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, gdb_replay, ptrev_lines  # noqa: E402
from ptrev_checks import record  # noqa: E402

SESSION = '''break round_done
break write
break snprintf
break abort
reverse-continue
print round
reverse-continue
bt 2
reverse-continue
bt 2
reverse-continue
print round
print acc
reverse-continue
reverse-continue
info registers rip rsp rax
continue
continue
print round
bt
'''


def main():
    ptrev, prog, work = sys.argv[1:4]
    prog = os.path.abspath(prog)
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'tail_work.ptrev')
    r = record(ptrev, 'event', trace, [prog, '4', '100000'])
    check(r.returncode in (0, 1) and 'round 3:' in r.stdout, 'tail_work recorded (%s)' % r.stdout)
    out = gdb_replay(ptrev, trace, prog, SESSION, {'PTREV_BACKGROUND_HISTORY': '0'})
    lines = ptrev_lines(out)
    found = [ln for ln in lines if '(found natively)' in ln]
    check(len(found) >= 3, 'the moves past the history made find their hits natively with '
          'more breakpoints than the debug registers hold (%s)' % lines)
    check(not any(ln.startswith('ptrev: cannot') for ln in lines),
          'nothing refused (%s)' % lines)
    check('Breakpoint 3, ' in out and 'Breakpoint 1, round_done' in out,
          'stops at snprintf and round_done\n' + out[-2000:])
    oracle = gdb_replay(ptrev, trace, prog, SESSION,
                        {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    check_shown_as(oracle, out, 'every stop, variable and register as on the whole history')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
