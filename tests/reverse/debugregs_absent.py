#!/usr/bin/env python3
"""Replays where the debug registers do not trap (issue 11). Some
hypervisors take every write of DR0-DR7 and never raise the #DB (a bhyve
guest on an AMD EPYC, kernel 6.18: gdb's own `hbreak` and `watch` never
stop there either). ptrev asks the machine once (ptrev/debugregs.h) and,
where they do not trap, runs a replay to its places with an int3 instead:
the replayer to a position (replayer_run.c), the event replay to a STATE
point (erp_point_arm: the byte in the code only while the thread runs).
Before, a replay ran past the place a dead register held and met the next
syscall as a divergence: the end of rev_threads' recording had no state
("a syscall the recording did not make here"), and a recording with a
STATE point in a hot loop none at all.

PTREV_DEBUG_REGISTERS=0 makes ptrev take the registers for dead on any
machine (`ptrev info --machine` says which it has). Static programs: they
read no TSC (the dynamic loader does, where rdtsc may not trap either).

  - hot_loop_static recorded until it holds a STATE point: gdb opening
    the replay sees full state at the end and the result the program
    printed; a reverse-continue to the loop's end shows every thread as
    the same session does with the registers (where they trap) or on the
    whole history;
  - rev_threads: one step back from the end (the last runs' history, the
    state from the replayer run to the position), then back to a worker's
    bump: every thread as on the whole history.
  - tail_work (dynamically linked: where rdtsc does not trap, the points
    leave ld.so's data out of their digests): reverse-continue and
    continue to breakpoints in long stretches find the hit by a native
    search with int3s in place of the registers (event_soft.c; before,
    the search was refused and the whole history was made by stepping),
    and make the history of the hit's piece only; every hit, variable and
    register as with the oracle.
  - thread_late (dynamically linked, two threads): breakpoints in libc
    (`write`) and in the program, reverse-continues from the end. A
    multi-threaded recording's search replays from the program's start,
    before ld.so has mapped libc: the int3 at write's address cannot be
    written there yet, and waits for the mapping (before, the search was
    refused: "cannot look for the breakpoint hit natively"). Every thread
    as with the oracle.

The sessions to run can be named after WORK_DIR (hot, threads, search,
lib; all by default): meson runs `search` and `lib` as their own test. (hot_loop_static's
point was once now and then never found where the registers do not trap:
the hypervisor there changes the APIC ID CPUID tells, which static glibc
keeps; the digests leave that copy out now: ptrev/cpuid_copy.h.)

usage: debugregs_absent.py PTREV HOT_LOOP_STATIC REV_THREADS TAIL_WORK THREAD_LATE WORK_DIR
       [SESSION...]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, check_shown_as, finish, full_state_count, record  # noqa: E402
from ptrev_checks import gdb_replay, ptrev_lines  # noqa: E402
from state_hot_loop import record_with_point  # noqa: E402

DEAD = {'PTREV_DEBUG_REGISTERS': '0', 'PTREV_BACKGROUND_HISTORY': '0'}

HOT = '''monitor why
print result
break hot_loop.c:30
reverse-continue
info threads
thread apply all bt
thread apply all info registers rip rsp rax rdx
print x
monitor why
'''

REV = '''reverse-stepi
info threads
thread apply all info registers rip rsp rax
monitor why
break bump_a
reverse-continue
info threads
thread apply all bt
print counter
monitor why
'''


SEARCH = '''break fold
reverse-continue
print i
print acc
bt
reverse-continue 3
print i
info registers rip rsp rax
continue 2
print i
delete
break round_done
reverse-continue
print round
reverse-continue
print round
print acc
continue
print round
info registers rip rsp
'''

LIB = '''break write
reverse-continue
reverse-continue 6
bt 2
print nbytes
print *(int *)buf
info threads
delete
break late_mark
reverse-continue
print round
print acc
print total
monitor why
info threads
thread apply all bt
thread apply all info registers rip rsp rax
'''


def machine_traps(ptrev):
    out = subprocess.run([ptrev, 'info', '--machine'], capture_output=True, text=True,
                         env=dict(os.environ, PTREV_DEBUG_REGISTERS='')).stdout
    return 'debug registers: trap' in out


def oracle_env(ptrev):
    """The registers where they trap; else the whole history, made by
    stepping, at the first move."""
    if machine_traps(ptrev):
        return {'PTREV_BACKGROUND_HISTORY': '0'}
    return {'PTREV_TAIL_HISTORY': '0', 'PTREV_BACKGROUND_HISTORY': '0'}


def hot_loop(ptrev, prog, work):
    trace = os.path.join(work, 'hot.ptrev')
    points, printed = record_with_point(ptrev, trace, [prog, '1000000'], '1')
    check(points > 0, 'hot_loop_static: a recording with a STATE point in the loop (%d)'
          % points)
    if not points:
        return
    out = gdb_replay(ptrev, trace, prog, HOT, DEAD)
    result = '$1 = {%s}' % ', '.join(printed.split())
    check(full_state_count(out) == 2 and result in out,
          'hot_loop_static, debug registers dead: full state at the end and at the loop\'s '
          'end, the result as printed (%s)\n%s' % (result, out[-2000:]))
    check(not any('no hardware breakpoint' in ln or 'diverged' in ln
                  for ln in ptrev_lines(out)),
          'hot_loop_static: nothing asked of a dead register (%s)' % ptrev_lines(out))
    check_shown_as(gdb_replay(ptrev, trace, prog, HOT, oracle_env(ptrev)), out,
                   'hot_loop_static, debug registers dead: every thread as with the oracle')


def rev_threads(ptrev, prog, work):
    trace = os.path.join(work, 'rev_threads.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0, 'rev_threads recorded (%d)' % r.returncode)
    out = gdb_replay(ptrev, trace, prog, REV, DEAD)
    check(full_state_count(out) == 2 and 'hit Breakpoint 1, bump_a' in out,
          'rev_threads, debug registers dead: full state one step back from the end and at '
          'the last bump\n' + out[-2000:])
    check_shown_as(gdb_replay(ptrev, trace, prog, REV, oracle_env(ptrev)), out,
                   'rev_threads, debug registers dead: every thread as with the oracle')


def search(ptrev, prog, work):
    trace = os.path.join(work, 'tail_work.ptrev')
    r = record(ptrev, 'event', trace, [prog, '4', '100000'])
    check(r.returncode in (0, 1) and 'round 3:' in r.stdout,
          'tail_work recorded (%s)' % r.stdout)
    # A tail of 1 us of the program's run: the searches begin past it
    # whatever the machine's speed (30 us held fold's last hits on a
    # fast one, and no search was needed).
    out = gdb_replay(ptrev, trace, prog, SEARCH, dict(DEAD, PTREV_TAIL_US='1'))
    lines = ptrev_lines(out)
    found = [ln for ln in lines if '(found natively)' in ln]
    check(len(found) >= 4 and not any('no debug register' in ln for ln in lines),
          'tail_work, debug registers dead: each move to a breakpoint finds its hit by a '
          'native search (%s)' % lines)
    check(not any(ln.startswith('ptrev: cannot') for ln in lines),
          'tail_work: each piece ends at its hit, nothing refused (%s)' % lines)
    check_shown_as(gdb_replay(ptrev, trace, prog, SEARCH, oracle_env(ptrev)), out,
                   'tail_work, debug registers dead: every hit as with the oracle')


def lib_threads(ptrev, prog, work):
    trace = os.path.join(work, 'thread_late.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0 and 'late_value=' in r.stdout, 'thread_late recorded (%s)' % r.stdout)
    out = gdb_replay(ptrev, trace, prog, LIB, DEAD)
    lines = ptrev_lines(out)
    searched = [ln for ln in lines if 'looking for the last breakpoint' in ln]
    check(searched and not any('cannot look for the breakpoint hit' in ln for ln in lines),
          'thread_late, debug registers dead: the searches for hits in libc and in the '
          'program run natively, none refused (%s)' % lines)
    check('hit Breakpoint 2, late_mark' in out and full_state_count(out) >= 1,
          'thread_late: reverse-continue reaches late_mark with full state\n' + out[-2000:])
    check_shown_as(gdb_replay(ptrev, trace, prog, LIB, oracle_env(ptrev)), out,
                   'thread_late, debug registers dead: every thread as with the oracle')


def main():
    ptrev, hot, rev, tail_work, thread_late, work = sys.argv[1:7]
    sessions = sys.argv[7:] or ['hot', 'threads', 'search', 'lib']
    os.makedirs(work, exist_ok=True)
    if 'hot' in sessions:
        hot_loop(ptrev, os.path.abspath(hot), work)
    if 'threads' in sessions:
        rev_threads(ptrev, os.path.abspath(rev), work)
    if 'search' in sessions:
        search(ptrev, os.path.abspath(tail_work), work)
    if 'lib' in sessions:
        lib_threads(ptrev, os.path.abspath(thread_late), work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
