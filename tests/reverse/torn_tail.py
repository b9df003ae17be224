#!/usr/bin/env python3
"""A recording whose tail is torn (copied or cut short inside its last
record) is not refused: `ptrev info`, `ptrev decode` and `ptrev replay`
use every whole record before the tear and say once where the file ends.
The last two records of a sw recording of e2e_basic are cut at every byte
offset (ptrev info on each), and the replay of a few of those prefixes
runs under gdb with full state at its end.

usage: torn_tail.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def record_offsets(data):
    """Where each record starts (docs/trace-format.md: a 16-byte file
    header, then records of a 16-byte header: type, length, two CRCs)."""
    offs, off = [], 16
    while off + 16 <= len(data):
        length = struct.unpack_from('<I', data, off + 4)[0]
        offs.append(off)
        off += 16 + length
    return offs


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_basic')
    whole = os.path.join(work, 'whole.ptrev')
    r = subprocess.run([ptrev, 'record', '--backend', 'sw', '--force', '-o', whole, '--', prog],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, 'recorded e2e_basic')
    data = open(whole, 'rb').read()
    offs = record_offsets(data)
    start = offs[-2]
    torn = os.path.join(work, 'torn.ptrev')
    bad = []
    for cut in range(start + 1, len(data)):
        if cut in offs:
            continue  # a whole-record prefix: no tear
        with open(torn, 'wb') as f:
            f.write(data[:cut])
        info = subprocess.run([ptrev, 'info', torn], capture_output=True, text=True,
                              timeout=60)
        if info.returncode != 0 or 'file ends early: the file ends inside record' not in \
                info.stdout:
            bad.append((cut, info.returncode, info.stderr.strip()[-120:]))
    check(not bad, 'ptrev info reads every torn prefix of the last two records and says '
          'where the file ends (%d cuts; failures: %s)' % (len(data) - start - 1, bad[:3]))

    for cut in (start + 3, start + 20, offs[-1] + 5, len(data) - 1):
        with open(torn, 'wb') as f:
            f.write(data[:cut])
        g = subprocess.run(['gdb', '-nx', '-batch', '-ex',
                            'target remote | %s replay --stdio %s' % (ptrev, torn),
                            '-ex', 'reverse-stepi', '-ex', 'print global_counter', prog],
                           capture_output=True, text=True, timeout=300)
        out = g.stdout + g.stderr
        check(re.search(r'^\$1 = \d+$', out, re.M) is not None and
              out.count('the file ends inside record') == 1,
              'cut at %d: the replay says once where the file ends and shows full state (%s)'
              % (cut, re.findall(r'^\$1 = .*$|.*ends inside.*', out, re.M)))
    dec = subprocess.run([ptrev, 'decode', torn], capture_output=True, text=True, timeout=300)
    check(dec.returncode == 0 and dec.stdout and 'ends inside record' in dec.stderr,
          'ptrev decode decodes the prefix (%d)' % dec.returncode)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
