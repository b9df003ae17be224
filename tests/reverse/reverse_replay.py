#!/usr/bin/env python3
"""Reverse execution over a saved recording (`ptrev replay`), PC level.

Oracles, none written by us:
  * the instruction list of an independent ptrace single-stepper (ref_step):
    reverse-stepi from the end must visit it backwards, exactly;
  * gdb's own `record full` on the same static program: reverse-continue to
    a breakpoint must land on the same instructions (identified by the call
    site a following reverse-stepi reaches);
  * the program run natively under gdb: the crash PC.

usage: reverse_replay.py PTREV REF_STEP PROGRAM WORKDIR
PTREV_TEST_BACKEND=event: the saved recordings are the event backend's.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish  # noqa: E402

TIMEOUT = 300
# gdb's record full cannot record AVX-512/AVX2 code in glibc.
TUNABLES = ('glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,'
            '-EVEX,-AVX2,-AVX')


def gdb(args, script_lines, env=None):
    cmd = ['gdb', '-nx', '-batch']
    for line in script_lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + args, capture_output=True, text=True, timeout=TIMEOUT,
                       env=env, stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def pcs(text):
    return [int(m, 16) for m in re.findall(r'^\$\d+ = (0x[0-9a-f]+)', text, re.M)]


def ref_ips(ref_step, prog, args):
    r = subprocess.run([ref_step, prog] + args, capture_output=True, text=True,
                       timeout=TIMEOUT)
    ips = []
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] != 'T':
            ips.append(int(parts[1], 16))
    return ips


# The backend `ptrev record` records with (PTREV_TEST_BACKEND, sw unless a
# test variant names another).
BACKEND = os.environ.get('PTREV_TEST_BACKEND', 'sw')


def record(ptrev, prog, args, out):
    r = subprocess.run([ptrev, 'record', '--backend', BACKEND, '-o', out, '--', prog] + args,
                       capture_output=True, text=True, timeout=TIMEOUT)
    return r.returncode


def replay_target(ptrev, trace):
    return 'target remote | %s replay --stdio %s' % (ptrev, trace)


def test_reverse_stepi(ptrev, ref_step, prog, trace):
    truth = ref_ips(ref_step, prog, [])
    check(len(truth) > 100, 'reference single-stepper saw %d instructions' % len(truth))
    steps = 60
    script = [replay_target(ptrev, trace), 'p/x $pc']
    for _ in range(steps):
        script += ['reverse-stepi', 'p/x $pc']
    out = gdb([prog], script)
    got = pcs(out)
    # The replay starts on the last instruction (the exit syscall).
    want = [truth[len(truth) - 1 - k] for k in range(steps + 1)]
    check(got == want, 'reverse-stepi x%d from the end visits the single-stepped '
          'instructions backwards (%d of %d match)' %
          (steps, sum(1 for a, b in zip(got, want) if a == b), len(want)))
    if got != want:
        print(out[-3000:])


def test_event_end_registers(ptrev, prog, trace):
    """An event recording is shown at its end before its history is made,
    from a process held after its last instruction (exit_group's syscall):
    the state before that instruction, but rcx and r11, which the syscall
    instruction overwrote, are unavailable, not wrong; once the history is
    made they are known."""
    out = gdb([prog], [replay_target(ptrev, trace), 'info registers rcx r11 rax',
                       'reverse-stepi', 'stepi', 'info registers rcx r11 rax'])
    regs = re.findall(r'^(rcx|r11|rax) +(\S+)', out, re.M)
    check(regs[:3] == [('rcx', '<unavailable>'), ('r11', '<unavailable>'), ('rax', '0xe7')],
          'event end: rcx, r11 unavailable before the syscall, rax its number (%s)' % regs[:3])
    check(len(regs) == 6 and all(v.startswith('0x') for _, v in regs[3:]) and
          regs[5] == ('rax', '0xe7'),
          'event end: all known once the history is made (%s)' % regs[3:])


def test_reverse_continue(ptrev, prog, trace):
    hits = 5
    common = ['break *hit']
    for _ in range(hits):
        common += ['reverse-continue', 'p/x $pc', 'reverse-stepi', 'p/x $pc']
    # gdb's own record full, from main to done().
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    ref = gdb([prog], ['break main', 'run', 'record full', 'break done', 'continue',
                       'delete 1', 'delete 2'] + common, env=env)
    mine = gdb([prog], [replay_target(ptrev, trace)] + common +
               ['reverse-continue', 'p/x $pc'])
    want, got = pcs(ref), pcs(mine)
    check(len(want) == 2 * hits, 'record full reference gave %d PCs' % len(want))
    check(got[:2 * hits] == want, 'reverse-continue lands where record full does '
          '(%s vs %s)' % ([hex(x) for x in got[:2 * hits]], [hex(x) for x in want]))
    check('No more reverse-execution history.' in mine,
          'reverse-continue past the first hit: "No more reverse-execution history."')
    if got[:2 * hits] != want:
        print('--- record full\n' + ref[-2000:] + '\n--- ptrev\n' + mine[-2000:])
    return mine


def test_forward_to_end(ptrev, ref_step, prog, trace):
    truth = ref_ips(ref_step, prog, [])
    out = gdb([prog], [replay_target(ptrev, trace), 'break *done',
                       'reverse-continue',             # the call of done()
                       'reverse-continue', 'p/x $pc',  # back to the start
                       'continue', 'p/x $pc',          # forward: stops at done
                       'delete', 'continue', 'p/x $pc'])  # forward: the end
    got = pcs(out)
    done_addr = None
    m = re.search(r'Breakpoint 1 at (0x[0-9a-f]+)', out)
    if m:
        done_addr = int(m.group(1), 16)
    check(len(got) == 3 and got[0] == truth[0],
          'reverse-continue without a hit reaches the first instruction')
    check(len(got) == 3 and got[1] == done_addr, 'forward continue stops at the breakpoint')
    check(len(got) == 3 and got[2] == truth[-1], 'forward replay reaches the end of the history')
    check(out.count('No more reverse-execution history.') >= 2,
          'both ends say "No more reverse-execution history."')


def test_crash(ptrev, prog, work):
    trace = os.path.join(work, 'crash.ptrev')
    rc = record(ptrev, prog, ['crash'], trace)
    check(rc == 139, 'recording a crashing program exits 139 (%d)' % rc)
    native = pcs(gdb([prog], ['run crash', 'p/x $pc']))
    out = gdb([prog], [replay_target(ptrev, trace), 'p/x $pc', 'p $_siginfo.si_signo'])
    got = pcs(out)
    check(re.search(r'^\$\d+ = 11$', out, re.M) is not None,
          '$_siginfo in the replay of a crash is SIGSEGV\'s')
    check(len(native) == 1 and got[:1] == native,
          'replay starts at the crashing instruction (%s vs native %s)' %
          ([hex(x) for x in got], [hex(x) for x in native]))
    # The stop reason is the signal: ask the server directly.
    p = subprocess.run([ptrev, 'replay', '--stdio', trace], input=b'+$?#3f',
                       capture_output=True, timeout=60)
    m = re.search(rb'\$(T[0-9a-f]{2})', p.stdout)
    check(m is not None and m.group(1) == b'T0b',
          'stop reply at the end of a crash recording is SIGSEGV (%r)' % (m.group(1) if m else p.stdout[:40]))


def test_mi(ptrev, prog, trace):
    cmds = ['-target-select remote | %s replay --stdio %s' % (ptrev, trace),
            '-break-insert *hit',
            '-exec-continue --reverse',
            '-exec-step-instruction --reverse',
            '-break-delete',
            '-exec-continue --reverse',
            '-gdb-exit']
    r = subprocess.run(['gdb', '-nx', '--interpreter=mi3', prog], input='\n'.join(cmds) + '\n',
                       capture_output=True, text=True, timeout=TIMEOUT)
    # The first *stopped is the connection's own (the end of the recording).
    stops = re.findall(r'^\*stopped,(.*)$', r.stdout, re.M)[1:]
    reasons = [re.search(r'reason="([^"]*)"', s).group(1) if 'reason=' in s else '' for s in stops]
    check(len(stops) >= 3, 'MI: three *stopped records (%d)' % len(stops))
    if len(stops) >= 3:
        check(reasons[0] == 'breakpoint-hit' and 'func="hit"' in stops[0],
              'MI: -exec-continue --reverse stops at the breakpoint in hit (%s)' % stops[0][:120])
        check(reasons[1] == 'end-stepping-range' and 'func="main"' in stops[1],
              'MI: -exec-step-instruction --reverse steps back into main (%s)' % stops[1][:120])
        # gdb 13's MI reports the end of the history on the console stream
        # and leaves reason out of *stopped, with its own `record full` too
        # (checked by test_mi_record_full below); accept either form.
        check((reasons[2] in ('no-history', '')) and 'func="_start"' in stops[2] and
              'No more reverse-execution history' in r.stdout,
              'MI: reverse-continue to the start reports no history at _start (%s)' % stops[2][:120])


def test_live(ptrev, ref_step, prog):
    """The same while the program runs under `ptrev serve --record`."""
    live = 'target remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, prog)
    truth = ref_ips(ref_step, prog, [])
    steps = 40
    script = [live, 'break *done', 'continue', 'p/x $pc']
    for _ in range(steps):
        script += ['reverse-stepi', 'p/x $pc']
    out = gdb([prog], script)
    got = pcs(out)
    want = []
    if got and got[0] in truth:
        j = truth.index(got[0])
        want = [truth[j - k] for k in range(steps + 1)]
    check(len(got) == steps + 1 and got == want,
          'live: reverse-stepi x%d from a breakpoint follows the single-stepped '
          'instructions backwards' % steps)

    hits = 5
    common = ['break *hit']
    for _ in range(hits):
        common += ['reverse-continue', 'p/x $pc', 'reverse-stepi', 'p/x $pc']
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    ref = gdb([prog], ['break main', 'run', 'record full', 'break done', 'continue',
                       'delete 1', 'delete 2'] + common, env=env)
    mine = gdb([prog], [live, 'break *done', 'continue', 'delete 1'] + common +
               ['delete', 'continue', 'continue', 'continue'])
    check(pcs(mine)[:2 * hits] == pcs(ref) and len(pcs(ref)) == 2 * hits,
          'live: reverse-continue lands where record full does')
    check(mine.count('No more reverse-execution history.') >= 1 and
          mine.find('Program stopped.') < mine.find('exited normally') and
          mine.find('Program stopped.') >= 0,
          'live: forward replay stops at the present (as record full at the end of its '
          'log), then before the program\'s end, then the program runs to its end')

    # The end: record full holds the program before exit_group (it asks,
    # batch mode answers yes) and can go back from there; so does ptrev.
    ref = gdb([prog], ['break main', 'run', 'record full', 'continue', 'p/x $pc',
                       'reverse-stepi', 'p/x $pc'], env=env)
    mine = gdb([prog], [live, 'continue', 'p/x $pc', 'reverse-stepi', 'p/x $pc',
                        'continue', 'p/x $pc', 'continue'])
    end = pcs(ref)
    check(len(end) == 2 and pcs(mine)[:2] == end and 'Program stopped.' in mine,
          'live: the program is held before exit_group where record full holds it, and '
          'reverse-stepi goes back from there (%s, record full %s)'
          % ([hex(x) for x in pcs(mine)], [hex(x) for x in end]))
    check(len(end) == 2 and pcs(mine)[2:] == end[:1] and 'exited normally' in mine,
          'live: forwards again to the held end, then the program exits')

    # monitor when / save: the position, and a copy of the recording so far.
    work = os.environ.get('REVERSE_WORK', '/tmp')
    saved = os.path.join(work, 'live-saved.ptrev')
    out = gdb([prog], [live, 'break *done', 'continue', 'monitor when', 'reverse-stepi',
                       'monitor when', 'monitor save ' + saved])
    m = re.findall(r'Current instruction: (\d+) of (\d+)', out)
    check(len(m) == 2 and m[0][0] == m[0][1] and int(m[1][0]) == int(m[0][0]) - 1,
          'monitor when: at the present, then one instruction back (%s)' % m)
    info = subprocess.run([ptrev, 'info', saved], capture_output=True, text=True).stdout
    check(len(m) == 2 and ('instructions: %s' % m[0][1]) in info,
          'monitor save: the saved copy holds the history so far')
    replayed = gdb([prog], [replay_target(ptrev, saved), 'p/x $pc', 'reverse-stepi', 'p/x $pc'])
    check(len(pcs(replayed)) == 2, 'monitor save: the saved copy replays')


def test_signal_in_history(ptrev, prog):
    """Going forwards through the history, a recorded signal stops where it
    was taken, before its delivery, as the live stop did (gdbserver and
    record full report it there): the same registers and siginfo; a stepi
    from there enters the handler, as it does live. e2e_signal raises
    SIGUSR1 with a handler."""
    sig_prog = os.path.join(os.path.dirname(prog), 'e2e_signal')
    live = 'target remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, sig_prog)
    regs = 'info registers rip rsp rbp rax rbx rcx rdx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15 eflags'
    show = [regs, 'p $_siginfo.si_signo', 'p $_siginfo._sifields._kill.si_pid',
            'p $xmm0.v2_int64']
    # The live stop, then on past it, back to it (test_signal_reverse),
    # back before it, and forwards to it again through the history, in one
    # session (the pid is in the registers).
    out = gdb([sig_prog], [live, 'break main', 'continue', 'continue'] + show +
              ['break printf', 'continue', 'reverse-continue'] + show +
              ['reverse-continue', 'delete 2', 'continue'] + show + ['stepi', 'p/x $pc'])
    stepped = gdb([sig_prog], [live, 'break main', 'continue', 'continue', 'stepi', 'p/x $pc'])
    parts = out.split('Program received signal SIGUSR1')

    def state(text):
        return (re.findall(r'^(r\w+|eflags)\s+(0x[0-9a-f]+)', text, re.M),
                re.findall(r'^\$\d+ = (.*)$', text, re.M))
    live_regs, live_vals = state(parts[1] if len(parts) == 4 else '')
    back_regs, back_vals = state(parts[2] if len(parts) == 4 else '')
    past_regs, past_vals = state(parts[3] if len(parts) == 4 else '')
    check(len(live_regs) == 18 and past_regs == live_regs,
          'a signal going forwards through the history stops where the live one did, with '
          'its registers (%s)'
          % ([r for r in zip(live_regs, past_regs) if r[0] != r[1]] or len(past_regs)))
    check(len(live_vals) == 3 and past_vals[:3] == live_vals,
          '...its siginfo and vector registers (%s, live %s)' % (past_vals[:3], live_vals))
    check(back_regs == live_regs and back_vals == live_vals,
          '...and so does one met going backwards (%s, %s)'
          % ([r for r in zip(live_regs, back_regs) if r[0] != r[1]] or len(back_regs), back_vals))
    want = pcs(stepped)
    check(len(want) == 1 and past_vals[3:] == ['0x%x' % want[0]],
          '...and a stepi from there enters the handler where it does live (%s, live %s)'
          % (past_vals[3:], want))


def test_signal_reverse(ptrev, prog):
    """Going backwards from a handler, a reverse-continue stops at the
    signal's delivery (where it was taken, reported as the signal), as
    gdb's record full does; the next one goes on past it."""
    sig_prog = os.path.join(os.path.dirname(prog), 'e2e_signal')
    moves = ['break on_usr1', 'continue', 'continue', 'break printf', 'continue',
             'reverse-continue', 'p/x $pc', 'reverse-continue', 'p/x $pc', 'frame',
             'reverse-continue', 'p/x $pc']
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    ref = gdb([sig_prog], ['break main', 'run', 'record full'] + moves, env=env)
    live = 'target remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, sig_prog)
    mine = gdb([sig_prog], [live, 'break main', 'continue'] + moves)

    def seen(text):
        # the values printed, and the stops after the first reverse-continue
        after = text.split('$1 = ', 1)[-1]
        return (re.findall(r'^\$\d+ = (0x[0-9a-f]+)', text, re.M),
                len(re.findall(r'Program received signal SIGUSR1', after)))
    want, got = seen(ref), seen(mine)
    check(len(want[0]) == 3 and want[1] == 1 and got == want,
          'reverse-continue from a handler stops at the delivery of its signal, then goes on, '
          'as record full does (pcs and signal stops %s, record full %s)' % (got, want))


def test_stripped(ptrev, prog):
    """Code without symbols (only .eh_frame, as in Debian's binaries):
    reverse-finish from the entry of the second inner() call, and
    reverse-next from there, go where gdb's record full (started at main,
    where ptrev's recording is then compared) goes. gdb steps back into a
    caller it has no symbols for and runs back to that caller's return
    address (rev_stripped's outer() called twice makes it reachable)."""
    progs = os.path.dirname(prog)
    syms, stripped = os.path.join(progs, 'rev_stripped'), os.path.join(progs, 'rev_stripped_nosyms')
    out = gdb([syms], ['info address main', 'info address inner'])
    addrs = re.findall(r'is a function at address (0x[0-9a-f]+)', out)
    if len(addrs) != 2:
        check(False, 'stripped: the addresses of main and inner (%s)' % out[-300:])
        return
    main, inner = addrs
    # With the instance told apart by sink (no symbols: read by address).
    sink = re.search(r'is static storage at address (0x[0-9a-f]+)',
                     gdb([syms], ['info address sink'])).group(1)
    show = ['p/x $pc', 'p *(int *)' + sink]
    moves = (['break *' + inner, 'continue', 'continue'] + show + ['reverse-finish'] + show +
             ['reverse-stepi'] + show + ['reverse-next'] + show)
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    ref = gdb([stripped], ['break *' + main, 'run', 'record full', 'delete'] + moves, env=env)
    live = 'target remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, stripped)
    mine = gdb([stripped], [live, 'break *' + main, 'continue', 'delete'] + moves)
    got, want = re.findall(r'^\$\d+ = (.*)$', mine, re.M), re.findall(r'^\$\d+ = (.*)$', ref, re.M)
    check(len(want) == 8 and got == want,
          'stripped: reverse-finish, reverse-stepi and reverse-next out of symbol-less code '
          'end where record full\'s do (pc, sink: %s; record full %s)' % (got, want))


def info_of(ptrev, path):
    r = subprocess.run([ptrev, 'info', path], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_condition_in_the_past(ptrev, prog):
    """Conditions gdb leaves to the server hold in the past too: evaluated
    on the full state at each candidate hit."""
    live = 'target remote | %s serve --stdio --record --backend sw -- %s' % (ptrev, prog)
    out = gdb([prog], [live, 'break done', 'continue', 'break hit if x == 1',
                       'reverse-continue', 'p x', 'reverse-continue', 'p x'])
    xs = re.findall(r'^\$\d+ = (-?\d+)$', out, re.M)
    check(xs[:1] == ['1'], 'reverse-continue to "break hit if x == 1" stops where x is 1 (%s)' % xs)
    check('No more reverse-execution history.' in out,
          'no earlier hit satisfies the condition: the start of the history')


def test_serve_output(ptrev, prog, work):
    """`ptrev serve -o FILE` saves the recording on exit, kill and disconnect."""
    exited = os.path.join(work, 'serve-exit.ptrev')
    # Held before its end first (as record full): the second continue
    # lets it exit.
    gdb([prog], ['target remote | %s serve --stdio --backend sw -o %s -- %s' % (ptrev, exited, prog),
                 'continue', 'continue'])
    rc, info = info_of(ptrev, exited)
    m = re.search(r'^instructions: (\d+)$', info, re.M)
    check(rc == 0 and 'status: exited with code 0' in info and m is not None,
          'serve -o: the program exited, the file is complete')
    dec = subprocess.run([ptrev, 'decode', exited], capture_output=True, text=True, timeout=120)
    lines = [l for l in dec.stdout.splitlines() if re.match(r'^[0-9a-f]{16}$', l)]
    check(dec.returncode == 0 and m is not None and len(lines) == int(m.group(1)),
          'serve -o: the recording decodes without errors to its instruction count')
    out = gdb([prog], [replay_target(ptrev, exited), 'p/x $pc', 'reverse-stepi', 'p/x $pc',
                       'reverse-stepi', 'p/x $pc'])
    check(len(lines) > 3 and pcs(out) == [int(x, 16) for x in lines[-1:-4:-1]],
          'serve -o: the saved recording replays backwards along its decode')

    killed = os.path.join(work, 'serve-kill.ptrev')
    gdb([prog], ['target remote | %s serve --stdio --backend sw -o %s -- %s' % (ptrev, killed, prog),
                 'break *done', 'continue', 'kill'])
    rc, info = info_of(ptrev, killed)
    check(rc == 0 and re.search(r'^instructions: \d+$', info, re.M) is not None,
          'serve -o: killed from gdb, the recording is saved and complete')

    dropped = os.path.join(work, 'serve-drop.ptrev')
    proc = subprocess.Popen([ptrev, 'serve', '--stdio', '--backend', 'sw', '-o', dropped, '--',
                             prog],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    proc.stdin.write(b'+$QStartNoAckMode#b0')
    proc.stdin.flush()
    steps = b''.join(b'$vCont;s#b8' for _ in range(50))
    proc.stdin.write(steps)
    proc.stdin.flush()
    import time
    time.sleep(2)
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    rc, info = info_of(ptrev, dropped)
    check(rc == 0 and re.search(r'^instructions: \d+$', info, re.M) is not None,
          'serve -o: gdb went away, the recording is saved and complete (%s)' %
          info.strip().splitlines()[-1:])


def test_reverse_finish_saved(ptrev, prog, work):
    """reverse-finish out of the function a saved recording ends in stops at
    the call in main, where record full stops. (gdb joins a replay after
    the static program's start-up, when _r_debug is filled in; answered E01
    for libraries-svr4, it took the program's .text for the dynamic
    linker's and ran back to the start of the history.)"""
    trace = os.path.join(work, 'serve-done.ptrev')
    gdb([prog], ['target remote | %s serve --stdio --backend sw -o %s -- %s' % (ptrev, trace, prog),
                 'break done', 'continue'])
    rc, info = info_of(ptrev, trace)
    check(rc == 0, 'serve -o: a session stopped in done is saved')
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    ref = gdb([prog], ['break main', 'run', 'record full', 'break done', 'continue',
                       'reverse-finish', 'p/x $pc', 'bt 1'], env=env)
    out = gdb([prog], [replay_target(ptrev, trace), 'reverse-finish', 'p/x $pc', 'bt 1'])
    want, got = pcs(ref), pcs(out)
    check(len(want) == 1 and got == want,
          'replay: reverse-finish out of done stops at the call, as record full '
          '(%s vs %s)' % ([hex(x) for x in got], [hex(x) for x in want]))
    # ("Run back to call of" is only printed for commands from a terminal.)
    check(re.search(r'^#0\s+(0x[0-9a-f]+ in )?main \(', out, re.M) is not None and
          'No more reverse-execution history' not in out,
          'replay: reverse-finish stops in main, not at the start of the history')
    if got != want:
        print('--- record full\n' + ref[-1500:] + '\n--- ptrev replay\n' + out[-1500:])


def test_mi_record_full(prog):
    """The oracle for the MI no-history stop: gdb's own record full."""
    cmds = ['-break-insert main', '-exec-run', '-interpreter-exec console "record full"',
            '-exec-next', '-exec-continue --reverse', '-gdb-exit']
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    r = subprocess.run(['gdb', '-nx', '--interpreter=mi3', prog], input='\n'.join(cmds) + '\n',
                       capture_output=True, text=True, timeout=TIMEOUT, env=env)
    stops = re.findall(r'^\*stopped,(.*)$', r.stdout, re.M)
    last = stops[-1] if stops else ''
    print('note: record full MI no-history stop: %s' % last[:100])
    check('No more reverse-execution history' in r.stdout,
          'MI oracle: record full reports no history on the console stream')


def main():
    ptrev, ref_step, prog, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    os.environ['REVERSE_WORK'] = work
    trace = os.path.join(work, 'basic.ptrev')
    check(record(ptrev, prog, [], trace) == 0, 'recorded %s' % os.path.basename(prog))
    test_reverse_stepi(ptrev, ref_step, prog, trace)
    if BACKEND == 'event':
        test_event_end_registers(ptrev, prog, trace)
        info = subprocess.run([ptrev, 'info', trace], capture_output=True, text=True).stdout
        check('history: not made yet' in info and
              'instructions: unknown until the history is made' in info,
              'ptrev info says an event recording\'s history is not made yet')
    test_reverse_continue(ptrev, prog, trace)
    test_forward_to_end(ptrev, ref_step, prog, trace)
    test_crash(ptrev, prog, work)
    test_mi(ptrev, prog, trace)
    test_reverse_finish_saved(ptrev, prog, work)
    if BACKEND == 'sw':
        # What does not depend on how the recording was made: once.
        test_mi_record_full(prog)
        test_live(ptrev, ref_step, prog)
        test_serve_output(ptrev, prog, work)
        test_condition_in_the_past(ptrev, prog)
        test_signal_in_history(ptrev, prog)
        test_signal_reverse(ptrev, prog)
        test_stripped(ptrev, prog)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
