#!/usr/bin/env python3
"""Thread switches in the history, moving both ways.

rev_threads has two workers draw tickets from a shared atomic counter:
bump_a only ever runs in worker A, bump_b in worker B, bump_s in B's
SIGUSR1 handler (A sends the signal). The program itself records which
function drew each ticket, so the string it prints is the true global order
of the bumps, whatever the recorder's scheduler did. That is the oracle:

 - reverse-continue from the end, with breakpoints on the three functions,
   stops at every bump in exactly the reverse of that order, each time in
   the thread that made it (A: the second thread created, B: the first),
   then says "No more reverse-execution history";
 - continue from the start stops at them in order, and at the SIGUSR1
   delivery to B right before bump_s;
 - mixing directions and selecting another thread in between keeps one
   position for the whole program (the next stop follows from the order);
 - reverse-stepi stays in the thread gdb steps; stepi in one worker stops
   at the other's next bump (or the signal) that runs before its next
   instruction, in that thread;
 - `info threads` at the start shows only the main thread (the workers do
   not exist yet) and at a bump both workers;
 - the same live, while recording (`serve --record`, with the sw and the
   event recorder), against the order read from the program's memory at
   the present, then running on for real;
 - an sw recording whose schedule is missing or cut short moves each
   thread alone and never invents an order; an event recording without
   one is refused, with part of one its history ends where the order does.

The recorder is PTREV_TEST_BACKEND's (default auto).

usage: thread_switch.py PTREV PROGRAM WORKDIR
"""
import os
import re
import subprocess
import sys

FUNCS = {'a': 'bump_a', 'b': 'bump_b', 's': 'bump_s'}


def run_gdb(prog, lines):
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set pagination off', '-ex', 'set trace-commands on']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def commands(text):
    """The output of each traced command, in order: [(command, output)]."""
    out, cmd, buf = [], None, []
    for line in text.splitlines():
        if line.startswith('+'):
            if cmd is not None and cmd.startswith('reverse-') and line.endswith(' '):
                continue  # gdb traces the command a reverse one runs, e.g. "+continue "
            if cmd is not None:
                out.append((cmd, '\n'.join(buf)))
            cmd, buf = line[1:], []
        elif cmd is not None:
            buf.append(line)
    if cmd is not None:
        out.append((cmd, '\n'.join(buf)))
    return out


def stop_of(output):
    """('a'|'b'|'s'|'begin'|'end'|'sig'|None, tid or None) for one command's output."""
    tid = None
    m = re.search(r'Switching to Thread \d+\.(\d+)\]', output)
    if m:
        tid = int(m.group(1))
    if 'received signal SIGUSR1' in output:
        return 'sig', tid
    if 'No more reverse-execution history' in output:
        return ('begin' if '_start' in output else 'end'), tid
    for k, f in FUNCS.items():
        if re.search(r'hit Breakpoint \d+, %s \(' % f, output):
            return k, tid
    return None, tid


class Checker:
    def __init__(self):
        self.bad = 0

    def check(self, ok, what):
        if not ok:
            print('FAIL: ' + what)
            self.bad += 1


def follow(c, what, outs, expected, tids, start_tid):
    """outs: command outputs; expected: list of stop kinds. The thread
    reported must be the one that made each bump (gdb prints a switch only
    when it changes, so the current thread is tracked)."""
    cur = start_tid
    for i, ((cmd, out), want) in enumerate(zip(outs, expected)):
        kind, tid = stop_of(out)
        if tid is not None:
            cur = tid
        c.check(kind == want, '%s #%d (%s): stopped at %r, expected %r\n%s' %
                (what, i, cmd, kind, want, out))
        if want in tids and kind == want:
            c.check(cur == tids[want], '%s #%d: %s in thread %s, expected %s' %
                    (what, i, FUNCS.get(want, 'SIGUSR1'), cur, tids[want]))


def worker_tids(ptrev, trace):
    info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True).stdout
    m = re.search(r'threads: 3 \((\d+), (\d+), (\d+)\)', info)
    if not m or not re.search(r'thread switches: [1-9]', info):
        print('FAIL: ptrev info shows no thread switches:\n' + info)
        return None
    pid, b, a = (int(x) for x in m.groups())
    return pid, {'a': a, 'b': b, 's': b}


