#!/usr/bin/env python3
"""What `ptrev serve` does by default: it records the program it starts,
with the event recorder (the program native between its syscalls), so that
gdb can go back without any option; `--no-record` serves it as gdbserver
does.

 - serve -- PROG: the same gdb session (breakpoint, reverse-stepi,
   reverse-continue, forwards to the present, the hold before the exit) as
   under `--record --backend event`, which live_event checks against the
   sw recorder;
 - serve -- NAME, NAME found in PATH, and serve -- SCRIPT: the same;
 - serve --no-record -- PROG: no history (gdb's reverse commands are
   refused, `monitor when` says why), the program ends as under gdbserver;
 - serve --attach PID: an attached process is recorded only when asked
   (the event recorder needs the program's start, the sw one steps every
   block), and ptrev says so;
 - serve --backend sw: recorded by that recorder, no --record needed;
 - serve --multi: what gdb's `run` starts is recorded;
 - gdb's `record btrace pt` on the default recording says why it cannot;
 - -o FILE, --record or --backend with --no-record: refused, with why.

usage: serve_default.py PTREV PROGRAM_DIR WORK_DIR
"""
import functools
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, gdb_batch  # noqa: E402

# Each session here ends within five minutes.
gdb = functools.partial(gdb_batch, timeout=300)

SESSION = '''
break leaf
continue
reverse-stepi
info registers rip
reverse-continue
bt 1
continue
monitor when
delete
continue
continue
'''


def commands_on(text):
    """From the first command of the session on, pids and ptrev's own
    lines (how it made the history) left out."""
    out = []
    for line in text[text.find('+break'):].splitlines():
        if line.startswith('ptrev:'):
            continue
        line = re.sub(r'pid = \d+', 'pid = PID', line)
        out.append(re.sub(r'(process|thread) \d+', r'\1 PID', line))
    return out


def default_records(ptrev, prog):
    lines = SESSION.strip().splitlines()
    default = gdb(prog, ['target remote | %s serve --stdio -- %s' % (ptrev, prog)] + lines)
    event = gdb(prog, ['target remote | %s serve --stdio --record --backend event -- %s'
                       % (ptrev, prog)] + lines)
    check('ptrev: recording with the event backend in memory' in default,
          'serve -- PROG records with the event recorder, and says so')
    same = commands_on(default) == commands_on(event)
    check(same and 'Current instruction:' in default and 'Program stopped.' in default and
          'exited normally' in default and 'not support' not in default,
          'serve -- PROG: gdb goes back without an option, as under --record --backend event'
          '\n' + ('' if same else '\n'.join(commands_on(default))))


def found_in_path(ptrev, prog, work):
    """A program named as a shell names it, found in PATH: its recording
    names the file, so that the history can run it again (it named `sort`,
    and every reverse command said `cannot run sort`)."""
    env = dict(os.environ,
               PATH=os.path.dirname(os.path.abspath(prog)) + ':' + os.environ['PATH'])
    text = gdb(prog, ['target remote | %s serve --stdio -- %s' % (os.path.abspath(ptrev),
                                                                os.path.basename(prog)),
                      'break leaf', 'continue', 'reverse-stepi', 'printf "PC=%#lx\\n", $pc',
                      'monitor when', 'kill'], cwd=work, env=env)
    check('Current instruction:' in text and 'PC=0x' in text and 'cannot run' not in text and
          'no history' not in text,
          'serve -- NAME found in PATH: gdb goes back (the recording names its file):\n'
          + '\n'.join(l for l in text.splitlines() if 'ptrev' in l or 'PC=' in l))


def script(ptrev, prog, work):
    """A #! script: its recording names the script and the argv it was
    given, not what its interpreter got (the replay execs the script, and
    the kernel makes the interpreter's argv again: named twice, the replay
    diverged at the shell's first syscalls)."""
    path = os.path.join(work, 'run-it.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\n%s\necho done\n' % prog)
    os.chmod(path, 0o755)
    text = gdb('/bin/sh', ['target remote | %s serve --stdio -- %s' % (ptrev, path), 'continue',
                           'reverse-stepi', 'monitor when', 'kill'])
    check('Current instruction:' in text and 'no history' not in text and
          'diverged' not in text and 'done' in text,
          'serve -- SCRIPT: gdb goes back from its end:\n'
          + '\n'.join(l for l in text.splitlines() if 'ptrev' in l or 'Current' in l))


