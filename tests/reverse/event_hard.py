#!/usr/bin/env python3
"""The event recorder's hard cases, replayed with gdb.

Each program is recorded with `ptrev record --backend event` (small STATE
bounds keep the histories short) and replayed with `ptrev replay`. The
oracle is the recorded run itself: what the program printed while it was
recorded (counts, the registers its signal handler saw in its ucontext,
rdtsc values) must be what the replay shows, at the end and at the
signal or switch position, reached by reverse-continue and reverse-stepi
across it, and again going forwards.

  hard_alarm  a syscall-free loop that SIGALRM from setitimer ends
  hard_usr1   a computation that SIGUSR1, then SIGINT, from another
              process interrupts
  hard_spin   two threads handing a token through a spin flag, no futex
              (positions only: the past of a multi-threaded history is
              PC level)
  hard_rdtsc  rdtsc in a loop
  lost point  a recording whose STATE point the replay can never find
              (moved to work()'s entry in `hard_alarm slow`): the replay
              and the history say so within a bound, instead of running
              the loop for ever

usage: event_hard.py PTREV PROGRAMS_DIR WORKDIR
"""
import os
import re
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402


def record_env():
    e = dict(os.environ)
    e['PTREV_EVENT_SIGNAL_MS'] = '0.1'
    e['PTREV_EVENT_SLICE_MS'] = '0.1'
    return e


def record(ptrev, prog, args, trace, send=None):
    """Record prog; send: a signal for the pid it says it has once ready.
    Returns what it printed."""
    p = subprocess.Popen([ptrev, 'record', '--backend', 'event', '-o', trace, '--', prog] + args,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=record_env())
    if send:
        line = p.stdout.readline()
        m = re.match(r'ready (\d+)', line)
        check(m is not None, '%s says it is ready (%r)' % (os.path.basename(prog), line))
        if m:
            # At once: the program is in its loop within microseconds,
            # and every iteration until the signal is history to make.
            os.kill(int(m.group(1)), send)
    out, err = p.communicate(timeout=300)
    check(p.returncode == 0, 'recorded %s %s (%d) %s' % (os.path.basename(prog), ' '.join(args),
                                                         p.returncode, err.strip()[-300:]))
    return out


def gdb(ptrev, prog, trace, lines):
    # Reaching the end of an event recording takes a native run: more
    # than gdb's default remote timeout on a slow machine.
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 120', '-ex',
           'target remote | %s replay --stdio %s' % (ptrev, trace)]
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=900,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def values(out):
    """The $N = V lines, in order."""
    return [v.strip() for v in re.findall(r'^\$\d+ = (.*)$', out, re.M)]


def num(v):
    v = v.split()[-1] if v.startswith('(') else v
    return int(v, 0)


def leads_to(out, pc, rip):
    """Does the instruction at pc, as gdb's x/2i disassembled it, go on
    to rip: rip the next instruction's address, or the target it names (a
    loop's branch back to its head, where the signal came at the head)?"""
    m = re.search(r'^=> (0x[0-9a-f]+)[^\t\n]*:\t([^\n]*)\n\s+(0x[0-9a-f]+)', out, re.M)
    if not m or int(m.group(1), 16) != pc:
        return False
    return int(m.group(3), 16) == rip or re.search(r'\b%#x\b' % rip, m.group(2)) is not None


def writes_rax(out):
    """Does the instruction x/2i showed at the PC name rax (or a part) as
    its destination, the last operand in gdb's AT&T syntax?"""
    m = re.search(r'^=> [^\t\n]*:\t([^\n]*)$', out, re.M)
    text = re.sub(r'\s*(#.*|<[^>]*>)$', '', m.group(1)) if m else ''
    return re.search(r'%(rax|eax|ax|al)$', text.split(',')[-1].strip()) is not None


