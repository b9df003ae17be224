#!/usr/bin/env python3
"""A replay shows the bytes the run's mapped data files held, not what the
files hold when it is replayed (tests/programs/map_data.c: a file mapped
read-only, another mapped private and writable and changed in memory).

Before, a replay mapped each file again from its path: a file changed
since the recording showed its new bytes with `monitor why` saying every
register and all memory were available, and a file deleted since made the
recording unreplayable (`Remote communication error`). The recorders now
keep the bytes of every regular file mapping but the system's own files
and ELF binaries (server/record/mapped_data.c), and the replay maps them.

The oracle is the program run natively under gdb: at look(3) and look(6)
the bytes both mappings show. Each recording (event and sw backends) is
replayed after FILE was rewritten and COPY deleted, reverse-continuing to
look(6), then look(3), and continuing to look(6) again: each stop must
show what the native run showed there.

usage: mapped_files.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_said, gdb_batch, record  # noqa: E402

SHOW = 'printf "at i=%d data=%.8s copy=%.8s\\n", i, data, copy'


def stops(text):
    return re.findall(r'^at i=.*$', text, re.M)


def write(path, text):
    with open(path, 'w') as f:
        f.write(text)


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.abspath(os.path.join(progdir, 'map_data'))
    data, copy = os.path.join(work, 'data.txt'), os.path.join(work, 'copy.txt')
    original = 'ABCDEFGH recorded\n', '01234567 recorded\n'
    write(data, original[0])
    write(copy, original[1])
    native = gdb_batch(prog, ['set startup-with-shell off', 'break look if i == 3 || i == 6',
                              'run', SHOW, 'continue', SHOW, 'kill'], args=[data, copy],
                       timeout=120)
    oracle = stops(native)
    check(len(oracle) == 2 and 'data=ABCDEFGH' in oracle[0], 'the native run: %s' % oracle)

    write(copy + '.big', original[1])
    for backend in ('event', 'sw'):
        write(data, original[0])
        write(copy, original[1])
        trace = os.path.join(work, 'map_data-%s.ptrev' % backend)
        r = record(ptrev, backend, trace, [prog, data, copy])
        check(r.returncode == 0 and 'sum=' in r.stdout,
              '%s recording (%s%s)' % (backend, r.stdout.strip(), r.stderr.strip()[-300:]))
        write(data, 'changed since the recording\n')
        os.unlink(copy)
        out = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace),
                               'break look if i == 3 || i == 6', 'reverse-continue', SHOW,
                               'monitor why', 'reverse-continue', SHOW, 'continue', SHOW],
                        args=[data, copy], timeout=300)
        got = stops(out)
        check(got == [oracle[1], oracle[0], oracle[1]] and full_state_said(out),
              '%s replay: look(6), look(3), look(6) with the bytes the run mapped, full '
              'state (%s)' % (backend, got if got else out[-1200:]))
    # A mapping too big to record (a sparse 300 MiB file): the recorder
    # says so, once, and records the rest as before.
    big = os.path.join(work, 'big.bin')
    with open(big, 'wb') as f:
        f.truncate(300 << 20)
    trace = os.path.join(work, 'map_data-big.ptrev')
    r = record(ptrev, 'event', trace, [prog, data, copy + '.big', big])
    check(r.returncode == 0 and 'sum=' in r.stdout and
          r.stderr.count('mapped 300 MiB of a file: its bytes are not recorded (more than '
                         '256 MiB)') == 1 and os.path.getsize(trace) < (64 << 20),
          'a mapping of 300 MiB is not recorded, and ptrev says so (%s, %d bytes)' %
          (r.stderr.strip()[-300:], os.path.getsize(trace)))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
