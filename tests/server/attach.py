#!/usr/bin/env python3
"""serve --attach PID (and gdb's attach over extended-remote, vAttach)
against gdbserver --attach (--multi), the oracle: the same
program (e2e_loop, which loops for about 4 s and says when it is done) is
started twice and each copy attached to; gdb reads the same threads, the
same frames and the same variable, detaches on quit (qAttached says the
process was attached) and the program runs on to its end.

usage: attach.py PTREV PROGRAM_DIR
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def session(server_cmd, prog):
    """Start prog, attach with server_cmd(pid), run gdb; (gdb's output,
    whether the program printed its end after gdb quit)."""
    out_path = '/tmp/ptrev-attach-%d.out' % os.getpid()
    with open(out_path, 'w') as out:
        p = subprocess.Popen([prog, 'long'], stdout=out, stderr=subprocess.STDOUT)
    time.sleep(0.3)
    connect = []
    for c in server_cmd(p.pid):
        connect += ['-ex', c]
    gdb = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set sysroot'] + connect + [
                          '-ex', 'info threads', '-ex', 'bt', '-ex', 'p spins > 0',
                          '-ex', 'info inferiors', prog],
                         capture_output=True, text=True, timeout=120)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    with open(out_path) as f:
        printed = f.read()
    os.unlink(out_path)
    return gdb.stdout + gdb.stderr, 'loop done' in printed


def frames(text):
    return re.findall(r'^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+)', text, re.M)


def test_record_from_attach(ptrev, progdir):
    """--record from the attach point: reverse-stepi retraces the PCs the
    stepis went through (the recording starts mid-run, so the PC and
    read-only memory are what the past shows)."""
    prog = os.path.join(progdir, 'attach_spin')
    p = subprocess.Popen([prog])
    time.sleep(0.3)
    n = 12
    cmds = ['target remote | %s serve --stdio --record --attach %d' % (ptrev, p.pid)]
    cmds += ['p/x $pc', 'stepi'] * n + ['p/x $pc'] + ['reverse-stepi', 'p/x $pc'] * n + ['kill']
    args = ['gdb', '-nx', '-batch']
    for c in cmds:
        args += ['-ex', c]
    r = subprocess.run(args + [prog], capture_output=True, text=True, timeout=300)
    p.wait(timeout=20)
    pcs = re.findall(r'^\$\d+ = (0x[0-9a-f]+)', r.stdout, re.M)
    forward, back = pcs[:n + 1], pcs[n + 1:]
    check(len(pcs) == 2 * n + 1 and back == forward[::-1][1:],
          'recorded from the attach point: reverse-stepi retraces the stepis (%s / %s)'
          % (forward, back))
    check('started in mid-run' in r.stderr or 'started in mid-run' in r.stdout,
          '...and says why only the PC is known there')


def main():
    ptrev, progdir = sys.argv[1], sys.argv[2]
    prog = os.path.join(progdir, 'e2e_loop')
    want, want_done = session(lambda pid: ['target remote | gdbserver --attach - %d' % pid], prog)
    got, got_done = session(lambda pid: ['target remote | %s serve --stdio --attach %d'
                                         % (ptrev, pid)], prog)
    check(frames(got) and frames(got) == frames(want),
          'attached: the same backtrace as gdbserver (%s, gdbserver %s)'
          % (frames(got), frames(want)))
    check('$1 = 1' in got and '$1 = 1' in want, 'attached: the program\'s variables read')
    check(len(re.findall(r'^\*? +\d+ +Thread', got, re.M)) == 1,
          'attached: one thread, as the program has')
    check('detached' in got and got_done and want_done,
          'gdb detaches on quit and the program runs to its end (ptrev %s, gdbserver %s)'
          % (got_done, want_done))
    # gdb's attach in extended mode (vAttach), against gdbserver --multi
    want, want_done = session(lambda pid: ['target extended-remote | gdbserver --multi -',
                                           'attach %d' % pid], prog)
    got, got_done = session(lambda pid: ['target extended-remote | %s serve --multi --stdio'
                                         % ptrev, 'attach %d' % pid], prog)
    check(frames(got) and frames(got) == frames(want) and '$1 = 1' in got,
          'extended-remote attach: the same backtrace as gdbserver (%s, gdbserver %s)'
          % (frames(got), frames(want)))
    check(got_done and want_done,
          'extended-remote attach: gdb detaches on quit, the program runs on (%s, %s)'
          % (got_done, want_done))
    test_record_from_attach(ptrev, progdir)
    r = subprocess.run([ptrev, 'serve', '--stdio', '--attach', '999999999'],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    check(r.returncode != 0 and b'cannot attach to process' in r.stderr and r.stdout == b'',
          'attaching to no such process: a clear error (%r)' % r.stderr.strip())
    return finish()


if __name__ == '__main__':
    sys.exit(main())