def breaks():
    return ['break bump_a', 'break bump_b', 'break bump_s']


def events_of(order):
    """The stops going forwards: each bump, and the signal delivery right
    before bump_s."""
    ev = []
    for k in order:
        if k == 's':
            ev.append('sig')
        ev.append(k)
    return ev


class Model:
    """Where the program stands among the events: at event i (about to make
    it), -1 at the start, len at the end. reverse-continue goes to the
    previous event (a signal's delivery stops it too, as under gdb's record
    full), continue to the next one."""

    def __init__(self, order):
        self.ev = events_of(order)
        self.i = len(self.ev)

    def back(self):
        self.i = max(self.i - 1, -1)
        return 'begin' if self.i < 0 else self.ev[self.i]

    def fwd(self):
        self.i = min(self.i + 1, len(self.ev))
        return 'end' if self.i == len(self.ev) else self.ev[self.i]


def stops(outs, names):
    return [o for o in outs if o[0] in names]


def saved_session(c, ptrev, prog, trace, order, pid, tids):
    n = len(events_of(order))  # the bumps and the signal
    lines = ['target remote | %s replay --stdio %s' % (ptrev, trace)] + breaks()
    lines += ['reverse-continue'] * (n + 1) + ['info threads', 'monitor when']
    lines += ['continue'] * (n + 1) + ['monitor when']
    text = run_gdb(prog, lines)
    # gdb prints what a monitor command says on stderr: in order there.
    # The end stands on the exit_group instruction, as record full stops
    # before it (and as a one-thread history ends): the last of them.
    at = re.findall(r'All threads: instruction (\d+) of (\d+)', text)
    c.check(len(at) == 2 and at[0][0] == '0' and int(at[1][0]) + 1 == int(at[1][1]) and
            int(at[1][1]) > 1,
            'monitor when should show the global position at the start and the end: %s' % at)
    outs = stops(commands(text), ('reverse-continue', 'continue', 'info threads'))
    m = Model(order)
    follow(c, 'saved reverse-continue', outs[:n + 1], [m.back() for _ in range(n + 1)],
           {**tids, 'sig': tids['s']}, pid)
    at_start = outs[n + 1][1]
    c.check(len(re.findall(r'Thread \d+\.\d+', at_start)) == 1,
            'info threads at the start should list only the main thread:\n' + at_start)
    m.i = -1
    follow(c, 'saved continue', outs[n + 2:], [m.fwd() for _ in range(n + 1)],
           {**tids, 'sig': tids['s']}, pid)
    if c.bad:
        print(text)


def mixed_session(c, ptrev, prog, trace, order, pid, tids):
    """From the end: back 5, forward 2, select the main thread, back 3,
    reverse-stepi twice in the worker that stopped, forward 1."""
    # Back 3 at least, and on until a bump (a signal's delivery stops a
    # reverse-continue too; the reverse-stepis want a bump).
    m = Model(order)
    expected = [m.back() for _ in range(5)] + [m.fwd() for _ in range(2)]
    nback = 0
    while nback < 3 or (expected[-1] not in tids and expected[-1] != 'begin'):
        expected.append(m.back())
        nback += 1
    lines = ['target remote | %s replay --stdio %s' % (ptrev, trace)] + breaks()
    lines += ['reverse-continue'] * 5 + ['continue'] * 2 + ['thread 1']
    lines += ['reverse-continue'] * nback
    lines += ['reverse-stepi', 'reverse-stepi', 'thread', 'info threads', 'continue']
    text = run_gdb(prog, lines)
    outs = stops(commands(text), ('reverse-continue', 'continue', 'reverse-stepi', 'thread',
                                  'info threads'))
    n = len(expected)
    follow(c, 'mixed', outs[:n], expected, {**tids, 'sig': tids['s']}, pid)
    last = expected[-1]
    if last not in tids:
        c.check(False, 'mixed: the schedule ended at %r, expected a bump' % last)
        return
    for cmd, out in outs[n:n + 2]:
        c.check('Switching' not in out, 'reverse-stepi switched threads:\n' + out)
    cur = outs[n + 2][1]
    c.check('Thread %d.%d' % (pid, tids[last]) in cur,
            'after reverse-stepi the current thread should be %d:\n%s' % (tids[last], cur))
    infos = outs[n + 3][1]
    c.check(len(re.findall(r'Thread \d+\.\d+', infos)) == 3,
            'both workers exist at a bump:\n' + infos)
    kind, _ = stop_of(outs[n + 4][1])
    c.check(kind == last, 'continue after reverse-stepi should reach the same bump %r again, '
            'got %r\n%s' % (last, kind, outs[14][1]))
    if c.bad:
        print(text)


