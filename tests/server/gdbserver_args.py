#!/usr/bin/env python3
"""ptrev serve takes gdbserver's command line too: COMM before the
program (gdbserver :PORT PROG ARGS, gdbserver - PROG ARGS over stdin and
stdout), gdbserver --multi :PORT, gdbserver --attach :PORT PID. A
gdbserver user's first try; before, ptrev ran ":PORT" as the program
(`exec: :4713: not found`). Each form is given, word for word, to
gdbserver (the oracle) and to `ptrev serve --no-record`; gdb's session
against each says the same (the program's exit and output, the attached
program's frames). Where gdb connects, given twice, is an error that
starts nothing; so is an option whose value is missing, which says so.

usage: gdbserver_args.py PTREV PROGRAM_DIR
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, free_port  # noqa: E402


def gdb(cmds, prog):
    args = ['gdb', '-nx', '-batch', '-ex', 'set sysroot', '-ex', 'set confirm off']
    for c in cmds:
        args += ['-ex', c]
    r = subprocess.run(args + [prog], capture_output=True, text=True, timeout=120)
    return r.stdout + r.stderr


def outcome(text):
    """What the session showed: the program's exits and output, the
    frames' functions, and the server's own words where gdb connects,
    where the program ends and where gdb detaches ("Child exited with
    status N", "Detaching from process N": before, ptrev said none of
    them); process ids and ports left out."""
    text = re.sub(r'process \d+', 'process N', text)
    text = re.sub(r', port \d+', ', port P', text)
    lines = []
    for ln in text.splitlines():
        frame = re.match(r'#(\d+)\s+(?:0x[0-9a-f]+ in )?(\w+)', ln)
        if frame:
            lines.append('#%s %s' % frame.groups())
        elif re.search(r'^\[Inferior 1|^exiting with|^Child (exited|terminated)|'
                       r'^Detaching from process|^Remote debugging from', ln):
            lines.append(ln)
    return lines


def served(server, words, cmds, prog):
    """gdb's session (cmds) with server started on words, TCP."""
    srv = subprocess.Popen(server + words, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    time.sleep(0.5)
    try:
        got = gdb(cmds, prog)
    finally:
        try:
            out, _ = srv.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
            out, _ = srv.communicate()
    return got + out


def main():
    ptrev, progdir = sys.argv[1], sys.argv[2]
    prog = os.path.join(progdir, 'e2e_exit')
    servers = (('gdbserver', ['gdbserver']), ('ptrev', [ptrev, 'serve', '--no-record']))

    def both(make):
        return [make(cmd) for _, cmd in servers]

    # gdbserver - PROG ARGS: stdin and stdout.
    want, got = both(lambda s: gdb(['target remote | %s - %s 3' % (' '.join(s), prog),
                                    'continue'], prog))
    check(outcome(got) and outcome(got) == outcome(want) and 'exited with code 03' in got,
          'SERVER - PROG ARGS over stdio as gdbserver (%s; gdbserver %s)'
          % (outcome(got), outcome(want)))

    # gdbserver :PORT PROG ARGS
    def tcp(s):
        port = free_port()
        return served(s, [':%d' % port, prog, '5'], ['target remote :%d' % port, 'continue'],
                      prog)
    want, got = both(tcp)
    check(outcome(got) and outcome(got) == outcome(want) and 'exited with code 05' in got,
          'SERVER :PORT PROG ARGS as gdbserver (%s; gdbserver %s)'
          % (outcome(got), outcome(want)))

    # A program killed by a signal: gdbserver's "Child terminated with
    # signal = 0xb (SIGSEGV)".
    crash = os.path.join(progdir, 'e2e_crash')

    def crashed(s):
        port = free_port()
        return served(s, [':%d' % port, crash], ['target remote :%d' % port, 'continue',
                                                  'continue'], crash)
    want, got = both(crashed)
    check('Child terminated with signal = 0xb (SIGSEGV)' in got and outcome(got) == outcome(want),
          'SERVER :PORT PROG that crashes, as gdbserver (%s; gdbserver %s)'
          % (outcome(got), outcome(want)))

    # gdbserver --multi :PORT, then run and run again
    def multi(s):
        port = free_port()
        return served(s, ['--multi', ':%d' % port],
                      ['target extended-remote :%d' % port, 'set remote exec-file ' + prog,
                       'run 7', 'run 0', 'monitor exit'], prog)
    want, got = both(multi)
    check(outcome(got) and outcome(got) == outcome(want) and 'exiting with 7' in got,
          'SERVER --multi :PORT, two runs, as gdbserver (%s; gdbserver %s)'
          % (outcome(got), outcome(want)))

    # gdbserver --attach :PORT PID
    loop = os.path.join(progdir, 'e2e_loop')

    def attach(s):
        p = subprocess.Popen([loop, 'long'], stdout=subprocess.DEVNULL)
        time.sleep(0.3)
        port = free_port()
        try:
            return served(s, ['--attach', ':%d' % port, str(p.pid)],
                          ['target remote :%d' % port, 'bt', 'detach'], loop)
        finally:
            p.kill()
            p.wait()
    want, got = both(attach)
    frames = [ln for ln in outcome(got) if ln.startswith('#')]
    check(frames and outcome(got) == outcome(want),
          'SERVER --attach :PORT PID as gdbserver (%s; gdbserver %s)'
          % (outcome(got), outcome(want)))

    # Twice: an error, nothing started.
    r = subprocess.run([ptrev, 'serve', '--listen', ':%d' % free_port(), ':%d' % free_port(),
                        prog, '9'], capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and 'given twice' in r.stderr and 'exiting' not in r.stdout,
          '--listen and a gdbserver address both: an error that runs nothing (%s)'
          % r.stderr.strip())
    # An option whose value is missing (the line's last word) says so,
    # rather than calling the option unknown.
    for words in (['serve', '--listen'], ['serve', '--backend'], ['serve', '-o'],
                  ['serve', '--attach'], ['replay', '--listen']):
        r = subprocess.run([ptrev] + words, capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and '%s needs a value' % words[-1] in r.stderr,
              'ptrev %s: needs a value (%s)' % (' '.join(words), r.stderr.strip()))
    # --selftest: gdbserver's built-in unit tests; ptrev has none and says
    # what a gdbserver built without them says (GDB's unittest.exp reads
    # it), and why.
    want, got = both(lambda s: subprocess.run(s + ['--selftest'], capture_output=True,
                                              text=True, timeout=30))
    check(want.returncode == got.returncode == 0 and got.stdout == want.stdout and
          'Selftests have been disabled' in want.stdout and 'test suite' in got.stderr,
          '--selftest: as a gdbserver without self tests (%r %r; gdbserver %r)'
          % (got.stdout, got.stderr, want.stdout))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
