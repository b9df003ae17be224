#!/usr/bin/env python3
"""An event recording's history is made in the background as soon as
`ptrev replay` shows the end (issue 11: materialisation "in the background
on the idle core"). Replayed under gdb, `monitor history` says how far it
is; once it says the history was made, the first reverse move takes it
(ptrev says so, not that it is making it) and shows the state a history
made at that move (PTREV_BACKGROUND_HISTORY=0, the oracle) shows; an sw
recording and a live program answer `monitor history` too. A session
that waits for a history of some seconds hears how far it is every few
seconds. The background's replay process runs at the lowest priority (nice 19)
beside the session's own (nice 0): both run on the recording's CPU, and
gdb waits for the session's. A session that ends while the history is
still being made (a loop of ~10^8 instructions) stops it: gdb and ptrev
end at once, and no replay process is left behind.

usage: background_history.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, processes_left, record, full_state_said  # noqa: E402

# gdb's Python polls `monitor history` until the background is done.
WAIT_MADE = '''python
import time
for _ in range(3000):
    said = gdb.execute('monitor history', to_string=True)
    if 'being made' not in said:
        break
    time.sleep(0.1)
print('history: ' + said.strip())
end
'''

# The nice values of the processes named bg_rec_loop (the replays of the
# long recording) once the background's has started.
NICE = '''python
import subprocess, time
for _ in range(200):
    nice = subprocess.run(['ps', '-o', 'ni=', '-C', 'bg_rec_loop'], capture_output=True,
                          text=True).stdout.split()
    if len(nice) >= 2:
        break
    time.sleep(0.05)
print('nice: ' + ' '.join(sorted(nice, key=int)))
end
'''

STATE = 'reverse-stepi\nprint global_counter\ninfo registers rip rsp rbp\nbt 3\n'


def gdb(ptrev, trace, prog, body, env=None):
    script = os.path.join(os.path.dirname(trace), 'bg.gdb')
    with open(script, 'w') as f:
        f.write('set remotetimeout 60\ntarget remote | %s replay --stdio %s\n%s'
                % (ptrev, trace, body))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], capture_output=True,
                       text=True, timeout=300, env=env)
    return g.stdout + g.stderr


def state_lines(out):
    return [ln for ln in out.splitlines()
            if re.match(r'^(\$1 = |rip |rsp |rbp |#\d)', ln)]


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_basic')
    trace = os.path.join(work, 'basic.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0, 'e2e_basic recorded with the event backend')

    bg = gdb(ptrev, trace, prog, WAIT_MADE + STATE)
    made = re.search(r'^history: (.*)$', bg, re.M)
    check(made is not None and 'was made in the background' in made.group(1),
          'monitor history says the history was made in the background (%s)'
          % (made.group(1) if made else bg[-300:]))
    check('the history of this event recording was made in the background' in bg and
          'making the history' not in bg,
          'the first move took the history made in the background')
    fg = gdb(ptrev, trace, prog, STATE, env=dict(os.environ, PTREV_BACKGROUND_HISTORY='0',
                                                  PTREV_TAIL_HISTORY='0'))
    check('making the history of this event recording (re-executing it block by block)...'
          in fg, 'PTREV_BACKGROUND_HISTORY=0 makes it at the first move')
    check(state_lines(bg) == state_lines(fg) and '$1 = 17' in state_lines(bg),
          'the state after the first move is the same either way (%s / %s)'
          % (state_lines(bg), state_lines(fg)))

    # A recording with its history (sw), and a live program, say so.
    sw_trace = os.path.join(work, 'basic-sw.ptrev')
    record(ptrev, 'sw', sw_trace, [prog])
    out = gdb(ptrev, sw_trace, prog, 'monitor history\n')
    check('This recording holds its history (it was recorded, not made from events).' in out,
          'monitor history on an sw recording: %s'
          % re.findall(r'.*(?:history|Unknown).*', out)[-1:])
    live = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s serve --stdio --no-record %s'
                           % (ptrev, prog), '-ex', 'monitor history', prog],
                          capture_output=True, text=True, timeout=120)
    check('No recording: ptrev serve was started with --no-record' in live.stdout + live.stderr,
          'monitor history on a live program says there is no recording')

    # A first move that waits for a history of some seconds: ptrev says
    # how far it is while gdb waits, not only when it starts.
    loop = os.path.join(progdir, 'rec_loop')
    mid_trace = os.path.join(work, 'mid.ptrev')
    r = record(ptrev, 'event', mid_trace, [loop, '100000'])
    out = gdb(ptrev, mid_trace, loop, 'reverse-stepi\nmonitor why\n',
              env=dict(os.environ, PTREV_TAIL_HISTORY='0'))
    check(r.returncode == 0 and
          re.search(r'^ptrev: still making the history: \d+ of \d+ events replayed, '
                    r'[\d.]+ million instructions, \d+ s so far$', out, re.M) and
          full_state_said(out),
          'a first move waiting for the history hears how far it is (%s)'
          % re.findall(r'^ptrev: .*history.*$', out, re.M))

    # A session that ends long before the history could be made.
    loop = os.path.join(work, 'bg_rec_loop')
    shutil.copy(os.path.join(progdir, 'rec_loop'), loop)
    long_trace = os.path.join(work, 'loop.ptrev')
    r = record(ptrev, 'event', long_trace, [loop, '3000000'])
    check(r.returncode == 0, 'a loop of about 10^8 instructions recorded')
    out = gdb(ptrev, long_trace, loop, NICE + 'monitor history\n')
    check('is being made in the background' in out,
          'monitor history says it is being made (%s)'
          % re.findall(r'.*history of this.*', out)[:1])
    # The background's replay, and the copies of it it keeps on the
    # way (checkpoints for the history's replayer), at 19.
    check(re.search(r'^nice: 0( 19)+$', out, re.M),
          "the session's replay process runs at nice 0, the background's at 19 (%s)"
          % re.findall(r'^nice: .*', out, re.M))
    left = processes_left('bg_rec_loop')
    check(not left and not re.search(r'Sanitizer|runtime error|cannot make', out),
          'the session ended, the background stopped, no replay process left (%s)'
          % (left or re.findall(r'.*(?:Sanitizer|runtime error|cannot make).*', out)))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