def live_session(c, ptrev, prog, backend):
    """While recording (with the live backend given): run to the end of
    main's joins, read the order from memory, go back through every bump,
    forward to the present, run on."""
    lines = ['handle SIGUSR1 nostop noprint pass',
             'target remote | %s serve --stdio --record --backend %s -- %s'
             % (ptrev, backend, prog),
             'break joined', 'continue', 'printf "ORDER=%s\\n", order',
             'delete'] + breaks()
    lines += ['reverse-continue'] * 30
    text = run_gdb(prog, lines)
    m = re.search(r'ORDER=([abs]+)', text)
    if not m:
        c.check(False, 'live (%s): no order read:\n' % backend + text)
        return
    order = m.group(1)
    n = len(order)
    outs = [o for o in commands(text) if o[0] == 'reverse-continue'][:n + 1]
    pm = re.search(r'Thread (\d+)\.\d+', text)
    pid = int(pm.group(1)) if pm else 0
    # Threads: B's tid is lower (created first) in this run too.
    tids_seen = sorted({int(t) for t in re.findall(r'Thread \d+\.(\d+)\]', text)} - {pid})
    if len(tids_seen) != 2:
        c.check(False, 'live (%s): expected switches to two workers, saw %s\n%s'
                % (backend, tids_seen, text))
        return
    b, a = tids_seen
    follow(c, 'live (%s) reverse-continue' % backend, outs, list(reversed(order)) + ['begin'],
           {'a': a, 'b': b, 's': b}, pid)
    # Forward to the present and on for real.
    lines = lines[:6] + breaks() + ['reverse-continue'] * 3 + ['continue'] * 3 + ['delete',
            'continue', 'continue']
    text2 = run_gdb(prog, lines)
    c.check('No more reverse-execution history' in text2 and 'exited normally' in text2,
            'live (%s): forward replay should reach the present, then the program runs to its '
            'exit:\n' % backend + text2)
    if c.bad:
        print(text)


def stepping_session(c, ptrev, prog, trace, order, pid, tids):
    """stepi in one worker while the others run (gdb sends vCont;s:T;c):
    the other worker's bump, executed before the stepping thread's next
    instruction, stops the stepping there, in that thread, as it would
    live (a step landing on a breakpoint of its own stops it too)."""
    ev = events_of(order)
    owner = {'a': 'a', 'b': 'b', 's': 'b', 'sig': 'b'}
    pick = None
    for k in range(len(ev) - 1):
        me = owner[ev[k]]
        nxt = ev[k + 1]
        # The next stop is the other thread's bump, and the stepping
        # thread is still alive then (a bump of its own comes later).
        if ev[k] != 'sig' and nxt != 'sig' and owner[nxt] != me and \
                any(owner[ev[e]] == me and ev[e] != 'sig' for e in range(k + 2, len(ev))):
            pick = k
    if pick is None:
        print('note: no bump is followed by another thread\'s while its own thread lives on: '
              + order)
        return
    k = pick
    back = len(ev) - k  # every event from the end back to ev[k] stops it
    lines = ['target remote | %s replay --stdio %s' % (ptrev, trace)] + breaks()
    lines += ['reverse-continue'] * back + ['stepi 100000', 'thread']
    text = run_gdb(prog, lines)
    outs = stops(commands(text), ('reverse-continue', 'stepi 100000', 'thread'))
    kind, _ = stop_of(outs[back - 1][1])
    c.check(kind == ev[k], 'stepping: reverse-continue x%d should stop at %r, got %r'
            % (back, ev[k], kind))
    kind, _ = stop_of(outs[back][1])
    want = ev[k + 1]
    c.check(kind == want, 'stepping from %r (event %d): stepi should stop at the other '
            'thread\'s %r, got %r\n%s' % (ev[k], k, want, kind, outs[back][1]))
    c.check('Thread %d.%d' % (pid, tids[want]) in outs[back + 1][1],
            'stepping: the stop should be in thread %d:\n%s' % (tids[want], outs[back + 1][1]))
    if c.bad:
        print(text)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def rewrite_schedule(src, dst, keep):
    """A copy of the recording whose SCHED records keep only the first
    `keep` runs in all (0: no schedule at all), as a recorder killed before
    it wrote the rest would leave it (docs/trace-format.md)."""
    import struct
    data = open(src, 'rb').read()
    out, off, left = [data[:16]], 16, keep
    while off + 16 <= len(data):
        rtype, length = struct.unpack_from('<II', data, off)
        payload = data[off + 16:off + 16 + length]
        off += 16 + length
        if rtype == 12:
            n = struct.unpack_from('<I', payload)[0]
            n = min(n, left)
            left -= n
            if n == 0:
                continue
            payload = struct.pack('<I', n) + payload[4:4 + 20 * n]
        head = struct.pack('<III', rtype, len(payload), crc32c(payload))
        out.append(head + struct.pack('<I', crc32c(head)) + payload)
    open(dst, 'wb').write(b''.join(out))


