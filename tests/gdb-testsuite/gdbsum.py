#!/usr/bin/env python3
"""Counts from GDB testsuite runs (gdb.sum files), board beside board, and
the check CI makes of them.

usage: gdbsum.py [--known FILE] [--check] BOARD=GDB.SUM...

Prints, for each test file, each board's PASS and FAIL counts and the sum of
the other results that mean something went wrong (UNRESOLVED, ERROR) or was
not run (UNSUPPORTED, UNTESTED); then the totals per board.

--check: exit 1 when a board whose name starts with "ptrev" has a FAIL,
UNRESOLVED or ERROR that FILE does not list.  (An XPASS or KPASS, a test
gdb expects to fail passing, is shown but is no failure of the target's.)  FILE lists the
failures that are understood: lines "BOARD<TAB>RESULT LINE<TAB>REASON", the
result line as gdb.sum has it ("FAIL: gdb.x/y.exp: test name"); '#' starts
a comment.  A listed failure that no longer happens is reported (not a
failure: some depend on the machine, such as what its process 1 is) so the
list can be kept true.
"""
import re
import sys
from collections import OrderedDict, defaultdict

BAD = ('FAIL', 'UNRESOLVED', 'ERROR')
NOTED = ('XPASS', 'KPASS')
SHOWN = ('PASS', 'FAIL', 'UNRESOLVED', 'ERROR', 'UNSUPPORTED', 'UNTESTED',
         'XFAIL', 'KFAIL', 'XPASS', 'KPASS')
RESULT = re.compile(r'^(PASS|FAIL|XPASS|XFAIL|KPASS|KFAIL|UNRESOLVED|UNTESTED|'
                    r'UNSUPPORTED|ERROR): ?(.*)$')
RUNNING = re.compile(r'^Running .*/testsuite/(\S+\.exp) \.\.\.')


def read_sum(path):
    """-> (counts[file][kind], bad result lines in order)"""
    counts = defaultdict(lambda: defaultdict(int))
    bad = []
    current = '(no file)'
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = RUNNING.match(line)
            if m:
                current = m.group(1)
                counts[current]  # a file with no results still shows
                continue
            m = RESULT.match(line)
            if not m:
                continue
            kind = m.group(1)
            counts[current][kind] += 1
            if kind in BAD or kind in NOTED:
                # ERROR lines name no file; say which one was running
                bad.append(line if kind != 'ERROR' else 'ERROR: %s: %s' % (current, m.group(2)))
    return counts, bad


def read_known(path):
    known = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            parts = line.split('\t')
            if len(parts) != 3 or not all(p.strip() for p in parts):
                sys.exit('%s:%d: expected BOARD<TAB>RESULT LINE<TAB>REASON' % (path, n))
            known[(parts[0], parts[1])] = parts[2]
    return known


def main(argv):
    known_path, check, runs = None, False, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--known':
            known_path = args.pop(0)
        elif a == '--check':
            check = True
        elif '=' in a:
            board, path = a.split('=', 1)
            runs.append((board, path))
        else:
            sys.exit(__doc__)
    if not runs:
        sys.exit(__doc__)

    per_board = OrderedDict()
    for board, path in runs:
        per_board[board] = read_sum(path)
    files = sorted({f for counts, _ in per_board.values() for f in counts})

    def cell(c):
        other = c['UNRESOLVED'] + c['ERROR']
        skipped = c['UNSUPPORTED'] + c['UNTESTED']
        return '%5d %4d %4d %4d' % (c['PASS'], c['FAIL'], other, skipped)

    width = max([len(f) for f in files] + [10])
    head = ''.join('  %-20s' % b for b in per_board)
    print('%-*s%s' % (width, 'file', head))
    print('%-*s%s' % (width, '', '  PASS FAIL  bad skip' * len(per_board)))
    for f in files:
        print('%-*s%s' % (width, f, ''.join(
            '  %-20s' % cell(counts.get(f, defaultdict(int)))
            for counts, _ in per_board.values())))
    print()
    for board, (counts, _) in per_board.items():
        total = defaultdict(int)
        for c in counts.values():
            for k, v in c.items():
                total[k] += v
        print('%-20s %s' % (board, ', '.join('%d %s' % (total[k], k) for k in SHOWN if total[k])
                                 or 'no results'))

    if not check:
        return 0
    known = read_known(known_path) if known_path else {}
    unexpected, understood, gone = [], [], []
    for board, (counts, bad) in per_board.items():
        if not board.startswith('ptrev'):
            continue
        for line in bad:
            if line.split(':', 1)[0] in NOTED:
                print('passed   %s  %s  (gdb expects it to fail)' % (board, line))
            elif (board, line) in known:
                understood.append((board, line, known[(board, line)]))
            else:
                unexpected.append((board, line))
        ran = set(counts)
        for (kb, kline), reason in known.items():
            kfile = kline.split(': ', 2)[1] if ': ' in kline else ''
            if kb == board and kfile in ran and kline not in bad:
                gone.append((kb, kline))
    print()
    for board, line, reason in understood:
        print('known    %s  %s  (%s)' % (board, line, reason))
    for board, line in gone:
        print('fixed?   %s  %s  (listed as known, did not happen here)'
              % (board, line))
    for board, line in unexpected:
        print('FAILED   %s  %s' % (board, line))
    if unexpected:
        print('\ngdb testsuite check: %d unexpected failures' % len(unexpected))
        return 1
    print('gdb testsuite check: no unexpected failures (%d known, %d listed but passed)'
          % (len(understood), len(gone)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
