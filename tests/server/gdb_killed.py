#!/usr/bin/env python3
"""gdb killed (SIGKILL) while the program runs under `continue`, with
`serve --backend sw -o FILE`, over --stdio and TCP: as gdbserver does, ptrev kills the
program, and the file ends there, whole: every instruction `ptrev info`
counts is in its trace (`ptrev decode` gives as many: a recording cut
while a thread ran claimed instructions it did not hold), it says the
recorder stopped before the program ended, and it replays with full state
at its end.

usage: gdb_killed.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, free_port  # noqa: E402


def one(ptrev, prog, work, transport):
    trace = os.path.join(work, 'killed-%s.ptrev' % transport)
    if os.path.exists(trace):
        os.unlink(trace)
    srv = None
    err = open(os.path.join(work, 'serve-%s.err' % transport), 'w')
    if transport == 'stdio':
        target = 'target remote | %s serve --stdio --backend sw -o %s -- %s long' % (
            ptrev, trace, prog)
    else:
        port = free_port()
        srv = subprocess.Popen([ptrev, 'serve', '--backend', 'sw', '--listen',
                                '127.0.0.1:%d' % port, '-o', trace, '--', prog, 'long'],
                               stdout=subprocess.DEVNULL, stderr=err)
        time.sleep(0.5)
        target = 'target remote 127.0.0.1:%d' % port
    g = subprocess.Popen(['gdb', '-nx', '-batch', '-ex', target, '-ex', 'continue', prog],
                         stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    time.sleep(2)
    g.kill()
    g.wait()
    if srv:
        srv.wait(timeout=60)
    # ptrev (over stdio, gdb's child) ends by itself: wait for the file.
    deadline = time.time() + 60
    while time.time() < deadline:
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True).stdout
        if 'status:' in info and 'incomplete' not in info:
            break
        time.sleep(0.5)
    m = re.search(r'^instructions: (\d+)$', info, re.M)
    check(m is not None and 'recording stopped before the program ended' in info,
          '%s: the file ends where gdb went away (%s)'
          % (transport, re.findall(r'^(?:instructions|status): .*$', info, re.M)))
    dec = subprocess.run([ptrev, 'decode', trace], capture_output=True, text=True, timeout=600)
    n = len(re.findall(r'^[0-9a-f]{16}$', dec.stdout, re.M))
    check(m is not None and n == int(m.group(1)) and n > 0,
          '%s: every instruction info counts is in the trace (%d decoded, %s counted)'
          % (transport, n, m.group(1) if m else '?'))
    out = subprocess.run(['gdb', '-nx', '-batch', '-ex',
                          'target remote | %s replay --stdio %s' % (ptrev, trace),
                          '-ex', 'reverse-stepi', '-ex', 'print spins',
                          '-ex', 'info registers rsp', prog],
                         capture_output=True, text=True, timeout=300).stdout
    check(re.search(r'^\$1 = \d+$', out, re.M) is not None and
          re.search(r'^rsp\s+0x[0-9a-f]+', out, re.M) is not None,
          '%s: its replay shows full state at the end (%s)'
          % (transport, re.findall(r'^\$1 = .*$', out, re.M)))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_loop')
    for transport in ('stdio', 'tcp'):
        one(ptrev, prog, work, transport)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
