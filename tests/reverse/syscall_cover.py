#!/usr/bin/env python3
"""Every syscall family of ptrev's one syscall table (common/syscall_table.c)
recorded and replayed with full state (issue 12, item 2).

sys_cover makes the families' syscalls (statfs, the stat family,
getdents64, readlink, ioctls on a file, a pipe and a pty, sockets with
SCM_RIGHTS and recvmmsg, prctl, sched_getaffinity, getrandom, sysinfo,
xattrs, capget, poll/select/epoll, eventfd, timerfd, signalfd, inotify,
memfd, fcntl locks, SysV IPC ...) with what the kernel wrote kept in its
global R, and prints R's hash after each family (`done K HASH`) and R's
bytes at its end. Recorded with the event and the sw backends, each
recording is replayed through gdb (`target remote | ptrev replay
--stdio`): at the end R must be the bytes the recorded run printed, the
registers and the backtrace available; reverse-continue to each done(K)
must show R with the hash the run printed there, and the backtrace
(done, the family's function, main). gdb's own `record full` on the same
program is the oracle for those backtraces in the families it gets
through (FULL_FAMILIES). Then /bin/ls -l
(a copy under a name of its own) is recorded with the event backend and
replayed with full state at its end.

usage: syscall_cover.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402

FAMILIES = 13
# The architecture's line for record full (it cannot record AVX), and no
# AVX memmove in the static glibc either.
TUNABLES = ('glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,'
            '-EVEX,-AVX2,-AVX,-AVX_Fast_Unaligned_Load')

DUMP = '''python
def _fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return h
def rdump(tag, full):
    inf = gdb.selected_inferior()
    addr = int(gdb.parse_and_eval('(unsigned long)&R'))
    size = int(gdb.parse_and_eval('sizeof(R)'))
    b = bytes(inf.read_memory(addr, size))
    print('%s %016x %s' % (tag, _fnv(b), b.hex() if full else ''))
end
'''


def env():
    return {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': '/nonexistent',
            'GLIBC_TUNABLES': TUNABLES}


def gdb(prog, script_path, text, timeout=600):
    with open(script_path, 'w') as f:
        f.write(text)
    r = subprocess.run(['gdb', '-nx', '-batch', '-x', script_path, prog], capture_output=True,
                       text=True, timeout=timeout, env=env(), stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def stops(out):
    """The transcript cut at each `STOP K` marker: K -> its text."""
    parts = {}
    for m in re.finditer(r'^STOP (\w+)\n(.*?)(?=^STOP |\Z)', out, re.M | re.S):
        parts[m.group(1)] = m.group(2)
    return parts


def frames(text):
    """The backtrace's frames, stack addresses hidden (two runs' stacks
    differ with their environment)."""
    out = []
    for line in text.splitlines():
        if re.match(r'#\d+ ', line):
            line = re.sub(r'0x7ff[0-9a-f]+', 'STACK', line)
            out.append(re.sub(r'\s+', ' ', line))
    return out


def reverse_script(ptrev, trace):
    s = 'set remotetimeout 60\nset pagination off\n'
    s += 'target remote | %s replay --stdio %s\n' % (ptrev, trace)
    s += DUMP
    s += 'echo STOP end\\n\npython rdump("END", True)\nprint $rip\nbt\ninfo registers\n'
    s += 'break done\n'
    for _ in range(FAMILIES):
        s += ('reverse-continue\npython gdb.write("STOP %d\\n" % int(gdb.parse_and_eval("k")))\n'
              'python rdump("AT", False)\nbt\ninfo registers rip rsp\n')
    return s


# The families record full gets through (file systems, directories, links,
# ioctls, sockets, prctl): gdb 13's record full knows no getcpu (the next
# family), sendmmsg or statx.
FULL_FAMILIES = 6


def record_full_script(workdir):
    s = 'set pagination off\nset startup-with-shell off\nbreak main\nrun %s\n' % workdir
    s += 'record full\nset record full insn-number-max unlimited\nbreak done\n'
    for _ in range(FULL_FAMILIES):
        s += 'continue\npython gdb.write("STOP %d\\n" % int(gdb.parse_and_eval("k")))\nbt\n'
    return s


def cover(ptrev, prog, work, backend):
    d = os.path.join(work, 'dir-' + backend)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    trace = os.path.join(work, 'cover-%s.ptrev' % backend)
    r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                        prog, d], capture_output=True, text=True, timeout=600, env=env(),
                       stdin=subprocess.DEVNULL)
    live = dict(re.findall(r'^done (\d+) ([0-9a-f]{16})$', r.stdout, re.M))
    live_r = re.search(r'^R ([0-9a-f]+)$', r.stdout, re.M)
    check(r.returncode == 0 and len(live) == FAMILIES and live_r is not None,
          '%s: recorded sys_cover (exit %d, %d families) %s' %
          (backend, r.returncode, len(live), r.stderr.strip()[-300:]))
    if not live_r:
        return {}
    out = gdb(prog, os.path.join(work, 'cover-%s.gdb' % backend), reverse_script(ptrev, trace))
    for bad in ("not in ptrev's table", 'does not say which memory', 'cannot be replayed',
                'diverged'):
        check(bad not in out, '%s: the replay says nothing of "%s" (%s)' %
              (backend, bad, re.findall(r'.*%s.*' % re.escape(bad), out)[:2]))
    parts = stops(out)
    end = parts.get('end', '')
    m = re.search(r'^END [0-9a-f]{16} ([0-9a-f]*)$', end, re.M)
    if m and live_r and m.group(1) != live_r.group(1):
        a, b = bytes.fromhex(m.group(1)), bytes.fromhex(live_r.group(1))
        first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), None)
        why = 'first difference at byte %s of R' % first
    else:
        why = ''
    check(m is not None and m.group(1) == live_r.group(1),
          '%s: at the end R holds what the recorded run printed %s' % (backend, why))
    # Before the program's last instruction (exit_group's syscall) an event
    # recording's end shows rcx and r11 unavailable: that instruction
    # overwrote them in the process the end is read from (replay/event_end.c).
    end_regs = re.sub(r'^(rcx|r11)\s+<unavailable>$', '', end, flags=re.M) \
        if backend == 'event' else end
    check(re.search(r'^\$1 = .*0x[0-9a-f]+ <_exit', end, re.M) is not None and
          '<unavailable>' not in end_regs and re.search(r'^rip\s+0x', end, re.M) is not None and
          re.search(r'in __libc_start_call_main \(', end) is not None,
          '%s: at the end $rip, the registers and the backtrace from _exit are there (%s)' %
          (backend, re.findall(r'^\$1 = .*', end, re.M)))
    bts = {}
    for k in range(FAMILIES, 0, -1):
        p = parts.get(str(k), '')
        h = re.search(r'^AT ([0-9a-f]{16})', p, re.M)
        check(h is not None and h.group(1) == live.get(str(k)),
              '%s: reverse-continue to done(%d): R as the run had it (%s, %s)' %
              (backend, k, h.group(1) if h else None, live.get(str(k))))
        f = frames(p)
        bts[k] = f
        check(len(f) in (3, 4) and f[0].startswith('#0 done (k=%d)' % k) and 'main (' in f[-1] and
              '<unavailable>' not in p and re.search(r'^rip\s+0x[0-9a-f]+\s+0x[0-9a-f]+ <done', p, re.M),
              '%s: done(%d): registers and the backtrace done, family_done, the family, main'
              % (backend, k))
    return bts


def record_full(prog, work):
    """record full's backtraces at each done(K), as far as it gets."""
    d = os.path.join(work, 'dir-full')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = gdb(prog, os.path.join(work, 'full.gdb'), record_full_script(d))
    stop = re.search(r".*doesn't support syscall number (\d+).*", out)
    parts = stops(out)
    return {int(k): frames(v) for k, v in parts.items()}, stop.group(1) if stop else None


