#!/usr/bin/env python3
"""Postmortem with full state, against gdb's own `record full`.

A crashing program is recorded with `ptrev record` (it exits 128+signal),
then debugged from the saved file with `ptrev replay`: it starts at the
crash. The oracle runs the same program natively under `record full` from
main until the crash. Both then run one script: bt, locals, heap contents,
reverse-step, reverse-next, reverse-finish, reverse-continue to a
breakpoint. Transcripts must match but for the process id.

usage: crash_diff.py PTREV WORKDIR PROGRAM SCRIPT_NAME
"""
import os
import re
import subprocess
import sys

# The recorder backend the recordings are made with (auto unless a test
# variant names one, e.g. event).
BACKEND = ['--backend', os.environ['PTREV_TEST_BACKEND']] if os.environ.get('PTREV_TEST_BACKEND') else []

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from full_state_diff import TUNABLES, compare, env, run_gdb  # noqa: E402

SCRIPTS = {
    # crash_list: the walk dereferences the scribbled link.
    'list': '''
bt
info locals
p *n
reverse-step
bt
info locals
reverse-next
reverse-next
info locals
reverse-finish
bt
info locals
p *list
p *list->next
break scribble
reverse-continue
bt
info args
p *head
p *head->next
finish
p *head->next
''',
    # crash_uaf: use() reads through a pointer that free() and malloc()
    # recycled. Once freed, b->len holds glibc's tcache key, random per run
    # (getrandom at start-up): the two runs legitimately differ there, so
    # only the link field is printed after the free.
    'uaf': '''
bt
info args
p *b
reverse-finish
info locals
break release
reverse-continue
bt
p *b
p b->data[0]
finish
p b->data
reverse-next
p b->data
''',
}


def normalise(text, pid_hint=None):
    """From the script's first command on; the pid hidden."""
    i = text.find('+bt')
    text = text[i:] if i >= 0 else text
    pids = set(re.findall(r'process (\d+)', text))
    for pid in pids:
        text = re.sub(r'0x0*%x\b' % int(pid), 'PIDHEX', text)
        text = re.sub(r'\b%s\b' % pid, 'PID', text)
    out = []
    for line in text.splitlines():
        line = re.sub(r'Breakpoint \d+', 'Breakpoint N', line)
        out.append(line)
    return out


def check_assert(ptrev, trace, prog):
    """abort() from assert: record full cannot serve as the oracle here
    (glibc's static assert path prints through AVX code it cannot record),
    so check the essentials: SIGABRT at the end, the assert's frame in the
    backtrace, full state in it, and reverse-finish back into main."""
    out = run_gdb(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace), 'p $_siginfo.si_signo',
                         'bt', 'break average', 'reverse-continue', 'info args', 'reverse-finish',
                         'bt 1', 'info locals'])
    ok = (re.search(r'^\$1 = 6$', out, re.M) and re.search(r'in average \(v=0x[0-9a-f]+, n=0\)', out)
          and re.search(r'^n = 0$', out, re.M) and re.search(r'^#0 .* in main \(\)', out, re.M)
          and re.search(r'^a = 10$', out, re.M))
    print(('PASS' if ok else 'FAIL') + ': assert replay: SIGABRT, average(n=0) in the backtrace, '
          'reverse-finish into main with a = 10')
    if not ok:
        print(out[-2500:])
    return 0 if ok else 1


def check_input_deleted(ptrev, work, prog):
    """The program's input file is gone at replay time: the replay still
    shows what it read (read()'s result and bytes come from the log)."""
    path = os.path.join(work, 'input.txt')
    with open(path, 'w') as f:
        f.write('crash here, please\n')
    trace = os.path.join(work, 'crash-input.ptrev')
    r = subprocess.run([ptrev, 'record'] + BACKEND + ['-o', trace, '--', prog, path], env=env(),
                       capture_output=True, timeout=600)
    os.unlink(path)
    out = run_gdb(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace), 'bt',
                         'p input', 'up', 'p n'])
    ok = (r.returncode == 139 and '"crash here, please\\n"' in out and
          re.search(r'^\$2 = 19$', out, re.M) is not None and 'parse (' in out)
    print(('PASS' if ok else 'FAIL') + ': input file deleted after recording: the replay '
          'shows what the program read')
    if not ok:
        print(out[-2000:])
    return 0 if ok else 1


def main():
    ptrev, work, prog, name = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4]
    os.makedirs(work, exist_ok=True)
    if name == 'input':
        return check_input_deleted(ptrev, work, prog)
    trace = os.path.join(work, 'crash-%s.ptrev' % name)
    r = subprocess.run([ptrev, 'record'] + BACKEND + ['-o', trace, '--', prog], env=env(),
                       capture_output=True, timeout=600)
    if r.returncode < 128:
        print('FAIL: recording exited %d, not 128+signal' % r.returncode)
        return 1
    print('ok   recording exited %d (128+signal)' % r.returncode)
    if name == 'assert':
        return check_assert(ptrev, trace, prog)
    script = SCRIPTS[name].strip().splitlines()
    ref = run_gdb(prog, ['set startup-with-shell off', 'unset environment LINES',
                         'unset environment COLUMNS', 'break main', 'run', 'record full',
                         'delete 1', 'continue'] + script)
    mine = run_gdb(prog, ['target remote | %s replay --stdio %s' % (ptrev, trace)] + script)
    return compare('ptrev replay of %s' % os.path.basename(prog), normalise(ref),
                   normalise(mine))


if __name__ == '__main__':
    sys.exit(main())
