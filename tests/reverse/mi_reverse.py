#!/usr/bin/env python3
"""GDB/MI reverse commands, as IDEs send them, against gdb's record full.

Each reverse command's *stopped record (reason, function, line) under
`ptrev serve --record` (with the sw recorder, and with the event recorder)
must equal gdb's own under `record full` on the same program, and
-list-target-features must include "reverse". So must they
on a recording of the whole run by the event backend, replayed from its
end back to marker() and on with the same commands.

usage: mi_reverse.py PTREV PROGRAM WORKDIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from full_state_diff import env  # noqa: E402

COMMANDS = [
    '-break-insert marker',
    '-exec-continue',
    '-exec-finish --reverse',
    '-exec-next --reverse',
    '-exec-step --reverse',
    '-exec-step-instruction --reverse',
    '-exec-finish --reverse',
    '-break-insert depth',
    '-exec-continue --reverse',
    '-exec-next',
    '-exec-step',
]
# Not compared: continuing back to the start of the history. record full's
# history starts where it was switched on (main); ptrev's at the program's
# first instruction, so the two starts differ by design.


def stops(out):
    """(reason, func, line) of each *stopped record, in order."""
    result = []
    for rec in re.findall(r'^\*stopped,(.*)$', out, re.M):
        reason = re.search(r'reason="([^"]*)"', rec)
        func = re.search(r'func="([^"]*)"', rec)
        line = re.search(r'line="(\d+)"', rec)
        result.append((reason.group(1) if reason else '', func.group(1) if func else '',
                       line.group(1) if line else ''))
    return result


def run_mi(prog, setup, commands=COMMANDS):
    cmds = ['-gdb-set confirm off', '-interpreter-exec console "handle SIGUSR1 nostop noprint pass"'] \
        + setup + commands + ['-list-target-features', '-gdb-exit']
    r = subprocess.run(['gdb', '-nx', '--interpreter=mi3', prog], input='\n'.join(cmds) + '\n',
                       capture_output=True, text=True, timeout=600, env=env())
    return r.stdout


def same_stops(what, want, got):
    bad = 0
    for i, (w, g) in enumerate(zip(want, got)):
        ok = w == g
        print('%s %s stop %d: record full %s / ptrev %s' % ('ok  ' if ok else 'FAIL', what,
                                                          i + 1, w, g))
        bad += not ok
    if len(want) != len(got) or len(want) < 8:
        print('FAIL: %s: %d stops under record full, %d under ptrev' % (what, len(want),
                                                                      len(got)))
        bad += 1
    return bad


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    ref = run_mi(prog, ['-interpreter-exec console "set startup-with-shell off"',
                        '-break-insert main', '-exec-run',
                        '-interpreter-exec console "record full"', '-break-delete'])
    mine = run_mi(prog, ['-target-select remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, prog)])
    # Drop the stops before the script (record full's run to main; the
    # connection's own).
    want = stops(ref)[1:]
    bad = same_stops('serve --record', want, stops(mine)[1:])
    # The same IDE session recorded live by the event recorder.
    live_ev = run_mi(prog, ['-target-select remote | %s serve --stdio --record --backend event '
                            '-- %s' % (ptrev, prog)])
    bad += same_stops('serve --record --backend event', want, stops(live_ev)[1:])
    # A recording of the whole run by the event backend, replayed from its
    # end: back to marker(), then the same commands.
    trace = os.path.join(work, 'fs_diff-mi.ptrev')
    r = subprocess.run([ptrev, 'record', '--backend', 'event', '-o', trace, '--', prog],
                       env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode != 0:
        print('FAIL: ptrev record --backend event: %s' % r.stderr)
        bad += 1
    else:
        ev = run_mi(prog, ['-target-select remote | %s replay --stdio %s' % (ptrev, trace)],
                    ['-break-insert marker', '-exec-continue --reverse'] + COMMANDS[2:])
        bad += same_stops('replay of an event recording', want, stops(ev)[1:])
    feats = re.search(r'\^done,features=\[([^\]]*)\]', mine)
    if not feats or '"reverse"' not in feats.group(1):
        print('FAIL: -list-target-features lacks "reverse": %s' % (feats.group(0) if feats else None))
        bad += 1
    else:
        print('ok   -list-target-features: %s' % feats.group(1))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
