#!/usr/bin/env python3
"""Full state in reverse, against gdb's own `record full` (the oracle).

One gdb script runs twice on the same static program with the same
environment: natively under `record full` (from main; with the
GLIBC_TUNABLES that keep AVX out of glibc, which record full cannot record)
and against `ptrev serve --record` over TCP. After reaching marker(), both
go backwards and forwards (reverse-finish, reverse-next, reverse-step,
reverse-continue into the signal handler, reverse-stepi, forward to the end)
printing bt, locals, args, registers and raw stack memory. The transcripts
must be identical but for what legitimately differs between two runs. The
recording that session saved (serve -o) is then replayed with `ptrev replay`
under the same script, which must agree too; so must a recording of the
whole run by the event backend, from marker() on.

usage: full_state_diff.py PTREV PROGRAM WORKDIR
"""
import difflib
import os
import re
import socket
import subprocess
import sys
import time

TUNABLES = ('glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,'
            '-EVEX,-AVX2,-AVX')

COMMON = '''
info inferiors
bt
info locals
reverse-finish
bt
info locals
reverse-next
reverse-next
reverse-next
info locals
p *head
p *head->next
p buf
reverse-step
bt
info args
info locals
x/8gx $sp
reverse-finish
bt
break on_usr1
break before_signal
reverse-continue
bt
info locals
p handled
p counter
reverse-stepi
reverse-stepi
p $pc
bt
info registers
x/16gx $sp
continue
continue
bt
p handled
p counter
info registers rip rsp rbp rdi rsi
reverse-stepi
p $pc
delete
continue
bt
info locals
'''


def env():
    e = {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': '/nonexistent',
         'GLIBC_TUNABLES': TUNABLES}
    return e


def run_gdb(prog, lines):
    cmd = ['gdb', '-nx', '-batch', '-ex', 'set trace-commands on']
    for line in lines:
        cmd += ['-ex', line]
    r = subprocess.run(cmd + [prog], capture_output=True, text=True, timeout=600,
                       env=env(), stdin=subprocess.DEVNULL)
    return r.stdout


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def replay_transcript(ptrev, prog, trace):
    """The same script on the saved recording: postmortem, full state. The
    live session ended at marker(), so the recording's end is there."""
    return run_gdb(prog, ['handle SIGUSR1 nostop noprint pass',
                          'target remote | %s replay --stdio %s' % (ptrev, trace)]
                   + COMMON.strip().splitlines())