def interrupted(ptrev, prog, trace, handler, printed, sigs, with_rax):
    """A handler ran for a signal that interrupted a syscall-free loop: the
    replay shows what the program printed at the end, enters the handler
    at the count it saw, and one instruction back stands where the
    signal came, with the registers the handler's ucontext held."""
    name = os.path.basename(prog)
    want = dict((k, int(v, 0)) for k, v in re.findall(r'(\w+)=(0x[0-9a-f]+|\d+)', printed))
    check({'seen', 'rip', 'rsp'} <= set(want), '%s printed its state (%r)' % (name, printed))
    if not {'seen', 'rip', 'rsp'} <= set(want):
        return
    handle = ['handle %s nostop noprint pass' % s for s in sigs]
    out = gdb(ptrev, prog, trace, handle + [
        'p seen', 'p/x at_rip', 'p/x at_rsp',
        'break *%s' % handler, 'reverse-continue', 'p count', 'p $pc == %s' % handler,
        'reverse-stepi', 'p/x $pc', 'x/2i $pc', 'p/x $rsp', 'p/x $rax',
        'break main', 'reverse-continue', 'p count',
        'continue', 'p count', 'p $pc == %s' % handler,
        'delete', 'continue', 'p seen'])
    v = values(out)
    if len(v) != 12:
        check(False, '%s: the gdb session ran through (%d values)\n%s' % (name, len(v), out[-3000:]))
        return
    check([num(x) for x in v[0:3]] == [want['seen'], want['rip'], want['rsp']],
          '%s: the end shows what the program printed (%s)' % (name, v[0:3]))
    check(num(v[3]) == want['seen'] and v[4] == '1',
          '%s: reverse-continue enters the handler at the count it saw (%s)' % (name, v[3]))
    pc, rsp, rax = num(v[5]), num(v[6]), num(v[7])
    # rax as the ucontext held it, where that instruction leaves rax alone
    # (the loop's load of `fired` writes it).
    with_rax = with_rax and not writes_rax(out)
    check(leads_to(out, pc, want['rip']) and rsp == want['rsp'] and
          (not with_rax or rax == want['rax']),
          '%s: one instruction back, the registers where the signal came are the ones its '
          'ucontext held, the instruction there the one before it (pc %#x before %#x, rsp %#x, '
          'rax %#x)' % (name, pc, want['rip'], rsp, rax))
    check(num(v[8]) == 0, '%s: reverse-continue across the signal reaches main (%s)' % (name, v[8]))
    check(num(v[9]) == want['seen'] and v[10] == '1',
          '%s: forward again, the handler runs at the same count (%s)' % (name, v[9]))
    check(num(v[11]) == want['seen'], '%s: and the program ends as recorded' % name)


def case_alarm(ptrev, progs, work):
    prog = os.path.join(progs, 'hard_alarm')
    trace = os.path.join(work, 'alarm.ptrev')
    printed = record(ptrev, prog, [], trace)
    interrupted(ptrev, prog, trace, 'on_alarm', printed, ['SIGALRM'], True)


def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xffffffff


def move_state_points(src, dst, rip, ran_ns):
    """Copy recording src to dst with every STATE record's rip set to rip
    and its ran_ns to ran_ns (docs/trace-format.md: record header type,
    length, payload CRC, header CRC; STATE payload tid:i32 pos:u64
    regs[27], rip the 17th, ..., flags:u64 ran_ns:u64). Returns how many
    were moved."""
    f = bytearray(open(src, 'rb').read())
    off, n = 16, 0
    while off + 16 <= len(f):
        typ, length = struct.unpack_from('<II', f, off)
        if typ == 14:
            p = off + 16
            struct.pack_into('<Q', f, p + 12 + 16 * 8, rip)
            struct.pack_into('<Q', f, p + 284, ran_ns)
            struct.pack_into('<I', f, off + 8, crc32c(bytes(f[p:p + length])))
            struct.pack_into('<I', f, off + 12, crc32c(bytes(f[off:off + 12])))
            n += 1
        off += 16 + length
    with open(dst, 'wb') as out:
        out.write(f)
    return n


def case_lost_point(ptrev, progs, work):
    prog = os.path.join(progs, 'hard_alarm')
    trace = os.path.join(work, 'slow.ptrev')
    lost = os.path.join(work, 'lost.ptrev')
    printed = record(ptrev, prog, ['slow'], trace)
    check(crc32c(b'123456789') == 0xE3069283, 'CRC-32C')
    m = re.search(r'is a function at address (0x[0-9a-f]+)',
                  subprocess.run(['gdb', '-nx', '-batch', '-ex', 'info address work', prog],
                                 capture_output=True, text=True).stdout)
    check(m is not None and 'seen=' in printed, 'hard_alarm slow ran (%r)' % printed)
    if not m:
        return
    # Position-independent, loaded where the replay loads it (no ASLR).
    # The thread said to have run 1 us: the bounds at their floor, so
    # that making the history gives up within seconds too.
    n = move_state_points(trace, lost, 0x555555554000 + int(m.group(1), 16), 1000)
    check(n >= 1, 'the recording has STATE points (%d)' % n)
    for what, cmd in (('replay', [ptrev, 'replay', '--stdio', lost]),
                      ('decode', [ptrev, 'decode', lost])):
        t0 = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                               stdin=subprocess.DEVNULL)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired:
            rc, err = None, 'no answer in 300 s'
        # Given up on in seconds, and said why. Since a diverging
        # replay is served up to where it last met the recording, both
        # end there (rc 0) rather than refuse the recording.
        check(rc is not None and 'its STATE point at' in err and 'never came' in err and
              'met the recording' in err,
              'lost point: %s gives up there and says why (%s, %.1f s): %s'
              % (what, rc, time.time() - t0, err.strip()[-400:]))


