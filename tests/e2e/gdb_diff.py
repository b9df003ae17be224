#!/usr/bin/env python3
"""Differential end-to-end test: one gdb session, two servers, same transcript.

A case is a gdb script (cases/NAME.gdb, run with `gdb -nx -batch -x`) or a
GDB/MI command list (cases/NAME.mi, fed to `gdb --interpreter=mi3` one command
at a time).  The runner plays the case against server A (always gdbserver, the
oracle) and server B (ptrev, or gdbserver again to prove the harness itself),
over the stdio transport (`target remote | SERVER`) and/or TCP
(`target remote 127.0.0.1:PORT`), normalises what legitimately differs between
two runs (process and thread ids, the connection line, each server's own banner
lines) and fails with a unified diff when anything else differs.

Addresses and values are NOT normalised: both servers disable ASLR and launch
the program with the same path, argv and environment, so they must match.

Case header lines (comments at the top of the case file):
  # program: NAME    the test program (tests/programs/NAME.c) the case runs
  # args: A B C      arguments for the program
  # sleep-before: CMD   (MI only) wait 0.5 s before sending CMD
The case text names the connection as @TARGET@ (`target remote @TARGET@`,
`-target-select remote @TARGET@`); the runner substitutes it.

Exit status: 0 same, 1 different (or a run failed/timed out), 77 skipped
(gdb, gdbserver or the server under test missing).
"""

import argparse
import difflib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77

# Lines a server prints on its own behalf (on stderr, or relayed by gdb into
# its stderr / MI log stream).  They are not part of what the user debugs.
BANNER_PATTERNS = [re.compile(p) for p in (
    # gdbserver
    r'^stdin/stdout redirected$',
    r'^Process .* created; pid = \d+$',
    r'^Listening on port \d+$',
    r'^Remote debugging from host .*$',
    r'^Child exited with status \d+$',
    r'^Child terminated with signal = .*$',
    r'^Killing process\(es\): .*$',
    r'^Killing all inferiors$',
    r'^Detaching from process \d+$',
    r'^Remote side has terminated connection\.\s+GDBserver will terminate now\.$',
    r'^Exiting$',
    # ptrev: everything it says about itself starts with its name, plus the
    # contractual "Listening on HOST:PORT".
    r'^ptrev(:| ).*$',
    r'^Listening on \S+:\d+$',
)]


def is_banner(line):
    return any(p.match(line) for p in BANNER_PATTERNS)


class IdMap:
    """Replace process/thread ids by stable names in order of appearance.

    The first pid seen becomes PID1; a thread id equal to a known pid gets that
    pid's name; other thread ids become LWP1, LWP2, ...  Structure is kept: the
    same id always maps to the same name within one transcript.
    """

    def __init__(self):
        self.names = {}
        self.npid = 0
        self.nlwp = 0

    def pid(self, num):
        if num not in self.names:
            self.npid += 1
            self.names[num] = 'PID%d' % self.npid
        return self.names[num]

    def lwp(self, num):
        if num not in self.names:
            self.nlwp += 1
            self.names[num] = 'LWP%d' % self.nlwp
        return self.names[num]

    def hexpid(self, text):
        return self.pid(str(int(text, 16)))

    def hexlwp(self, text):
        return self.lwp(str(int(text, 16)))


