#!/usr/bin/env python3
"""Write watchpoints in the history of a multi-threaded event recording
(replay/event_watch.c): before, a watchpoint there was never seen (the
full-state replayer, which the watch scans use, re-executes one thread),
and a reverse-continue went on to the history's start.

thread_late: a worker writes late_value once, in round 80 of 120, and the
kernel writes inbox at every round (the worker's read()).

Oracles:
- gdb's own hardware watchpoint on the program run natively (no ptrev):
  where the write of late_value stops going forwards, its PC and
  backtrace, and the values. A reverse-continue from the end must stop
  just before that write (a stepi lands where the native stop is), and a
  continue from before it where the native run stopped.
- The kernel's writes, which no native watchpoint sees: the program's own
  order (round 80's read changed inbox from 79 to 80, at the syscall
  instruction of the worker's read), where record full, which stops at a
  syscall that wrote watched memory, cannot record this program.
- The same session on a tail of one run of the thread order and on the
  whole history: the same transcript.
A read watchpoint, which this cannot check, is said to gdb's user at the
stop (console output), not only on ptrev's stderr.

usage: watch_threads.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, gdb_batch, record  # noqa: E402

NATIVE = ['break main', 'run', 'watch late_value', 'continue', 'print/x $pc', 'bt 2']

SESSION = '''watch late_value
reverse-continue
print late_value
stepi
print/x $pc
bt 2
print late_value
reverse-stepi 3
continue
print/x $pc
delete
watch inbox
reverse-continue
print inbox
x/i $pc
bt 3
continue
print inbox
delete
rwatch total
reverse-continue
print round
bt 1
delete
awatch inbox
reverse-continue
print round
bt 1
continue
print/x $pc
delete
rwatch -l *(char(*)[40])&late_value
reverse-continue
'''


def replay(ptrev, trace, prog, env):
    script = trace + '.gdb'
    with open(script, 'w') as f:
        f.write('set pagination off\nset confirm off\n'
                'target remote | %s replay --stdio %s\n%s' % (ptrev, trace, SESSION))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                       timeout=600, env=dict(os.environ, **env))
    return g.stdout


def gdb_lines(out):
    return [ln for ln in out.splitlines() if not ln.startswith('ptrev: ')]


def frames(out):
    """Backtrace lines, the frame's address left out (#0 has none where
    it stands at a line's start)."""
    return [re.sub(r' 0x[0-9a-f]+ in ', ' ', ln) for ln in out.splitlines()
            if re.match(r'#\d ', ln)]


