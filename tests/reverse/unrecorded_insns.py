#!/usr/bin/env python3
"""A replay that goes differently because the program ran an instruction
whose result no event recording holds here (rdrand: no CPUID faulting on
this CPU) says so, and still serves what it can (issue 12: when state is
unavailable, say why; a replay never costs all state of the recording).
rdrand_use writes as many bytes as its rdrand values say; its replay
gets other values, and the first write shows it.

- The replay's message, in gdb's terminal over stdio, names the
  instruction and the file that holds it, beside what went differently.
  (Before an earlier change it named only the write: `syscall 1 argument
  3 is 0x..., was 0x...`.)
- The replay opens where it last met the recording, the entry of the
  diverging thread's syscall before (event_cut_before), with full state,
  and says so; before, `ptrev replay` refused the whole recording: over
  TCP gdb saw only a connection that never answered, and the reason was
  on the server's stderr alone. The oracle: the live program stopped at
  the same syscall's entry (`catch syscall`, the stop whose caller is the
  replay's): the same registers and backtrace. Over TCP the note reaches
  gdb's console once; `ptrev decode` makes the history up to there.

usage: unrecorded_insns.py PTREV PROGRAM WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_count, gdb_batch  # noqa: E402
from ptrev_checks import record, replay_over_tcp  # noqa: E402
from cut_replay import frames, same_registers, section  # noqa: E402

NOTE = 'the last place where it met the recording'


def live_at(prog, env, nr, caller):
    """The live program under gdb at the entry of syscall nr whose caller
    is `caller` (frame 1's function): its registers and backtrace."""
    find = ('python\n'
            'for _ in range(200):\n'
            '    gdb.execute("continue", to_string=True)\n'
            '    f = gdb.selected_frame().older()\n'
            '    if f is not None and f.name() == "%s":\n'
            '        break\n'
            'end' % caller)
    return gdb_batch(prog, ['set startup-with-shell off', 'unset environment LINES',
                            'unset environment COLUMNS', 'catch syscall %d' % nr, 'starti',
                            find, 'info registers', 'bt', 'kill'], env=env, timeout=120)


def main():
    ptrev, prog, work = sys.argv[1:4]
    prog = os.path.abspath(prog)
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'rdrand.ptrev')
    # One environment for the recording and the live run: the stack's
    # addresses depend on it.
    env = {k: v for k, v in os.environ.items() if k not in ('LINES', 'COLUMNS')}
    r = record(ptrev, 'event', trace, [prog], env=env)
    if 'no rdrand' in r.stdout:
        print('SKIP: this CPU has no rdrand')
        return 77
    check(r.returncode == 0, 'rdrand_use recorded (%s)' % r.stderr[-300:])

    rep = gdb_batch(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace),
                           'info registers', 'bt', 'print $orig_rax', 'monitor why',
                           'reverse-stepi', 'print $pc', 'monitor why'], timeout=300)
    check('replay diverged' in rep and
          'the program\'s code holds rdrand, rdseed or rdpid (rdrand_use: ' in rep and
          'a replay that runs one goes differently from the recording' in rep,
          'the replay names rdrand and the file that holds it beside what went differently '
          '(%s)' % rep.strip()[-800:])
    check('Remote communication error' not in rep and NOTE in rep,
          'the replay opens, and says where it ends (%s)' % rep.strip()[-800:])
    check(full_state_count(rep) == 2, 'full state at its end and one instruction back')
    end = section(rep, 'info registers', 'print $orig_rax')
    nr = re.search(r'^\$1 = (\d+)$', rep, re.M)
    caller = re.search(r'^#1 .* in (\w+) ', end, re.M)
    check(nr is not None and caller is not None,
          'the end is a syscall\'s entry, with a caller (%s)' % end[-500:])
    if nr and caller:
        live = live_at(prog, env, int(nr.group(1)), caller.group(1))
        ok, diff = same_registers(live, end)
        # rbx holds ld.so's start time there, read by rdtsc: where rdtsc
        # does not trap, each run reads another.
        diff = [d for d in diff if d != 'rbx']
        check(not diff, 'at the end the live run\'s registers at that syscall\'s entry '
              '(differing: %s)' % diff)
        # gdb reads the replay's libraries through the remote (target:).
        replayed = [f.replace('from target:/', 'from /') for f in frames(end)]
        live_frames = frames(section(live, 'bt', 'kill'))
        check(replayed == live_frames and replayed,
              'and its backtrace: %s, live %s' % (replayed, live_frames))
    back = re.search(r'^\$2 = .*(0x[0-9a-f]+)', rep, re.M)
    check(back is not None and back.group(1) not in end.split('\n', 2)[1],
          'reverse-stepi moves back from the end')

    # Over TCP: the note reaches gdb's console, not only ptrev's stderr.
    tcp = replay_over_tcp(ptrev, trace, prog, ['reverse-stepi', 'monitor why', 'reverse-stepi'],
                          os.path.join(work, 'replay.err'))
    check(tcp.count(NOTE) == 1 and 'rdrand' in tcp and full_state_count(tcp) == 1,
          'over TCP gdb\'s console says once where the replay ends and why (%s)' %
          tcp.strip()[-800:])

    d = subprocess.run([ptrev, 'decode', trace], capture_output=True, text=True, timeout=300)
    check(d.returncode == 0 and 'the last place where the replay met the recording' in d.stderr
          and d.stdout.count('\n') > 1000,
          'ptrev decode makes the history up to there (%d lines): %s' %
          (d.stdout.count('\n'), d.stderr.strip()[-300:]))
    return finish()


if __name__ == '__main__':
    sys.exit(main())
