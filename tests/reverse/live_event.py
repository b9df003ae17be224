#!/usr/bin/env python3
"""Live recording with the event backend (`ptrev serve --record --backend
event`): the program runs natively under the event recorder while gdb
drives it, and the history is made only when gdb goes back.

 - the same gdb sessions as under the sw recorder (`--backend sw`, itself
   checked against gdb's record full by full_state_diff and the GDB
   testsuite), which must print the same: breakpoints, steps and nexts
   over syscalls, finish, a hardware watchpoint, a signal gdb stops for
   and one it passes, reverse-stepi/-next/-step/-finish/-continue, forward
   to the present and on for real, the hold before the exit;
 - the same with tails of the last few events made first, beginning at,
   before or right after a recorded signal, against the whole history;
 - gdb's Ctrl-C in a computation without syscalls, twice: each time
   reverse-stepi and stepi come back to where it stopped, with the same
   state, and the program goes on;
 - Ctrl-C while the program is blocked reading its input: gdb shows it in
   read(), goes back from there, and the read, restarted, returns the
   line the test then writes;
 - gdb changing the program (set var) while its thread is inside a
   blocked read ends the recording with a message, and the program runs on
   with the change;
 - a program that execs another (env PROG): gdb follows the exec, and the
   recording starts again with the new program;
 - the hold before the exit: rcx and r11 <unavailable> (the exit_group
   instruction, entered once, overwrote them), and `monitor why` says so;
 - a program that forks and vforks, gdb's breakpoint in what the children
   run: they run without it, and the parent goes back from its end;
 - gdb's catch fork and catch vfork stop there, and gdb lets the children
   go;
 - scheduler-locking: the one thread resumed exits, the rest held: gdb
   hears that none it resumed is left;
 - saved at the hold before the exit (monitor save), the recording
   replays with tails of several lengths made first;
 - `--backend event` with --no-record, or for an attached process, is
   refused with a message.

usage: live_event.py PTREV PROGRAMS_DIR WORKDIR
"""
import difflib
import glob
import os
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, free_port, gdb_batch  # noqa: E402

BASIC = '''
break f
continue
bt
finish
next
next
info locals
watch global_counter
continue
continue
delete
reverse-stepi
reverse-stepi
info registers rip rsp rax
reverse-next
reverse-step
bt
reverse-finish
info locals
break leaf
reverse-continue
bt
continue
continue
continue
delete
break 56
continue
next
info registers rip rax
reverse-next
info registers rip rax
stepi 400
info registers rip
reverse-stepi 200
info registers rip
bt 1
continue
continue
info registers rip rax
reverse-stepi
info registers rip
continue
continue
'''

SIGNAL = '''
break on_usr1
continue
bt 3
continue
bt 3
reverse-stepi
bt 3
reverse-continue
bt 3
continue
continue
continue
info registers rip
continue
'''

PASSED = '''
handle SIGUSR1 nostop noprint pass
break 17
continue
p handled
reverse-step
p handled
reverse-continue
continue
continue
continue
'''


def session(ptrev, prog, backend, script, tail=None, extra=None):
    """The script live-recorded by backend. The event recorder's history is
    made whole at the first move (PTREV_TAIL_HISTORY=0), as which tail is
    made first depends on the machine's load; tail='N': a tail of the last
    N events first (PTREV_TAIL_EVENTS); extra: more environment."""
    env = dict(os.environ, PTREV_TAIL_HISTORY='0') if tail is None else \
        dict(os.environ, PTREV_TAIL_EVENTS=tail)
    env.update(extra or {})
    text = gdb_batch(prog, ['target remote | %s serve --stdio --record --backend %s -- %s'
                          % (ptrev, backend, prog)] + script.strip().splitlines(), env=env)
    return text