def case_other_process(ptrev, progs, work, sig, arg):
    prog = os.path.join(progs, 'hard_usr1')
    trace = os.path.join(work, 'usr1-%s.ptrev' % (arg or 'usr1'))
    printed = record(ptrev, prog, [arg] if arg else [], trace, send=sig)
    interrupted(ptrev, prog, trace, 'on_signal', printed,
                ['SIGUSR1', 'SIGINT'], False)


def case_spin(ptrev, progs, work):
    prog = os.path.join(progs, 'hard_spin')
    trace = os.path.join(work, 'spin.ptrev')
    printed = record(ptrev, prog, [], trace)
    m = re.search(r'spins=(\d+),(\d+)', printed)
    check(m is not None, 'hard_spin printed its counts (%r)' % printed)
    if not m:
        return
    spins = [int(m.group(1)), int(m.group(2))]
    # Back across the hand-offs to the worker's start, and forwards again
    # (a multi-threaded history is PC level in the past: positions only).
    ret = spin_return_line(progs)
    out = gdb(ptrev, prog, trace, [
        'p spins[0]', 'p spins[1]', 'break worker', 'reverse-continue',
        'delete', 'break hard_spin.c:%d' % ret, 'continue', 'info line *$pc',
        'delete', 'continue', 'p spins[0]', 'p spins[1]'])
    v = values(out)
    if len(v) != 4:
        check(False, 'hard_spin: the gdb session ran through (%d values)\n%s' % (len(v), out[-3000:]))
        return
    check([int(v[0]), int(v[1])] == spins, 'hard_spin: the end shows the printed counts (%s)' % v[:2])
    check(re.search(r'Thread \d+ hit Breakpoint 1, worker', out) is not None,
          'hard_spin: reverse-continue across the switches reaches the worker\'s start')
    check(re.search(r'Line %d of "[^"]*hard_spin.c"' % ret, out) is not None,
          'hard_spin: forwards again, the worker returns')
    check([int(v[2]), int(v[3])] == spins, 'hard_spin: and the program ends as recorded')


def spin_return_line(progs):
    """The line of worker's `return NULL` in hard_spin.c."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'programs', 'hard_spin.c')
    with open(src) as f:
        for i, line in enumerate(f, 1):
            if 'return NULL;' in line:
                return i
    return 0


def case_rdtsc(ptrev, progs, work):
    prog = os.path.join(progs, 'hard_rdtsc')
    trace = os.path.join(work, 'rdtsc.ptrev')
    printed = record(ptrev, prog, [], trace)
    m = re.search(r'last=(\d+) digest=(\d+)', printed)
    check(m is not None, 'hard_rdtsc printed its values (%r)' % printed)
    if not m:
        return
    last, digest = int(m.group(1)), int(m.group(2))
    out = gdb(ptrev, prog, trace, [
        'p last', 'p digest', 'watch digest', 'reverse-continue', 'reverse-continue',
        'p last', 'p digest', 'reverse-continue', 'p last',
        'continue', 'continue', 'p last', 'delete', 'continue', 'p last', 'p digest'])
    v = values(out)
    if len(v) != 8:
        check(False, 'hard_rdtsc: the gdb session ran through (%d values)\n%s' % (len(v), out[-3000:]))
        return
    check(int(v[0]) == last and int(v[1]) == digest,
          'hard_rdtsc: the end shows the printed values (%s)' % v[:2])
    check(int(v[4]) < int(v[2]),
          'hard_rdtsc: back across an rdtsc, last is an earlier value (%s < %s)' % (v[4], v[2]))
    check(v[5] == v[2], 'hard_rdtsc: forwards again, the rdtsc gives the logged value (%s)' % v[5])
    check(int(v[6]) == last and int(v[7]) == digest, 'hard_rdtsc: and the program ends as recorded')


def main():
    ptrev, progs, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    case_alarm(ptrev, progs, work)
    case_other_process(ptrev, progs, work, signal.SIGUSR1, None)
    case_other_process(ptrev, progs, work, signal.SIGINT, 'int')
    case_spin(ptrev, progs, work)
    case_rdtsc(ptrev, progs, work)
    case_lost_point(ptrev, progs, work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
