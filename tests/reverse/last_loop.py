#!/usr/bin/env python3
"""A recording whose last stretch is one long computation (last_loop: a
loop with no call and no syscall, 2-3 M instructions, then its output),
stepped back into from the end (issue 11).

- The first move makes the history of the recording's tail. Its first
  stretch is the loop: no PC in it is rare, so the tail begins where the
  loop is left (replay/event_split.c). Before, it began with the stretch,
  and the whole loop was stepped before the first move ended (13 s for a
  loop of 7 M instructions).
- Going back into the loop takes the whole history. Its replayer starts
  from the copies that making it left on the way (materialise_copies'
  checkpoints), the newest a few thousand instructions from the end.
  Before, it ran from the program's start with a trap at every pass of
  the loop (a minute for 7 M instructions). tests/replay/test_replayer.c
  (checkpoints_case) checks that the copies are taken.

The oracle is the same session on the whole history made at the first
move, with no copies (PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0
PTREV_HISTORY_CHECKPOINTS=0): every register, variable and backtrace the
same. And the value report() got is the one the program printed.

usage: last_loop.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, gdb_replay, ptrev_lines, record  # noqa: E402

# Back to report(), out of it to main after the loop, back into the
# loop's last passes, and on again.
SESSION = '''break write
reverse-continue
reverse-finish
print x
reverse-finish
reverse-stepi 30
info registers
print i
print x
bt
reverse-next 2
print i
stepi 3
info registers rip rax rdx
delete
continue
'''

ORACLE = {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0',
          'PTREV_HISTORY_CHECKPOINTS': '0'}


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'last_loop')
    trace = os.path.join(work, 'last_loop.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    printed = re.search(r'x=(\d+)', r.stdout)
    check(r.returncode == 0 and printed, 'last_loop recorded (%s)' % r.stdout.strip())
    if not printed:
        return finish()

    whole = gdb_replay(ptrev, trace, prog, SESSION, ORACLE)
    check('$1 = %s' % printed.group(1) in whole,
          'the oracle: report() got the value the program printed (%s)\n%s'
          % (printed.group(1), whole[-1500:]))
    check(re.search(r'^\$2 = \d+$', whole, re.M) and
          re.search(r'^#0 .*\bmain \(', whole, re.M),
          'the oracle stands in the loop with full state\n' + whole[-1500:])

    out = gdb_replay(ptrev, trace, prog, SESSION)
    lines = ptrev_lines(out)
    first = [ln for ln in lines if ln.startswith('ptrev: made the history of the last')]
    # From where the loop is left ("... and of the end of the stretch
    # before first: N instructions"), or, where the last stretch alone
    # takes the tail's time on a slower machine, that stretch only ("of
    # the last 1 event first: N instructions"): either way not the loop.
    m = re.search(r' first: (\d+) instructions', first[0] if first else '')
    check(m and int(m.group(1)) < 100000,
          'the first move makes the history of the tail from where the loop is left, not '
          'the loop (%s)' % lines)
    check_shown_as(whole, out, 'into the loop from the copies made with the whole history, '
                   'every register, variable and backtrace as the oracle')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
