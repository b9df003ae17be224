#!/usr/bin/env python3
"""A program that runs itself again through /proc/self/exe: the
recording that follows its exec is replayed, live and postmortem, with
full state. Before, the replay exec'd the string /proc/self/exe from
ptrev's own process, that is ptrev (`auxv entry 5 = 0xe, the recording
had 0xd: replay would differ`): no history, a reverse-continue refused.
Now the file it named runs first and execs /proc/self/exe from inside
(relaunch.c, syscall_inject_exec). The oracle: gdbserver, running
forwards to the same hit (depth(2), the fourth after the exec), shows
the same frames, argument and registers.

usage: exec_self.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, gdb_batch, record  # noqa: E402

SHOW = ['bt', 'p n', 'info registers rip rdi']


def shown(text):
    """The answers to SHOW after the last `+bt` (frames, the value,
    registers); stack addresses (the environment differs between
    servers) left out."""
    i = text.rfind('+bt')
    out = []
    for ln in text[i:].splitlines():
        if re.match(r'#\d|\$\d|rip |rdi ', ln):
            out.append(re.sub(r'0x7ff[0-9a-f]{9}', 'STACK', ln))
    return out


def main():
    ptrev, prog, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    # gdbserver: break depth, forwards to its fourth hit after the exec.
    want = shown(gdb_batch(prog, ['target remote | gdbserver - %s' % prog, 'break depth',
                                  'continue', 'continue', 'continue', 'continue'] + SHOW))
    check(want and '$1 = 2' in want, 'gdbserver stops at depth(2): %s' % want)

    # Live: on to depth(0), back to depth(2).
    text = gdb_batch(prog, ['target remote | %s serve --stdio -- %s' % (ptrev, prog),
                            'break depth'] + ['continue'] * 6 +
                     ['reverse-continue', 'reverse-continue'] + SHOW)
    got = shown(text)
    check(got == want and 'no history' not in text,
          'live: back to depth(2) after the exec of /proc/self/exe, as gdbserver shows '
          'it (%s; gdbserver %s; %s)' % (got, want, text.strip()[-600:]))

    # Postmortem: the recording replayed, from its end back to the same
    # hit.
    trace = os.path.join(work, 'exec_self.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0, 'recorded (%s)' % r.stderr[-300:])
    text = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace),
                            'break depth'] + ['reverse-continue'] * 3 + SHOW)
    got = shown(text)
    check(got == want and 'diverged' not in text,
          'postmortem: the recording from the exec of /proc/self/exe replayed to '
          'depth(2) (%s; gdbserver %s; %s)' % (got, want, text.strip()[-600:]))

    # The same after the whole history, made in the background, is
    # ready while a piece that begins inside a stretch (at the hit
    # before, PTREV_HIT_POINT=1) is in use: the next move takes the
    # whole history at the same place. Before, the piece grew to the end
    # from its stretch's event instead of its point, every position
    # shifted, and the reverse-continues ended at the program's start
    # (`No more reverse-execution history`), past depth(1) and depth(2).
    wait = ('python exec("import time\\nfor i in range(600):\\n'
            ' if \'was made in the background\' in gdb.execute(\'monitor history\', '
            'to_string=True): break\\n time.sleep(0.1)")')
    # The background starts only once the first move has ended
    # (PTREV_BACKGROUND_HISTORY=after-move): on a fast machine it was
    # done, 0.3 s, before gdb's first move, which then made no piece. The
    # first tail is one event (on a fast machine 30 us of the run held
    # depth(0)'s hit, and the move made no piece either).
    text = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace),
                            'break depth', 'reverse-continue', wait, 'reverse-continue',
                            'reverse-continue'] + SHOW,
                     env=dict(os.environ, PTREV_HIT_POINT='1', PTREV_TAIL_EVENTS='1',
                              PTREV_TAIL_US='1', PTREV_BACKGROUND_HISTORY='after-move'))
    got = shown(text)
    check(got == want and 'made in the background' in text and
          'inside the stretch' in text,
          'postmortem: the whole history taken where a piece from a hit stood '
          '(%s; gdbserver %s; %s)' % (got, want, text.strip()[-600:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
