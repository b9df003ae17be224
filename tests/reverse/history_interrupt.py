#!/usr/bin/env python3
"""gdb's Ctrl-C stops a move that waits for an event recording's history
(minutes for ~10^8 instructions): the move ends where the thread stood,
reported as gdb's interrupt (SIGINT), with the state it had there, and
the history goes on being made in the background. Before, ptrev read
nothing from gdb until the history was made, and the user waited.

rec_loop of ~10^8 instructions, recorded with the event backend, replayed
through a gdb pipe; the first reverse-stepi waits for the whole history
(PTREV_TAIL_HISTORY=0), and reverse-continue to a breakpoint waits for
the history of the recording's tail made first. gdb gets SIGINT (the
terminal's Ctrl-C) a few seconds into each: each move ends within
seconds with "Program received signal SIGINT", the registers and the
backtrace as before the move (the end of the recording), full state,
and `monitor history` says the history is still being made. An IDE's
way too: GDB/MI with mi-async on, over TCP (`ptrev replay --listen`),
-exec-interrupt during a reverse step stops it with SIGINT at the same
PC.

usage: history_interrupt.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, processes_left, record, full_state_said  # noqa: E402

BEFORE = 'info registers rip rsp\nbt 2\necho MOVE\\n\n'
AFTER = ('echo AFTER\\n\ninfo registers rip rsp\nbt 2\nmonitor why\nmonitor history\n'
         'echo CONT\\n\nshell echo AT $(date +%s.%N)\ncontinue\nshell echo AT $(date +%s.%N)\n'
         'info registers rip rsp\nbt 2\n')


def gdb_output(g, timeout):
    """What gdb printed, once it ended (killed after timeout seconds)."""
    try:
        return g.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        os.killpg(g.pid, signal.SIGKILL)
        return g.communicate()[0]


def read_all(g, lines, seen, marker):
    """gdb's output into lines; seen set once a line holds marker."""
    for ln in g.stdout:
        lines.append(ln)
        if marker and marker in ln:
            seen.set()
    seen.set()


