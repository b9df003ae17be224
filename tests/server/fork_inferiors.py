#!/usr/bin/env python3
"""gdb debugs a parent and its fork child at once, as with gdbserver (the
oracle): set detach-on-fork off (the parent first, or the child first with
follow-fork-mode child), the child let go or killed on its own while the
parent stays, and follow-fork-mode child on a vfork, where gdb lets the
parent go only once the child has exec'd. Each session's transcript, with
process ids and the server's command line taken out, must be gdbserver's.
While ptrev records, the parent's history goes back and the kept child,
which is not recorded, has none.

usage: fork_inferiors.py PTREV PROGRAM_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402

# Sessions: the program's argument and gdb's commands after connecting.
SESSIONS = {
    'detach-on-fork off, the parent first': (
        'fork', ['set detach-on-fork off', 'break work', 'continue', 'bt', 'info inferiors',
                 'inferior 2', 'continue', 'bt', 'print x', 'continue', 'inferior 1',
                 'continue']),
    'detach-on-fork off, follow-fork-mode child': (
        'fork', ['set follow-fork-mode child', 'set detach-on-fork off', 'break work',
                 'continue', 'bt', 'info inferiors', 'continue', 'inferior 1', 'continue',
                 'bt', 'continue']),
    'detach-on-fork off, the child let go': (
        'fork', ['set detach-on-fork off', 'break work', 'continue', 'detach inferiors 2',
                 'info inferiors', 'continue']),
    'detach-on-fork off, the child killed': (
        'fork', ['set detach-on-fork off', 'break work', 'continue', 'kill inferiors 2',
                 'info inferiors', 'continue']),
    # (gdb lets the parent go: it prints its line, or not, as the session
    # ends, with either server)
    'follow-fork-mode child, a vfork': (
        'vfork', ['set follow-fork-mode child', 'break work', 'continue', 'bt', 'continue',
                  'info inferiors']),
}
PARENT_LET_GO = {'follow-fork-mode child, a vfork'}


# A breakpoint set at a vfork goes into the memory the child shares with
# the parent (through the child only): once the child has exec'd it must
# be out of the parent's too, so that with gdb's breakpoints deleted the
# parent runs to its end. gdbserver 13 leaves it there (the parent gets a
# SIGTRAP at work); native gdb is the oracle here.
VFORK_SHARED = ['set follow-fork-mode child', 'set detach-on-fork off', 'catch vfork',
                'run', 'break work', 'continue', 'continue', 'inferior 1', 'delete', 'continue']


def events(text):
    """The stops, execs, ends and the program's line of a session."""
    found = re.findall(r'(hit Breakpoint [\d.]+, work \(x=\d+\)|received signal \w+|'
                       r'executing new program: \S+|\[Inferior \d \(process \d+\) exited [^\]]*\]|'
                       r'child \d+, parent \d+)', text)
    return sorted(re.sub(r'process \d+', 'process N', f) for f in found)


