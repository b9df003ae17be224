#!/usr/bin/env python3
"""An event recording replays with full state after its program and its
library were rebuilt or deleted: the replay runs the recording's copies
of them (replay/binary_copies.c).

Before, a replay ran the program again from the files at the recorded
paths: a deleted program could not be replayed at all (`cannot start the
recorded program again: cannot run ...: No such file or directory`), and
another build ran instead of the recorded one, diverging.

use_mark (in a work directory, with its library libmark.so beside it,
found through LD_LIBRARY_PATH) stores what mark_scale(i) returned and
calls after(i). The oracle is the replay of the recording with both files
as recorded: reverse-continue to after(5) and after(2), then continue to
after(5) again, printing i, seen[] and the registers there; first checked
against the program run natively under gdb. The same session must show
the same with the other builds of both files put in their place
(use_mark_b, libmark_b.so: other code, other build-ids), and with both
deleted; ptrev says on stderr that it runs the copies. gdb is given no
program: it reads the program and the library from ptrev, which gives it
the recording's copies where the files changed, so its symbols and
disassembly (of mark_scale) are the recorded build's.

Then the loader: use_mark_ld, whose loader is ./ld-linux-t.so (a copy of the
system's beside it), replays as before with that loader deleted.

usage: replaced_binary.py PTREV PROGRAM_DIR WORK_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'pylib'))
from ptrev_checks import check, finish, full_state_count, gdb_batch, record  # noqa: E402

SHOW = ['print i', 'print seen', 'info registers rip rsp rbp rdi']
SESSION = ['break after if i == 5 || i == 2', 'reverse-continue'] + SHOW + \
    ['monitor why', 'reverse-continue'] + SHOW + ['monitor why', 'continue'] + SHOW + \
    ['x/6i mark_scale']


def shown(text):
    """What gdb showed at the stops: the values and registers."""
    return [ln for ln in text.splitlines()
            if re.match(r'^(\$\d+ = |rip|rsp|rbp|rdi|Breakpoint \d+, after|\s+0x\w+ <mark)', ln)]


def install(progdir, work, prog, lib):
    for src, dst in ((prog, 'use_mark'), (lib, 'libmark.so')):
        path = os.path.join(work, dst)
        if os.path.exists(path):
            os.unlink(path)
        if src:
            shutil.copy2(os.path.join(progdir, src), path)


def main():
    ptrev, progdir, work = (os.path.abspath(a) for a in sys.argv[1:4])
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(work, 'use_mark')
    install(progdir, work, 'use_mark', 'libmark.so')

    # The library beside the program, not the build's (meson test puts
    # its directory on LD_LIBRARY_PATH).
    env = dict(os.environ, LD_LIBRARY_PATH=work)
    native = gdb_batch(prog, ['set startup-with-shell off', 'break after if i == 2', 'run',
                              'print i', 'print seen', 'kill'], timeout=120, env=env)
    trace = os.path.join(work, 'use_mark.ptrev')
    r = record(ptrev, 'event', trace, [prog], env=env)
    check(r.returncode == 0 and 'seen[7]=15' in r.stdout,
          'recorded (%s%s)' % (r.stdout.strip(), r.stderr.strip()[-300:]))

    def replay(what):
        """The session, gdb reading the program and its library from
        ptrev (no file given): the files that ran, or the recording's
        copies of them."""
        r = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set trace-commands on',
                            '-ex', 'set pagination off', '-ex',
                            'target remote | %s replay --stdio %s' % (ptrev, trace)] +
                           [a for c in SESSION for a in ('-ex', c)], capture_output=True,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        out = r.stdout + r.stderr
        return out, shown(out)

    as_recorded, oracle = replay('as recorded')
    nat = [re.sub(r'^\$\d+ = ', '', ln) for ln in shown(native)]
    second = [re.sub(r'^\$\d+ = ', '', ln) for ln in oracle[7:10]]
    check(len(oracle) == 27 and nat[:3] == second and full_state_count(as_recorded) == 2,
          'the replay as recorded: after(5), after(2) (as the native run: %s), after(5); full '
          'state (%s)' % (nat[:3], oracle if oracle else as_recorded[-1200:]))

    for what, files in (('other builds', ('use_mark_b', 'libmark_b.so')),
                        ('deleted', (None, None))):
        install(progdir, work, *files)
        out, got = replay(what)
        says = re.findall(r'^ptrev: .* since the recording: the replay runs the recording\'s '
                          r'copy of it$', out, re.M)
        check(got == oracle and full_state_count(out) == 2,
              '%s: the same stops, values and registers, full state (%s)' %
              (what, got if got != oracle and got else out[-1500:] if not got else 'same'))
        check(len(says) == 2 and all(('gone' if what == 'deleted' else 'another build') in m
                                     for m in says) and 'use_mark is' in says[0] and
              'libmark.so is' in says[1],
              '%s: ptrev says once for each file that it runs the copy (%s)' % (what, says))
    loader(ptrev, progdir, os.path.join(work, 'loader'))
    return finish()


def interp_vaddr(path):
    """The address of the program's PT_INTERP string (64-bit ELF)."""
    with open(path, 'rb') as f:
        b = f.read()
    phoff, = struct.unpack_from('<Q', b, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', b, 0x36)
    for i in range(phnum):
        p_type, _, _, p_vaddr = struct.unpack_from('<IIQQ', b, phoff + i * phentsize)
        if p_type == 3:
            return p_vaddr
    return 0


def loader(ptrev, progdir, work):
    """The dynamic loader deleted since the recording (as a glibc upgrade
    replaces it): use_mark_ld names its loader ./ld-linux-t.so, a copy of the
    system's in its directory, where it runs. The replay runs the
    recording's copy of the loader too, the program's copy naming it in
    place of the recorded name, which is put back in memory."""
    os.makedirs(work, exist_ok=True)
    for src, dst in (('use_mark_ld', 'use_mark'), ('libmark.so', 'libmark.so')):
        shutil.copy2(os.path.join(progdir, src), os.path.join(work, dst))
    shutil.copy2(os.path.realpath('/lib64/ld-linux-x86-64.so.2'),
                 os.path.join(work, 'ld-linux-t.so'))
    env = dict(os.environ, LD_LIBRARY_PATH=work)
    trace = os.path.join(work, 'use_mark.ptrev')
    r = record(ptrev, 'event', trace, [os.path.join(work, 'use_mark')], env=env, cwd=work)
    check(r.returncode == 0 and 'seen[7]=15' in r.stdout,
          'loader: recorded (%s%s)' % (r.stdout.strip(), r.stderr.strip()[-300:]))
    # The loader's name as the program's memory holds it (PT_INTERP, which
    # the loader takes as its own name), put back after the exec of the
    # copy, which names the loader's copy there. A PIE without address
    # randomisation is loaded at 0x555555554000.
    session = ['break after if i == 2', 'reverse-continue', 'print seen', 'monitor why',
               'x/s 0x555555554000 + %#x' % interp_vaddr(os.path.join(work, 'use_mark'))]

    def replay():
        r = subprocess.run(['gdb', '-nx', '-batch', '-ex', 'set pagination off', '-ex',
                            'target remote | %s replay --stdio %s' % (ptrev, trace)] +
                           [a for c in session for a in ('-ex', c)], capture_output=True,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        return r.stdout + r.stderr

    before = replay()
    os.unlink(os.path.join(work, 'ld-linux-t.so'))
    after = replay()
    values = [re.findall(r'^\$\d+ = .*$', t, re.M) + re.findall(r'^0x\w+:\s+".*$', t, re.M)
              for t in (before, after)]
    check(values[0] and values[0] == values[1] and '{1, 3, 5, 0, 0, 0, 0, 0}' in values[1][0]
          and any('./ld-linux-t.so' in v for v in values[1])
          and full_state_count(after) == 1,
          'loader: deleted, the replay shows what it showed before, with full state (%s, %s)'
          % (values, after[-1500:] if not values[1] else ''))
    check(re.search(r'^ptrev: .*/ld-linux-t.so is gone since the recording: the replay runs the '
                    r'recording\'s copy of it$', after, re.M) is not None,
          'loader: ptrev says it runs the loader\'s copy')


if __name__ == '__main__':
    sys.exit(main())