def interrupted_move(ptrev, trace, prog, move, env, marker=None):
    """gdb at the end of trace, then move, SIGINT to gdb 8 s into it, or
    as soon as gdb shows a line holding marker."""
    g = subprocess.Popen(['gdb', '-nx', '-q', '-ex', 'set pagination off',
                          '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace), prog],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True, env=env)
    lines, seen = [], threading.Event()
    reader = threading.Thread(target=read_all, args=(g, lines, seen, marker))
    reader.start()
    g.stdin.write(BEFORE + move)
    g.stdin.flush()
    if marker:
        seen.wait(240)
    else:
        time.sleep(8)  # connected (the end shown), the move begun
    t0 = time.time()
    os.killpg(g.pid, signal.SIGINT)
    g.stdin.write('shell echo STOPPED $(date +%s.%N)\n' + AFTER + 'quit\n')
    g.stdin.flush()
    reader.join(300)
    if reader.is_alive():
        os.killpg(g.pid, signal.SIGKILL)
        reader.join()
    g.wait()
    out = ''.join(lines)
    m = re.search(r'STOPPED (\S+)', out)
    return out, (float(m.group(1)) - t0) if m else None


def mi_interrupted(ptrev, trace, prog, env):
    """GDB/MI over TCP: a reverse step, -exec-interrupt 8 s into it."""
    srv = subprocess.Popen([ptrev, 'replay', '--listen', '127.0.0.1:0', trace],
                           stderr=subprocess.PIPE, text=True, env=env)
    port = None
    for line in srv.stderr:
        m = re.search(r'Listening on 127\.0\.0\.1:(\d+)', line)
        if m:
            port = m.group(1)
            break
    g = subprocess.Popen(['gdb', '-nx', '-q', '--interpreter=mi2', prog], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    g.stdin.write('-gdb-set mi-async on\n-target-select remote 127.0.0.1:%s\n'
                  '-data-evaluate-expression $pc\n-exec-step-instruction --reverse\n' % port)
    g.stdin.flush()
    time.sleep(8)
    g.stdin.write('-exec-interrupt\n')
    g.stdin.flush()
    time.sleep(3)
    g.stdin.write('-data-evaluate-expression $pc\n-gdb-exit\n')
    g.stdin.flush()
    out = gdb_output(g, 120)
    # gdb gone, ptrev ends by itself (no --reconnect), its replays with it.
    try:
        srv.wait(timeout=120)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
        out += '\nptrev did not end after gdb left'
    return out


def state(text):
    """rip, rsp and the first two frames in text (gdb's prompts taken out)."""
    text = text.replace('(gdb) ', '')
    return [ln.split()[0:2] for ln in text.splitlines()
            if re.match(r'^(rip|rsp) ', ln)] + re.findall(r'^#\d .*', text, re.M)[:2]


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    loop = os.path.join(work, 'int_rec_loop')
    shutil.copy(os.path.join(progdir, 'rec_loop'), loop)
    trace = os.path.join(work, 'loop.ptrev')
    r = record(ptrev, 'event', trace, [loop, '3000000'])
    check(r.returncode == 0, 'a loop of about 10^8 instructions recorded')
    cases = [('reverse-stepi (the whole history)', 'reverse-stepi\n',
              dict(os.environ, PTREV_TAIL_HISTORY='0'), None),
             # main's hit begins the loop's stretch: the history made for
             # it would end at the hit at once (hit_piece.py); here the
             # whole stretch is made, minutes, which Ctrl-C stops
             # (PTREV_HIT_POINT=0).
             ('reverse-continue to a breakpoint (its tail first)',
              'break main\nreverse-continue\n', dict(os.environ, PTREV_HIT_POINT='0'), None),
             # Ctrl-C once the tail is made and the hit looked for: the
             # longer tail made next ends the move (before, ptrev went on
             # to wait for the whole history, the Ctrl-C spent).
             ('reverse-continue to a breakpoint (interrupted past its tail)',
              'break main\nreverse-continue\n', dict(os.environ, PTREV_HIT_POINT='0'),
              'looking for the last breakpoint or watchpoint hit')]
    for n, (what, move, env, marker) in enumerate(cases):
        out, took = interrupted_move(ptrev, trace, loop, move, env, marker)
        with open(os.path.join(work, 'case%d.out' % n), 'w') as f:
            f.write(out)  # gdb's whole transcript, for a failure's reader
        check('Program received signal SIGINT' in out and took is not None and took < 30,
              '%s: Ctrl-C ends it (%s s; %s)' % (what, took and round(took, 1),
                                                 re.findall(r'.*(?:SIGINT|ptrev:).*', out)[-3:]))
        before = state(out.split('MOVE', 1)[0])
        rest = out.split('AFTER', 1)[1] if 'AFTER' in out else ''
        after = state(rest.split('CONT', 1)[0])
        back = state(rest.split('CONT', 1)[1] if 'CONT' in rest else '')
        # Where it stood, or (a reverse-continue that had gone back
        # through the history made when gdb's Ctrl-C came) where it got
        # to: a position in the history, shown with full state, from
        # which a continue comes back to the end as it was.
        check(before and (before == after or (after and full_state_said(rest))),
              '%s: the state where it stood or got to (%s / %s)' % (what, before, after))
        # ...at once: with no history made yet, a move forward from the
        # end waited for the whole history (minutes) to show nothing.
        at = [float(x) for x in re.findall(r'\bAT (\d+\.\d+)', rest)]
        check(before and back == before and len(at) == 2 and at[1] - at[0] < 30,
              '%s: a continue from there, the state at the end as before the move (%s, '
              '%s s)' % (what, back, len(at) == 2 and round(at[1] - at[0], 1)))
        check(full_state_said(out) and
              'is being made in the background' in out,
              '%s: full state, the history made on in the background (%s)'
              % (what, re.findall(r'.*(?:available|history of this).*', out)[-2:]))
    out = mi_interrupted(ptrev, trace, loop, dict(os.environ, PTREV_TAIL_HISTORY='0'))
    pcs = re.findall(r'\^done,value="(0x[0-9a-f]+)', out)
    check(re.search(r'^\*stopped,reason="signal-received",signal-name="SIGINT"', out, re.M) and
          len(pcs) == 2 and pcs[0] == pcs[1],
          'GDB/MI over TCP: -exec-interrupt stops the reverse step with SIGINT where it stood '
          '(%s; %s)' % (re.findall(r'^\*stopped.*', out, re.M)[-1:], pcs))
    check('ptrev did not end after gdb left' not in out, 'ptrev ended after gdb left')
    left = processes_left('int_rec_loop')
    check(not left, 'no replay process left (%s)' % left)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
