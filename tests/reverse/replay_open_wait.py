#!/usr/bin/env python3
"""`target remote | ptrev replay --stdio FILE` with gdb's default
remotetimeout, on an event recording whose end takes longer to show than
gdb waits for a silent server (about 6 s: its first packet's ack, 2 s,
three tries). gdb had given up on qSupported and gone on with a broken
session ("Remote replied unexpectedly to 'vMustReplyEmpty'", "No
stack."); ptrev now keeps gdb waiting while it opens the recording.

The recording: `dd if=/dev/zero of=/dev/null bs=1 count=400000` (a real
program of 800,000 syscalls: re-executed to its end, a stop each, it takes
over ten seconds; the test checks that the open took longer than gdb's
default patience, or it would prove nothing). gdb, with no setting of its
own, has full state at the end: the backtrace in _exit, `monitor why`,
and a reverse-stepi. The recording (about 100 MB) is removed at the end.

The same with `set remotetimeout 1`: gdb sends qSupported again after
each timeout's silence and takes ptrev's second answer for its next
packet's, so ptrev must be heard from at once, not only a second after
it has read the file (a CI run under load broke so with the default
timeout of 2 s).

usage: replay_open_wait.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, full_state_said  # noqa: E402


def main():
    ptrev, work = sys.argv[1], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    dd = shutil.which('dd')
    trace = os.path.join(work, 'dd.ptrev')
    r = record(ptrev, 'event', trace,
               [dd, 'if=/dev/zero', 'of=/dev/null', 'bs=1', 'count=400000'], timeout=600)
    check(r.returncode == 0, 'dd recorded (%s)' % r.stderr.strip()[-200:])
    for what, setting in (('default timeout', []), ('remotetimeout 1',
                                                    ['-ex', 'set remotetimeout 1'])):
        t0 = time.time()
        g = subprocess.run(['gdb', '-nx', '-batch'] + setting +
                           ['-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace),
                            '-ex', 'shell echo OPENED $(date +%s.%N)', '-ex', 'bt 1',
                            '-ex', 'monitor why',
                            '-ex', 'reverse-stepi', '-ex', 'info registers rip', dd],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=600)
        out = g.stdout + g.stderr
        print('%s: gdb ran %.1f s' % (what, time.time() - t0))
        opened = re.search(r'OPENED (\S+)', out)
        took = float(opened.group(1)) - t0 if opened else 0
        # gdb gives a silent server 2 s for its first packet's ack, three
        # tries: an open quicker than that tests nothing here.
        check(took > 6.5, '%s: the open took longer than gdb waits for a silent server '
              '(%.1f s)' % (what, took))
        check('Ignoring packet error' not in out and 'Remote replied unexpectedly' not in out,
              '%s: gdb waited for ptrev to open the recording (%s)'
              % (what, [ln for ln in out.splitlines()
                        if 'packet' in ln or 'unexpectedly' in ln][:2]))
        check('#0 ' in out and '_exit' in out and
              full_state_said(out),
              '%s: full state at the end, as the recording ended (%s)'
              % (what, [ln for ln in out.splitlines()
                        if ln.startswith('#0') or 'available' in ln]))
        check('rip ' in out and 'in ?? ()' not in out, '%s: a reverse-stepi from there (%s)'
              % (what, [ln for ln in out.splitlines() if ln.startswith('rip')]))
    os.remove(trace)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
