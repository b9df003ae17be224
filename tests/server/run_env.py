#!/usr/bin/env python3
"""What gdb sets for `run` in extended mode reaches the program as under
gdbserver (the oracle): `set environment`, `unset environment`, `set cwd`
(and back to the server's own with an empty one), `set
disable-randomization off` (QEnvironmentHexEncoded/Unset/Reset,
QSetWorkingDir, QDisableRandomization). env_cwd writes what it was started
with to a file; the same gdb script runs against `gdbserver --multi -` and
`ptrev serve --multi --stdio`, and the files must agree. Under --record,
randomisation stays off (a replay needs the layout) and ptrev says so.

usage: run_env.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def session(server, prog, work, tag):
    """Three runs with different settings; what each program wrote."""
    outs = [os.path.join(work, '%s-%d.txt' % (tag, i)) for i in range(3)]
    for o in outs:
        if os.path.exists(o):
            os.unlink(o)
    sub = os.path.join(work, 'sub dir')
    os.makedirs(sub, exist_ok=True)
    lines = ['set remote exec-file %s' % prog,
             'set environment PTREV_T=hello world',
             'unset environment PTREV_GONE',
             'set cwd %s' % sub,
             'run %s' % outs[0],
             'unset environment PTREV_T',
             'set cwd',
             'set disable-randomization off',
             'run %s' % outs[1],
             'set disable-randomization on',
             'set environment PTREV_GONE=back',
             'run %s' % outs[2]]
    cmd = ['gdb', '-nx', '-batch', '-ex', 'target extended-remote | %s' % server]
    for line in lines:
        cmd += ['-ex', line]
    env = dict(os.environ, PTREV_GONE='present')
    g = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL, cwd=work)
    got = []
    for o in outs:
        got.append(open(o).read() if os.path.exists(o) else '(no file)')
    return got, g.stdout + g.stderr


def main():
    ptrev, progdir, work = [os.path.abspath(a) for a in sys.argv[1:4]]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'env_cwd')
    want, out = session('gdbserver --multi -', prog, work, 'gdbserver')
    # gdb runs the program itself when the connection fails: make sure
    # each server did.
    check('hello world' in want[0] and 'sub dir' in want[0] and
          out.count('Remote debugging using') == 1 and 'exited normally' in out,
          'gdbserver: the oracle ran with the settings (%r)' % want[0])
    got, out = session('%s serve --multi --no-record --stdio' % ptrev, prog, work, 'ptrev')
    check(out.count('Process %s created' % prog) == 3,
          'ptrev started the three runs (%s)' % out[-300:])
    for i in range(3):
        check(got[i] == want[i], 'run %d: ptrev = gdbserver (%r vs %r)' % (i + 1, got[i], want[i]))
    rec, out = session('%s serve --multi --stdio --record' % ptrev, prog, work, 'record')
    check('no_randomize=1' in rec[1] and 'randomization stays off while recording' in out and
          out.count('Process %s created' % prog) == 3,
          'recording: randomisation stays off, and ptrev says so (%r)' % rec[1])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
