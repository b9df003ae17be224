#!/usr/bin/env python3
"""TSC values read before the program's entry, where rdtsc does not trap
(forced here on any machine: PTREV_TSC_TRAPS=0, so the recorder does not
ask for the trap and the replays do not either). The dynamic loader reads
the TSC as it starts every dynamically linked program, and a replay reads
other values; what it leaves on the stack can lie where the program's
frames later stand unwritten. loader_tsc leaves a few thousand such values
(its IFUNC resolver, which the loader calls before the entry) and sums
what lies in an uninitialised frame of look; GDB's step-reverse.c has one
such value in main's red zone when glibc runs without AVX2.

- Live (`ptrev serve --record --backend event`): at the end of look, the
  live program's sum is the oracle. reverse-continue back to look's
  breakpoint and continue forward again: the replayed sum is the live one.
  Before the fix every reverse move was refused (`no history of the
  recording here: ... a STATE point ... a syscall came first`): the
  replay's stack never matched the present's.
- Postmortem (`ptrev record`, `ptrev replay`): the program printed its
  sum; the replay shows the same at the end of look. Before the fix it
  showed the sum of the replay's own TSC values.
- The loader's values may stay in registers too: the entry's point puts
  the recorded registers in place. The recording's entry point is given
  another r11 (a register _start never reads): the replay shows it at
  _start, by the events (pieces, PTREV_BACKGROUND_HISTORY=0) and on the
  whole history made in the background. Without that, the point was
  never found (`its STATE point ... never came`).

usage: loader_tsc.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_count, gdb_replay  # noqa: E402
from ptrev_checks import ptrev_over_tcp, record  # noqa: E402
from event_hard import crc32c  # noqa: E402

SUM_LINE = 'loader_tsc.c:44'


def values(out, n):
    """The values of gdb's $1..$n in out (None where missing)."""
    found = []
    for i in range(1, n + 1):
        m = re.search(r'^\$%d = (\d+)$' % i, out, re.M)
        found.append(m.group(1) if m else None)
    return found


# docs/trace-format.md: record header type, length, payload CRC, header
# CRC; STATE (14) payload tid:i32 pos:u64 regs[27] (struct
# user_regs_struct: r11 the 7th); STATE_MEM (18) follows its point.
R11 = 4 + 8 + 6 * 8
ENTRY_R11 = 0x7473635f6c656674


def edit_entry_r11(src, dst):
    """Copy recording src to dst with the r11 of the STATE point that has
    memory (the entry's) set to ENTRY_R11. Returns whether there was one."""
    f = bytearray(open(src, 'rb').read())
    off, last_state, done = 16, None, False
    while off + 16 <= len(f):
        typ, length = struct.unpack_from('<II', f, off)
        if typ == 14:
            last_state = off
        elif typ == 18 and last_state is not None and not done:
            p = last_state + 16
            plen = struct.unpack_from('<I', f, last_state + 4)[0]
            struct.pack_into('<Q', f, p + R11, ENTRY_R11)
            struct.pack_into('<I', f, last_state + 8, crc32c(bytes(f[p:p + plen])))
            struct.pack_into('<I', f, last_state + 12, crc32c(bytes(f[last_state:last_state + 12])))
            done = True
        off += 16 + length
    with open(dst, 'wb') as out:
        out.write(f)
    return done


def r11_at_start(ptrev, trace, prog, env):
    """r11 and the PC where the replay of trace shows the program's _start
    (the first location back from the end: ld.so's _start comes before),
    and gdb's output."""
    wait = ('python exec("import time\\nfor i in range(600):\\n'
            ' if \'was made in the background\' in gdb.execute(\'monitor history\', '
            'to_string=True): break\\n time.sleep(0.1)")\n')
    out = gdb_replay(ptrev, trace, prog, ('' if env else wait) +
                     'break _start\nreverse-continue\nprint $r11\nprint/x $pc\n',
                     env=env, timeout=300)
    r11 = re.search(r'^\$1 = (-?\d+)$', out, re.M)
    pc = re.search(r'^\$2 = (0x[0-9a-f]+)$', out, re.M)
    return (int(r11.group(1)) & (2 ** 64 - 1) if r11 else None,
            pc.group(1) if pc else None, out)


def main():
    ptrev, prog, work = sys.argv[1:4]
    prog = os.path.abspath(prog)
    os.makedirs(work, exist_ok=True)
    os.environ['PTREV_TSC_TRAPS'] = '0'

    err = os.path.join(work, 'serve.err')
    live = ptrev_over_tcp([ptrev, 'serve', '--record', '--backend', 'event'], ['--', prog], prog,
                          ['break look', 'break ' + SUM_LINE, 'continue', 'continue',
                           'print sum', 'reverse-continue', 'continue', 'print sum',
                           'reverse-stepi', 'monitor why', 'stepi', 'print sum'], err)
    with open(err) as f:
        served = f.read()
    now, again, stepped = values(live, 3)
    check(now is not None and again == now and stepped == now,
          'the replayed sum at the end of look is the live one: %s, %s, %s' %
          (now, again, stepped))
    check(live.count('Breakpoint 1, look ()') == 2 and 'Remote failure' not in live and
          full_state_count(live) == 1,
          'reverse-continue reaches look\'s breakpoint, with full state (%s)' %
          live.strip()[-1000:])
    check('no history' not in served, 'no reverse move refused (%s)' % served.strip()[-600:])

    trace = os.path.join(work, 'loader_tsc.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    printed = re.search(r'^left (\d+) work 7$', r.stdout, re.M)
    check(r.returncode == 0 and printed is not None,
          'loader_tsc recorded (%s%s)' % (r.stdout, r.stderr[-300:]))
    rep = gdb_replay(ptrev, trace, prog, 'break %s\nreverse-continue\nprint sum\nmonitor why\n'
                     % SUM_LINE, timeout=300)
    replayed = values(rep, 1)[0]
    check(printed is not None and replayed == printed.group(1) and full_state_count(rep) == 1,
          'the replay shows the sum the program printed: %s, printed %s (%s)' %
          (replayed, printed.group(1) if printed else None, rep.strip()[-600:]))

    edited = os.path.join(work, 'entry_r11.ptrev')
    check(edit_entry_r11(trace, edited), 'the recording has an entry point with memory')
    for what, env in (('by the events', {'PTREV_BACKGROUND_HISTORY': '0'}),
                      ('on the whole history', None)):
        r11, pc, out = r11_at_start(ptrev, edited, prog, env)
        check(r11 == ENTRY_R11 and pc is not None and pc.startswith('0x5555'),
              'the recorded r11 at the program\'s _start, %s: %s at %s (%s)' %
              (what, hex(r11) if r11 is not None else None, pc, out.strip()[-600:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
