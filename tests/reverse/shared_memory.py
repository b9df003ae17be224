#!/usr/bin/env python3
"""Programs that keep state in shared memory are replayed with that state
as the run had it at every position (shared_mem: an anonymous shared
mapping and a System V segment a child filled before the attach; its
second, read-only attach; shmdt). The recorder says, once, that what
another process writes to a segment after the attach is not recorded
(the child still has it attached then), and, at a later fork, that the
new process shares the shared mappings.

Before, a replay's checkpoints and copies (forks of the replay process)
shared those mappings with the replay going on from them: going back to
a breakpoint hit showed what a later position had written there (mark(40)
showed counter 40 where the run had 39). And System V shared memory could
not be replayed at all: the replay stopped at shmat.

The oracle is the program run under gdb natively: at each hit of mark()
it prints i, the shared counter, the segment's word and the child's
message. ptrev's sessions (a live `serve` recording over gdb's pipe; the
saved event recording replayed; an sw recording replayed) jump back and
forth between hits (reverse-continue and continue across several marks
and across positions the replay has already run past) and must print,
at each, the line the native run printed for that i; and at done(), the
read-only attach's value.

usage: shared_memory.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402

SHOW = ('printf "at i=%d counter=%d seg=%d msg=%s posix=%d %s\\n", i, counter[0], seg[1], '
        '(char *)seg + 16, posix[2], (char *)posix + 32')
# Where each session stops, in order: back across several marks, forward
# past positions replayed before, back again; then a line into mark(16)
# (its counter written, the segment's word not yet) and back.
MOVES = ['reverse-continue', 'reverse-continue', 'reverse-continue', 'continue', 'continue',
         'reverse-continue', 'next', SHOW, 'reverse-next', SHOW]
ORDER = [25, 16, 7, 16, 25, 16]


def gdb_script(prog, lines, path):
    """gdb -batch running lines from a script file (a breakpoint's
    `commands` need one), each echoed; its output as text."""
    with open(path, 'w') as f:
        f.write('set trace-commands on\n' + '\n'.join(lines) + '\n')
    r = subprocess.run(['gdb', '-nx', '-batch', '-x', path, prog], capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def hits(text):
    return re.findall(r'^at i=.*$', text, re.M)


def native(prog, work):
    """Every mark's line and done()'s values; then mark(16)'s line and
    the line after one `next` there."""
    out = gdb_script(prog, ['set startup-with-shell off', 'break mark', 'commands',
                            'silent', SHOW, 'continue', 'end', 'break done', 'run',
                            'print sum', 'up', 'print again[1]', 'kill'],
                     os.path.join(work, 'native.gdb'))
    inside = gdb_script(prog, ['set startup-with-shell off', 'break mark if i == 16', 'run',
                               SHOW, 'next', SHOW, 'kill'], os.path.join(work, 'inside.gdb'))
    return hits(out), re.findall(r'^\$\d+ = (.*)$', out, re.M), hits(inside)


def session(prog, target, path, to_done='continue'):
    """At done(), then the moves between marks 7, 16 and 25."""
    return gdb_script(prog, ['set pagination off', target, 'break done', to_done,
                             'print sum', 'up', 'print again[1]',
                             'break mark if i == 7 || i == 16 || i == 25', 'commands', 'silent',
                             SHOW, 'end'] + MOVES, path)


def compare(name, out, oracle):
    oracle_hits, oracle_values, inside = oracle
    got = hits(out)
    at = [int(re.match(r'at i=(\d+)', h).group(1)) for h in got[:6]]
    check(at == ORDER and all(h in oracle_hits for h in got[:6]),
          '%s: at each mark the native run\'s values (%s)' % (name, got if got else out[-1500:]))
    check(got[6:] == [inside[1], inside[0]], '%s: a line into mark(16) and back, as native '
          '(%s, native %s)' % (name, got[6:], inside[1::-1]))
    values = re.findall(r'^\$\d+ = (.*)$', out, re.M)
    check(values[:2] == oracle_values[:2], '%s: at done() sum and the read-only attach\'s '
          'word as native (%s, native %s)' % (name, values[:2], oracle_values[:2]))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    prog = os.path.abspath(os.path.join(progdir, 'shared_mem'))
    os.makedirs(work, exist_ok=True)
    oracle = native(prog, work)
    check(len(oracle[0]) == 30 and oracle[1][:2] == ['180', '60'] and
          'msg=written by the child' in oracle[0][0] and len(oracle[2]) == 2,
          'the native run (%d marks, %s, %s)' % (len(oracle[0]), oracle[1], oracle[2]))

    live = session(prog, 'target remote | %s serve --stdio --record -- %s' % (ptrev, prog),
                   os.path.join(work, 'live.gdb'))
    compare('a live recording', live, oracle)
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'shared_mem-%s.ptrev' % backend)
        r = record(ptrev, backend, trace, [prog])
        check(r.returncode == 0 and 'sum=180' in r.stdout,
              '%s recording (%s%s)' % (backend, r.stdout.strip(), r.stderr.strip()[-300:]))
        notes = re.findall(r'^ptrev: the System V shared memory segment .*', r.stderr, re.M)
        check(len(notes) == 1 and 'attached by 1 other process: what it writes there after '
              'the attach is not recorded' in notes[0],
              '%s recording: one note, at the attach that the child had attached too (%s)'
              % (backend, notes))
        forked = re.findall(r'^ptrev: thread \d+ made process \d+ while .*', r.stderr, re.M)
        check(len(forked) == 1 and 'while 2 writable shared mappings' in forked[0] and
              'what that process writes there is not recorded' in forked[0],
              '%s recording: one note at the fork made with the shared mappings there (%s)'
              % (backend, forked))
        # The replay starts at the program's end: done() is behind it.
        rep = session(prog, 'target remote | %s replay --stdio %s' % (ptrev, trace),
                      trace + '.gdb', to_done='reverse-continue')
        compare('%s replay' % backend, rep, oracle)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