def normalise_line(line, ids):
    """Normalise one transcript line; returns None to drop the line."""
    # The connection itself: stdio vs host:port, and the port number.
    line = re.sub(r'Remote debugging using .*?(\\n"|$)',
                  r'Remote debugging using <target>\1', line)
    line = re.sub(r'^(\+target remote|>>> -target-select remote) .*$',
                  r'\1 <target>', line)
    # gdb's view of processes and threads of a remote target.
    line = re.sub(r'\bThread (\d+)\.(\d+)\b',
                  lambda m: 'Thread %s.%s' % (ids.pid(m.group(1)),
                                              ids.lwp(m.group(2))), line)
    line = re.sub(r'\bLWP (\d+)\b', lambda m: 'LWP ' + ids.lwp(m.group(1)), line)
    line = re.sub(r'\bprocess (\d+)\b',
                  lambda m: 'process ' + ids.pid(m.group(1)), line)
    line = re.sub(r'\bpid = (\d+)\b', lambda m: 'pid = ' + ids.pid(m.group(1)), line)
    # MI: =thread-group-started,id="i1",pid="123"
    line = re.sub(r'\bpid="(\d+)"', lambda m: 'pid="%s"' % ids.pid(m.group(1)), line)
    # Raw remote thread ids that gdb sometimes shows: p<pid>.<tid>
    line = re.sub(r'\bp([0-9a-f]+)\.([0-9a-f]+)\b',
                  lambda m: 'p%s.%s' % (ids.hexpid(m.group(1)),
                                        ids.hexlwp(m.group(2))), line)
    # MI: the CPU a thread last ran on is the scheduler's choice.  Only its
    # value is hidden: a server that omits it still shows up as a difference.
    line = re.sub(r'\bcore="\d+"', 'core="N"', line)
    # PKRU: gdbserver 13 reads it at the fixed XSAVE offset Intel CPUs with
    # AVX-512 use (2688); where CPUID places it elsewhere (AMD, or Intel
    # without AVX-512) that is past the kernel's buffer and gdbserver shows
    # 0, while ptrev takes the offset from CPUID and shows the real value.
    # Only this one register's value is hidden.
    line = re.sub(r'^(pkru\s+)0x[0-9a-f]+(\s+)-?\d+$', r'\1<pkru>', line)
    # The same for the AVX-512 registers on CPUs that place their XSAVE
    # components elsewhere than Intel's (AMD with AVX-512: no MPX hole):
    # gdbserver 13 reads fixed offsets there (tests/programs/xsave_layout.c
    # says which components moved). Only their values are hidden.
    if 'opmask' in XSAVE_MOVED:
        line = re.sub(r'^(k[0-7]\s+)0x[0-9a-f]+\s+-?\d+$', r'\1<k>', line)
    if XSAVE_MOVED & {'zmm_hi256', 'hi16_zmm'}:
        line = re.sub(r'^((?:zmm\d+|[xy]mm(?:1[6-9]|2\d|3[01]))\s+)\{.*\}$', r'\1<avx512>', line)
    # `info threads` pads its Target Id column to the longest id, whose length
    # depends on how many digits the pids have: compare without the padding.
    if re.match(r'^(\s+Id\s+Target Id|[* ] \d+\s+Thread )', line):
        line = re.sub(r'  +', ' ', line)
    return line


# XSAVE components this CPU lays out away from Intel's offsets (see above).
XSAVE_MOVED = set()


def xsave_moved(programs_dir):
    helper = os.path.join(programs_dir, 'xsave_layout')
    if not os.access(helper, os.X_OK):
        return set()
    out = subprocess.run([helper], capture_output=True, text=True, check=False).stdout
    return set(out.split())


def normalise(text, ids, drop_banner=False, mi=False):
    out = []
    for line in text.splitlines():
        if drop_banner:
            body = line
            if mi and line.startswith('&"') and line.endswith('"'):
                body = mi_unquote(line[2:-1]).rstrip('\n')
            if is_banner(body):
                continue
        out.append(normalise_line(line, ids))
    return out


def mi_unquote(s):
    return re.sub(r'\\(.)', lambda m: {'n': '\n', 't': '\t'}.get(m.group(1), m.group(1)), s)


# --------------------------------------------------------------------------
# Processes: every run lives in its own sessions; nothing may survive it.

def session_members(sids):
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        # fields[0] is state (field 3); session is field 6.
        if int(fields[3]) in sids and fields[0] != 'Z':
            found.append(int(entry))
    return found


def cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().replace(b'\0', b' ').decode(errors='replace').strip()
    except OSError:
        return '?'


