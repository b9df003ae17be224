#!/usr/bin/env python3
"""Stepping back from the end of a saved event recording, against gdb's
record full.

A program that ends in exit_group stands at the end on that syscall
instruction, as record full stops it before exit_group, and the first
reverse-stepi goes to the instruction before. A multi-threaded recording
(one position for the whole program: the threads' histories in their
recorded order) once stood past the syscall instead, inside it, which
shows the same PC: its first reverse-stepi did not move, and the next
stepi forward neither. Checked on a one-thread and on a multi-threaded
program:
  - oracle: the program run under gdb, `record full` from `_exit`,
    stepped until record full stops it before exit_group; the PC there
    and, after one reverse-stepi, the PC and general registers;
  - ptrev: the recording replayed through gdb: at the end the same PC
    (and the same registers but rcx and r11, which the syscall
    overwrote), after reverse-stepi the same PC and registers, and a
    stepi forward back at the end's PC.

usage: end_step.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402

REGS = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11',
        'r12', 'r13', 'r14', 'r15', 'rip', 'eflags']
SHOW = ['-ex', 'echo ==\\n', '-ex', 'info registers ' + ' '.join(REGS)]


def sections(out):
    """The register values of each `==` section: a list of dicts."""
    found = []
    for part in out.split('==\n')[1:]:
        regs = {}
        for m in re.finditer(r'^(\w+)\s+(0x[0-9a-f]+|\[[^\]]*\]|<unavailable>)', part, re.M):
            if m.group(1) in REGS and m.group(1) not in regs:
                regs[m.group(1)] = m.group(2)
        found.append(regs)
    return found


def record_full(prog, env):
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set startup-with-shell off', '-ex',
                        'unset environment LINES', '-ex', 'unset environment COLUMNS',
                        '-ex', 'break main', '-ex', 'run', '-ex',
                        'break _exit', '-ex', 'continue', '-ex', 'record full', '-ex',
                        'stepi 100'] + SHOW + ['-ex', 'reverse-stepi'] + SHOW + [prog],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                       env=env)
    return sections(g.stdout + g.stderr), g.stdout + g.stderr


def replayed(ptrev, prog, trace):
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 120', '-ex',
                        'target remote | %s replay --stdio %s' % (ptrev, trace)] + SHOW +
                       ['-ex', 'reverse-stepi'] + SHOW + ['-ex', 'stepi'] + SHOW + [prog],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    return sections(g.stdout + g.stderr), g.stdout + g.stderr


def main():
    ptrev, progdir, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    # One environment for the recording and record full's run: the
    # stack's addresses depend on it.
    env = {k: v for k, v in os.environ.items() if k not in ('LINES', 'COLUMNS')}
    for name in ['e2e_basic', 'e2e_threads']:
        prog = os.path.abspath(os.path.join(progdir, name))
        want, wout = record_full(prog, env)
        check(len(want) == 2 and want[0].get('rip') and 'exit_group' in wout,
              '%s: record full stops before exit_group (%r)' % (name, wout[-600:]))
        trace = os.path.join(work, name + '.ptrev')
        r = record(ptrev, 'event', trace, [prog], env=env)
        check(r.returncode == 0, '%s recorded (%r)' % (name, r.stderr[-400:]))
        got, gout = replayed(ptrev, prog, trace)
        if len(want) != 2 or len(got) != 3:
            check(False, '%s: registers read at the end, back one and forward (%r)'
                  % (name, gout[-800:]))
            continue
        end = {k: v for k, v in want[0].items() if k not in ('rcx', 'r11')}
        check(all(got[0].get(k) == v for k, v in end.items()),
              '%s: at the end, record full\'s registers but rcx and r11 (%r, %r)'
              % (name, got[0], want[0]))
        check(got[1] == want[1], '%s: reverse-stepi from the end: record full\'s registers '
              '(%r, %r)' % (name, got[1], want[1]))
        check(got[2].get('rip') == want[0]['rip'],
              '%s: stepi forward: back at the end (%r)' % (name, got[2].get('rip')))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
