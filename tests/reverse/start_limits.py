#!/usr/bin/env python3
"""A replay starts the program with the resource limits, umask and
personality it was recorded with, whoever starts `ptrev replay` (issue
12, item 1). Recorded
with the stack limit unlimited (the kernel then lays mmap out the legacy
way: a replay under the default 8 MB limit put everything elsewhere and
refused, `auxv entry 33 ... replay would differ`), RLIMIT_NOFILE lowered
and umask 027, e2e_basic's recordings (event and sw) replay from a plain
starter with full state at their end, and the replaying process has the
recorded limits and umask (read from /proc, for the processes of this
gdb's ptrev, while gdb holds it).

usage: start_limits.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import resource
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, shell_each_below_gdb  # noqa: E402


def odd_start():
    resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_NOFILE, (100, 200))
    os.umask(0o027)


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'e2e_basic')
    for backend in ('event', 'sw'):
        trace = os.path.join(work, 'limits-%s.ptrev' % backend)
        r = subprocess.run([ptrev, 'record', '--backend', backend, '--force', '-o', trace, '--',
                            prog], capture_output=True, text=True, timeout=600,
                           preexec_fn=odd_start)
        check(r.returncode == 0, '%s: recorded with odd limits and umask' % backend)
        script = os.path.join(work, 'limits.gdb')
        with open(script, 'w') as f:
            f.write('set remotetimeout 60\n'
                    'target remote | %s replay --stdio %s\n'
                    'reverse-stepi\n'
                    'print global_counter\n' % (ptrev, trace)
                    + shell_each_below_gdb(
                        'e2e_basic', 'grep -h Umask /proc/$p/status; '
                        'grep -h -E "Max (stack size|open files)" /proc/$p/limits'))
        g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], capture_output=True,
                           text=True, timeout=300)
        out = g.stdout + g.stderr
        check(re.search(r'^\$1 = 17$', out, re.M) is not None and 'would differ' not in out,
              '%s: the replay from a plain starter has full state at the end (%s)'
              % (backend, re.findall(r'^\$1 = .*$|.*would differ.*', out, re.M)))
        check(re.search(r'^Umask:\s+0027$', out, re.M) is not None and
              re.search(r'^Max stack size\s+unlimited\s+unlimited', out, re.M) is not None and
              re.search(r'^Max open files\s+100\s+200\s', out, re.M) is not None,
              '%s: the replayed program has the recorded umask and limits (%s)'
              % (backend, sorted(set(re.findall(r'^(?:Umask|Max).*$', out, re.M)))))
    # setarch -L (ADDR_COMPAT_LAYOUT: the legacy layout), the same way.
    trace = os.path.join(work, 'legacy.ptrev')
    r = subprocess.run(['setarch', '-L', ptrev, 'record', '--force', '-o', trace, '--', prog],
                       capture_output=True, text=True, timeout=600)
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60', '-ex',
                        'target remote | %s replay --stdio %s' % (ptrev, trace),
                        '-ex', 'reverse-stepi', '-ex', 'print global_counter', prog],
                       capture_output=True, text=True, timeout=300)
    out = g.stdout + g.stderr
    check(r.returncode == 0 and re.search(r'^\$1 = 17$', out, re.M) is not None and
          'would differ' not in out,
          'recorded under setarch -L: the replay has full state at the end (%s)'
          % re.findall(r'^\$1 = .*$|.*would differ.*', out, re.M))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