def reap_sessions(sids, grace):
    """Wait up to GRACE s for the sessions to empty, then SIGKILL the rest.

    Returns a list of 'left behind' descriptions (without pids, so that it can
    go into the compared transcript)."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not session_members(sids):
            return []
        time.sleep(0.05)
    left = []
    for pid in session_members(sids):
        left.append('left behind after gdb exited: ' +
                    os.path.basename(cmdline(pid).split(' ')[0] or '?'))
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return sorted(left)


def kill_session(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


# --------------------------------------------------------------------------
# Servers

class Server:
    """How to start one server kind over one transport."""

    def __init__(self, kind, path, shell, extra=()):
        self.kind = kind
        self.path = path
        self.shell = shell  # gdbserver only: --startup-with-shell
        self.extra = list(extra)  # ptrev only: options such as --record

    def stdio_argv(self, prog):
        if self.kind == 'gdbserver':
            return [self.path] + self.shell_opt() + ['-'] + prog
        return [self.path, 'serve', '--stdio'] + self.extra + ['--'] + prog

    def tcp_argv(self, prog):
        if self.kind == 'gdbserver':
            return [self.path] + self.shell_opt() + ['--once', '127.0.0.1:0'] + prog
        return [self.path, 'serve', '--listen', '127.0.0.1:0'] + self.extra + ['--'] + prog

    def shell_opt(self):
        return ['--startup-with-shell' if self.shell else '--no-startup-with-shell']


LISTEN_RE = re.compile(r'Listening on (?:port (\d+)|(\S+):(\d+))')


def wait_for_port(proc, errpath, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(errpath, errors='replace') as f:
            m = LISTEN_RE.search(f.read())
        if m:
            return int(m.group(1) or m.group(3))
        if proc.poll() is not None:
            return None
        time.sleep(0.02)
    return None


def clean_env():
    env = dict(os.environ)
    # `_` is set by whichever shell started us to the last command's path; it
    # would make the two servers' (and so the inferiors') environments differ
    # in length and shift every stack address.
    env.pop('_', None)
    env.pop('DEBUGINFOD_URLS', None)
    env['LC_ALL'] = 'C'
    env['TERM'] = 'dumb'
    return env


# --------------------------------------------------------------------------
# Running one session

class Run:
    def __init__(self, args, server, transport, case_text, case_kind, prog, tmp, label):
        self.a = args
        self.server = server
        self.transport = transport
        self.case_text = case_text
        self.case_kind = case_kind
        self.prog = prog
        self.tmp = tmp
        self.label = label
        self.sids = []
        self.notes = []

    def path(self, name):
        return os.path.join(self.tmp, '%s.%s.%s' % (self.label, self.transport, name))

    def target(self):
        if self.transport == 'stdio':
            argv = ['env', '-u', '_'] + self.server.stdio_argv(self.prog)
            return '| ' + ' '.join(shlex.quote(x) for x in argv)
        return '127.0.0.1:%d' % self.port

    def start_tcp_server(self):
        self.srv_out = self.path('server.stdout')
        self.srv_err = self.path('server.stderr')
        with open(self.srv_out, 'wb') as o, open(self.srv_err, 'wb') as e:
            self.srv = subprocess.Popen(self.server.tcp_argv(self.prog), stdin=subprocess.DEVNULL,
                                        stdout=o, stderr=e, env=clean_env(),
                                        start_new_session=True)
        self.sids.append(self.srv.pid)
        self.port = wait_for_port(self.srv, self.srv_err, 15)
        if self.port is None:
            kill_session(self.srv)
            with open(self.srv_err, errors='replace') as f:
                raise RunError('%s did not report a listening port; stderr:\n%s'
                               % (self.server.kind, f.read()))

    def run(self):
        self.srv = None
        if self.transport == 'tcp':
            self.start_tcp_server()
        try:
            if self.case_kind == 'gdb':
                sections = self.run_cli()
            else:
                sections = self.run_mi()
        finally:
            if self.srv is not None:
                try:
                    self.srv.wait(timeout=self.a.grace)
                except subprocess.TimeoutExpired:
                    pass
            left = reap_sessions(self.sids, self.a.grace)
        if self.srv is not None:
            with open(self.srv_out, errors='replace') as f:
                sections.append(('server stdout (the inferior\'s stdout)', f.read(), False))
            with open(self.srv_err, errors='replace') as f:
                # gdbserver puts a blank line before "Child exited ...".
                text = '\n'.join(l for l in f.read().splitlines() if l.strip())
                sections.append(('server stderr (banner and blank lines removed)', text, True))
        sections.append(('processes', '\n'.join(left + self.notes), False))
        return sections

    def run_cli(self):
        script = self.path('script.gdb')
        with open(script, 'w') as f:
            f.write(self.case_text.replace('@TARGET@', self.target()))
        out, err = self.path('gdb.stdout'), self.path('gdb.stderr')
        argv = [self.a.gdb, '-nx', '-batch',
                '-iex', 'set debuginfod enabled off',
                '-iex', 'set pagination off', '-iex', 'set width 0',
                '-iex', 'set trace-commands on',
                '-x', script]
        with open(out, 'wb') as o, open(err, 'wb') as e:
            gdb = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                   env=clean_env(), start_new_session=True, cwd=self.tmp)
            self.sids.append(gdb.pid)
            try:
                rc = gdb.wait(timeout=self.a.timeout)
            except subprocess.TimeoutExpired:
                kill_session(gdb)
                gdb.wait()
                raise RunError('gdb timed out after %d s (%s, %s)'
                               % (self.a.timeout, self.server.kind, self.transport),
                               out, err)
        with open(out, errors='replace') as f:
            stdout = f.read()
        with open(err, errors='replace') as f:
            stderr = f.read()
        return [('gdb stdout', stdout, False),
                ('gdb stderr (server banner lines removed)', stderr, True),
                ('gdb exit status', str(rc), False)]

    def run_mi(self):
        err = self.path('gdb.stderr')
        argv = [self.a.gdb, '--interpreter=mi3', '-nx', '-q',
                '-iex', 'set debuginfod enabled off',
                '-iex', 'set pagination off', '-iex', 'set width 0']
        deadline = time.monotonic() + self.a.timeout
        transcript = []
        with open(err, 'wb') as e:
            gdb = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=e, env=clean_env(), start_new_session=True,
                                   cwd=self.tmp)
            self.sids.append(gdb.pid)
            mi = MiDriver(gdb, deadline, transcript)
            try:
                mi.read_until(lambda l: l.startswith('(gdb)'))
                cmds = [c for c in self.case_text.splitlines()
                        if c.strip() and not c.lstrip().startswith('#')]
                sleep_before = set(header_values(self.case_text, 'sleep-before'))
                async_mode = False
                for i, cmd in enumerate(cmds):
                    cmd = cmd.strip().replace('@TARGET@', self.target())
                    nxt = cmds[i + 1].strip() if i + 1 < len(cmds) else ''
                    if cmd in sleep_before:
                        time.sleep(0.5)
                    if re.match(r'-gdb-set\s+mi-async\s+on', cmd):
                        async_mode = True
                    mi.command(cmd, wait_stop=not nxt.startswith('-exec-interrupt'),
                               async_mode=async_mode)
                mi.send('-gdb-exit')
                mi.read_until(lambda l: l.startswith('^exit'))
                gdb.stdin.close()
                rc = gdb.wait(timeout=max(1, deadline - time.monotonic()))
            except (RunError, subprocess.TimeoutExpired) as ex:
                kill_session(gdb)
                gdb.wait()
                raise RunError('MI session failed (%s, %s): %s\n--- transcript so far ---\n%s'
                               % (self.server.kind, self.transport, ex, '\n'.join(transcript)))
        with open(err, errors='replace') as f:
            stderr = f.read()
        return [('gdb/mi stdout', '\n'.join(transcript), True),
                ('gdb stderr (server banner lines removed)', stderr, True),
                ('gdb exit status', str(rc), False)]


class RunError(Exception):
    def __init__(self, msg, out=None, err=None):
        for name, p in (('stdout', out), ('stderr', err)):
            if p and os.path.exists(p):
                with open(p, errors='replace') as f:
                    msg += '\n--- gdb %s ---\n%s' % (name, f.read())
        super().__init__(msg)


class MiDriver:
    """Talks to gdb --interpreter=mi3 over pipes, one command at a time."""

    def __init__(self, proc, deadline, transcript):
        self.proc = proc
        self.deadline = deadline
        self.transcript = transcript
        self.buf = b''

    def send(self, cmd):
        self.transcript.append('>>> ' + cmd)
        self.proc.stdin.write((cmd + '\n').encode())
        self.proc.stdin.flush()

    def readline(self):
        fd = self.proc.stdout.fileno()
        while b'\n' not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise RunError('timed out waiting for gdb/mi output')
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RunError('gdb/mi closed its output')
                self.buf += chunk
        line, self.buf = self.buf.split(b'\n', 1)
        line = line.decode(errors='replace').rstrip('\r')
        self.transcript.append(line)
        return line

    def read_until(self, pred):
        while True:
            line = self.readline()
            if pred(line):
                return line

    def command(self, cmd, wait_stop, async_mode):
        self.send(cmd)
        result = self.read_until(lambda l: l.startswith('^'))
        self.read_until(lambda l: l.startswith('(gdb)'))
        if result.startswith('^running') and wait_stop:
            self.read_until(lambda l: l.startswith('*stopped'))
            if not async_mode:
                self.read_until(lambda l: l.startswith('(gdb)'))
        elif cmd.startswith('-exec-interrupt'):
            self.read_until(lambda l: l.startswith('*stopped'))


# --------------------------------------------------------------------------

def header_values(text, key):
    vals = []
    for line in text.splitlines():
        m = re.match(r'\s*#\s*%s:\s*(.*)$' % re.escape(key), line)
        if m:
            vals.append(m.group(1).strip())
    return vals


def render(sections, mi):
    ids = IdMap()
    lines = []
    for title, text, drop_banner in sections:
        lines.append('=== %s ===' % title)
        lines.extend(normalise(text, ids, drop_banner=drop_banner, mi=mi))
    return lines


def run_pair(args, servers, transport, case_text, case_kind, prog, tmp):
    rendered = []
    for label, server in zip(('A', 'B'), servers):
        run = Run(args, server, transport, case_text, case_kind, prog, tmp, label)
        rendered.append(render(run.run(), case_kind == 'mi'))
    return rendered


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('case', help='cases/NAME.gdb or cases/NAME.mi')
    ap.add_argument('program', help='the inferior (an absolute path is used), or a '
                    'directory holding the program the case names in "# program:"')
    ap.add_argument('--transport', choices=['stdio', 'tcp', 'both'], default='both')
    ap.add_argument('--server-b', choices=['ptrev', 'gdbserver'],
                    default=os.environ.get('E2E_SERVER_B', 'ptrev'),
                    help='server compared against gdbserver (default $E2E_SERVER_B '
                         'or ptrev); gdbserver proves the harness itself')
    ap.add_argument('--ptrev-arg', action='append', default=[],
                    help='extra option for `ptrev serve` (repeatable), e.g. --record '
                         'to run the same session while recording')
    ap.add_argument('--ptrev', default=os.environ.get('PTREV', ''),
                    help='ptrev executable (default $PTREV)')
    ap.add_argument('--gdb', default=shutil.which('gdb'))
    ap.add_argument('--gdbserver', default=shutil.which('gdbserver'))
    ap.add_argument('--gdbserver-shell', action='store_true',
                    help='start gdbserver inferiors through a shell (its default); '
                         'by default the harness passes --no-startup-with-shell, '
                         'which is what ptrev does: argv and environment unchanged')
    ap.add_argument('--b-shell', action='store_true',
                    help='with --server-b gdbserver: server B uses --startup-with-shell')
    ap.add_argument('--timeout', type=int, default=60, help='per gdb session, seconds')
    ap.add_argument('--grace', type=float, default=10,
                    help='seconds processes may outlive gdb before being killed')
    ap.add_argument('--keep', metavar='DIR', help='keep transcripts and logs in DIR')
    ap.add_argument('--show', action='store_true', help='print both transcripts')
    args = ap.parse_args()

    for what, path in (('gdb', args.gdb), ('gdbserver', args.gdbserver)):
        if not path or not shutil.which(path):
            print('SKIP: %s not found on PATH' % what)
            return SKIP
    if args.server_b == 'ptrev':
        if not args.ptrev or not os.access(args.ptrev, os.X_OK):
            print('SKIP: ptrev executable not given or missing (%r)' % args.ptrev)
            return SKIP
        server_b = Server('ptrev', os.path.abspath(args.ptrev), False, args.ptrev_arg)
    else:
        server_b = Server('gdbserver', args.gdbserver, args.b_shell)
    servers = [Server('gdbserver', args.gdbserver, args.gdbserver_shell), server_b]

    with open(args.case) as f:
        case_text = f.read()
    case_kind = 'mi' if args.case.endswith('.mi') else 'gdb'
    program = args.program
    if os.path.isdir(program):
        # A directory of test programs: the case names its program.
        names = header_values(case_text, 'program')
        if not names:
            print('FAIL: %s has no "# program:" line' % args.case)
            return 1
        program = os.path.join(program, names[0])
    prog = [os.path.abspath(program)]
    XSAVE_MOVED.update(xsave_moved(os.path.dirname(prog[0])))
    for a in header_values(case_text, 'args'):
        prog += shlex.split(a)

    transports = ['stdio', 'tcp'] if args.transport == 'both' else [args.transport]
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        tmp_ctx = None
        tmp = args.keep
    else:
        tmp_ctx = tempfile.TemporaryDirectory(prefix='e2e-')
        tmp = tmp_ctx.name
    name = os.path.basename(args.case)
    failed = False
    try:
        for transport in transports:
            desc = '%s over %s: gdbserver vs %s' % (name, transport, server_b.kind)
            try:
                a, b = run_pair(args, servers, transport, case_text, case_kind, prog, tmp)
            except RunError as ex:
                print('FAIL %s: %s' % (desc, ex))
                failed = True
                continue
            if args.keep:
                for label, lines in (('A', a), ('B', b)):
                    with open(os.path.join(tmp, '%s.%s.normalised' % (label, transport)), 'w') as f:
                        f.write('\n'.join(lines) + '\n')
            if args.show:
                print('--- transcript A (gdbserver), %s ---' % transport)
                print('\n'.join(a))
            if a == b:
                print('PASS %s (%d lines)' % (desc, len(a)))
            else:
                failed = True
                print('FAIL %s: transcripts differ' % desc)
                sys.stdout.writelines(line + '\n' for line in difflib.unified_diff(
                    a, b, 'gdbserver', server_b.kind, lineterm='', n=4))
    finally:
        if tmp_ctx:
            tmp_ctx.cleanup()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
