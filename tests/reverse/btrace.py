#!/usr/bin/env python3
"""gdb's own branch tracing (`record btrace pt`) against `ptrev serve`.

gdb enables tracing with Qbtrace:pt, reads the sw backend's PT with
qXfer:btrace:read and decodes it itself with libipt. Oracles: the
instruction list of an independent single-stepper (ref_step) between the two
breakpoints, and the recursion's known shape in the function-call history.

Also while ptrev records (serve --record: gdb gets the trace since its
`record btrace`, not the whole recording), thread by thread (E2E_THREADS:
gdb enables each thread), and the buffer size a PT recording would get.

usage: btrace.py PTREV REF_STEP REV_BASIC REC_RECURSE E2E_THREADS
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def gdb(prog, lines):
    cmd = ['gdb', '-nx', '-batch']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def target(ptrev, prog, record=False):
    return 'target remote | %s serve --stdio %s-- %s' % (ptrev, '--record --backend sw ' if record else '--no-record ', prog)


def test_instruction_history(ptrev, ref_step, prog, record=False):
    how = ' (serve --record)' if record else ''
    out = gdb(prog, [target(ptrev, prog, record), 'break main', 'continue', 'record btrace pt',
                     'break done', 'continue', 'info record',
                     'record instruction-history /r 1,100000'])
    m = re.search(r'Recorded (\d+) instructions in \d+ functions \((\d+) gaps\)', out)
    check(m is not None and m.group(2) == '0', 'btrace recorded with no gaps%s (%s)' %
          (how, m.group(0) if m else 'no "Recorded" line'))
    got = [int(a, 16) for a in re.findall(r'^\d+\s+(?:=> )?(0x[0-9a-f]+)', out, re.M)]
    bp = re.findall(r'Breakpoint \d+ at (0x[0-9a-f]+)', out)
    # Ground truth: single-stepped IPs from main's breakpoint up to done's.
    r = subprocess.run([ref_step, prog], capture_output=True, text=True, timeout=300)
    ips = [int(l.split()[1], 16) for l in r.stdout.splitlines()
           if len(l.split()) == 2 and l.split()[0] != 'T']
    want = []
    if len(bp) >= 2:
        start, stop = int(bp[0], 16), int(bp[1], 16)
        i = ips.index(start)
        j = ips.index(stop, i)
        want = ips[i:j]
    check(len(want) > 20 and got == want,
          'record instruction-history lists the single-stepped instructions%s '
          '(%d listed, %d expected)' % (how, len(got), len(want)))
    if m:
        check(int(m.group(1)) == len(want), 'info record counts them%s (%s)' % (how, m.group(1)))


def test_threads(ptrev, prog):
    """gdb enables branch tracing thread by thread: every thread gets its
    own, from its enable."""
    out = gdb(prog, [target(ptrev, prog), 'break work', 'continue', 'record btrace pt',
                     'finish', 'info record', 'thread 1', 'info record'])
    check('Could not enable' not in out and 'already enabled' not in out,
          'record btrace with two threads: each enabled')
    got = re.findall(r'Recorded (\d+) instructions in \d+ functions \(0 gaps\) for thread (\d)',
                     out)
    check([t for _, t in got] == ['2', '1'] and int(got[0][0]) > 3,
          'each thread has its own trace since the enable (%s)' % got)
    # Threads created while gdb traces: glibc registered rseq in the main
    # thread before the recording began, and aborts a new thread whose
    # registration fails: a recording that starts mid-run lets it through.
    out = gdb(prog, [target(ptrev, prog), 'break main', 'continue', 'record btrace pt',
                     'break work', 'continue', 'info record'])
    check(re.search(r'hit Breakpoint 2, work', out) is not None and 'SIGABRT' not in out and
          re.search(r'Recorded \d+ instructions .* for thread 2', out) is not None,
          'a thread created after record btrace runs and is traced\n' + out[-600:])


def test_buffer_size(ptrev, prog):
    """The size gdb asks for becomes what a PT buffer would be: whole
    pages, a power of two of them (gdb's buffer-size.exp)."""
    out = gdb(prog, [target(ptrev, prog), 'set record btrace pt buffer-size 1', 'break main',
                     'continue', 'record btrace pt', 'info record'])
    check('Buffer size: 4kB.' in out, 'buffer-size 1 gives a 4 kB buffer')


def test_function_call_history(ptrev, prog):
    out = gdb(prog, [target(ptrev, prog), 'break main', 'continue', 'record btrace pt',
                     'next', 'info record', 'record function-call-history /c 1,1000'])
    m = re.search(r'\((\d+) gaps\)', out)
    check(m is not None and m.group(1) == '0', 'recursion traced with no gaps')
    rows = re.findall(r'^\d+\t( *)(\S+)$', out, re.M)
    depth_rows = [len(ind) // 2 for ind, name in rows if name == 'depth']
    main_rows = [len(ind) // 2 for ind, name in rows if name == 'main']
    # depth(100) recurses to depth(0): 101 nested frames, each entered once
    # and returned to once except the innermost: 201 segments.
    check(len(depth_rows) == 201, 'function-call-history has 201 depth segments (%d)' % len(depth_rows))
    if depth_rows and main_rows:
        check(max(depth_rows) - min(main_rows) == 101,
              'the deepest call is 101 levels below main (%d)' % (max(depth_rows) - min(main_rows)))


def main():
    ptrev, ref_step, rev_basic, rec_recurse, threads = sys.argv[1:6]
    test_instruction_history(ptrev, ref_step, rev_basic)
    test_instruction_history(ptrev, ref_step, rev_basic, record=True)
    test_threads(ptrev, threads)
    test_buffer_size(ptrev, rev_basic)
    test_function_call_history(ptrev, rec_recurse)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
