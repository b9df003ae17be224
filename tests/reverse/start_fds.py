#!/usr/bin/env python3
"""What a program inherited that is not memory (issue 12, item 1): its
open file descriptors and what they are, its terminal, session, process
group and the terminal's foreground group. start_fds reads them all and
keeps the text in `facts`. Recorded with both backends in a session of its
own on a pseudo-terminal (fds 0 and 2 the terminal, 1 a pipe, 21 a file
opened for appending, 22 a non-blocking pipe), it is replayed under gdb from
a pipe, without a terminal, with other descriptors: at done() `facts` must
be byte for byte what the run printed, and the replaying process itself
must really stand elsewhere (no terminal on fd 0, no fd 21), so the
equality comes from the recording, not from the replay's surroundings.
`ptrev info` lists the descriptors and the session the recording started
with.

`ptrev record` on a terminal gives the program the terminal, as a shell
does (its group in the foreground): a program that read its terminal was
stopped by SIGTTIN and the recording hung. Checked with `sh -c 'read x;
echo got $x'` fed a line through the pty, and Ctrl-C typed there reaches
the program (recorded as killed by SIGINT, ptrev exits 130).

usage: start_fds.py PTREV PROGRAM_DIR WORK_DIR
"""
import fcntl
import os
import pty
import re
import select
import signal
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, shell_each_below_gdb, full_state_said  # noqa: E402


def record_on_terminal(ptrev, backend, prog, trace, work):
    """ptrev record in a new session whose controlling terminal is a new
    pty; the program's stdout (a pipe) is returned with ptrev's status."""
    master, slave = pty.openpty()
    extra = os.open(os.path.join(work, 'appended.txt'), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                    0o644)
    rd, wr = os.pipe()
    os.set_blocking(rd, False)

    # Numbers of their own, made here: subprocess checks pass_fds before
    # preexec_fn runs.
    os.dup2(extra, 21)
    os.dup2(rd, 22)

    def start():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    try:
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            prog], stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                           preexec_fn=start, pass_fds=(21, 22), timeout=300)
    finally:
        for fd in (master, slave, extra, rd, wr, 21, 22):
            os.close(fd)
    return r.returncode, r.stdout.decode(errors='replace')


def on_terminal(argv, typed, after=1.5):
    """Run argv on a new pty as a shell would (its own session, the pty
    its terminal), type `typed` after a moment; what it wrote there and its
    exit status."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    time.sleep(after)
    os.write(fd, typed)
    out = b''
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 1)
        if r:
            try:
                got = os.read(fd, 4096)
            except OSError:
                break
            if not got:
                break
            out += got
        elif os.waitpid(pid, os.WNOHANG)[0]:
            pid = 0
            break
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, st = os.waitpid(pid, 0)
        status = os.waitstatus_to_exitcode(st)
    else:
        status = None  # reaped above: its status is not needed there
    os.close(fd)
    return out.decode(errors='replace'), status


def terminal_given(ptrev, backend, work):
    trace = os.path.join(work, 'read-%s.ptrev' % backend)
    out, _ = on_terminal([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                          '/bin/sh', '-c', 'read x; echo got $x'], b'hello\n')
    check('got hello' in out,
          '%s: a recorded program reads its terminal (%r)' % (backend, out[-200:]))
    trace = os.path.join(work, 'ctrl-c-%s.ptrev' % backend)
    t0 = time.monotonic()
    out, status = on_terminal([ptrev, 'record', '--backend', backend, '--force', '-o', trace,
                               '--', '/bin/sleep', '60'], b'\x03')
    info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                          timeout=60).stdout
    check(time.monotonic() - t0 < 50 and 'status: killed by signal SIGINT' in info,
          '%s: Ctrl-C on the terminal reaches the recorded program (%s, %.1f s)'
          % (backend, re.findall(r'^status:.*$', info, re.M), time.monotonic() - t0))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'start_fds')
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'start_fds-%s.ptrev' % backend)
        rc, printed = record_on_terminal(ptrev, backend, prog, trace, work)
        check(rc == 0 and re.search(r'^fd 0: flags 2 type 20000 tty /dev/pts/\d+$', printed, re.M)
              and re.search(r'^fd 21: flags 401 type 100000 tty -$', printed, re.M)
              and re.search(r'^fd 22: flags 800 type 10000 tty -$', printed, re.M)
              and 'session leader 0 group leader 1 foreground 1' in printed,
              '%s: recorded on a terminal, its group in the foreground, with fds 21 and 22 (%s, %r)'
              % (backend, rc, printed))
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                              timeout=60).stdout
        check(re.search(r'^  0: /dev/pts/\d+ \(read-write, terminal\)$', info, re.M)
              and re.search(r'^  21: .*/appended\.txt \(write-only, append\)$', info, re.M)
              and re.search(r'^  22: pipe:\[\d+\] \(read-only, non-blocking\)$', info, re.M)
              and re.search(r'^session: leader of its process group, '
                            r'terminal /dev/pts/\d+ \(its group in the foreground\)$', info, re.M),
              '%s: ptrev info lists the descriptors and the session it started with (%s)'
              % (backend, re.findall(r'^(?:open at start|  \d+|session):.*$', info, re.M)))
        script = os.path.join(work, 'start_fds.gdb')
        with open(script, 'w') as f:
            f.write('set remotetimeout 60\n'
                    'target remote | %s replay --stdio %s\n'
                    'break done\n'
                    'reverse-continue\n'
                    'printf "facts<<%%s>>\\n", facts\n'
                    'monitor why\n' % (ptrev, trace)
                    + shell_each_below_gdb(
                        'start_fds', 'echo "replaying fd0=$(readlink /proc/$p/fd/0) '
                        'fd21=$(readlink /proc/$p/fd/21 || echo none)"'))
        g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], capture_output=True,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        out = g.stdout + g.stderr
        m = re.search(r'^facts<<(.*?)>>$', out, re.M | re.S)
        check(m is not None and m.group(1) == printed and
              full_state_said(out),
              '%s: at done() the replay shows the facts the run printed (%r)'
              % (backend, m.group(1) if m else out[-600:]))
        stands = re.findall(r'^replaying fd0=(.*) fd21=(.*)$', out, re.M)
        check(stands and all('/dev/pts/' not in a and b in ('none', '') for a, b in stands),
              '%s: the replaying process has no terminal and no fd 21 (%s)' % (backend, stands))
        terminal_given(ptrev, backend, work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
