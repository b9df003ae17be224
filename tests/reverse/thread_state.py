#!/usr/bin/env python3
"""Full state in the past of a multi-threaded event recording (issue 12,
item 3): every thread's registers and all memory at any position, from the
event replay re-executed to there with every thread (replay/event_hold.h).

rev_threads has two workers draw tickets from a shared atomic counter
(bump_a in worker A, bump_b in worker B, bump_s in B's SIGUSR1 handler) and
writes into order[k] which function drew ticket k; it prints the order at
the end. That is the oracle: reverse-continue from the end with
breakpoints on the three functions stops at every bump, last first, and at
the stop for ticket k the program's memory must say counter == k and
order[0..k) == the printed order's first k letters (the shared state as it
was then, not at the end), the stopped function must be the one that drew
ticket k, every thread must have its registers and a backtrace that
unwinds through its own stack, and `monitor why` must say that every
register and all memory are available. Going forwards again (continue)
stops at ticket k+1 with counter == k+1. At SIGUSR1's delivery to B
(reverse-continue stops there too) B shows where the signal was taken (in
sched_yield, as the handler's frame saved it) with full state. An
sw recording of the same
program still shows the PC only in the past, and says why.

With PTREV_HOLD_ANCHOR_MIN=0 and PTREV_HOLD_ANCHOR_SAY set (the test
thread_state_anchor), every held state comes through an anchor counted
from the history (replay/timeline_anchor.c): the same checks, and ptrev's
lines saying the anchors were reached.

usage: thread_state.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, record, full_state_said  # noqa: E402

FUNCS = {'a': 'bump_a', 'b': 'bump_b', 's': 'bump_s'}



def crashed(ptrev, progdir, work):
    """A multi-threaded program that crashes while its main thread waits
    in a syscall that never returns: the history of that thread ended with
    a stop at address 0 and lost its last block, so the thread order did
    not cover the histories (`each thread moves alone`) and the past had
    no full state."""
    prog = os.path.join(progdir, 'thread_crash')
    trace = os.path.join(work, 'crash-event.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    check(r.returncode == 139, 'thread_crash recorded, killed by SIGSEGV (%d)' % r.returncode)
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set pagination off',
                        '-ex', 'target remote | %s replay --stdio %s' % (ptrev, trace),
                        '-ex', 'break finished', '-ex', 'reverse-continue',
                        '-ex', 'echo @first\\n', '-ex', 'print id', '-ex', 'print shared[id]',
                        '-ex', 'thread apply all bt', '-ex', 'monitor why',
                        '-ex', 'reverse-continue', '-ex', 'echo @second\\n',
                        '-ex', 'print id', '-ex', 'print shared[id]', '-ex', 'monitor why', prog],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    out = g.stdout
    parts = re.split(r'^@(first|second)$', out, flags=re.M)
    got = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    ids = []
    for name in ('first', 'second'):
        part = got.get(name, '')
        vals = re.findall(r'^\$\d+ = (\d+)$', part, re.M)
        ok = len(vals) >= 2 and vals[1] == '499500' and \
            full_state_said(part) and \
            not re.search(r'<unavailable>|not enough registers', part)
        ids.append(vals[0] if vals else None)
        check(ok, 'crash: at the %s finished() back from the end, shared[id] is 499500 with '
              'full state in every thread (%s)' % (name, vals or part[-400:]))
    check(sorted(ids) == ['0', '1'] and 'moves alone' not in out,
          'crash: both workers\' finished() met going back, in one order for the program '
          '(%s%s)' % (ids, ' ; ' + re.findall(r'.*moves alone.*', out)[0]
                      if 'moves alone' in out else ''))


def main():
    ptrev, progdir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(progdir, 'rev_threads')
    trace = os.path.join(work, 'threads-event.ptrev')
    r = record(ptrev, 'event', trace, [prog])
    m = re.search(r'^order ([abs]+)$', r.stdout, re.M)
    check(r.returncode == 0 and m is not None, 'rev_threads recorded (%r)' % r.stdout[-200:])
    if not m:
        return finish()
    order = m.group(1)
    n = len(order)
    script = os.path.join(work, 'thread_state.gdb')
    with open(script, 'w') as f:
        f.write('set pagination off\nset remotetimeout 60\n'
                'target remote | %s replay --stdio %s\n'
                'break bump_a\nbreak bump_b\nbreak bump_s\n' % (ptrev, trace))
        for k in range(n - 1, -1, -1):
            f.write('reverse-continue\necho @stop %d\\n\nbt 1\nprint counter\n'
                    'print order\nprint $rsp\nthread apply all bt\nmonitor why\n' % k)
            if order[k] == 's':
                # Before bump_s, going back: SIGUSR1's delivery to B.
                f.write('reverse-continue\necho @signal\\n\nprint counter\nbt\n'
                        'monitor why\necho @end-signal\\n\n')
        f.write('continue\necho @forward\\n\nbt 1\nprint counter\n')
    # One stream: gdb writes monitor replies to stderr, in order with the rest.
    g = subprocess.run(['gdb', '-nx', '-batch', '-x', script, prog], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    out = g.stdout
    stops = re.split(r'^@stop (\d+)$', out, flags=re.M)
    seen = {}
    for i in range(1, len(stops) - 1, 2):
        seen[int(stops[i])] = stops[i + 1]
    bad = []
    for k in range(n):
        part = seen.get(k, '')
        cnt = re.search(r'^\$\d+ = (\d+)$', part, re.M)
        text = re.search(r'^\$\d+ = (?:"([abs]*)"|.\\000. <repeats)', part, re.M)
        frames = re.findall(r'^#\d+ .*$', part, re.M)
        if not re.search(r'^#0 .*\b%s \(\)' % FUNCS[order[k]], part, re.M):
            bad.append((k, 'stopped elsewhere', frames[:1]))
        elif not cnt or int(cnt.group(1)) != k:
            bad.append((k, 'counter', cnt.group(1) if cnt else None))
        elif not text or (text.group(1) or '') != order[:k]:
            bad.append((k, 'order', text.group(1) if text else None))
        elif not full_state_said(part):
            bad.append((k, 'monitor why', re.findall(r'.*unavailable.*', part)[:1]))
        elif re.search(r'<unavailable>|not enough registers|\?\? \(\)', part):
            bad.append((k, 'a thread without full state', re.findall(
                r'.*(?:<unavailable>|not enough registers|\?\? \(\)).*', part)[:1]))
        elif not re.search(r'in worker_[ab] ', part):
            bad.append((k, 'no worker frame', frames[:4]))
    check(len(seen) == n and not bad,
          'event: at each of the %d bumps, reverse-continued to from the end, the memory, '
          'registers and every thread\'s backtrace are those of that moment (%d stops; '
          'wrong: %s)' % (n, len(seen), bad[:3]))
    if bad:
        print(seen.get(bad[0][0], '')[-1500:])
    sig = re.search(r'^@signal$(.*)^@end-signal$', out, re.M | re.S)
    ks = order.find('s')
    check(sig is not None and re.search(r'^\$\d+ = %d$' % ks, sig.group(1), re.M) and
          re.search(r'^#0 .* in sched_yield \(\)', sig.group(1), re.M) and
          # B takes it at its next syscall: a sched_yield waiting for the
          # go, or, when it had made all its bumps first, for the signal.
          re.search(r'^#1 .* in (wait_for_go|worker_b) ', sig.group(1), re.M) and
          full_state_said(sig.group(1)),
          'event: at the delivery of SIGUSR1, where it was taken in B, full state, counter %d '
          '(%s)' % (ks, sig.group(1)[-500:] if sig else out[-300:]))
    fwd = out.split('@forward', 1)[1] if '@forward' in out else ''
    cnt = re.search(r'^\$\d+ = (\d+)$', fwd, re.M)
    check(n > 1 and re.search(r'^#0 .*\b%s \(\)' % FUNCS[order[1]], fwd, re.M) and
          cnt is not None and int(cnt.group(1)) == 1,
          'event: continue from the first bump stops at the second with counter 1 (%s)'
          % (cnt.group(1) if cnt else fwd[-300:]))
    if os.environ.get('PTREV_HOLD_ANCHOR_SAY'):
        # thread_state_anchor: every held state above came through an
        # anchor (PTREV_HOLD_ANCHOR_MIN=0), none failed or disagreed.
        m = out.count('reached natively to its anchor')
        check(m > 0 and 'not reached natively' not in out and
              "is not the history's" not in out,
              'event: the held replays ran natively to their anchors (%d times), none failed'
              % m)

    crashed(ptrev, progdir, work)

    sw = os.path.join(work, 'threads-sw.ptrev')
    record(ptrev, 'sw', sw, [prog], timeout=600)
    g = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                        % (ptrev, sw), '-ex', 'break bump_a', '-ex', 'reverse-continue',
                        '-ex', 'monitor why', prog], capture_output=True, text=True, timeout=300)
    out = g.stdout + g.stderr
    check('multi-threaded full-state replay is not supported yet' in out,
          'sw: the past shows the PC only, and says why (%s)'
          % re.findall(r'.*(?:unavailable|available).*', out)[-1:])
    return finish()


if __name__ == '__main__':
    sys.exit(main())
