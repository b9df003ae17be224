#!/usr/bin/env python3
"""Thread-local variables (qGetTLSAddr) as under gdbserver, the oracle:
`print` of the program's own __thread variables and of libc's errno, and
their addresses, in a worker thread and in the main thread, each with its
own values. gdbserver answers with libthread_db; ptrev reads the same
glibc descriptors (_thread_db_*, found through gdb's qSymbol answers)
itself. The same again in the past of an event recording of the program
(`ptrev replay`, reverse-continue to each thread's stop), which has no
live process to ask: each thread's own values at its own address.

usage: thread_local.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record  # noqa: E402

LOOK = '''print tls_var
print tls_name
print errno
'''

LIVE = '''set pagination off
target remote | {server}
break here
continue
{look}continue
{look}'''

# From the end of the recording back to each thread's stop (main's, then
# the worker's). Not errno: gdb reads it by calling __errno_location,
# and a function call needs a live process.
PAST = '''set pagination off
target remote | {server}
break here
reverse-continue
print tls_var
print tls_name
print &tls_var
reverse-continue
print tls_var
print tls_name
print &tls_var
'''


def gdb(script, prog, work, tag):
    path = os.path.join(work, tag + '.gdb')
    with open(path, 'w') as f:
        f.write(script)
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', path, prog], capture_output=True,
                       text=True, timeout=300, stdin=subprocess.DEVNULL)
    return g.stdout + g.stderr


def values(out):
    return re.findall(r'^\$\d+ = (.*)$', out, re.M)


def main():
    ptrev, progdir, work = [os.path.abspath(a) for a in sys.argv[1:4]]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'tls_vars')
    want = gdb(LIVE.format(server='gdbserver - ' + prog, look=LOOK), prog, work, 'gdbserver')
    got = gdb(LIVE.format(server='%s serve --stdio --no-record -- %s' % (ptrev, prog), look=LOOK), prog,
              work, 'ptrev')
    w = values(want)
    check(len(w) == 6 and w[0] == '99' and w[1].startswith('"Wain"') and w[2] == '42' and
          w[3] == '11' and w[4].startswith('"main"') and w[5] == '5',
          'gdbserver (the oracle): the worker\'s values, then main\'s (%s)\n%s' % (w, want[-1500:]))
    check(values(got) == w and 'Cannot find thread-local' not in got,
          'ptrev prints every thread-local variable as gdbserver does (%s)\n%s'
          % (values(got), got[-1500:]))
    # The past of an event recording: main's values at its here(), then
    # the worker's.
    trace = os.path.join(work, 'tls.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 0, 'tls_vars recorded with the event backend (%s)' % r.stderr[-500:])
    past = gdb(PAST.format(server='%s replay --stdio %s' % (ptrev, trace)), prog, work, 'past')
    p = values(past)
    check(len(p) == 6 and p[:2] + p[3:5] == w[3:5] + w[:2] and p[2] != p[5],
          'in the recording\'s past, main\'s values then the worker\'s, as live (%s)\n%s'
          % (values(past), past[-1500:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