def ls_check(ptrev, work):
    """ls -l as a user would debug it: recorded with the event backend
    (statfs, the stat family, getxattr, ioctls ...), full state at its end."""
    ls = os.path.join(work, 'ls_cover')
    shutil.copy('/bin/ls', ls)
    trace = os.path.join(work, 'ls.ptrev')
    r = subprocess.run([ptrev, 'record', '--backend', 'event', '--force', '-o', trace, '--', ls,
                        '-l', '/'], capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 0 and 'usr' in r.stdout, 'ls -l /: recorded (exit %d)' % r.returncode)
    out = gdb(ls, os.path.join(work, 'ls.gdb'),
              'set remotetimeout 60\ntarget remote | %s replay --stdio %s\nprint $rip\nbt\n'
              'info registers rip rsp\nreverse-stepi\nprint $rip\nbt\n' % (ptrev, trace))
    check("not in ptrev's table" not in out and 'does not say which memory' not in out and
          '<unavailable>' not in out and 'unavailable' not in out,
          'ls -l /: the replay has no unknown syscall and nothing unavailable (%s)' %
          re.findall(r".*(?:table|unavailable|diverged).*", out)[:3])
    check(re.search(r'^\$1 = .*<_?_?G?I?_?_?_exit', out, re.M) is not None and
          re.search(r'^\$2 = .*0x[0-9a-f]+', out, re.M) is not None and
          re.search(r'__libc_start_main', out) is not None,
          'ls -l /: $rip at _exit, a backtrace to __libc_start_main, and one instruction back '
          '(%s)' % re.findall(r'^\$\d = .*', out, re.M))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'sys_cover')
    mine = {b: cover(ptrev, prog, work, b) for b in ('event', 'sw')}
    ref, unsupported = record_full(prog, work)
    if unsupported:
        print('note record full stops at syscall %s: its backtraces are the oracle up to '
              'done(%d)' % (unsupported, max(ref) if ref else 0))
    check(sorted(ref) == list(range(1, FULL_FAMILIES + 1)),
          'record full reaches done(1) .. done(%d) (%s)' % (FULL_FAMILIES, sorted(ref)))
    for k, f in sorted(ref.items()):
        for b in mine:
            check(mine[b].get(k) == f, '%s: done(%d): the backtrace record full shows (%s / %s)'
                  % (b, k, mine[b].get(k), f))
    ls_check(ptrev, work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
