#!/usr/bin/env python3
"""gdb's own branch tracing (`record btrace pt`) against `ptrev serve`.

gdb enables tracing with Qbtrace:pt, reads the sw backend's PT with
qXfer:btrace:read and decodes it itself with libipt. Oracles: the
instruction list of an independent single-stepper (ref_step) between the two
breakpoints, and the recursion's known shape in the function-call history.

usage: btrace.py PTREV REF_STEP REV_BASIC REC_RECURSE
"""
import re
import subprocess
import sys

FAILURES = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILURES.append(what)


def gdb(prog, lines):
    cmd = ['gdb', '-nx', '-batch']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def target(ptrev, prog):
    return 'target remote | %s serve --stdio -- %s' % (ptrev, prog)


def test_instruction_history(ptrev, ref_step, prog):
    out = gdb(prog, [target(ptrev, prog), 'break main', 'continue', 'record btrace pt',
                     'break done', 'continue', 'info record',
                     'record instruction-history /r 1,100000'])
    m = re.search(r'Recorded (\d+) instructions in \d+ functions \((\d+) gaps\)', out)
    check(m is not None and m.group(2) == '0', 'btrace recorded with no gaps (%s)' %
          (m.group(0) if m else 'no "Recorded" line'))
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
          'record instruction-history lists the single-stepped instructions '
          '(%d listed, %d expected)' % (len(got), len(want)))
    if m:
        check(int(m.group(1)) == len(want), 'info record counts them (%s)' % m.group(1))


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
    ptrev, ref_step, rev_basic, rec_recurse = sys.argv[1:5]
    test_instruction_history(ptrev, ref_step, rev_basic)
    test_function_call_history(ptrev, rec_recurse)
    print('%d failure(s)' % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == '__main__':
    sys.exit(main())
