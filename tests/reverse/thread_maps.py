#!/usr/bin/env python3
"""Event recordings of threads whose syscalls another thread sees done,
replayed through gdb to the end, which must show what the program printed,
with full state.

thread_maps: two threads map and unmap memory at the same time. A replay
runs mmap and munmap again, in the order the recording gives their
threads, so the recorder lets no other thread run while one is in such a
syscall (else the replay gets other addresses: "replay diverged ...
syscall 9 returned ..."), and the replay completes such a call as soon as
its thread's run ends there: the other thread's STATE points digest the
mappings as they were with it done (else "a STATE point ...: a syscall
came first"). Three recordings with the default time slice, two with a
slice of 10 us (a STATE point after nearly every call).

thread_inflight: a reader blocked in read() on a pipe, a writer that
writes a byte then computes, a third thread that computes: the STATE
points of the computing threads fall while the read has returned (its
buffer written, which a replay does only when the reader runs next) or is
still blocked (the reader not stopped): they must leave out what the read
may write and tell the reader's stack from its entry. Three recordings
with a slice of 0.2 ms.

usage: thread_maps.py PTREV THREAD_MAPS THREAD_INFLIGHT WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, full_state_said  # noqa: E402


def replay_prints(ptrev, prog, trace, exprs):
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set remotetimeout 60', '-ex',
                        'target remote | %s replay --stdio %s' % (ptrev, trace)]
                       + sum((['-ex', 'print ' + x] for x in exprs), [])
                       + ['-ex', 'monitor why', prog], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return g.stdout


def one(ptrev, prog, trace, slice_ms, nprinted, exprs, want):
    """Record PROG into TRACE (SLICE_MS: the STATE points' time slice, or
    the default), replay it, and check that EXPRS print as WANT(printed)
    says, with full state."""
    env = dict(os.environ)
    if slice_ms:
        env['PTREV_EVENT_SLICE_MS'] = slice_ms
    r = record(ptrev, 'event', trace, [prog], env=env)
    printed = r.stdout.split()
    what = '%s (slice %s)' % (os.path.basename(trace), slice_ms or 'default')
    check(r.returncode == 0 and len(printed) == nprinted, '%s: the program ran (%d, %r)'
          % (what, r.returncode, r.stdout))
    if len(printed) != nprinted:
        return
    out = replay_prints(ptrev, prog, trace, exprs)
    wants = want(printed)
    ok = all(re.search(r'^\$%d = %s$' % (i + 1, re.escape(w)), out, re.M)
             for i, w in enumerate(wants))
    ok = ok and full_state_said(out)
    check(ok, '%s: its replay ends with %s as the program printed, with full state'
          % (what, ', '.join(wants)))
    if not ok:
        print(out[-3000:])


def main():
    ptrev, maps, inflight, work = (sys.argv[1], os.path.abspath(sys.argv[2]),
                                   os.path.abspath(sys.argv[3]), sys.argv[4])
    os.makedirs(work, exist_ok=True)
    for n, slice_ms in enumerate([None, None, None, '0.01', '0.01']):
        one(ptrev, maps, os.path.join(work, 'maps%d.ptrev' % n), slice_ms, 4,
            ['sums', '/x last'],
            lambda p: ['{%s, %s}' % (p[0], p[1]), '{%s, %s}' % (p[2], p[3])])
    for n in range(3):
        one(ptrev, inflight, os.path.join(work, 'inflight%d.ptrev' % n), '0.2', 3,
            ['got', 'spun'], lambda p: [p[0], '{%s, %s}' % (p[1], p[2])])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
