#!/usr/bin/env python3
"""A write error while recording (here the file size limit, RLIMIT_FSIZE,
as a full disk gives ENOSPC) never kills the user's program and never
loses what was written: `ptrev record` (event and sw backends) and `ptrev
serve -o` under gdb stop writing with one message naming the file, the
error and what was kept; the program's output is complete and its exit
status is ptrev's; the file's prefix is read by ptrev info and replays.
A program ptrev starts gets SIGXFSZ as ptrev was given it (ptrev itself
ignores it, to see EFBIG instead of dying).

usage: full_disk.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import resource
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, machine_notice  # noqa: E402

LIMIT = 1500 * 1024


def limited():
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    script = 'for i in 1 2 3; do seq 1 30000 | tail -1; done; exit 3'
    want = '30000\n' * 3
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'full-%s.ptrev' % backend)
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            '/bin/sh', '-c', script], capture_output=True, text=True,
                           timeout=600, preexec_fn=limited)
        msgs = [l for l in r.stderr.splitlines()
                if l.startswith('ptrev:') and not machine_notice(l)]
        check(r.returncode == 3 and r.stdout == want,
              '%s: the program ran to its end with its output and status (%d, %r)'
              % (backend, r.returncode, r.stdout[-40:]))
        check(len(msgs) == 1 and trace in msgs[0] and 'File too large' in msgs[0] and
              re.search(r'\(\d+ bytes kept', msgs[0]) is not None,
              '%s: one message with the file, the error and what was kept (%s)'
              % (backend, msgs))
        size = os.path.getsize(trace)
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                              timeout=60)
        check(info.returncode == 0 and size <= LIMIT and
              ('(%d bytes kept' % size) in r.stderr,
              '%s: ptrev info reads the %d bytes kept' % (backend, size))

    # The program's own SIGXFSZ: as ptrev was given it.
    probe = 'grep SigIgn /proc/self/status'
    for ignored in (False, True):
        def pre():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN if ignored else signal.SIG_DFL)
        r = subprocess.run([ptrev, 'record', '--backend', 'event', '--force', '-o',
                            os.path.join(work, 'xfsz.ptrev'), '--', '/bin/sh', '-c', probe],
                           capture_output=True, text=True, timeout=300, preexec_fn=pre)
        m = re.search(r'SigIgn:\s*([0-9a-f]+)', r.stdout)
        bit = bool(m and int(m.group(1), 16) & (1 << (signal.SIGXFSZ - 1)))
        check(m is not None and bit == ignored,
              'the program has SIGXFSZ %s, as ptrev was given it (%s)'
              % ('ignored' if ignored else 'at its default', r.stdout.strip()))

    # serve -o under gdb: the session goes on, the file keeps its prefix
    # (the first continue after going back stops at the present, a known
    # problem the user guide lists; the second runs on, to the stop ptrev
    # makes before the recorded program's exit, past its output).
    prog = os.path.join(progdir, 'e2e_basic')
    trace = os.path.join(work, 'full-serve.ptrev')
    if os.path.exists(trace):
        os.unlink(trace)
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex',
                        'target remote | %s serve --stdio -o %s -- %s' % (ptrev, trace, prog),
                        '-ex', 'break outer', '-ex', 'continue', '-ex', 'reverse-stepi',
                        '-ex', 'print global_counter', '-ex', 'continue',
                        '-ex', 'continue', prog],
                       capture_output=True, text=True, timeout=600,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE,
                                                             (700 * 1024, 700 * 1024)))
    out = g.stdout + g.stderr
    check(re.search(r'^\$1 = \d+$', out, re.M) is not None and
          re.search(r'^total=\d+ ', out, re.M) is not None,
          'serve -o: reverse execution and the program went on (%s)'
          % re.findall(r'^\$1 = .*$|^total=.*', out, re.M))
    check(out.count('File too large') == 1 and 'bytes kept' in out,
          'serve -o: one message when the session ends (%s)'
          % re.findall(r'^ptrev: .*$', out, re.M))
    info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True, timeout=60)
    check(info.returncode == 0, 'serve -o: ptrev info reads the prefix')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
