#!/usr/bin/env python3
"""`ptrev record` killed with SIGKILL at ten moments of a program's run
(e2e_loop, which sleeps in a loop counting `spins`; the moments count from
the start of the recording, when the file names the thread), with the event and the sw backends: each file is read by `ptrev info` (incomplete, as the
recorder never wrote END) and replays under gdb with full state at its
last position. The recorders write what they record as they go (the sw
backend's PT at least every 250 ms), so a kill loses at most that much;
before, a sw recording killed in its first seconds held no trace at all.
Killed at once, a sw recording holds no instruction: the replay says so
(it said the thread had ended in an exit syscall). Killed before its
program made any syscall (no_syscall_yet; ld.so on a loaded machine), a sw
recording replays all it holds (it held PT but no instruction counted).

usage: killed_recorder.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402

# On a loaded machine (CI) a sw recording killed 0.4 s after it started
# is still in ld.so, before its first syscall: its PT has no disable to
# confirm an instruction, and the replay used to find none (a saved
# recording's history now counts every instruction it can decode).
MOMENTS = {'event': [0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0],
           'sw': [0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]}


def wait_recording_started(ptrev, recorder, trace):
    """Until the recorder has started recording (the file names the
    program's thread, written when the recorder's engine starts): the
    moments count from there, not from ptrev's start or the program's exec,
    before which ptrev reads the mappings and copies code, what a loaded
    machine (CI runs tests side by side) can stretch past the first moment."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and recorder.poll() is None:
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                              timeout=60)
        if re.search(r'^threads: [1-9]', info.stdout, re.M):
            return
        time.sleep(0.01)


def end_state(ptrev, trace, prog, variable):
    """gdb on the replay of trace, one instruction back from its end:
    VARIABLE's value ($1) and rsp, what full state shows."""
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60',
                        '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace),
                        '-ex', 'reverse-stepi', '-ex', 'print ' + variable,
                        '-ex', 'info registers rsp', prog],
                       capture_output=True, text=True, timeout=300)
    return g.stdout + g.stderr


def no_syscall_yet(ptrev, progdir, work):
    """A sw recording killed before its program made any syscall (what a
    loaded machine makes of ld.so): its PT has no disable, and the replay
    found no instruction in it; every instruction it can decode counts."""
    prog = os.path.join(progdir, 'no_syscall_yet')
    trace = os.path.join(work, 'k-sw-no-syscall.ptrev')
    # One PSB segment (a larger period than the trace): no PSB after
    # the first closes a segment, the other way an instruction counted.
    p = subprocess.Popen([ptrev, 'record', '--backend', 'sw', '--psb-period', '16777216',
                          '--force', '-o', trace, '--', prog], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_recording_started(ptrev, p, trace)
    time.sleep(1.0)
    p.send_signal(signal.SIGKILL)
    p.wait()
    info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                          timeout=60).stdout
    check(re.search(r'^syscalls: 0$', info, re.M) and 'status: incomplete' in info and
          re.search(r'^psb packets: 1$', info, re.M),
          'sw, killed in a program that made no syscall yet: the file says so (%s)'
          % re.findall(r'^(?:syscalls|status|trace bytes|psb packets):.*$', info, re.M))
    out = end_state(ptrev, trace, prog, 'done')
    m = re.search(r'^\$1 = (\d+)$', out, re.M)
    check(m is not None and int(m.group(1)) > 0 and re.search(r'^rsp\s+0x[0-9a-f]+', out, re.M),
          'sw, killed before the first syscall: the replay has full state at its end '
          '(%s)' % re.findall(r'^\$1 = .*$|^rsp.*$|.*(?:unavailable|holds no).*', out, re.M)[:3])


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_loop')
    for backend in ('event', 'sw'):
        bad = []
        for i, t in enumerate(MOMENTS[backend]):
            trace = os.path.join(work, 'k-%s-%d.ptrev' % (backend, i))
            p = subprocess.Popen([ptrev, 'record', '--backend', backend, '--force', '-o', trace,
                                  '--', prog, 'long'], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            wait_recording_started(ptrev, p, trace)
            time.sleep(t)
            p.send_signal(signal.SIGKILL)
            p.wait()
            info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True,
                                  timeout=60)
            if info.returncode != 0 or 'status: incomplete' not in info.stdout:
                bad.append((t, 'info', info.stderr.strip()[-100:]))
                continue
            out = end_state(ptrev, trace, prog, 'spins')
            if not re.search(r'^\$1 = \d+$', out, re.M) or \
                    not re.search(r'^rsp\s+0x[0-9a-f]+', out, re.M):
                bad.append((t, 'replay', re.findall(r'^\$1 = .*$|^rsp.*$|.*unavailable.*',
                                                    out, re.M)[:3]))
        if backend == 'sw':
            trace = os.path.join(work, 'k-sw-early.ptrev')
            p = subprocess.Popen([ptrev, 'record', '--backend', backend, '--force', '-o', trace,
                                  '--', prog, 'long'], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(0.05)
            p.send_signal(signal.SIGKILL)
            p.wait()
            g = subprocess.run(['gdb', '-nx', '-batch', '-ex',
                                'target remote | %s replay --stdio %s' % (ptrev, trace),
                                '-ex', 'reverse-stepi', '-ex', 'monitor why', prog],
                               capture_output=True, text=True, timeout=300)
            out = g.stdout + g.stderr
            check('exit' not in out and 'holds no instruction' in out,
                  'sw: killed at once, the replay says the recording holds no instruction '
                  '(%s)' % re.findall(r'.*(?:holds no|unavailable).*', out)[:2])
            no_syscall_yet(ptrev, progdir, work)
        check(not bad, '%s: killed at %d moments, each file is read and replays with full '
              'state at its end (failures: %s)' % (backend, len(MOMENTS[backend]), bad))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
