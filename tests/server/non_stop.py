#!/usr/bin/env python3
"""Non-stop mode (QNonStop:1) as gdbserver gives it, gdbserver the oracle.

With gdb: `set non-stop on`, nonstop_spin's main thread stops at a
breakpoint while its spinner thread goes on counting (gdb shows it
running; its counter grows between two looks), a variable written while
the spinner runs stops it (also with every signal blocked in both
threads), the main thread goes on to the next
breakpoint, and the program exits normally. The same script runs against
`gdbserver -` and `ptrev serve --stdio`: the breakpoint hits, the threads
gdb shows running, the counter's growth and the exit must agree.

Raw protocol (no gdb): '?' answers the first stop and vStopped the rest
(then OK); vCont answers OK at once; vCont;t stops every running thread
and each stop comes through the notification queue, one %Stop
notification, the rest as replies to vStopped; the exit comes as a
%Stop:W notification.

usage: non_stop.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402
from rsp_peer import Peer  # noqa: E402

SCRIPT = '''set non-stop on
set pagination off
set confirm off
target remote | {server}
break stop_here
break finished
continue
info threads
print spins
shell sleep 0.3
print spins
set var go_on = 0
continue
info threads
continue
'''


def gdb_session(server, prog, work, tag):
    path = os.path.join(work, tag + '.gdb')
    with open(path, 'w') as f:
        f.write(SCRIPT.format(server=server))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', path, prog], capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    return g.stdout + g.stderr


def facts(out):
    """What must agree between servers: the hits, the threads shown
    running at the first stop, whether the counter grew, the exit."""
    hits = re.findall(r'hit Breakpoint \d+, (\w+) \(', out)
    tables = re.split(r'\n(?=  Id   Target Id)', out)[1:]
    running = [len(re.findall(r'\(running\)', t.split('\n$')[0])) for t in tables]
    spins = [int(v) for v in re.findall(r'^\$\d+ = (\d+)$', out, re.M)]
    grew = len(spins) == 2 and spins[1] > spins[0]
    exited = bool(re.search(r'\[Inferior 1 \(.*\) exited normally\]', out))
    return {'hits': hits, 'running': running, 'grew': grew, 'exited': exited}


def raw_session(ptrev, prog):
    proc = subprocess.Popen([ptrev, 'serve', '--stdio', '--no-record', '--', prog], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def write(data):
        proc.stdin.write(data)
        proc.stdin.flush()
    peer = Peer(write, proc.stdout.fileno())
    peer.send_raw(b'+')
    reply = peer.request(b'qSupported:multiprocess+;swbreak+;hwbreak+')
    check(reply is not None and b'QNonStop+' in reply, 'qSupported offers QNonStop+')
    check(peer.request(b'vCont?') == b'vCont;c;C;s;S;t', 'vCont? offers t')
    check(peer.request(b'QNonStop:1') == b'OK', 'QNonStop:1 answered OK')
    first = peer.request(b'?')
    check(first is not None and first.startswith(b'T05'), "'?': the stop at the start (%r)"
          % first)
    check(peer.request(b'vStopped') == b'OK', 'vStopped: no other stop')
    check(peer.request(b'vCont;c') == b'OK', 'vCont;c answered OK at once')
    # Both threads are running by now (the spinner has been counting).
    time.sleep(0.5)
    check(peer.notifications == [], 'no stop while the threads run (%r)' % peer.notifications)
    check(peer.request(b'vCont;t') == b'OK', 'vCont;t answered OK')
    stops = [peer.read_notification()]
    check(stops[0] is not None and stops[0].startswith(b'Stop:T00'),
          'a %%Stop notification of a thread stopped with no signal (%r)' % stops[0])
    while True:
        reply = peer.request(b'vStopped')
        if reply in (b'OK', None):
            break
        stops.append(b'Stop:' + reply)
    tids = sorted(set(re.findall(rb'thread:([0-9a-fp.]+);', b''.join(stops))))
    check(len(stops) == 2 and len(tids) == 2 and all(s.startswith(b'Stop:T00') for s in stops),
          'each of the two threads stopped once, the second through vStopped (%r)' % stops)
    # go_on = 0 (its address from the symbols gdb would read): let the
    # program end; the exit comes as a notification.
    syms = subprocess.run(['nm', prog], capture_output=True, text=True).stdout
    m = re.search(r'^([0-9a-f]+) [BbDd] go_on$', syms, re.M)
    if m:
        addr = int(m.group(1), 16)
        if addr < 0x100000:
            addr += 0x555555554000  # a PIE's offset: where it loads, randomisation off
        reply = peer.request(b'M%x,4:00000000' % addr)
        check(reply == b'OK', 'go_on written while stopped (%r)' % reply)
    check(peer.request(b'vCont;c') == b'OK', 'vCont;c again')
    end = peer.read_notification(timeout=20)
    check(end is not None and end.startswith(b'Stop:W00'), 'the exit comes as %%Stop:W00 (%r)'
          % end)
    check(peer.request(b'vStopped') == b'OK', 'vStopped after the exit: OK')
    proc.stdin.close()
    proc.wait(timeout=20)
    proc.stdout.close()
    proc.stderr.close()


def main():
    ptrev, progdir, work = [os.path.abspath(a) for a in sys.argv[1:4]]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'nonstop_spin')
    want = gdb_session('gdbserver - %s' % prog, prog, work, 'gdbserver')
    got = gdb_session('%s serve --stdio --no-record -- %s' % (ptrev, prog), prog, work, 'ptrev')
    fw, fg = facts(want), facts(got)
    check(fw['hits'] == ['stop_here', 'finished'] and fw['running'][:1] == [1] and fw['grew']
          and fw['exited'], 'gdbserver (the oracle): %s\n%s' % (fw, want[-2000:]))
    check(fg == fw, 'ptrev as gdbserver: the main thread stops at both breakpoints, the '
          'spinner runs meanwhile, its counter grows, the program exits (%s; gdbserver %s)\n%s'
          % (fg, fw, got[-2000:]))
    # Every signal blocked in both threads: gdb's reads and writes while
    # the spinner runs still hold the program (ptrev pauses it with
    # SIGSTOPs of its own, which no mask blocks).
    want = gdb_session('gdbserver - %s block' % prog, prog, work, 'gdbserver-block')
    got = gdb_session('%s serve --stdio --no-record -- %s block' % (ptrev, prog), prog, work, 'ptrev-block')
    check(facts(got) == facts(want) == fw and 'did not stop' not in got,
          'with every signal blocked, the same (%s; gdbserver %s)\n%s'
          % (facts(got), facts(want), got[-2000:]))
    raw_session(ptrev, prog)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
