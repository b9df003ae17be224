#!/usr/bin/env python3
"""Real programs nobody here wrote, debugged as a user would (issue 12):
each recorded with `ptrev record` (the event backend, what auto picks
without PT), its output the same as a native run's, then replayed through
gdb with `target remote | ptrev replay --stdio FILE`, which gdb starts
with SIGPIPE and SIGXFSZ ignored. At the end of the recording every
register and all memory must be there, with a backtrace down to
__libc_start_main; going back to the program's entry point (AT_ENTRY,
reverse-continue) the same, with argc and argv as the program was started.

pigz -p 2 compresses in threads of its own: going back from the end to the
last call of zlib's deflate, every thread the program had there has full
state and a backtrace that ends at its thread's start (clone3) or at the
program's (__libc_start_main).

usage: real_programs.py PTREV WORK_DIR
"""
import os
import random
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_said  # noqa: E402


# `info auxv` names the entry point; the breakpoint goes there.
TO_ENTRY = r'''
python
import re
aux = gdb.execute('info auxv', to_string=True)
entry = int(re.search(r'AT_ENTRY\s.*\s(0x[0-9a-f]+)', aux).group(1), 16)
gdb.execute('break *%d' % entry)
print('@entry 0x%x' % entry)
end
'''


def inputs(work):
    rng = random.Random(7)
    lines = [str(i) for i in range(1, 1001)]
    rng.shuffle(lines)
    with open(os.path.join(work, 'lines.txt'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    words = ['record', 'replay', 'reverse', 'thread', 'signal', 'history', 'stretch', 'event']
    text = ' '.join(rng.choice(words) for _ in range(16000))
    for name, size in (('text16k.txt', 16384), ('text64k.txt', 65536), ('text96k.txt', 98304)):
        with open(os.path.join(work, name), 'w') as f:
            f.write((text * 8)[:size])


def gdb(prog, script_path, script):
    with open(script_path, 'w') as f:
        f.write('set pagination off\nset confirm off\n' + script)
    r = subprocess.run(['gdb', '-nx', '-batch', '-x', script_path, prog],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=900)
    return r.stdout


def threads_bt(out):
    """{thread number: [frame lines]} from `thread apply all bt`."""
    got = {}
    cur = None
    for line in out.splitlines():
        m = re.match(r'^Thread (\d+) \(', line)
        if m:
            cur = got.setdefault(int(m.group(1)), [])
        elif cur is not None and line.startswith('#'):
            cur.append(line)
        elif cur is not None and not line.strip():
            cur = None
    return got


def debug(ptrev, work, name, argv, threads=None):
    prog = shutil.which(argv[0])
    if prog is None:
        print('skip %s: not installed (scripts/setup installs it)' % argv[0])
        return
    native = subprocess.run([prog] + argv[1:], cwd=work, capture_output=True,
                            stdin=subprocess.DEVNULL, timeout=60)
    trace = os.path.join(work, name + '.ptrev')
    rec = subprocess.run([ptrev, 'record', '--force', '-o', trace, '--', prog] + argv[1:],
                         cwd=work, capture_output=True, stdin=subprocess.DEVNULL, timeout=300)
    check(rec.returncode == native.returncode == 0 and rec.stdout == native.stdout,
          '%s: recorded, its output as in a native run (exit %d, %d bytes)'
          % (name, rec.returncode, len(rec.stdout)))
    script = 'target remote | %s replay --stdio %s\n' % (ptrev, trace)
    script += 'echo @end\\n\nprint $pc\nbt\nmonitor why\n'
    if threads:
        script += ('break %s\nreverse-continue\necho @threads\\n\ninfo threads\n'
                   'thread apply all bt\nmonitor why\ndelete\n' % threads)
    script += TO_ENTRY + ('reverse-continue\necho @start\\n\nprint $pc\nmonitor why\n'
                          'x/gd $sp\nx/s *(char **)($sp + 8)\ninfo registers\n')
    out = gdb(prog, os.path.join(work, name + '.gdb'), script)
    end = out.partition('@end\n')[2].partition('\n@')[0]
    start = out.partition('@start\n')[2]
    entry = re.search(r'^@entry (0x[0-9a-f]+)', out, re.M)
    ok_end = full_state_said(end) and re.search(r'in _?_?G?I?_?_?_exit', end) and '__libc_start_main' in end
    check(bool(ok_end), '%s: full state at the end, a backtrace from _exit to __libc_start_main'
          % name)
    ok_start = (entry and re.search(r'^\$\d+ = .*%s' % entry.group(1), start, re.M)
                and full_state_said(start) and re.search(r':\s+%d$' % len(argv), start, re.M)
                and ('"%s"' % prog) in start)
    check(bool(ok_start), '%s: full state at the entry point (%s), argc %d and argv[0] %s there'
          % (name, entry.group(1) if entry else 'unknown', len(argv), prog))
    check('unavailable' not in out and 'diverged' not in out,
          '%s: nothing unavailable, no divergence' % name)
    if threads:
        part = out.partition('@threads\n')[2].partition('\n@')[0]
        bts = threads_bt(part)
        # A thread's backtrace ends in clone3 (after start_thread), the
        # main thread's below __libc_start_main (in the stripped _start).
        based = all(re.search(r' in clone3 ', f[-1]) or
                    any('__libc_start_main' in x for x in f[-3:]) for f in bts.values() if f)
        check(len(bts) >= 3 and full_state_said(part) and based and all(bts.values()),
              '%s: at the last %s, %d threads, each with full state and a backtrace to its '
              "thread's start" % (name, threads, len(bts)))
        check(any(re.match(r'#0 .* in %s ' % threads, f[0]) for f in bts.values() if f),
              '%s: one thread stands at %s' % (name, threads))
    if not (ok_end and ok_start) or 'unavailable' in out:
        print(out[-6000:])


def main():
    ptrev, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(work, exist_ok=True)
    inputs(work)
    debug(ptrev, work, 'sort', ['sort', 'lines.txt'])
    debug(ptrev, work, 'gzip', ['gzip', '-c', 'text16k.txt'])
    debug(ptrev, work, 'md5sum', ['md5sum', 'text64k.txt'])
    # 32 KiB blocks: three of them, compressed by two threads.
    debug(ptrev, work, 'pigz', ['pigz', '-p', '2', '-b', '32', '-1', '-c', 'text96k.txt'],
          threads='deflate')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