def interrupted(ptrev, prog, work):
    """gdb's Ctrl-C during a long watch search (thread_late 3000 2000: a
    write about 6 million instructions back, seconds of stepping): the
    move ends where it stood, as gdb's interrupt, and the session goes on.
    Before, nothing was read from gdb until the search ended."""
    trace = os.path.join(work, 'long.ptrev')
    r = record(ptrev, 'event', trace, [prog, '3000', '2000'])
    check(r.returncode == 0, 'thread_late 3000 2000 recorded (%d)' % r.returncode)
    env = dict(os.environ, PTREV_TAIL_HISTORY='0', PTREV_BACKGROUND_HISTORY='0')
    g = subprocess.Popen(['gdb', '-nx', '-q', '-ex', 'set pagination off',
                          '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace), prog],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True, env=env)
    # The whole history made first (a step back and on), so that what the
    # Ctrl-C stops is the watch search.
    g.stdin.write('reverse-stepi\nstepi\nprint/x $pc\nwatch late_value\necho MOVE\\n\n'
                  'reverse-continue\n')
    g.stdin.flush()
    out, deadline = '', time.time() + 300
    while 'MOVE\n' not in out and time.time() < deadline:
        if select.select([g.stdout], [], [], 1)[0]:
            chunk = os.read(g.stdout.fileno(), 65536).decode(errors='replace')
            if not chunk:
                break
            out += chunk
    time.sleep(1.5)
    t0 = time.time()
    os.killpg(g.pid, signal.SIGINT)
    g.stdin.write('print/x $pc\nshell echo STOPPED $(date +%s.%N)\ndelete\nreverse-stepi\n'
                  'print late_value\nquit\n')
    g.stdin.flush()
    try:
        out += g.communicate(timeout=300)[0]
    except subprocess.TimeoutExpired:
        os.killpg(g.pid, signal.SIGKILL)
        out += g.communicate()[0]
    m = re.search(r'STOPPED (\S+)', out)
    took = float(m.group(1)) - t0 if m else None
    pcs = re.findall(r'^(?:\(gdb\) )*\$\d+ = (0x[0-9a-f]+)', out, re.M)
    check('Program received signal SIGINT' in out and took is not None and took < 20 and
          'stopped by gdb (Ctrl-C) while looking for a watched access' in out,
          'Ctrl-C during a watch search ends the move (%s s; %s)'
          % (took and round(took, 1), re.findall(r'.*(?:SIGINT|ptrev:).*', out)[-3:]))
    check(len(pcs) == 2 and pcs[0] == pcs[1] and '$3 = 437230' in out,
          'where it stood, and the session goes on (%s)' % pcs)


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'thread_late')
    native = gdb_batch(prog, NATIVE)
    pcs = re.findall(r'^\$\d+ = (0x[0-9a-f]+)', native, re.M)
    good = 'Old value = 0' in native and 'New value = 413869' in native and len(pcs) == 1
    check(good, 'the native run stops at the write of late_value' +
          ('' if good else '\n' + native[-1500:]))
    trace = os.path.join(work, 'thread_late.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0 and 'late_value=413869' in r.stdout,
          'thread_late recorded (%d: %s)' % (r.returncode, r.stdout.strip()))
    whole = replay(ptrev, trace, prog, {'PTREV_TAIL_HISTORY': '0',
                                        'PTREV_BACKGROUND_HISTORY': '0'})
    tail = replay(ptrev, trace, prog, {'PTREV_TAIL_RUNS': '1', 'PTREV_BACKGROUND_HISTORY': '0'})
    for name, out in (('whole history', whole), ('tail of one run', tail)):
        hits = re.findall(r'hit Hardware watchpoint \d+: (\w+)\n\nOld value = (-?\d+)\n'
                          r'New value = (-?\d+)', out)
        check(hits[:4] == [('late_value', '413869', '0'), ('late_value', '0', '413869'),
                           ('inbox', '80', '79'), ('inbox', '79', '80')],
              '%s: back to the write of late_value, on to it again, back and on across the '
              'read() that wrote inbox (%s)' % (name, hits))
        got = re.findall(r'^\$\d+ = (0x[0-9a-f]+)', out, re.M)
        check(pcs and got[:2] == [pcs[0], pcs[0]],
              '%s: one stepi after the reverse-continue, and the continue from before the '
              'write, stand where the native run stopped (%s, native %s)' % (name, got, pcs))
        native_bt, replay_bt = frames(native), frames(out)
        check(native_bt and replay_bt[:2] == native_bt[:2],
              '%s: the writer\'s backtrace as the native run\'s\n%s\n%s'
              % (name, native_bt, replay_bt[:2]))
        insn = re.search(r'^=> 0x[0-9a-f]+ <[^>]*>:\s+(\w+)', out, re.M)
        check(insn and insn.group(1) == 'syscall' and re.search(r'#2 .* worker \(', out),
              '%s: the kernel\'s write of inbox stops before the worker\'s syscall '
              'instruction, going back (%s)' % (name, insn and insn.group(0)))
        # What it cannot check (a read watch wider than the three debug
        # registers): on gdb's console (an O packet, over any transport),
        # not only on ptrev's stderr (which gdb shows for a pipe only).
        check(re.search(r'^ptrev: watchpoints were not checked in this move: a read or access '
                        r'watchpoint is not checked', out, re.M) is not None,
              '%s: a read watchpoint it cannot check: gdb\'s user is told' % name)
    check(gdb_lines(whole) == gdb_lines(tail),
          'the tail of one run shows what the whole history shows\n' +
          '\n'.join('%s | %s' % (a, b) for a, b in zip(gdb_lines(whole), gdb_lines(tail))
                    if a != b)[:3000])
    interrupted(ptrev, prog, work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