def degraded_sessions(c, ptrev, prog, trace, work):
    """Without a schedule covering every thread, each thread of an sw
    recording moves alone (never an invented order): the main thread,
    current at the end, never bumps, so reverse-continue goes to its start;
    a partial schedule says so on stderr."""
    for keep, what in ((0, 'no schedule'), (5, 'a partial schedule')):
        copy = os.path.join(work, 'sched%d.ptrev' % keep)
        rewrite_schedule(trace, copy, keep)
        text = run_gdb(prog, ['target remote | %s replay --stdio %s' % (ptrev, copy)] +
                       breaks() + ['reverse-continue'])
        outs = stops(commands(text), ('reverse-continue',))
        c.check(bool(outs) and stop_of(outs[0][1])[0] == 'begin',
                '%s: reverse-continue should move the main thread alone to its start:\n%s'
                % (what, text))
        warned = 'does not cover every thread' in text
        c.check(warned == (keep > 0), '%s: warning on stderr %s expected:\n%s'
                % (what, 'not' if keep == 0 else '', text))


def degraded_event_sessions(c, ptrev, prog, trace, work):
    """An event recording cannot be re-executed without its thread order:
    with none, replay refuses it with the reason; with part of it, the
    history ends where the order does (said on stderr) and reverse-continue
    goes back from there to the start."""
    copy = os.path.join(work, 'event_sched0.ptrev')
    rewrite_schedule(trace, copy, 0)
    r = subprocess.run([ptrev, 'replay', '--stdio', copy], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=600)
    c.check(r.returncode != 0 and 'no thread order' in r.stderr,
            'event recording without a schedule: a clear refusal expected, rc %d:\n%s'
            % (r.returncode, r.stderr))
    copy = os.path.join(work, 'event_sched5.ptrev')
    rewrite_schedule(trace, copy, 5)
    text = run_gdb(prog, ['target remote | %s replay --stdio %s' % (ptrev, copy)] +
                   breaks() + ['reverse-continue', 'info threads'])
    c.check('thread order ends before its program did' in text,
            'event recording with a partial schedule: no word that its history ends early:\n'
            + text)
    outs = stops(commands(text), ('reverse-continue',))
    c.check(bool(outs) and stop_of(outs[0][1])[0] == 'begin',
            'event recording with a partial schedule: reverse-continue should reach the '
            'start:\n' + text)


def backend_of(ptrev, trace):
    r = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True)
    m = re.search(r'^backend: (\S+)', r.stdout, re.M)
    return m.group(1) if m else None