def event_transcript(ptrev, prog, work):
    """The same script on a recording of the whole run made by `ptrev
    record --backend event`: the replay starts at the program's end, goes
    back to marker(), and runs the script from there."""
    trace = os.path.join(work, 'fs_diff-event.ptrev')
    r = subprocess.run([ptrev, 'record', '--backend', 'event', '-o', trace, '--', prog],
                       env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode != 0:
        return 'ptrev record failed (%d): %s' % (r.returncode, r.stderr)
    return run_gdb(prog, ['handle SIGUSR1 nostop noprint pass',
                          'target remote | %s replay --stdio %s' % (ptrev, trace),
                          'break marker', 'reverse-continue']
                   + COMMON.strip().splitlines())


def until_last_delete(lines):
    """The script up to its last `delete`: after it record full's history
    ends at marker(), where its recording ended, and an event recording's
    goes on to the program's exit."""
    ends = [i for i, l in enumerate(lines) if l == '+delete']
    return lines[:ends[-1]] if ends else lines


def as_native(lines, history_ends_at_marker=True):
    """record full as a native run would have shown it, for comparing with
    the event backend's history, which runs natively between events: the
    oracle single-steps, so a syscall copies RFLAGS with TF set (0x100) into
    r11 (also where it is saved on the stack); and its history ends at
    marker()'s breakpoint, which it reports as the end of the history (so
    does a live recording stopped there: history_ends_at_marker)."""
    out = []
    for line in lines:
        if line.startswith('r11 ') and re.search(r'\b0x346\s+838$', line):
            line = re.sub(r'0x346(\s+)838$', r'0x246\g<1>582', line)
        elif re.match(r'^0x[0-9a-f]+:\s', line):
            line = line.replace('0x0000000000000346', '0x0000000000000246')
        if history_ends_at_marker and out and \
                out[-1] == 'No more reverse-execution history.' and line.startswith('marker ('):
            out[-1] = 'Breakpoint N, ' + line
            continue
        out.append(line)
    return out


def ptrev_transcript(ptrev, prog, trace, backend='sw'):
    port = free_port()
    server = subprocess.Popen([ptrev, 'serve', '--backend', backend, '-o', trace, '--listen',
                               '127.0.0.1:%d' % port, '--', prog], env=env(),
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(('127.0.0.1', port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        # That probe connection was the one ptrev accepted: start again.
        server.kill()
        server.wait()
        port = free_port()
        server = subprocess.Popen([ptrev, 'serve', '--backend', backend, '-o', trace,
                                   '--listen', '127.0.0.1:%d' % port, '--', prog], env=env(),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        line = server.stderr.readline().decode()
        while line and 'Listening on' not in line:
            line = server.stderr.readline().decode()
        out = run_gdb(prog, ['handle SIGUSR1 nostop noprint pass',
                             'target remote 127.0.0.1:%d' % port, 'break marker', 'continue']
                      + COMMON.strip().splitlines())
        return out
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()


def record_full_transcript(prog):
    return run_gdb(prog, ['handle SIGUSR1 nostop noprint pass',
                          'set startup-with-shell off', 'unset environment LINES',
                          'unset environment COLUMNS', 'break main', 'run', 'record full',
                          'break marker', 'continue', 'delete 1', 'break marker']
                   + COMMON.strip().splitlines())


def normalise(text):
    """Keep the common script's part; hide what differs between two runs:
    the process id (also where the program holds it: raise() keeps its pid
    and tid in registers and on the stack)."""
    i = text.find('+info inferiors')
    text = text[i:] if i >= 0 else text
    m = re.search(r'process (\d+)', text)
    if m:
        pid = int(m.group(1))
        # info registers pads the hex column to its width: pids of
        # different lengths (they wrap at pid_max) align differently.
        text = re.sub(r'0x0*%x\b +' % pid, 'PIDHEX ', text)
        text = re.sub(r'0x0*%x\b' % pid, 'PIDHEX', text)
        text = re.sub(r'\b%d\b' % pid, 'PID', text)
    out = []
    for line in text.splitlines():
        if re.match(r'^\s+Num\s+Description', line):
            continue  # info inferiors' header: column widths follow the connection
        # info inferiors: how gdb reached the program legitimately differs.
        line = re.sub(r'^\* 1 +process (PID) .*$', r'* 1 process \1', line)
        line = re.sub(r'Breakpoint \d+', 'Breakpoint N', line)
        line = re.sub(r'\bprocess \d+\b', 'process PID', line)
        line = re.sub(r'Thread \S+ \(LWP \d+\)|Thread \d+\.\d+', 'THREAD', line)
        out.append(line)
    return out


WATCH = '''
info inferiors
watch counter
reverse-continue
bt 1
reverse-continue
bt 1
reverse-continue
bt 1
continue
bt 1
'''


def watch_transcripts(ptrev, prog, trace):
    """Watchpoints in reverse. record full can only watch in software
    (can-use-hw-watchpoints 0); ptrev answers hardware watchpoints from the
    replayer. gdb names them differently; the stops must be the same."""
    ref = run_gdb(prog, ['handle SIGUSR1 nostop noprint pass', 'set can-use-hw-watchpoints 0',
                         'set startup-with-shell off', 'unset environment LINES',
                         'unset environment COLUMNS', 'break main', 'run', 'record full',
                         'delete 1', 'break marker', 'continue', 'delete 2']
                  + WATCH.strip().splitlines())
    mine = run_gdb(prog, ['handle SIGUSR1 nostop noprint pass',
                          'target remote | %s replay --stdio %s' % (ptrev, trace)]
                   + WATCH.strip().splitlines())
    fix = lambda lines: [re.sub(r'(Hardware w|W)atchpoint \d+', 'Watchpoint N', l) for l in lines]
    return fix(normalise(ref)), fix(normalise(mine))


def compare(what, ref, mine):
    if ref != mine:
        print('FAIL: %s differs from record full' % what)
        sys.stdout.writelines(l + '\n' for l in difflib.unified_diff(
            ref, mine, 'record full', what, lineterm=''))
        return 1
    print('PASS: %s: %d lines identical to record full' % (what, len(ref)))
    return 0


def main():
    ptrev, prog, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, 'fs_diff.ptrev')
    ref_text = record_full_transcript(prog)
    ref = normalise(ref_text)
    if len(ref) < 40:
        print('FAIL: record full transcript too short:\n' + '\n'.join(ref))
        return 1
    bad = compare('ptrev serve (live, recording)', ref, normalise(ptrev_transcript(ptrev, prog, trace)))
    # The same session recorded live by the event backend: it runs
    # natively, and its history, made when gdb goes back, too.
    live_ev = normalise(ptrev_transcript(ptrev, prog, os.path.join(work, 'fs_diff-live-event.ptrev'),
                                         'event'))
    bad += compare('ptrev serve --backend event (live, recording)',
                   as_native(ref, history_ends_at_marker=False), live_ev)
    # Watchpoints in reverse, on the saved recording of that session.
    bad += compare('ptrev replay with a watchpoint', *watch_transcripts(ptrev, prog, trace))
    # The saved recording of that session, replayed with the same script.
    bad += compare('ptrev replay of the saved recording', ref,
                   normalise(replay_transcript(ptrev, prog, trace)))
    # A recording of the whole run by the event backend, from marker().
    ev = normalise(event_transcript(ptrev, prog, work))
    bad += compare('ptrev replay of an event recording (to the last delete)',
                   until_last_delete(as_native(ref)), until_last_delete(ev))
    tail = ev[len(until_last_delete(ev)):]
    if not any(re.search(r' in _exit \(\)$', l) for l in tail):
        print('FAIL: the event recording\'s replay does not run on to the exit:\n' +
              '\n'.join(tail))
        bad += 1
    else:
        print('PASS: the event recording\'s replay runs on to the program\'s exit')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