def normalise(text):
    """From the first command of the script on; what differs between two
    runs (pids) or two recorders (ptrev's own messages, and rflags' TF
    that the sw recorder's steps leave in r11) hidden."""
    i = text.find('+break')
    i = text.find('+handle') if text.find('+handle') >= 0 else i
    out = []
    for line in text[i:].splitlines():
        if line.startswith('ptrev:') or line.startswith('warning: File transfers'):
            continue
        line = re.sub(r'process \d+', 'process PID', line)
        line = re.sub(r'created; pid = \d+', 'created; pid = PID', line)
        line = re.sub(r'Thread \d+\.\d+', 'THREAD', line)
        line = re.sub(r'0x346\b', '0x246', line)
        out.append(line)
    return out


def differences(want, got, want_name, got_name):
    """'' when the two transcripts agree, else a newline and their diff."""
    if want == got:
        return ''
    return '\n' + '\n'.join(difflib.unified_diff(want, got, want_name, got_name, lineterm=''))


def differential(ptrev, programs):
    for name, script in (('e2e_basic', BASIC), ('e2e_signal', SIGNAL), ('e2e_signal', PASSED)):
        prog = os.path.join(programs, name)
        sw = normalise(session(ptrev, prog, 'sw', script))
        ev_text = session(ptrev, prog, 'event', script)
        ev = normalise(ev_text)
        what = '%s (%d commands): the event recorder\'s live session prints what the sw ' \
            'recorder\'s does' % (name, len(script.split()))
        what += differences(sw, ev, 'sw', 'event')
        check(sw == ev and len(ev) > 20 and 'exited normally' in ev_text, what)
        check('recording with the event backend' in ev_text and
              'Remote failure' not in ev_text and 'diverged' not in ev_text,
              '%s: recorded by the event backend, every move answered' % name)


# Back from the end past the signal to a breakpoint before it.
SIGNAL_BACK = '''
break main
continue
continue
continue
reverse-continue
bt 1
reverse-continue
bt 1
continue
bt 1
'''


def tails_at_signal(ptrev, programs):
    """Tails of the last 1, 2 and 3 events, made first, begin right after
    the recorded SIGUSR1, at its delivery, or before it: each session
    prints what the whole history's does. A tail that began at the
    delivery had no position before the handler (`the program starts at
    0x..., the recording at 0x...`: no state), one right after it let
    reverse-continue pass the signal's stop; so did a native search for
    gdb's breakpoint that found its hit before the signal."""
    prog = os.path.join(programs, 'e2e_signal')
    for name, script in (('SIGNAL', SIGNAL), ('SIGNAL_BACK', SIGNAL_BACK)):
        whole = normalise(session(ptrev, prog, 'event', script))
        for n in ('1', '2', '3'):
            text = session(ptrev, prog, 'event', script, tail=n)
            got = normalise(text)
            what = '%s with a tail of the last %s events made first prints what the whole ' \
                'history does' % (name, n)
            what += differences(whole, got, 'whole', 'tail')
            check(got == whole and 'Program received signal SIGUSR1' in text and
                  'unavailable' not in text, what)
    # A piece that ends at the hit (however short its stretch ran) ends
    # in the past: its end is not the live program's present. Taken for
    # it, main's registers were the exited program's (bt: `Cannot access
    # memory at address 0x8`) and the continue ran the live program to
    # its exit past the signal.
    whole = normalise(session(ptrev, prog, 'event', SIGNAL_BACK))
    text = session(ptrev, prog, 'event', SIGNAL_BACK, tail='1', extra={'PTREV_HIT_POINT': '1'})
    got = normalise(text)
    check(got == whole and 'to the hit only, inside the stretch' in text,
          'SIGNAL_BACK: a piece that ends at the hit is the past, not the live present' +
          differences(whole, got, 'whole', 'piece'))