def session(server, prog, arg, cmds, env=None):
    args = ['gdb', '-nx', '-batch', '-ex', 'set sysroot',
            '-ex', 'target remote | %s %s %s' % (server, prog, arg)]
    for c in cmds:
        args += ['-ex', c]
    try:
        r = subprocess.run(args + [prog], capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ''
        return out + '\nTIMEOUT: the session did not end in 60 s\n'
    return r.stdout + r.stderr


def normal(text, program_line=True):
    """What gdb showed, without process ids, the server's own lines, and the
    server command gdb names (its width sets `info inferiors`' columns).
    The program's own line goes last: it reaches the terminal through
    another pipe than gdb's, at no fixed place among gdb's lines."""
    out, program = [], []
    for line in text.splitlines():
        if re.match(r'child \d+, parent \d+$', line):
            program.append(line)
            continue
        if re.match(r'(Process .* created|Listening on|Remote debugging|stdin/stdout|'
                    r'gdbserver: |ptrev: |Detaching from process|Reading |warning: )', line):
            continue
        line = re.sub(r'\(remote \| [^)]*\)', '(remote)', line)
        # The stack's addresses move with the server's path, which the
        # shell gdb starts it with puts in the program's environment ($_).
        line = re.sub(r'argv=0x[0-9a-f]+', 'argv=A', line)
        line = re.sub(r'\b\d{3,}\b', 'N', line)
        out.append(' '.join(line.split()))
    return out + program if program_line else out


def main():
    ptrev, progdir = sys.argv[1], sys.argv[2]
    prog = os.path.join(progdir, 'fork_both')
    for name, (arg, cmds) in SESSIONS.items():
        want = normal(session('gdbserver -', prog, arg, cmds), name not in PARENT_LET_GO)
        got = normal(session('%s serve --stdio --no-record --' % ptrev, prog, arg, cmds),
                     name not in PARENT_LET_GO)
        check(any(re.search(r'\[Inferior \d \(process N\) exited', line) for line in want),
              '%s: oracle: gdbserver\'s session ends (%s)' % (name, want[-3:]))
        diff = [(w, g) for w, g in zip(want, got) if w != g]
        check(got == want, '%s: the same session as under gdbserver (%d lines, first '
              'difference %s)' % (name, len(got), (diff or [(len(want), len(got))])[0]))

    native = subprocess.run(['gdb', '-nx', '-batch'] + [a for c in VFORK_SHARED
                                                        for a in ('-ex', c)] +
                            ['--args', prog, 'vfork'], capture_output=True, text=True,
                            timeout=60)
    want = events(native.stdout + native.stderr)
    cmds = ['continue' if c == 'run' else c for c in VFORK_SHARED]
    got = events(session('%s serve --stdio --no-record --' % ptrev, prog, 'vfork', cmds))
    check('child 0, parent 2' in want and got == want,
          'detach-on-fork off, follow-fork-mode child, a vfork: a breakpoint set through the '
          'child is out of the parent\'s memory after the child\'s exec, as with native gdb '
          '(%s; native gdb %s)' % (got, want))

    # schedule-multiple: both run at once; which stops first is the
    # machine's business, so the stops are compared as a set.
    cmds = ['set detach-on-fork off', 'set schedule-multiple on', 'break work', 'continue',
            'continue', 'continue']
    want = events(session('gdbserver -', prog, 'fork', cmds))
    got = events(session('%s serve --stdio --no-record --' % ptrev, prog, 'fork', cmds))
    check(len(want) == 3 and got == want,
          'schedule-multiple on: parent and child run at once, each stops at its own call, '
          'the child ends, as under gdbserver (%s; gdbserver %s)' % (got, want))

    # While recording: the parent's history goes back, the kept child has
    # none, and both end as they do live.
    cmds = ['set detach-on-fork off', 'break work', 'continue', 'reverse-stepi', 'bt 1',
            'stepi', 'bt 1', 'inferior 2', 'continue', 'reverse-stepi', 'bt 1', 'continue',
            'inferior 1', 'continue']
    text = session('%s serve --stdio --record --no-stop-at-exit --' % ptrev, prog, 'fork', cmds)
    frames = re.findall(r'^#0  (?:(0x[0-9a-f]+) in )?work \(x=\d+\)', text, re.M)
    # back in work()'s prologue, at its breakpoint again, the child's, and
    # the parent's where gdb turns to it again
    check(len(frames) == 4 and frames[0] and not any(frames[1:]) and
          re.search(r'Thread 2\.1 .*hit Breakpoint 1\.\d, work \(x=21\)', text) and
          text.count('No more reverse-execution history.') == 2 and
          'child 0, parent 2' in text and
          len(re.findall(r'\[Inferior [12] \(process \d+\) exited normally\]', text)) == 2,
          'while recording: the parent goes back into work()\'s prologue and on to its '
          'breakpoint again, the fork child (not recorded) stops at its own call and has '
          'no history, both end normally (%s)' % text[-2000:])
    # A recorded process runs alone: schedule-multiple is refused, saying
    # why, and the session goes on with it off.
    cmds = ['set detach-on-fork off', 'set schedule-multiple on', 'break work', 'continue',
            'set schedule-multiple off', 'continue', 'inferior 2', 'continue', 'continue']
    text = session('%s serve --stdio --record --no-stop-at-exit --' % ptrev, prog, 'fork', cmds)
    check('ptrev runs a recorded process alone' in text and
          re.findall(r'hit Breakpoint 1\.\d, (work \(x=\d+\))', text) ==
          ['work (x=1)', 'work (x=21)'] and
          re.search(r'\[Inferior 2 \(process \d+\) exited normally\]', text),
          'while recording, schedule-multiple on: refused, saying why; with it off the parent '
          'and then the child stop at their calls (%s)' % text[-1500:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
