#!/usr/bin/env python3
"""A replay runs on the CPU its recording ran on. A program can read which
CPU it is on without a syscall, and keep it: static glibc keeps CPUID
leaf 1 (whose EBX holds the CPU's APIC id) in writable memory, which a
STATE point's digest covers, so a replay on another CPU never found the
recorder's points (ptrev/cpu_bind.h).

hot_loop_static, recorded with the event backend pinned to each of two
CPUs in turn (a 0.5 ms time slice, until the recording holds a point):
`ptrev info` names the CPU; gdb opening the replay (ptrev itself free to
run anywhere) has full state at the end and the program's result, and the
replayed program is bound to that CPU, and its points inside the loop are
found without a run going past them and replaying again (one such
recording took the earlier wall-clock runs 224 s: a rate taken from a run
of 5 us that made no pass went past points). Skipped with fewer than two
CPUs.

usage: replay_cpu.py PTREV HOT_LOOP_STATIC WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, shell_each_below_gdb, full_state_said  # noqa: E402


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print('SKIP: one CPU')
        return 77
    os.makedirs(work, exist_ok=True)
    for cpu in cpus[:2]:
        trace = os.path.join(work, 'cpu%d.ptrev' % cpu)
        env = dict(os.environ, PTREV_EVENT_SLICE_MS='0.5')
        points, info, printed = 0, '', ''
        for _ in range(12):
            r = record(ptrev, 'event', trace, [prog, '3000000'], env=env,
                       preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
            info = subprocess.run([ptrev, 'info', trace], capture_output=True,
                                  text=True).stdout
            m = re.search(r'^state points: (\d+)$', info, re.M)
            points = int(m.group(1)) if m else 0
            printed = r.stdout
            if r.returncode == 0 and points:
                break
        check(points > 0, 'cpu %d: a recording with a STATE point (%d)' % (cpu, points))
        check(re.search(r'^ran on cpu: %d$' % cpu, info, re.M) is not None,
              'cpu %d: ptrev info names it (%r)' % (cpu, info))
        cmds = os.path.join(work, 'cpu%d.gdb' % cpu)
        with open(cmds, 'w') as f:
            f.write('set remotetimeout 600\n')
            f.write('target remote | %s replay --stdio %s\n' % (ptrev, trace))
            f.write('monitor why\n')
            f.write('print result\n')
            f.write(shell_each_below_gdb('hot_loop_static',
                                         'grep Cpus_allowed_list: /proc/$p/status'))
        g = subprocess.run(['gdb', '-nx', '-batch', '-x', cmds, prog], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=600)
        out = g.stdout + g.stderr
        check(full_state_said(out),
              'cpu %d: full state at the end (%r)' % (cpu, out[-600:]))
        check('$1 = {%s}' % ', '.join(printed.split()) in out,
              'cpu %d: the result as printed (%r)' % (cpu, printed))
        # The points are in the loop: passes let go in the thread's CPU
        # time, no run past a point (the replay would start again). How
        # fast is the benchmarks' to say: a stretch may still be counted
        # pass by pass after runs that barely moved the thread
        # (event_skip.c's FUTILE_RUNS), seen with this test alone on the
        # machine ('not reached yet' lines), which is slower, not wrong.
        said = [l for l in out.splitlines() if 'replaying again' in l]
        check(not said, 'cpu %d: no run past a point, no replay again (%r)' % (cpu, said))
        bound = re.findall(r'^Cpus_allowed_list:\s*(\S+)$', out, re.M)
        check(bound and all(b == str(cpu) for b in bound),
              'cpu %d: the replayed program runs there (%r)' % (cpu, bound))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