class Gdb:
    """gdb driven line by line, over TCP to a server whose stdin the test
    holds (the program's input)."""

    def __init__(self, ptrev, prog, args):
        self.prog = prog
        self.port = free_port()
        self.server = subprocess.Popen(
            [ptrev, 'serve', '--record', '--backend', 'event', '--listen',
             '127.0.0.1:%d' % self.port, '--', prog] + list(args),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.server.stderr.readline()
        while line and 'Listening on' not in line:
            line = self.server.stderr.readline()
        self.gdb = subprocess.Popen(['gdb', '-nx', '-q', '-ex', 'set pagination off',
                                     '-ex', 'set confirm off', prog],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.send('target remote 127.0.0.1:%d' % self.port)

        self.out = ''

    def send(self, *lines):
        for line in lines:
            self.gdb.stdin.write(line + '\n')
        self.gdb.stdin.flush()

    def wait_for(self, marker, timeout=300):
        """Read what gdb prints until it has run `echo marker`."""
        self.send('echo %s\\n' % marker)
        deadline = time.time() + timeout
        while marker + '\n' not in self.out and time.time() < deadline:
            ready, _, _ = select.select([self.gdb.stdout], [], [], 1)
            if ready:
                chunk = os.read(self.gdb.stdout.fileno(), 65536).decode(errors='replace')
                if not chunk:
                    break
                self.out += chunk

    def program(self):
        """The recorded program's pid: the server's first child running
        it (the replays the history is made with come later)."""
        kids = []
        for f in glob.glob('/proc/%d/task/*/children' % self.server.pid):
            with open(f) as fh:
                kids += [int(k) for k in fh.read().split()]
        for pid in sorted(kids):
            try:
                if os.readlink('/proc/%d/exe' % pid) == os.path.realpath(self.prog):
                    return pid
            except OSError:
                pass
        return None

    def program_stat(self):
        """(state, user+system CPU ticks) of the recorded program."""
        pid = self.program()
        try:
            with open('/proc/%d/stat' % pid) as fh:
                fields = fh.read().rsplit(')', 1)[1].split()
            return fields[0], int(fields[11]) + int(fields[12])
        except (OSError, TypeError):
            return None, 0

    def interrupt(self, after, until):
        """gdb's Ctrl-C, `after` seconds on and once the program is
        `until` ('reading': blocked in its read; 'computing': it ran half
        a second of CPU since). A fixed delay alone was not enough: under
        load, gdb was still handling the shared-library stop before main
        when the SIGINT came, and it swallowed it (no \\x03 reached the
        server; the program read the test's line and ran to its exit)."""
        start = self.program_stat()[1]
        time.sleep(after)
        deadline = time.time() + 120
        while time.time() < deadline:
            state, ticks = self.program_stat()
            if (until == 'reading' and state == 'S') or \
               (until == 'computing' and state == 'R' and ticks - start >= 50):
                break
            time.sleep(0.1)
        os.killpg(self.gdb.pid, signal.SIGINT)

    def end(self):
        self.send('quit')
        try:
            out = self.out + self.gdb.communicate(timeout=300)[0]
        except subprocess.TimeoutExpired:
            os.killpg(self.gdb.pid, signal.SIGKILL)
            out = self.out + self.gdb.communicate()[0]
        try:
            sout, serr = self.server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.server.kill()
            sout, serr = self.server.communicate()
        return out, sout, serr


def values(out, tag):
    return re.findall(r'%s=(\S+)' % tag, out)


def ctrl_c_computing(ptrev, programs):
    """Interrupted twice in its loop, going back and forth each time."""
    prog = os.path.join(programs, 'live_wait')
    g = Gdb(ptrev, prog, ['1000000000000'])
    probe = ['printf "PC=%#lx\\n", $pc', 'printf "SPINS=%lu\\n", spins']
    for k in range(2):
        g.send('continue')
        g.interrupt(1.5, 'computing')
        g.send(*probe)
        g.send('reverse-stepi 3', *probe, 'stepi 3', *probe, 'reverse-stepi', 'continue', *probe)
        g.wait_for('CYCLE%d' % k)
    g.send('kill')
    out, _, serr = g.end()
    pcs, spins = values(out, 'PC'), values(out, 'SPINS')
    ok = len(pcs) == 8 and len(spins) == 8
    check(ok and out.count('Program received signal SIGINT') == 2,
          'Ctrl-C twice in a computation: each stops it with SIGINT (%s)' % pcs)
    if ok:
        for k in (0, 4):
            check(pcs[k + 2] == pcs[k] and pcs[k + 3] == pcs[k] and spins[k + 2] == spins[k] and
                  spins[k + 3] == spins[k] and pcs[k + 1] != pcs[k],
                  'interrupt %d: reverse-stepi 3 and stepi 3, or back and on to the present, '
                  'end where it stopped, with the same state (pc %s, spins %s)'
                  % (k // 4 + 1, pcs[k:k + 4], spins[k:k + 4]))
        check(int(spins[4]) > int(spins[0]),
              'the program ran on between the interrupts (spins %s then %s)'
              % (spins[0], spins[4]))
    check('diverged' not in serr and 'no history' not in serr,
          'no divergence, a history at each interrupt:\n' + serr[-2000:])
    if 'FAIL' in out:
        print(out)


def ctrl_c_reading(ptrev, programs):
    """Interrupted while blocked reading its input."""
    prog = os.path.join(programs, 'live_wait')
    g = Gdb(ptrev, prog, ['0'])
    g.send('continue')
    g.interrupt(1.5, 'reading')
    g.send('bt 3', 'printf "PC=%#lx\\n", $pc', 'reverse-stepi', 'printf "PC=%#lx\\n", $pc',
           'bt 3', 'stepi', 'printf "PC=%#lx\\n", $pc', 'continue', 'continue')
    time.sleep(3)
    g.server.stdin.write('hello\n')
    g.server.stdin.flush()
    out, sout, serr = g.end()
    pcs = values(out, 'PC')
    check('Program received signal SIGINT' in out and re.search(r'#0 .*read \(', out) and
          len(pcs) == 3 and pcs[1] != pcs[0] and pcs[2] == pcs[0],
          'Ctrl-C in a blocked read(): gdb shows the program there, steps back and forward '
          'again (%s)' % pcs)
    check('spins=0 read=6' in sout and 'exited normally' in out,
          'the read, restarted, returns the line written after (%r)' % sout)
    check('diverged' not in serr and 'no history' not in serr,
          'no divergence:\n' + serr[-2000:])
    if 'FAIL' in out or 'exited normally' not in out:
        print(out)


def change_ends_recording(ptrev, programs):
    """gdb changes the program while its one thread is inside a blocked
    read: no place in the log holds the change (the program's next event
    is that read's return), so the recording ends there, with a message,
    and the program runs on with the change. (A change at a stop between
    two instructions is recorded: gdb_changes.py.)"""
    prog = os.path.join(programs, 'live_wait')
    g = Gdb(ptrev, prog, ['0'])
    g.send('continue')
    g.interrupt(1.5, 'reading')
    g.send('set var spins = 5', 'monitor when', 'continue')
    time.sleep(3)
    g.server.stdin.write('hi\n')
    g.server.stdin.flush()
    out, sout, serr = g.end()
    check('the recording ends here' in serr and 'spins=5 read=3' in sout and
          'exited normally' in out and
          'No recording: it ended where gdb changed the program' in out,
          'set var with the thread inside a syscall ends the event recording, with a message, '
          'and the program runs on with the change:\n' + serr[-1000:] + out[-1000:] + sout)


def exec_followed(ptrev, programs):
    """A program started through env (which execs it): gdb hears of the
    exec, and the recording starts again in the new program, which then
    goes back from its end to a breakpoint."""
    prog = os.path.abspath(os.path.join(programs, 'e2e_basic'))
    text = gdb_batch(prog, ['target remote | %s serve --stdio --record --backend event -- '
                          '/usr/bin/env %s' % (ptrev, prog), 'continue', 'break leaf',
                          'reverse-continue', 'bt 1', 'continue', 'continue'])
    check('is executing new program' in text and re.search(r'^#0 +leaf \(v=9\)', text, re.M) and
          'exited normally' in text and 'diverged' not in text,
          'a program that execs another: gdb follows, and the new program is recorded from '
          'its exec, going back to leaf(9) from its end:\n'
          + '\n'.join(text.splitlines()[-12:]))


def exit_hold_why(ptrev, programs):
    """Held before the end, on the exit_group it entered once: rcx and r11
    are <unavailable>, and `monitor why` says why, not that every register
    is known; one instruction back, all of them are."""
    prog = os.path.join(programs, 'e2e_basic')
    text = gdb_batch(prog, ['target remote | %s serve --stdio --record --backend event -- %s'
                          % (ptrev, prog), 'continue', 'info registers rcx r11', 'monitor why',
                          'reverse-stepi', 'info registers rcx', 'monitor why'])
    check(re.search(r'^rcx +<unavailable>', text, re.M) and
          'every register but rcx and r11 are available' in text and
          re.search(r'^rcx +0x', text, re.M) and 'Every register and all memory' in text,
          'the hold before the exit: rcx and r11 unavailable, monitor why says so:\n'
          + '\n'.join(text.splitlines()[-8:]))


def forks(ptrev, programs):
    """A program that forks and vforks with gdb's breakpoint in the
    function its children call: the children run without it (they are not
    recorded), and the parent goes back from its end to its own call; the
    vfork child's writes in the memory it shares with the parent are the
    vfork's, so the history reaches the end (its STATE point) after it."""
    prog = os.path.join(programs, 'e2e_fork')
    text = gdb_batch(prog, ['target remote | %s serve --stdio --record --backend event -- %s'
                          % (ptrev, prog), 'break work', 'continue', 'bt 1', 'continue',
                          'reverse-stepi', 'printf "PC=%#lx\\n", $pc', 'reverse-continue',
                          'bt 1', 'continue', 'continue', 'continue'])
    check('fork child 0, vfork child 0' in text and
          len(re.findall(r'^#0 +work \(x=1\)', text, re.M)) == 2 and 'PC=' in text and
          'exited normally' in text and 'diverged' not in text and 'no history' not in text,
          'forks and vforks: the children run on without gdb\'s breakpoints, and the parent '
          'goes back from its end to work(1):\n' + '\n'.join(text.splitlines()[-14:]))


def saved_tails(ptrev, programs, work):
    """A live recording saved at the hold before the exit holds a STATE
    point mid-way (the present where gdb first went back, after printf)
    and one at its end: replayed from the file with tails of several
    lengths, each made first (the end of the stretch before the mid-way
    point taken by time once ran on past it, into exit's code, and no
    replay found it again)."""
    prog = os.path.join(programs, 'e2e_basic')
    trace = os.path.join(work, 'live-basic.ptrev')
    if os.path.exists(trace):
        os.unlink(trace)
    gdb_batch(prog, ['target remote | %s serve --stdio --record --backend event -- %s'
                   % (ptrev, prog), 'break 56', 'continue', 'next', 'reverse-stepi',
                   'continue', 'continue', 'monitor save %s' % trace])
    for us in ('50', '100', '400'):
        r = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'target remote | %s replay --stdio %s'
                            % (ptrev, trace), '-ex', 'reverse-stepi', '-ex',
                            'printf "PC=%#lx\\n", $pc', prog], capture_output=True, text=True,
                           timeout=300, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, PTREV_TAIL_US=us, PTREV_BACKGROUND_HISTORY='0'))
        text = r.stdout + r.stderr
        check(re.search(r'made the history of the last \d+ events? .*first', text) and
              'cannot make' not in text and 'PC=' in text,
              'the saved live recording, a tail of about %s us made first:\n%s'
              % (us, '\n'.join(l for l in text.splitlines() if 'ptrev' in l or 'PC=' in l)))


def catchpoints(ptrev, programs):
    """gdb's catch fork and catch vfork while the event recorder records
    (here as serve records by default): each stops where gdbserver stops
    (the vfork inside its call, shown before its syscall instruction), gdb
    lets each child go, the breakpoint after them is hit, and the parent
    goes back from there. Without the report gdb heard of neither."""
    prog = os.path.join(programs, 'e2e_fork')
    text = gdb_batch(prog, ['target remote | %s serve --stdio -- %s' % (ptrev, prog),
                          'break work', 'catch fork', 'catch vfork', 'continue', 'continue',
                          'continue', 'print x', 'reverse-stepi', 'printf "PC=%#lx\\n", $pc',
                          'stepi', 'print x', 'delete', 'continue', 'continue'])
    check(re.search(r'Catchpoint 2 \(forked process \d+\), arch_fork', text) and
          re.search(r'Catchpoint 3 \(vforked process \d+\), __libc_vfork', text) and
          'Detaching after fork from child' in text and
          'Detaching after vfork from child' in text and
          text.count('$1 = 1') == 1 and text.count('$2 = 1') == 1 and 'PC=' in text and
          'fork child 0, vfork child 0' in text and 'exited normally' in text,
          'catch fork and catch vfork stop for gdb, the children go, work(1) is reached and '
          'gone back from:\n' + '\n'.join(l for l in text.splitlines()
                                            if re.match(r'(Catch|\[Det|\$|PC=|\[Inf)', l)))


def scheduler_locked(ptrev, programs):
    """scheduler-locking on: the one thread gdb resumed exits while the
    main thread stays held in read(); ptrev says no resumed thread is left
    (gdb: "No unwaited-for children left.") instead of waiting forever,
    and the program goes on to its end when unlocked (as gdbserver does,
    tests/e2e/cases/schedlock_exit.gdb)."""
    prog = os.path.join(programs, 'e2e_threads')
    text = gdb_batch(prog, ['target remote | %s serve --stdio --record --backend event '
                          '--no-stop-at-exit -- %s' % (ptrev, prog), 'break work', 'continue',
                          'delete', 'set scheduler-locking on', 'continue',
                          'set scheduler-locking off', 'thread 1', 'continue'])
    check('No unwaited-for children left.' in text and 'exited normally' in text,
          'the resumed thread exits while the others are held: gdb hears so, and the program '
          'ends when unlocked:\n' + '\n'.join(text.splitlines()[-6:]))


def refused(ptrev, programs):
    prog = os.path.join(programs, 'e2e_basic')
    r = subprocess.run([ptrev, 'serve', '--stdio', '--backend', 'event', '--no-record', '--',
                        prog], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       timeout=60)
    check(r.returncode != 0 and 'and --no-record records nothing' in r.stderr,
          '--backend event with --no-record is refused: %r' % r.stderr)
    r = subprocess.run([ptrev, 'serve', '--stdio', '--record', '--backend', 'event',
                        '--attach', '1'], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    check(r.returncode != 0 and 'not an attached one' in r.stderr,
          '--backend event for an attached process is refused: %r' % r.stderr)


def main():
    ptrev, programs, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    differential(ptrev, programs)
    tails_at_signal(ptrev, programs)
    ctrl_c_computing(ptrev, programs)
    ctrl_c_reading(ptrev, programs)
    change_ends_recording(ptrev, programs)
    exec_followed(ptrev, programs)
    forks(ptrev, programs)
    catchpoints(ptrev, programs)
    scheduler_locked(ptrev, programs)
    exit_hold_why(ptrev, programs)
    saved_tails(ptrev, programs, work)
    refused(ptrev, programs)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
