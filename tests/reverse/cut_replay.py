#!/usr/bin/env python3
"""An event recording whose replay meets a syscall no replay can reproduce
(io_setup: Linux AIO) is served up to that syscall's entry, with
full state, instead of not at all (issue 12: a syscall the table cannot
describe never costs all state of the recording). Before, `ptrev replay`
refused the whole recording and gdb saw `Remote communication error`.
A live session (`serve --record`) refuses reverse moves once its program
has made that call (its history must reach the present); gdb over TCP
now shows why in its console, where before it showed only `Remote
failure reply: E01`. The recorder says so when the call is made.

aio_late: a worker adds to `total` and blocks in read; main then calls
io_setup. The oracle is the live run under gdb, stopped at io_setup's entry by
`catch syscall io_setup` (and, for the reverse-continue, at the worker's last
call of add_round): registers, backtraces and variables must be the
same at the replay's end and where the replay goes back to. The user is
told where the replay ends on ptrev's stderr and in gdb's console at the
first move (over TCP, where ptrev's stderr is not gdb's). `ptrev decode`
makes the history up to there.

usage: cut_replay.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_count, gdb_batch, record  # noqa: E402
from ptrev_checks import ptrev_over_tcp, replay_over_tcp  # noqa: E402

NOTE = 'this replay ends where thread'
# Registers a live stop and the replay must agree on: not rdi (the
# syscall's number in syscall()), eflags and r11 (flags of
# arithmetic on it), rax (-ENOSYS at a live syscall-entry stop), k0-k7
# (AVX-512 masks: whatever the run's libc left there).
SAME = ['rip', 'rsp', 'rbp', 'rbx', 'rcx', 'rdx', 'rsi', 'r8', 'r9', 'r10', 'r12', 'r13',
        'r14', 'r15', 'cs', 'ss', 'fs_base']


def registers(text):
    """The first `info registers` in text: name -> value."""
    regs = {}
    for m in re.finditer(r'^(\w+)\s+(0x[0-9a-f]+)\s', text, re.M):
        regs.setdefault(m.group(1), m.group(2))
    return regs


def same_registers(a, b):
    ra, rb = registers(a), registers(b)
    diff = [r for r in SAME if ra.get(r) != rb.get(r)]
    return not diff and len(ra) > 20, diff


def frames(text):
    """Backtrace lines."""
    return [line for line in text.splitlines() if re.match(r'#\d+ ', line)]


def values(text):
    return re.findall(r'^\$\d+ = (.*)$', text, re.M)


def section(text, begin, end):
    """text from the echo of command `begin` up to that of `end`."""
    i = text.find('+' + begin)
    j = text.find('+' + end, i + 1) if i >= 0 else -1
    return text[i:j] if i >= 0 and j >= 0 else ''


def live(prog, env, stop):
    return gdb_batch(prog, ['set startup-with-shell off', 'unset environment LINES',
                            'unset environment COLUMNS'] + stop +
                     ['run', 'info registers', 'bt', 'print total', 'thread 2', 'bt',
                      'kill'], env=env, timeout=120)


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.abspath(os.path.join(progdir, 'aio_late'))
    trace = os.path.join(work, 'aio_late.ptrev')
    # One environment for the recording and the live runs: the stack's
    # addresses depend on it.
    env = {k: v for k, v in os.environ.items() if k not in ('LINES', 'COLUMNS')}
    r = record(ptrev, 'event', trace, [prog], env=env)
    check(r.returncode == 0 and 'total=15 seen=16' in r.stdout,
          'aio_late recorded (%s)' % r.stdout.strip())
    said = re.findall(r'^ptrev: thread \d+ made io_setup \(206\), which no replay can '
                      r'reproduce .*$', r.stderr, re.M)
    check(len(said) == 1 and 'a replay of this recording ends at its entry' in said[0],
          'the recorder says when the program makes it, once (%s)' % said)

    at_setup = live(prog, env, ['catch syscall io_setup'])
    at_work = live(prog, env, ['break add_round if i == 5'])
    check('Catchpoint 1 (call to syscall io_setup)' in at_setup and 'worker' in at_work,
          'the live oracle stopped at io_setup\'s entry and at the worker\'s last round')

    # The replay, over gdb's pipe.
    rep = gdb_batch(prog, [
        'target remote | %s replay --stdio %s' % (ptrev, trace),
        'info registers', 'bt', 'print total', 'thread 2', 'bt', 'monitor why',
        'thread 1', 'reverse-finish', 'bt', 'print total', 'monitor why',
        'break add_round', 'reverse-continue', 'info registers', 'bt', 'print i',
        'print total', 'monitor why', 'delete', 'continue', 'bt', 'print total'], timeout=300)
    check('Remote communication error' not in rep and NOTE in rep,
          'the replay opens, and says where it ends')
    end = section(rep, 'info registers', 'reverse-finish')
    ok, diff = same_registers(at_setup, end)
    check(ok, 'at the end (io_setup\'s entry) the live run\'s registers (differing: %s)' % diff)
    check(frames(section(at_setup, 'bt', 'print total')) == frames(section(end, 'bt', 'print')),
          'main\'s backtrace as live: %s' % frames(section(end, 'bt', 'print')))
    check(values(end)[:1] == values(at_setup)[:1] == ['15'], 'total as live: %s' % values(end))
    check('worker (arg=' in section(end, 'thread 2', 'monitor why'),
          'the worker\'s backtrace reaches worker()')
    # gdb writes monitor's output to stderr: counted, not placed.
    check(full_state_count(rep) == 3, 'full state at the end, after the reverse-finish and at '
          'the reverse-continue\'s stop')
    back = section(rep, 'reverse-finish', 'break ')
    check('setup_ring (events=8' in back and values(back) == ['15'],
          'reverse-finish out of syscall(): in setup_ring')
    hit = section(rep, 'reverse-continue', 'delete')
    ok, diff = same_registers(at_work, hit)
    check(ok, 'reverse-continue to the worker\'s last round: the live run\'s registers '
          '(differing: %s)' % diff)
    check(values(hit) == ['5', '10'] and values(section(at_work, 'print total', 'thread 2'))
          == ['10'], 'there i and total as live: %s' % values(hit))
    check(frames(hit) == frames(section(at_work, 'bt', 'print total')),
          'and the worker\'s backtrace: %s' % frames(hit))
    fwd = rep[rep.rfind('+continue'):]
    check('No more reverse-execution history' in fwd and 'syscall (' in fwd and
          values(fwd) == ['15'], 'continue runs forward to the end again')

    # Over TCP: the note reaches gdb's console, not only ptrev's stderr.
    err_path = os.path.join(work, 'replay.err')
    tcp = replay_over_tcp(ptrev, trace, prog, ['reverse-stepi', 'monitor why', 'reverse-stepi'],
                          err_path)
    check(tcp.count(NOTE) == 1 and 'io_setup' in tcp,
          'over TCP gdb\'s console says once where the replay ends')
    check(NOTE in open(err_path).read(), '...and so does ptrev\'s stderr')

    served = ptrev_over_tcp([ptrev, 'serve', '--record', '--backend', 'event'], ['--', prog], prog,
                          ['catch syscall exit_group', 'continue', 'reverse-stepi'],
                          os.path.join(work, 'serve.err'))
    check('E01' in served and 'no history of the recording here' in served and
          'io_setup' in served, 'a live session over TCP says in gdb\'s console why it refuses '
          'to go back (%s)' % served.strip()[-600:])
    with open(os.path.join(work, 'serve.err')) as f:
        check('a live session cannot go back from here on' in f.read(),
              'serve says so on its stderr when the program makes the call')

    d = subprocess.run([ptrev, 'decode', trace], capture_output=True, text=True, timeout=300)
    check(d.returncode == 0 and 'its history ends where thread' in d.stderr and
          d.stdout.count('\n') > 10000,
          'ptrev decode makes the history up to io_setup (%d lines): %s' %
          (d.stdout.count('\n'), d.stderr.strip()[-300:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
