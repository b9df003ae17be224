#!/usr/bin/env python3
"""gdb's changes to a program being recorded (set var, a function call,
jump) are recorded, and reverse execution shows the program as it ran
with them, against gdb's own `record full`.

- One script, run by gdb natively under `record full` and against `ptrev
  serve` (the event recorder, its default, and --backend sw): `set var` at
  a breakpoint, on a line, back over it (reverse-stepi, reverse-next),
  the value gdb wrote shown in the past; then `print leaf(5)` (gdb calls
  a function of the program) and a line on. The transcripts must match
  but for breakpoint numbers and ptrev's own messages. Without the
  recorded change, the past showed the value the program had computed
  without it (the sw recorder), or the event recording ended at the
  change.
- Back at once from a change (the thread not run since), forward, and a
  second change at the same place.
- Back into a function gdb called and on to the present: the stop shows
  where the program stands, not the called function's return.
- `jump`: the program goes on from the new place and the history
  follows it: back from the next stop into the code the jump reached,
  with full state and no divergence; the program's output is the live
  run's.
- Saved at the end (monitor save), the recording with the changes
  replays postmortem (`ptrev replay`) to the same values at the same
  breakpoint hits.

usage: gdb_changes.py PTREV PROGRAMS_DIR WORKDIR
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, gdb_batch  # noqa: E402
from full_state_diff import TUNABLES  # noqa: E402

SCRIPT = '''
break f
continue
continue
set var global_counter = 100
next
print global_counter
reverse-stepi
print global_counter
print $rax
reverse-next
print global_counter
print $pc
continue
print leaf(5)
print $pc
next
print global_counter
info registers rip rax rcx rdx rdi
'''


def run_gdb(prog, first, script):
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set pagination off'] + \
          [a for line in first for a in ('-ex', line)] + \
          ['-ex', 'set trace-commands on'] + \
          [a for line in script.strip().splitlines() for a in ('-ex', line)]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=600, env=env,
                       stdin=subprocess.DEVNULL)
    return r.stdout, r.stderr


def normalise(text):
    """gdb's output from the script's first command; breakpoint numbers and
    gdb's reading of remote files left out. (Only registers that do not
    hold stack addresses are compared: gdb starts a program natively with
    LINES and COLUMNS added to its environment.)"""
    text = text[text.find('+break f'):]
    keep = []
    for line in text.splitlines():
        if line.startswith('Reading ') or not line.strip():
            continue
        keep.append(re.sub(r'Breakpoint \d+', 'Breakpoint N', line))
    return '\n'.join(keep)


def against_record_full(ptrev, prog):
    want = normalise(run_gdb(prog, ['break main', 'run', 'record full'], SCRIPT)[0])
    check('$2 = 100' in want and '$6 = 11' in want,
          'record full ran the script:\n' + want[-1500:])
    for backend in ([], ['--backend', 'sw']):
        out, err = run_gdb(prog, ['target remote | %s serve --stdio %s -- %s'
                                  % (ptrev, ' '.join(backend), prog)], SCRIPT)
        got = normalise(out)
        raw = out + err
        name = 'serve ' + (' '.join(backend) or '(event)')
        check(got == want and 'recording ends' not in raw,
              '%s: set var and a call recorded, the past as record full shows it:\n%s'
              % (name, '\n'.join(__import__('difflib').unified_diff(
                  want.splitlines(), got.splitlines(), 'record full', name, lineterm='')))
              + '\n' + raw[-1500:])


def back_at_once(ptrev, prog):
    """Back right after the change, the thread not run since: the history
    ends where gdb made it (the event recorder ends the thread's run of
    the recorded order there, or the history ended at the run before);
    forward again, the change; a second change at the same place wins."""
    text = gdb_batch(prog, [
        'target remote | %s serve --stdio -- %s' % (ptrev, prog), 'break f', 'continue',
        'continue', 'set var global_counter = 100', 'reverse-stepi', 'print $pc',
        'print global_counter', 'stepi', 'print $pc', 'print global_counter',
        'set var global_counter = 200', 'stepi', 'stepi', 'reverse-stepi', 'reverse-stepi',
        'print $pc', 'print global_counter'])
    check(re.search(r'^\$1 = .*<f\+4>', text, re.M) and '$2 = 7' in text and
          re.search(r'^\$3 = .*<f\+7>', text, re.M) and '$4 = 100' in text and
          re.search(r'^\$5 = .*<f\+7>', text, re.M) and '$6 = 200' in text,
          'back at once from a change, on again, a second change there:\n' + text[-2000:])


def back_into_call(ptrev, prog, work):
    """Back from right after a function gdb called (its instructions are
    in the history; the registers gdb restored after it are a change at
    its end) and on to the present again: the stop there shows where the
    program stands (its PC and backtrace as right after the call), not
    the called function's return to gdb's own breakpoint, which is where
    the history's last instruction left it (a PC of gdb's dummy frame,
    `?? ()`, while `info registers` said f+24). Each backend, and the
    event recording saved there, replayed postmortem."""
    saved = os.path.join(work, 'call.ptrev')
    moves = ['print $pc', 'bt 1', 'reverse-stepi', 'continue', 'print $pc', 'bt 1',
             'info registers rip']
    for backend in ([], ['--backend', 'sw'], None):
        if backend is None:
            text = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, saved)]
                             + moves)
            name = 'replay of the saved recording'
        else:
            text = gdb_batch(prog, [
                'target remote | %s serve --stdio %s -- %s' % (ptrev, ' '.join(backend), prog),
                'break f', 'continue', 'print leaf(5)'] + moves +
                ([] if backend else ['monitor save ' + saved]))
            name = 'serve ' + (' '.join(backend) or '(event)')
        now = re.findall(r'^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+) <f\+\d+>', text, re.M)
        frames = re.findall(r'^#0 .*', text, re.M)
        rip = re.search(r'^rip +(0x[0-9a-f]+)', text, re.M)
        check('No more reverse-execution history' in text and len(now) == 2 and
              now[0] == now[1] and len(frames) == 2 and frames[0] == frames[1] and
              rip and rip.group(1) == now[0] and '?? ()' not in text,
              '%s: back into a called function and on to the present: the stop shows '
              'where the program stands (%s, %s):\n%s' % (name, now, frames, text[-1500:]))


def jump_followed(ptrev, prog, work):
    """jump from f(3)'s breakpoint over its `+=`: the program goes on from
    line 40, the history with it; back from f(4) into f(3)'s line 40."""
    native = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'break f', '-ex', 'run',
                             '-ex', 'continue 3', '-ex', 'jump 40', '-ex', 'delete',
                             '-ex', 'continue', prog], capture_output=True, text=True,
                            timeout=300, stdin=subprocess.DEVNULL).stdout
    total = re.search(r'total=-?\d+', native)
    saved = os.path.join(work, 'jumped.ptrev')
    text = gdb_batch(prog, [
        'target remote | %s serve --stdio -- %s' % (ptrev, prog), 'break f', 'continue',
        'continue 3', 'jump 40', 'print global_counter', 'break 41', 'reverse-continue',
        'bt 1', 'print i', 'print global_counter', 'print $rax', 'reverse-stepi',
        'print $pc', 'reverse-stepi', 'print $pc', 'info registers rax', 'continue',
        'continue', 'print global_counter', 'delete', 'break outer', 'continue',
        'monitor save ' + saved, 'continue', 'continue'])
    check(total and total.group(0) in text and 'exited normally' in text,
          'jump: the program goes on from the new place, its output the native run\'s (%s):\n'
          % (total.group(0) if total else native[-500:]) + text[-1500:])
    check(re.search(r'^#0 +f \(i=3\) at .*:41', text, re.M) and '$1 = 10' in text and
          '$2 = 3' in text and '$3 = 10' in text and '$4 = 10' in text and
          re.search(r'^\$5 = .*<f\+24>', text, re.M) and
          re.search(r'^\$6 = .*<f\+4>', text, re.M) and 'diverged' not in text and
          'unavailable' not in text and '$7 = 10' in text,
          'back from f(4) into f(3) past the jump: full state (i=3, the counter 10, never '
          'added to), the jump\'s target where gdb stopped, the instruction before it the '
          'one run before the stop; and on again:\n' + text[-2500:])
    replay = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, saved),
                              'break 41 if i == 3', 'reverse-continue', 'print global_counter',
                              'print i', 'reverse-stepi', 'print $pc', 'reverse-stepi',
                              'print $pc'])
    check('$1 = 10' in replay and '$2 = 3' in replay and
          re.search(r'^\$3 = .*<f\+24>', replay, re.M) and
          re.search(r'^\$4 = .*<f\+4>', replay, re.M) and
          'diverged' not in replay,
          'the saved recording replays the jump postmortem:\n' + replay[-1500:])


def main():
    ptrev, programs, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prog = os.path.join(programs, 'e2e_basic')
    against_record_full(ptrev, prog)
    back_at_once(ptrev, prog)
    back_into_call(ptrev, prog, work)
    jump_followed(ptrev, prog, work)
    sys.exit(finish())


if __name__ == '__main__':
    main()
