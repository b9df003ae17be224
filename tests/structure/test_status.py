#!/usr/bin/env python3
"""Every Python test's failed checks reach its exit status.

ptrev_checks.finish() prints the failed checks and returns the status; a
test that calls it and drops the result exits 0 whatever it found (two
did, for months). Each call must be `return finish()` in a main() that the
script ends with `sys.exit(main())`, or `sys.exit(finish())`.

usage: test_status.py SOURCE_ROOT     (exit 0 clean, 1 findings)
"""
import os
import re
import sys


def findings(path):
    with open(path, encoding='utf-8') as f:
        text = f.read()
    if not re.search(r'^from ptrev_checks import .*\bfinish\b', text, re.M):
        return []
    calls = re.findall(r'^(.*)\bfinish\(\)', text, re.M)
    calls = [c for c in calls if not c.lstrip().startswith(('def ', '#'))]
    bad = [c.strip() + 'finish()' for c in calls
           if c.strip() not in ('return', 'sys.exit(')]
    if any(c.strip() == 'return' for c in calls) and 'sys.exit(main())' not in text:
        bad.append('return finish() without sys.exit(main())')
    return bad


def main():
    root = sys.argv[1]
    failed = 0
    for top, _, files in os.walk(os.path.join(root, 'tests')):
        for name in sorted(files):
            if not name.endswith('.py') or name == 'ptrev_checks.py':
                continue
            path = os.path.join(top, name)
            for what in findings(path):
                print('%s: %s' % (os.path.relpath(path, root), what))
                failed += 1
    print('%d finding(s)' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
