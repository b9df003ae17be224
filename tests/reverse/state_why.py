#!/usr/bin/env python3
"""Where ptrev cannot show a position's registers and memory (here: a
multi-threaded recording, whose past has only the PC), gdb's user is told
why where gdb runs, not only on ptrev's stderr: once per reason as console
output at the stop (over TCP, where ptrev's stderr is elsewhere, and in
GDB/MI as a target stream record, @"...", what an IDE shows as the
program's output), and on demand with `monitor why`;
where the state is whole, `monitor why` says so.

usage: state_why.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, free_port, full_state_said  # noqa: E402

REASON = 'multi-threaded full-state replay is not supported yet'


def gdb(prog, lines, timeout=300):
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_threads')
    trace = os.path.join(work, 'threads.ptrev')
    r = subprocess.run([ptrev, 'record', '--backend', 'sw', '--force', '-o', trace, '--', prog],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, 'recorded e2e_threads (%d)' % r.returncode)

    # Over TCP: ptrev's stderr goes to a file gdb's user does not see.
    port = free_port()
    with open(os.path.join(work, 'replay.err'), 'w') as err:
        srv = subprocess.Popen([ptrev, 'replay', '--listen', '127.0.0.1:%d' % port, trace],
                               stdout=subprocess.DEVNULL, stderr=err)
        time.sleep(0.5)
        out = gdb(prog, ['target remote 127.0.0.1:%d' % port, 'reverse-stepi', 'reverse-stepi',
                         'monitor why', 'kill'])
        srv.wait(timeout=60)
    told = re.findall(r'^ptrev: registers and memory are unavailable here.*$', out, re.M)
    check(len(told) == 1 and REASON in told[0],
          'over TCP, gdb\'s console says once why at the stops (%s)' % told)
    check(re.search(r'^Registers and memory are unavailable here .*%s\.$' % re.escape(REASON),
                    out, re.M) is not None, 'monitor why gives the reason')

    # GDB/MI: gdb passes the O packet on as target output before the stop.
    mi = subprocess.run(['gdb', '-nx', '-i=mi', '-batch',
                         '-ex', 'target remote | %s replay --stdio %s 2>/dev/null'
                         % (ptrev, trace), '-ex', 'reverse-stepi', prog],
                        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    check(re.search(r'^[@~]"ptrev: registers and memory are unavailable here.*%s'
                    % re.escape(REASON), mi.stdout, re.M) is not None,
          'GDB/MI shows it as target output')

    # Whole state: a single-threaded recording, and a live program.
    basic = os.path.join(progdir, 'e2e_basic')
    btrace = os.path.join(work, 'basic.ptrev')
    subprocess.run([ptrev, 'record', '--backend', 'sw', '--force', '-o', btrace, '--', basic],
                   capture_output=True, text=True, timeout=600)
    out = gdb(basic, ['target remote | %s replay --stdio %s' % (ptrev, btrace), 'reverse-stepi',
                      'monitor why'])
    check(full_state_said(out) and
          'unavailable here' not in out, 'a single-threaded replay: monitor why says all is '
          'there, nothing is told at the stop')
    out = gdb(basic, ['target remote | %s serve --stdio --no-record -- %s' % (ptrev, basic), 'monitor why'])
    check(full_state_said(out), 'live: the same')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
