#!/usr/bin/env python3
"""Run a test only where this machine traps what the test's recordings and
replays need, else skip it (exit 77) saying why.

ptrev records a program's rdtsc by trapping it (PR_SET_TSC) and runs
replays to their places with hardware breakpoints. Some hypervisors accept
both requests and do neither (seen: a bhyve guest on an AMD EPYC, kernel
6.18): the program then reads the TSC unseen (the dynamic loader does, to
time its relocations) and its replays differ from the recording, and debug
registers never stop a thread. `ptrev info --machine` asks the machine
itself (ptrev/debugregs.h, ptrev/tsc_trap.h). A test that checks
recordings against oracles proves nothing there: it is skipped, loudly,
rather than failed; the tests that need neither run everywhere.

usage: machine_gate.py PTREV -- COMMAND [ARG...]   (COMMAND a .py: run by this python)
PTREV_MACHINE_GATE=0 in the environment runs COMMAND whatever the machine.
"""
import os
import subprocess
import sys


def lacks(ptrev):
    """What this machine lacks of what recordings need, in words."""
    out = subprocess.run([ptrev, 'info', '--machine'], capture_output=True, text=True,
                         env=dict(os.environ, PTREV_DEBUG_REGISTERS='',
                                  PTREV_TSC_TRAPS='')).stdout
    missing = []
    for line in out.splitlines():
        key, _, value = line.partition(': ')
        if key == 'debug registers' and value.startswith('do not trap'):
            missing.append('its debug registers do not trap')
        if key == 'rdtsc trap' and value.startswith('no'):
            missing.append('rdtsc does not trap (PR_SET_TSC)')
    return missing


def main():
    if len(sys.argv) < 4 or sys.argv[2] != '--':
        sys.exit('usage: machine_gate.py PTREV -- COMMAND [ARG...]')
    # PTREV_MACHINE_GATE=0 runs the test all the same (to see what
    # fails on such a machine).
    missing = [] if os.environ.get('PTREV_MACHINE_GATE') == '0' else lacks(sys.argv[1])
    if missing:
        print('SKIP: this machine cannot record and replay exactly: %s (ptrev info --machine)'
              % '; '.join(missing))
        sys.exit(77)
    cmd = sys.argv[3:]
    if cmd[0].endswith('.py'):
        cmd = [sys.executable] + cmd
    os.execvp(cmd[0], cmd)


if __name__ == '__main__':
    main()