def live_stops_session(c, ptrev, prog, backend):
    """While recording, stopped mid-run more than once (e2e_threads: each
    worker calls work() in turn): going back from the second worker's
    work() reaches the first worker's, in its thread. A stop closes the
    thread's run and the run that goes on after it is merged into it in
    the recording being made; the timeline once took that for a schedule
    that contradicts itself, and each thread moved alone (back to the
    start of the second worker). Forwards again, the present shows the
    thread that stopped there, not the first that lives. The event backend
    has full state there (id is known)."""
    threads = os.path.join(os.path.dirname(prog), 'e2e_threads')
    text = run_gdb(threads, ['target remote | %s serve --stdio --record --backend %s -- %s'
                             % (ptrev, backend, threads),
                             'break work', 'continue', 'continue', 'reverse-continue',
                             'continue', 'bt 1'])
    # Each hit with the thread (its LWP) gdb switched to last before it.
    hits = []
    for m in re.finditer(r'hit Breakpoint 1, work \(id=([^)]*)\)', text):
        lwps = re.findall(r'Switching to Thread \d+\.(\d+)\]', text[:m.start()])
        hits.append((lwps[-1] if lwps else None, m.group(1)))
    # In the past an sw recording of threads shows the PC only: id there
    # may be <unavailable>.
    c.check(len(hits) == 3 and [h[1] for h in hits[:2]] == ['0', '1'] and
            hits[2][1] in (('0', '<unavailable>') if backend == 'sw' else ('0',)) and
            hits[2][0] == hits[0][0] and hits[1][0] != hits[0][0] and
            'inconsistent' not in text and 'moves alone' not in text,
            'live (%s), stopped twice: reverse-continue from work(1) reaches work(0) in the '
            'first worker\'s thread (%s):\n%s' % (backend, hits, text if len(hits) != 3 else ''))
    # Forwards again to the present: the thread stopped there (the second
    # worker, in work(1)), not whichever thread lives first.
    after = text.split('+continue')[-1] if '+continue' in text else ''
    c.check('No more reverse-execution history' in after and
            re.search(r'^#0 +work \(id=1\)', after, re.M) is not None,
            'live (%s), stopped twice: forwards to the present shows the thread stopped there, '
            'in work(1):\n%s' % (backend, after))


def main():
    ptrev, prog, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'rev_threads.ptrev')
    # PTREV_TEST_BACKEND picks the recorder (auto: PT where there is one,
    # else the event recorder).
    backend = os.environ.get('PTREV_TEST_BACKEND', 'auto')
    r = subprocess.run([ptrev, 'record', '--backend', backend, '-o', trace, prog],
                       capture_output=True, text=True)
    m = re.search(r'order ([abs]+)', r.stdout)
    if r.returncode != 0 or not m:
        print('FAIL: recording: rc %d\n%s%s' % (r.returncode, r.stdout, r.stderr))
        return 1
    order = m.group(1)
    print('order', order)
    ids = worker_tids(ptrev, trace)
    if not ids:
        return 1
    pid, tids = ids
    c = Checker()
    if not re.search(r'a.*b.*a|b.*a.*b', order):
        print('note: the bumps did not interleave this time: ' + order)
    saved_session(c, ptrev, prog, trace, order, pid, tids)
    mixed_session(c, ptrev, prog, trace, order, pid, tids)
    stepping_session(c, ptrev, prog, trace, order, pid, {**tids, 'sig': tids['s']})
    if backend_of(ptrev, trace) == 'event':
        degraded_event_sessions(c, ptrev, prog, trace, work)
        sw = os.path.join(work, 'rev_threads_sw.ptrev')
        r = subprocess.run([ptrev, 'record', '--backend', 'sw', '-o', sw, prog],
                           capture_output=True, text=True)
        c.check(r.returncode == 0, 'sw recording: rc %d\n%s' % (r.returncode, r.stderr))
        degraded_sessions(c, ptrev, prog, sw, work)
    else:
        degraded_sessions(c, ptrev, prog, trace, work)
    # Live recording, by the sw recorder and by the event recorder.
    for live in ('sw', 'event'):
        live_session(c, ptrev, prog, live)
        live_stops_session(c, ptrev, prog, live)
    print('%d failures' % c.bad)
    return 1 if c.bad else 0


if __name__ == '__main__':
    sys.exit(main())
