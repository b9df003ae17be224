"""What the end-to-end Python tests share: a line per check (ok/FAIL and
what was checked), the number of failures as the exit status, a free
loopback port for a server to listen on, and `ptrev record` run as the
tests run it."""
import os
import re
import socket
import subprocess
import time

FAILURES = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILURES.append(what)


# What `monitor why` says where the state is full: every register, or every
# one but rcx and r11 for a thread standing before a syscall instruction it
# has run (recorded, re-executed, or held live), which overwrote those two.
FULL_STATE = ('Every register and all memory are available here.',
              'All memory and every register but rcx and r11 are available here')


def full_state_said(text):
    """Does text hold `monitor why`'s saying the state is full?"""
    return any(f in text for f in FULL_STATE)


def full_state_count(text):
    """How many times text holds it."""
    return sum(text.count(f) for f in FULL_STATE)


def finish():
    """The summary line and the test's exit status."""
    # The failed checks again, first lines only, where the tail of a long
    # output shows them: CI keeps only the end of what a test printed.
    for what in FAILURES:
        print('FAILED: ' + what.split('\n', 1)[0][:300])
    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


def record(ptrev, backend, trace, argv, timeout=300, **kw):
    """`ptrev record --backend BACKEND --force -o TRACE -- ARGV...`, its
    output captured as text (subprocess.run's keywords pass through)."""
    kw.setdefault('capture_output', True)
    return subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--']
                          + list(argv), text=True, timeout=timeout, **kw)


def gdb_batch(prog, lines, args=(), timeout=600, **kw):
    """gdb -batch on prog (with args) running lines, each echoed as `+LINE`
    (set trace-commands on); stdout and stderr together, as text.
    subprocess.run's keywords (env, cwd) pass through."""
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set trace-commands on']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + ['--args', prog] + list(args), capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL, **kw)
    return r.stdout + r.stderr


def gdb_replay(ptrev, trace, prog, body, env=None, preamble='set pagination off\n',
               timeout=600):
    """gdb -batch on prog: preamble, `target remote | PTREV replay --stdio
    TRACE`, then body (the script written beside the trace, TRACE.gdb);
    stdout and stderr together, as text. env adds to the environment."""
    script = trace + '.gdb'
    with open(script, 'w') as f:
        f.write('%starget remote | %s replay --stdio %s\n%s' % (preamble, ptrev, trace, body))
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                       timeout=timeout, env=dict(os.environ, **(env or {})))
    return g.stdout


def shown(out):
    """What gdb showed, without ptrev's own lines (about making history)."""
    return [ln for ln in out.splitlines() if not ln.startswith('ptrev: ')]


def check_shown_as(oracle, out, what):
    """check() that gdb showed in out what it showed in oracle (the same
    session on the whole history, say), ptrev's own lines left out; the
    lines that differ, side by side, in the message."""
    a, b = shown(oracle), shown(out)
    differ = '\n'.join('%s | %s' % (x, y) for x, y in zip(a, b) if x != y)
    check(a == b, '%s\n%s\n(%d and %d lines)' % (what, differ[:3000], len(a), len(b)))


def machine_notice(line):
    """Is line ptrev's notice that rdtsc does not trap (said by a recorder
    on such a machine, and as a replay opens a recording made there: ptrev
    info --machine)? The tests that count ptrev's lines leave it out."""
    return 'rdtsc does not trap' in line


def ptrev_lines(out):
    """ptrev's own lines, but the notice that rdtsc does not trap."""
    return [ln for ln in re.findall(r'^ptrev: .*', out, re.M) if not machine_notice(ln)]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def replay_over_tcp(ptrev, trace, prog, lines, err_path):
    """`ptrev replay --listen` on a free loopback port, its stderr into
    err_path, and gdb_batch on prog connecting to it (again while the
    server is not listening yet), then lines; gdb's output. The server
    ends with gdb's connection."""
    return ptrev_over_tcp([ptrev, 'replay'], [trace], prog, lines, err_path)


def ptrev_over_tcp(before, after, prog, lines, err_path):
    """replay_over_tcp for any ptrev command: BEFORE --listen ADDR AFTER
    (`ptrev serve ... --listen ADDR -- PROG` too)."""
    port = free_port()
    with open(err_path, 'w') as err:
        srv = subprocess.Popen(before + ['--listen', '127.0.0.1:%d' % port] + after,
                               stdout=subprocess.DEVNULL, stderr=err)
    try:
        out = ''
        for _ in range(50):
            out = gdb_batch(prog, ['target remote 127.0.0.1:%d' % port] + lines, timeout=300)
            if 'Connection refused' not in out:
                break
            time.sleep(0.2)
    finally:
        srv.wait(timeout=60)
    return out


def shell_each_below_gdb(comm, body):
    """A gdb `shell` line that runs BODY (sh, the pid in $p) for each
    process named COMM descended from this gdb: the program a replay runs
    and its checkpoint forks, whether or not the shell of `target remote |`
    stayed between gdb and ptrev. Processes of tests running beside this
    one are not gdb's and are left out."""
    return ('shell below() { for c in $(pgrep -P "$1"); do echo "$c"; below "$c"; done; }; '
            'for p in $(below $PPID); do '
            'if [ "$(cat /proc/$p/comm 2>/dev/null)" = %s ]; then %s; fi; done\n' % (comm, body))


def processes_left(comm, seconds=10):
    """The pids of processes named COMM still there after waiting up to
    SECONDS for them to go (a session's replays end as it does)."""
    left = []
    for _ in range(int(seconds * 10)):
        left = subprocess.run(['pgrep', '-x', comm], capture_output=True,
                              text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    return left
