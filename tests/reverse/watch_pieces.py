#!/usr/bin/env python3
"""reverse-continue with a watchpoint makes only the history of the
access's stretch (issue 11: materialise only the stretch that holds the
hit), as it does for breakpoints: write watchpoints, and read and access
ones (the debug registers' access search; the history made says whether
it was a read).

watch_writes writes its watched byte in turn by its own store and by a
read() into it, each followed by a long computation (one stretch of the
recording). A native replay with hardware watchpoints finds the last
store before the history made; the piece made ends at it (the
watchpoint's trap comes after the store, and the move looks at that
instruction too: timeline_end_after_access). The kernel's writes are not
seen by the debug registers: the recording says which events may have
written the watched bytes (a syscall's recorded writes, an address-space
change under them: replay/event_writes.c), and where such an event
comes after the last store, the piece holds it and the stretch after it,
from right before its syscall instruction (found by a breakpoint there:
history_event_write_piece).
An mmap and munmap elsewhere in every round are not such events.

The oracle is the same session on the whole history made at the first
move (PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0): every watchpoint
stop, value, register and backtrace the same.

usage: watch_pieces.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, gdb_replay, ptrev_lines  # noqa: E402
from ptrev_checks import record  # noqa: E402

# Back through rounds 5 (read), 4 (store), 3 (read), ..., to the start;
# around one read and one store, steps and registers; then on again.
SESSION = '''watch cell[0]
reverse-continue
bt
frame function main
print round
reverse-continue
frame function main
print round
print/d cell[0]
info registers rip rsp rax
reverse-stepi
info registers rip
stepi
print/d cell[0]
reverse-continue
frame function main
print round
bt
reverse-continue
frame function main
print round
info registers
reverse-continue
frame function main
print round
reverse-continue
frame function main
print round
reverse-continue
continue
frame function main
print round
continue
frame function main
print round
'''

# Back to round 1's read, then forwards with continue through the writes
# of rounds 2 to 5 and to the end: each found natively, the store's piece
# up to it, the read's its event and the stretch after it.
FORWARD = '''watch cell[0]
reverse-continue
reverse-continue
reverse-continue
reverse-continue
reverse-continue
frame function main
print round
continue
frame function main
print round
bt
continue
frame function main
print round
continue
frame function main
print round
info registers
continue
frame function main
print round
continue
continue
'''

# Read and access watchpoints on cell[1]: the program reads it in even
# rounds, the kernel's read() writes it in odd ones (an access in the
# history too). Back through rounds 5, 4 and 3, a step, on again; then a
# read watchpoint back from round 4.
ACCESS = '''awatch cell[1]
reverse-continue
frame function main
print round
reverse-continue
frame function main
print round
reverse-continue
frame function main
print round
info registers rip rax
reverse-stepi
info registers rip
continue
frame function main
print round
continue
frame function main
print round
delete
rwatch cell[1]
reverse-continue
frame function main
print round
reverse-continue
frame function main
print round
reverse-continue
frame function main
print round
bt
'''


def gdb(ptrev, trace, prog, env, session=SESSION):
    return gdb_replay(ptrev, trace, prog, session, dict(PTREV_BACKGROUND_HISTORY='0', **env),
                      'set pagination off\nset remotetimeout 120\n')


def to_hit(lines, move):
    """Instruction counts of the histories made for move that end at the
    hit (from its stretch's start or from a point inside it)."""
    pat = (r'ptrev: %s \(found natively\): made the history from (?:event \d+|an earlier '
           r'point) to the hit only, inside the stretch before event \d+: (\d+) instructions'
           % move)
    return [int(m.group(1)) for m in (re.match(pat, ln) for ln in lines) if m]


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'watch_writes')
    trace = os.path.join(work, 'watch.ptrev')
    r = record(ptrev, 'event', trace, [prog, '6', '30000'])
    check(r.returncode == 0, 'watch_writes 6 30000 recorded (%s)' % r.stderr[-300:])

    whole = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'})
    rounds = re.findall(r'^\$\d+ = (\d+)$', whole, re.M)
    check(whole.count('Hardware watchpoint 1: cell[0]') >= 7 and rounds[:2] == ['5', '4'],
          'the oracle stops at each round\'s write, the last first (%s)' % rounds)

    pieces = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                      'PTREV_HIT_POINT': '1'})
    lines = ptrev_lines(pieces)
    check(any(re.match(r'ptrev: event \d+ \(syscall read \(0\)\) may write the watched memory',
                       ln) for ln in lines)
          and any(ln.startswith('ptrev: going back to the last write to the watched memory '
                                '(found natively): made the history of events') for ln in lines),
          'a read() into the watched byte after the last store: the history of its event and '
          'the stretch after it (%s)' % lines)
    sizes = [int(m.group(1)) for m in (re.match(
        r'ptrev: going back to the last write to the watched memory \(found natively\): made '
        r'the history of events \d+ to \d+ only: (\d+) instructions', ln) for ln in lines) if m]
    check(sizes and all(n < 1000 for n in sizes),
          'that history begins right before the syscall, not with the computation before it '
          '(%s)' % sizes)
    stores = to_hit(lines, 'going back to the last breakpoint or watchpoint hit')
    check(stores, 'a store: the history up to it only (%s)' % lines)
    check(any(n < 1000 for n in stores),
          'a store right after the computation: the history from where its loop is left, not '
          'the loop (%s)' % stores)
    check(not any('mmap' in ln or 'munmap' in ln for ln in lines),
          'an mmap and munmap elsewhere are not writes to the watched byte (%s)' % lines)
    check(not any(ln.startswith('ptrev: going back past the history made') or
                  ln.startswith('ptrev: making the history of this') for ln in lines),
          'no longer tail, no whole history (%s)' % lines)
    check_shown_as(whole, pieces, 'every watchpoint stop, value, register and backtrace as on '
                   'the whole history')

    whole_on = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'}, FORWARD)
    rounds = re.findall(r'^\$\d+ = (\d+)$', whole_on, re.M)
    check(rounds == ['1', '1', '2', '3', '4'],
          'the oracle does the read again, then goes on round by round (%s)' % rounds)
    on = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                  'PTREV_HIT_POINT': '1'}, FORWARD)
    lines = ptrev_lines(on)
    check(any(re.match(r'ptrev: event \d+ \(syscall read \(0\)\) may write the watched memory '
                       r'where the debug registers do not see it: going on to it first', ln)
              for ln in lines)
          and any(ln.startswith('ptrev: going on to the next write to the watched memory (found '
                                'natively): made the history of events') for ln in lines),
          'going forwards, a read() into the watched byte: its event and the stretch after it '
          '(%s)' % lines)
    check(to_hit(lines, 'going on to the next breakpoint hit'),
          'going forwards, a store: the history up to it only (%s)' % lines)
    check(not any(ln.startswith('ptrev: going on past the history made') for ln in lines[2:]),
          'no piece grown step by step (%s)' % lines)
    check_shown_as(whole_on, on, 'going forwards, every watchpoint stop, value, register and '
                   'backtrace as on the whole history')

    whole_acc = gdb(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0'}, ACCESS)
    rounds = re.findall(r'^\$\d+ = (\d+)$', whole_acc, re.M)
    check(rounds == ['5', '4', '3', '3', '4', '3', '2', '1']
          and 'Hardware read watchpoint 2: cell[1]' in whole_acc,
          'the oracle stops at each access of cell[1], the program\'s reads and the '
          'kernel\'s writes (%s)' % rounds)
    acc = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                   'PTREV_HIT_POINT': '1'}, ACCESS)
    reads = []
    for kind, part in (('awatch', acc.split('Hardware read watchpoint 2')[0]),
                       ('rwatch', acc.split('Hardware read watchpoint 2', 1)[1])):
        lines = ptrev_lines(part)
        reads += to_hit(lines, 'going back to the last breakpoint or watchpoint hit')
        check(to_hit(lines, 'going back to the last breakpoint or watchpoint hit')
              and any(re.match(r'ptrev: event \d+ \(syscall read \(0\)\) may write the '
                               r'watched memory', ln) for ln in lines),
              '%s: the program\'s read, the history up to it only; the kernel\'s write, its '
              'event (%s)' % (kind, lines))
    check(any(n < 1000 for n in reads),
          'a read right after the computation: the history from where its loop is left (%s)'
          % reads)
    lines = ptrev_lines(acc)
    check(to_hit(lines, 'going on to the next breakpoint hit'),
          'awatch going forwards: the history up to the next read only (%s)' % lines)
    check(sum(ln.startswith('ptrev: going back past the history made') for ln in lines) <= 1,
          'no longer tails, but for the reverse-stepi before a syscall (%s)' % lines)
    check_shown_as(whole_acc, acc, 'read and access watchpoints: every stop, value, register '
                   'and backtrace as on the whole history')

    # The reference: no pieces for watchpoints (the longer tails before).
    tails = gdb(ptrev, trace, prog, {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                                     'PTREV_WATCH_PIECES': '0'})
    check(any(ln.startswith('ptrev: going back past the history made')
              for ln in ptrev_lines(tails)),
          'PTREV_WATCH_PIECES=0 makes longer tails (%s)' % ptrev_lines(tails))
    check_shown_as(whole, tails, 'the same with PTREV_WATCH_PIECES=0')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
