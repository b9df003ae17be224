#!/usr/bin/env python3
"""A replay that goes differently because the program ran an instruction
whose result no event recording holds here (rdrand: no CPUID faulting on
this CPU) says so (issue 12: when state is unavailable, say why).
rdrand_use writes as many bytes as its rdrand values say; its replay
gets other values, and the first write shows it. The replay's message,
in gdb's terminal over stdio, names the instruction and the file that
holds it, beside what went differently. Before, it named only the write
(`syscall 1 argument 3 is 0x..., was 0x...`).

usage: unrecorded_insns.py PTREV PROGRAM WORK_DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402


def main():
    ptrev, prog, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'rdrand.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    if 'no rdrand' in r.stdout:
        print('SKIP: this CPU has no rdrand')
        return 77
    check(r.returncode == 0, 'rdrand_use recorded (%s)' % r.stderr[-300:])
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                        % (ptrev, trace), '-ex', 'info registers rip', prog],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    said = g.stdout + g.stderr
    check('replay diverged' in said and
          'the program\'s code holds rdrand, rdseed or rdpid (rdrand_use: ' in said and
          'a replay that runs one goes differently from the recording' in said,
          'the replay names rdrand and the file that holds it beside what went differently '
          '(%s)' % said.strip()[-800:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