def no_record(ptrev, prog):
    text = gdb(prog, ['target remote | %s serve --stdio --no-record -- %s' % (ptrev, prog),
                      'break leaf', 'continue', 'reverse-stepi', 'monitor when', 'delete',
                      'continue'])
    check('recording with' not in text and
          'Target remote does not support this command.' in text and
          'No recording: ptrev serve was started with --no-record' in text and
          'Program stopped.' not in text and 'exited normally' in text,
          'serve --no-record: no history, and gdb\'s user told why; the program exits as '
          'under gdbserver:\n' + '\n'.join(text.splitlines()[-8:]))


def attached(ptrev, programs):
    wait = os.path.join(programs, 'live_wait')
    proc = subprocess.Popen([wait], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        time.sleep(0.3)
        text = gdb(wait, ['target remote | %s serve --stdio --attach %d' % (ptrev, proc.pid),
                          'monitor when', 'detach'])
        check('the process is not recorded (--record records it from here' in text and
              'No recording: ptrev serve was started with --no-record (or attached to the '
              'process without --record)' in text and 'recording with' not in text,
              'serve --attach PID: not recorded unless asked, and ptrev says so:\n'
              + '\n'.join(l for l in text.splitlines() if 'record' in l))
        text = gdb(wait, ['target remote | %s serve --stdio --record --attach %d'
                          % (ptrev, proc.pid), 'detach'])
        check('recording with the sw backend' in text,
              'serve --record --attach PID: recorded from there, by the sw recorder')
    finally:
        proc.kill()
        proc.wait()


def backend_alone(ptrev, prog):
    text = gdb(prog, ['target remote | %s serve --stdio --backend sw -- %s' % (ptrev, prog),
                      'break leaf', 'continue', 'reverse-stepi', 'monitor when', 'kill'])
    check('recording with the sw backend in memory' in text and
          'Current instruction:' in text,
          'serve --backend sw: recorded by the sw recorder without --record')


def multi_run(ptrev, prog):
    text = gdb(prog, ['target extended-remote | %s serve --stdio --multi' % ptrev,
                      'set remote exec-file %s' % prog, 'break leaf', 'run', 'reverse-stepi',
                      'monitor when', 'kill'])
    check('recording with the event backend' in text and 'Current instruction:' in text,
          'serve --multi: the program gdb\'s run starts is recorded:\n'
          + '\n'.join(text.splitlines()[-6:]))


def btrace_said(ptrev, prog):
    text = gdb(prog, ['target remote | %s serve --stdio -- %s' % (ptrev, prog), 'break leaf',
                      'continue', 'record btrace pt', 'kill'])
    check('ptrev records this program already, with the event recorder, which keeps no '
          'branch trace' in text,
          'record btrace pt on the default recording says why it cannot, and what to do')


def conflicts(ptrev, prog, work):
    for args, said in ((['-o', os.path.join(work, 'x.ptrev'), '--no-record'], '-o FILE records'),
                       (['--record', '--no-record'], '--record records'),
                       (['--no-record', '--backend', 'sw'], '--backend (the recorder) records')):
        r = subprocess.run([ptrev, 'serve', '--stdio'] + args + ['--', prog],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        check(r.returncode == 2 and said in r.stderr and 'give one of them' in r.stderr,
              'serve %s: refused, with why (%r)' % (' '.join(args), r.stderr.strip()))


def main():
    ptrev, programs, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(programs, 'e2e_basic')
    default_records(ptrev, prog)
    found_in_path(ptrev, prog, work)
    script(ptrev, prog, work)
    no_record(ptrev, prog)
    attached(ptrev, programs)
    backend_alone(ptrev, prog)
    multi_run(ptrev, prog)
    btrace_said(ptrev, prog)
    conflicts(ptrev, prog, work)
    return finish()


if __name__ == '__main__':
    sys.exit(main())
