#!/usr/bin/env python3
"""A program that forks and vforks while gdb has a breakpoint in code the
children run (e2e_fork): under gdbserver (the oracle) and under ptrev serve
(with and without --record)
the children end normally (they would die of the breakpoint's int3 if it
stayed in their memory), the parent stops at its own call with the same
frames, and exits 0. gdbserver also reports the forks to gdb, which prints
"[Detaching after fork ...]", as ptrev does when it does not record (the
e2e case fork.gdb compares those transcripts whole, also while recording).
While recording, the history goes back across the forks. Also
follow-fork-mode child against gdbserver, and an exec in the followed
child.

usage: fork_children.py PTREV PROGRAM_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def run(server, prog, setup=()):
    cmds = (['target remote | %s %s' % (server, prog)] + list(setup) +
            ['break work', 'continue', 'print x', 'bt', 'continue'])
    args = ['gdb', '-nx', '-batch', '-ex', 'set sysroot']
    for c in cmds:
        args += ['-ex', c]
    r = subprocess.run(args + [prog], capture_output=True, text=True, timeout=120)
    text = r.stdout + r.stderr
    return {
        'children': re.findall(r'fork child (\d+), vfork child (\d+)', text),
        'stops': re.findall(r'Breakpoint 1, (work \(x=\d+\))', text),
        'frames': re.findall(r'^#\d+\s+(?:0x[0-9a-f]+ in )?(\w+)', text, re.M),
        'end': re.findall(r'\[Inferior \d+ \(process \d+\) (exited [^\]]*)\]', text),
    }


def back_across(text, background):
    """The session that goes back across the fork and the vfork while
    recording, PTREV_BACKGROUND_HISTORY=background."""
    check(re.findall(r'Catchpoint \d+ \((v?fork)ed process \d+\)', text) == ['fork', 'vfork'] and
          len(re.findall(r'\[Detaching after v?fork from child process \d+\]', text)) == 2,
          'background %s, while recording: catch fork and catch vfork stop, gdb lets each '
          'child go (%s)' % (background, re.findall(r'Catchpoint.*|\[Detaching.*', text)))
    bts = re.findall(r'^#1 .* in (\w+) \(\)', text, re.M)
    check('No more reverse-execution history' in text and bts == ['main', 'main'] and
          re.findall(r'^(?:Breakpoint \d+, )?(work \(x=\d+\)) at', text, re.M) ==
          ['work (x=1)', 'work (x=1)'] and
          re.findall(r'fork child (\d+), vfork child (\d+)', text) == [('0', '0')],
          'background %s, while recording: back from work(1) across the fork and vfork to '
          'the start, forwards to work(1) again, the children ended normally (%s)'
          % (background, text[-1500:]))


def main():
    ptrev, progdir = sys.argv[1], sys.argv[2]
    prog = os.path.join(progdir, 'e2e_fork')
    want = run('gdbserver -', prog)
    got = run('%s serve --stdio --no-record --' % ptrev, prog)
    check(want['children'] == [('0', '0')], 'oracle: gdbserver\'s children end normally (%s)'
          % want['children'])
    check(got['children'] == want['children'],
          'the forked and vforked children end normally, not on the breakpoint (%s)'
          % got['children'])
    check(got['stops'] == want['stops'] and got['frames'] == want['frames'],
          'the parent stops at its own call with the same frames (%s %s)'
          % (got['stops'], got['frames']))
    check(got['end'] == want['end'] == ['exited normally'], 'and exits 0 (%s)' % got['end'])
    # The same while ptrev records (the sw recorder's own event loop; the
    # children also get rdtsc back, which the recorder traps).
    rec = run('%s serve --stdio --record --no-stop-at-exit --' % ptrev, prog)
    check(rec == got, 'the same while recording (%s)' % rec)
    # While recording, forks and vforks are caught as live (gdb lets each
    # child go), and the history goes back across them: from the
    # parent's stop at work() back to the start, and forwards to the same
    # stop (the present, where the history ends) with the same frames.
    caught = ['catch fork', 'catch vfork']
    args = ['gdb', '-nx', '-batch', '-ex', 'set sysroot',
            '-ex', 'target remote | %s serve --stdio --record --no-stop-at-exit -- %s'
            % (ptrev, prog)]
    for c in caught + ['break work', 'continue', 'continue', 'continue', 'bt',
                       'reverse-continue', 'continue', 'bt', 'continue']:
        args += ['-ex', c]
    # Twice: as it comes (the whole history, made in the background, is
    # ready at once on an idle machine), and with pieces of the history
    # only (PTREV_BACKGROUND_HISTORY=0, as on a loaded one): the continue
    # through them to the present made a piece that ended at the hit
    # there, and the next continue only said "No more reverse-execution
    # history" there, never going on live (CI, under load).
    for background in ('1', '0'):
        env = dict(os.environ, PTREV_BACKGROUND_HISTORY=background)
        r = subprocess.run(args + [prog], capture_output=True, text=True, timeout=180, env=env)
        back_across(r.stdout + r.stderr, background)
    # follow-fork-mode child: gdb lets the parent go and debugs the child,
    # which stops at its own call (x=21) and ends normally.
    child = ['set follow-fork-mode child']
    want = run('gdbserver -', prog, child)
    got = run('%s serve --stdio --no-record --' % ptrev, prog, child)
    check(want['stops'] == ['work (x=21)'] and got['stops'] == want['stops'] and
          got['frames'] == want['frames'] and got['end'] == want['end'],
          'follow-fork-mode child: the child stops at its call and ends as under gdbserver '
          '(%s %s %s; gdbserver %s %s %s)' % (got['stops'], got['frames'], got['end'],
                                              want['stops'], want['frames'], want['end']))
    # While recording, following the child ends the parent's recording
    # there: the child runs to its call and ends as under gdbserver, and
    # going back in it says the history begins where it stands.
    r = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set sysroot', '-ex',
                        'target remote | %s serve --stdio --record --no-stop-at-exit -- %s'
                        % (ptrev, prog), '-ex', 'set follow-fork-mode child', '-ex', 'break work',
                        '-ex', 'continue', '-ex', 'reverse-stepi', '-ex', 'bt 1', '-ex', 'continue',
                        prog], capture_output=True, text=True, timeout=120)
    text = r.stdout + r.stderr
    check(re.findall(r'Breakpoint 1, (work \(x=\d+\))', text) == want['stops'] and
          'the recording of process' in text and 'No more reverse-execution history' in text and
          re.search(r'^#0  work \(x=21\)', text, re.M) and
          re.findall(r'\[Inferior \d+ \(process \d+\) (exited [^\]]*)\]', text) == want['end'],
          'while recording, follow-fork-mode child: the parent\'s recording ends, the child '
          'stops at its call, has no history, and ends as under gdbserver (%s)' % text[-1200:])
    # The followed child's exec is reported too (the child keeps gdb's
    # choice of events): e2e_exec fork execs itself in a forked child.
    exec_prog = os.path.join(progdir, 'e2e_exec')

    def exec_in_child(server):
        args = ['gdb', '-nx', '-batch', '-ex', 'set sysroot',
                '-ex', 'target remote | %s %s fork' % (server, exec_prog),
                '-ex', 'set follow-fork-mode child', '-ex', 'catch exec',
                '-ex', 'continue', '-ex', 'continue', exec_prog]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        return re.findall(r"Catchpoint 1 \(exec'd ([^)]*)\)", r.stdout + r.stderr)
    want = exec_in_child('gdbserver -')
    got = exec_in_child('%s serve --stdio --no-record --' % ptrev)
    check(want and got == want, 'follow-fork-mode child: the child\'s exec stops at catch exec '
          'as under gdbserver (%s, gdbserver %s)' % (got, want))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
