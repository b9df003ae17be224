#!/usr/bin/env python3
"""The end of an event recording is stepped back through before its whole
history is made (issue 11: materialisation newest first): the first move
makes the history of the recording's last stretches only (a tail,
re-executed natively up to where it begins and stepped from there) and
the replayer shows full state there from the same native re-execution.
Going back past the tail's start goes on from the same position in a
history that begins further back: for a reverse-continue, the tail that
begins with the stretch of the last breakpoint hit before (found by a
native replay with hardware breakpoints and watchpoints,
replay/event_search.c); for
steps, a tail about four times as long; instruction numbers (`monitor
when`) take the whole history. With no hit before, a reverse-continue
makes the history of the program's first stretches only; a continue past
a piece's end finds the next hit's stretch natively too, and a step
there makes the piece longer.

The oracle is the same session on the whole history made at the first
move (PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0): every register,
variable, backtrace and breakpoint hit must be the same, and so must the
instruction numbers `monitor when` gives once the whole history is there.
A tail of a fixed two events (PTREV_TAIL_EVENTS) makes the crossing
certain; the default tail (about 30 us of the program's run) must agree
too. A tail of 50 us begins inside the last round's computation, one
stretch of about a millisecond, at a point found again by its state
(replay/event_split.c): the same again there, and the reverse-continue
to the hit before that point makes the history up to the hit only. The
whole history is made only when needed in these sessions
(PTREV_BACKGROUND_HISTORY=0): one made in the background may be ready
before the first move, and then no tail is made. A multi-threaded
recording's tail from an event is refused (PTREV_TAIL_EVENTS): its tails
begin at a run of its thread order (tests/reverse/tail_threads.py).

usage: tail_history.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, gdb_replay, record  # noqa: E402
from ptrev_checks import shown as state  # noqa: E402

# At the end; back through the tail (the last two rounds' round_done lie
# in it); on past its start (the third); forwards again.
SESSION = '''info registers
bt
reverse-stepi 3
info registers rip rsp rbp rax
break round_done
reverse-continue
print round
print acc
bt
reverse-continue
print round
info registers
reverse-continue
print round
print acc
print total
bt
monitor when
reverse-stepi 7
info registers
continue
print round
print total
'''

# Back round by round (each round_done's stretch alone made, a piece),
# then forwards out of the piece (on in the tail from its start to the
# end) to the next two rounds' hits and the end: six hits in all, the
# stepi 8 back onto round 3's breakpoint among them.
PIECE_SESSION = '''break round_done
reverse-continue
print round
reverse-continue
print round
bt
info registers
reverse-continue
print round
reverse-stepi 5
info registers rip rsp
stepi 8
info registers rip
continue
print round
continue
print round
continue
info registers rip
'''

# Back to the program's start with no breakpoint on the way (the
# history of its first stretches only), forwards from there to round 0's
# hit and round 1's (each stretch found natively, a piece of its own),
# back to round 0's, on to round 2's write, single steps on past the end
# of its piece (which ends at the write's syscall) out of write, and over
# the lines after it.
START_SESSION = '''delete
reverse-continue
info registers
stepi 3
info registers rip rsp
reverse-stepi 2
info registers rip rsp
break round_done
continue
print round
bt
continue
print round
reverse-continue
print round
info registers
stepi 60
info registers rip rsp
bt
continue
print round
delete
break write
continue
info registers rip
stepi 30
info registers
bt
next
next
next
next
info registers rip
print round
'''

# Back to main from the end, and a look around there.
MAIN_SESSION = '''break main
reverse-continue
bt
info registers
print argc
print total
reverse-stepi 3
info registers rip rsp
stepi 5
info registers rip rsp
'''

# Back through the writes of total (round_done of rounds 5, 4 and 3).
WATCH_SESSION = '''watch total
reverse-continue
bt
reverse-continue
bt
print round
reverse-continue
print round
info registers rip rsp
'''

# Into round 5's round_done (the tail of the last event holds it), then
# single steps back across the write before it (the tail's start).
STEP_SESSION = '''break round_done
reverse-continue
print round
delete
reverse-stepi 40
info registers
bt
stepi 3
info registers rip rsp
'''

# The same through a tail that begins inside a stretch: at the end, back
# into round 1's round_done (in the tail), on to round 0's (past its
# start), forwards again.
SPLIT_SESSION = '''info registers
reverse-stepi 3
info registers
bt
break round_done
reverse-continue
print round
print acc
info registers
reverse-continue
print round
print acc
bt
monitor when
reverse-stepi 5
info registers
continue
print total
'''


def gdb(ptrev, trace, prog, body, env, timeout=120):
    return gdb_replay(ptrev, trace, prog, body, env, 'set pagination off\n%s'
                      % ('set remotetimeout %d\n' % timeout if timeout else ''))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'tail_work')
    trace = os.path.join(work, 'tail.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0 and 'round 5:' in r.stdout, 'tail_work recorded (%s)' % r.stdout[-80:])

    whole = gdb(ptrev, trace, prog, SESSION,
                {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    check('making the history of this event recording (re-executing it block by block)...'
          in whole and 'made the history of the last' not in whole,
          'the oracle makes the whole history at the first move')
    rounds = re.findall(r'^\$\d+ = (\d+)$', whole, re.M)
    check(len(rounds) >= 4 and rounds[0] == '5' and '4' in rounds and '3' in rounds,
          'the oracle stops in round_done of rounds 5, 4 and 3 (%s)' % rounds)
    check('Current instruction:' in whole and
          re.findall(r'^(\w+) +<unavailable>', whole, re.M) == ['rcx', 'r11'],
          'the oracle has full state everywhere (but rcx and r11 before exit_group: %s)'
          % re.findall(r'^(\w+) +<unavailable>', whole, re.M))

    # The whole history made only when needed: a background one could be
    # ready before the first move (then no tail is made).
    tail = gdb(ptrev, trace, prog, 'monitor history\n' + SESSION,
               {'PTREV_TAIL_EVENTS': '2', 'PTREV_BACKGROUND_HISTORY': '0'})
    check('ptrev: made the history of the last 2 events first:' in tail,
          'the first move makes the history of the last two events first (%s)'
          % re.findall(r'^ptrev: .*', tail, re.M))
    lines = re.findall(r'^ptrev: .*', tail, re.M)
    wider = [i for i, ln in enumerate(lines) if re.match(
        r'ptrev: going back (past the history made|to the last breakpoint hit \(found '
        r'natively\)): made the history (of|from) ', ln)]
    whole_at = [i for i, ln in enumerate(lines)
                if ln.startswith('ptrev: making the history of this event recording')]
    check(wider and whole_at and wider[-1] < whole_at[0],
          'the reverse-continues past the tail make the history of more stretches; only monitor '
          'when makes the whole history (%s)' % lines)
    told = [ln for ln in state(tail) if not ln.startswith('The history of')]
    check(state(whole) == told,
          'every register, variable, backtrace, hit and instruction number as on the whole '
          'history\n' + '\n'.join('%s | %s' % (a, b) for a, b in zip(state(whole), told)
                                  if a != b)[:3000])

    # A reverse-continue to main from the end: the last hit lies near the
    # program's start; the history made is that of its stretch only (a
    # piece), found natively. Steps there stay inside it.
    mwhole = gdb(ptrev, trace, prog, MAIN_SESSION,
                 {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    main_tail = gdb(ptrev, trace, prog, MAIN_SESSION,
                    {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1',
                     'PTREV_BACKGROUND_HISTORY': '0'})
    lines = re.findall(r'^ptrev: .*', main_tail, re.M)
    # (Its stretch whole, or up to the hit only where the stretch runs
    # long: hit_point_worth.)
    piece = [re.match(r'ptrev: going back to the last breakpoint hit \(found natively\): made '
                      r'the history (?:of events (\d+) to (\d+) only|from event (\d+) to the '
                      r'hit only, inside the stretch before event (\d+)): ', ln) for ln in lines]
    piece = [m.groups()[:2] if m.group(1) else m.groups()[2:] for m in piece if m]
    check(len(piece) == 1 and piece[0][0] == piece[0][1]
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'a reverse-continue to main makes the history of its hit\'s stretch only, found '
          'natively, not the whole history (%s)' % lines)
    check(state(mwhole) == state(main_tail) and 'main (' in main_tail,
          'at main, every register, variable and backtrace as on the whole history\n'
          + '\n'.join('%s | %s' % (a, b) for a, b in zip(state(mwhole), state(main_tail))
                      if a != b)[:3000])

    # Pieces: back round by round, then forwards past a piece's end.
    pwhole = gdb(ptrev, trace, prog, PIECE_SESSION,
                 {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    ptail = gdb(ptrev, trace, prog, PIECE_SESSION,
                {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1', 'PTREV_BACKGROUND_HISTORY': '0'})
    lines = re.findall(r'^ptrev: .*', ptail, re.M)
    check(len([ln for ln in lines if ln.startswith('ptrev: going back to the last breakpoint '
                                                   'hit')]) == 2
          and any(ln.startswith('ptrev: going on to the next breakpoint hit (found natively): '
                                'made the history of events') for ln in lines)
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'two reverse-continues past the tail make a piece each; a continue past the '
          'piece\'s end finds the next hit\'s stretch natively, a piece too (%s)' % lines)
    hits = sum(ln.startswith('Breakpoint 1, round_done') for ln in state(ptail))
    check(state(pwhole) == state(ptail) and hits == 6,
          'through pieces and out of them, every hit, register and backtrace as on the whole '
          'history\n' + '\n'.join('%s | %s' % (a, b) for a, b in
                                   zip(state(pwhole), state(ptail)) if a != b)[:3000]
          + '\n(%d and %d lines, %d hits)' % (len(state(pwhole)), len(state(ptail)), hits))

    # The program's start: no hit before, so only its first stretches are
    # made; forwards, each hit's stretch found natively (sessions without
    # pieces made the whole history for both).
    owhole = gdb(ptrev, trace, prog, START_SESSION,
                 {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    otail = gdb(ptrev, trace, prog, START_SESSION,
                {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1', 'PTREV_BACKGROUND_HISTORY': '0',
                 'PTREV_GROW_FROM_END': '0'})
    lines = re.findall(r'^ptrev: .*', otail, re.M)
    check(any(re.match(r'ptrev: going back to the program\'s start: made the history of '
                       r'events 0 to \d+ only: ', ln) for ln in lines)
          and len([ln for ln in lines if ln.startswith(
              'ptrev: going on to the next breakpoint hit (found natively): made the history '
              'of events')]) >= 2
          and any(ln.startswith('ptrev: going on past the history made, a longer piece: made '
                                'the history of events') for ln in lines)
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'a reverse-continue with no hit before makes the history of the program\'s first '
          'stretches only; continues from there find each hit\'s stretch natively; steps '
          'past a piece\'s end make it longer (%s)'
          % lines)
    orounds = re.findall(r'^\$\d+ = (\d+)$', owhole, re.M)
    check(orounds == ['0', '1', '0', '1', '3'] and 'No more reverse-execution history.' in owhole
          and state(owhole) == state(otail),
          'at the program\'s start and on to rounds 0 and 1 and back, every register, hit '
          'and backtrace as on the whole history (%s)\n' % orounds
          + '\n'.join('%s | %s' % (a, b) for a, b in zip(state(owhole), state(otail))
                      if a != b)[:3000])

    # A watchpoint: total is written by every round's round_done; the
    # second reverse-continue goes past a one-event tail's start
    # (watch_pieces.py: the history of the write's stretch alone).
    wwhole = gdb(ptrev, trace, prog, WATCH_SESSION,
                 {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    wtail = gdb(ptrev, trace, prog, WATCH_SESSION,
                {'PTREV_TAIL_EVENTS': '1', 'PTREV_TAIL_US': '1', 'PTREV_BACKGROUND_HISTORY': '0'})
    lines = re.findall(r'^ptrev: .*', wtail, re.M)
    check(any(ln.startswith('ptrev: looking for the last breakpoint or watchpoint hit')
              for ln in lines)
          and any(ln.startswith('ptrev: going back to the last breakpoint or watchpoint hit '
                                '(found natively)') for ln in lines)
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'a reverse-continue with a watchpoint past the tail searches natively and makes the '
          'history of the hit\'s stretch, not the whole history (%s)' % lines)
    check(state(wwhole) == state(wtail) and wwhole.count('Hardware watchpoint 1: total') >= 3,
          'the watchpoint\'s hits, values and backtraces as on the whole history\n'
          + '\n'.join('%s | %s' % (a, b) for a, b in zip(state(wwhole), state(wtail))
                      if a != b)[:3000])

    # Steps back past a tail's start: a tail about four times as long
    # (PTREV_TAIL_US=1: the last stretch, then one or two more), the same
    # state as the whole history's.
    swhole_steps = gdb(ptrev, trace, prog, STEP_SESSION,
                       {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    steps = gdb(ptrev, trace, prog, STEP_SESSION,
                {'PTREV_TAIL_US': '1', 'PTREV_TAIL_SPLIT': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    lines = re.findall(r'^ptrev: .*', steps, re.M)
    check(any(ln.startswith('ptrev: made the history of the last 1 event first') for ln in lines)
          and any(re.match(r'ptrev: going back past the history made: made the history of the '
                           r'last \d+ events: ', ln) for ln in lines)
          and not any(ln.startswith('ptrev: making the history of this') for ln in lines),
          'reverse-stepi past a one-event tail makes a longer tail, not the whole history (%s)'
          % lines)
    check(state(swhole_steps) == state(steps) and 'rip ' in steps,
          'after stepping back past the tail, every register and backtrace as on the whole '
          'history\n' + '\n'.join('%s | %s' % (a, b) for a, b in
                                   zip(state(swhole_steps), state(steps)) if a != b)[:3000])

    auto = gdb(ptrev, trace, prog, SESSION, {'PTREV_BACKGROUND_HISTORY': '0'})
    check('ptrev: made the history of the last' in auto and state(auto) == state(whole),
          'with the tail ptrev chooses itself, the same again (%s)'
          % re.findall(r'^ptrev: .*', auto, re.M))

    # A tail that begins inside a stretch: 20 us of the last round's
    # computation, one stretch of 0.3-0.5 ms natively here (a tail begins
    # inside a stretch that runs at least 0.2 ms longer than the tail
    # should hold). The program's exit status is its total's low bit.
    strace = os.path.join(work, 'split.ptrev')
    r = record(ptrev, 'event', strace, [prog, '2', '300000'])
    check(r.returncode in (0, 1) and 'round 1:' in r.stdout, 'tail_work 2 300000 recorded')
    swhole = gdb(ptrev, strace, prog, SPLIT_SESSION,
                 {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'})
    srounds = re.findall(r'^\$\d+ = (\d+)$', swhole, re.M)
    check(srounds[:1] == ['1'] and '0' in srounds and
          re.findall(r'^(\w+) +<unavailable>', swhole, re.M) == ['rcx', 'r11'],
          'the oracle stops in round_done of rounds 1 and 0, full state everywhere but rcx and '
          'r11 before exit_group (%s)' % srounds)
    # Where the point lands depends on timing (a timer stops the thread):
    # on a loaded machine the thread may wait for the CPU while the timer
    # runs, and the tail then begins early in the stretch or not inside it
    # at all. Up to three sessions, the first whose tail begins inside
    # the stretch and holds less than the round.
    total = re.search(r'^Current instruction: \d+ of (\d+)', swhole, re.M)
    for attempt in range(3):
        split = gdb(ptrev, strace, prog, 'monitor history\n' + SPLIT_SESSION,
                    {'PTREV_TAIL_US': '20', 'PTREV_BACKGROUND_HISTORY': '0'})
        made = re.search(r'^ptrev: made the history of the last 2 events and of the end of '
                         r'the stretch before first: (\d+) instructions', split, re.M)
        if made and total and int(made.group(1)) < int(total.group(1)) // 2:
            break
    check(made and total and int(made.group(1)) < int(total.group(1)) // 2,
          'the tail begins inside the last round\'s stretch, less than the round (%s, '
          'of %s; %d sessions)' % (re.findall(r'^ptrev: .*', split, re.M),
                                   total and total.group(1), attempt + 1))
    # Round 0's round_done lies before the tail's point, at the start of
    # the stretch it begins inside: the history made for it ends at the
    # hit (tests/reverse/hit_piece.py), not a longer tail of that stretch
    # and more.
    lines = re.findall(r'^ptrev: .*', split, re.M)
    check(any(re.match(r'ptrev: going back to the last breakpoint hit \(found natively\): '
                       r'made the history from event (\d+) to the hit only, inside the '
                       r'stretch before event \1: \d+ instructions', ln) for ln in lines)
          and not any(ln.startswith('ptrev: going back past the history made') for ln in lines),
          'the reverse-continue to round 0, before the tail\'s point, makes the history up to '
          'the hit only (%s)' % lines)
    told = [ln for ln in state(split) if not ln.startswith('The history of')]
    check(state(swhole) == told,
          'through a tail that begins inside a stretch, every register, variable, backtrace, '
          'hit and instruction number as on the whole history\n'
          + '\n'.join('%s | %s' % (a, b) for a, b in zip(state(swhole), told) if a != b)[:3000])

    # gdb waits 2 s (remotetimeout) for a monitor command's reply; while
    # the whole history is made for `monitor when` (seconds), ptrev tells
    # it that it is still at work, and gdb has no packet error to report.
    out = gdb(ptrev, trace, prog, 'reverse-stepi\nmonitor when\n',
              {'PTREV_TAIL_EVENTS': '2', 'PTREV_BACKGROUND_HISTORY': '0'}, timeout=None)
    made = re.search(r'history made: \d+ instructions in ([\d.]+) s', out)
    wtotal = re.search(r'^Current instruction: \d+ of (\d+)', whole, re.M)
    check(made and wtotal and 'Ignoring packet error' not in out and
          re.search(r'^Current instruction: \d+ of %s ' % wtotal.group(1), out, re.M),
          'monitor when waiting %s s for the whole history: no packet error in gdb (%s)'
          % (made and made.group(1), [ln for ln in out.splitlines() if 'ptrev' in ln or
                                     'packet' in ln]))

    # A recording saved from a tail's session holds the whole history.
    saved = os.path.join(work, 'saved.ptrev')
    if os.path.exists(saved):
        os.unlink(saved)
    out = gdb(ptrev, trace, prog, 'reverse-stepi\nmonitor save %s\n' % saved,
              {'PTREV_TAIL_EVENTS': '2', 'PTREV_BACKGROUND_HISTORY': '0'})
    total = re.search(r'^Current instruction: \d+ of (\d+)', whole, re.M)
    info = subprocess.run([ptrev, 'info', saved], capture_output=True, text=True).stdout
    check('made the history of the last 2 events first' in out and total and
          re.search(r'^instructions: %s$' % total.group(1), info, re.M),
          'monitor save in a tail\'s session saves the whole history (%s)'
          % re.findall(r'^instructions: .*', info, re.M))

    # More than one thread: no tail from an event (the global order would
    # be cut there); PTREV_TAIL_HISTORY=0 makes none from a run either.
    threads = os.path.join(progdir, 'e2e_threads')
    ttrace = os.path.join(work, 'threads.ptrev')
    r = record(ptrev, 'event', ttrace, [threads])
    out = gdb(ptrev, ttrace, threads, 'reverse-stepi\ninfo registers rip\n',
              {'PTREV_TAIL_EVENTS': '2', 'PTREV_TAIL_HISTORY': '0'})
    check(r.returncode == 0 and 'made the history of the last' not in out and
          re.search(r'^rip ', out, re.M) and 'cannot make the history' not in out,
          'a multi-threaded recording makes no tail from an event (%s)'
          % re.findall(r'^ptrev: .*', out, re.M))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
