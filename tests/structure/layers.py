#!/usr/bin/env python3
"""The layering of ptrev's code, checked on what the compiler made.

Every source file of the library belongs to a folder, and every folder may
use only the folders listed for it in ALLOWED (docs/design.md draws the
same map). "Uses" is read from the object files: file A uses file B when A
refers to a symbol B defines (nm), and A includes a header whose functions
B defines. The check fails on

  - a file that uses a file of a folder it may not use (a lower layer
    reaching up, or a room reaching sideways),
  - a file that includes a header of such a folder,
  - an import circle: files that use each other, directly or through
    others (each circle listed once, with its files).

usage: layers.py BUILD_DIR SOURCE_ROOT     (exit 0 clean, 1 findings)
"""

import json
import os
import re
import subprocess
import sys
from collections import defaultdict

# Folder -> the other folders its files may use, bottom layer first.
ALLOWED = {
    'common': [],
    'common/ptrace': ['common'],
    'replay/trace': ['common'],
    'decode': ['common', 'common/ptrace', 'replay/trace'],
    'replay': ['common', 'common/ptrace', 'replay/trace', 'decode'],
    'server/rsp': ['common'],
    'server/record': ['common', 'common/ptrace', 'replay/trace', 'decode'],
    'server/record/sw': ['common', 'common/ptrace', 'replay/trace', 'decode',
                         'server/record'],
    'server/record/pt': ['common', 'common/ptrace', 'replay/trace', 'decode',
                         'server/record'],
    'server/record/event': ['common', 'common/ptrace', 'replay/trace', 'decode',
                            'server/record'],
    'server/target': ['common', 'common/ptrace', 'replay/trace', 'decode', 'replay',
                      'server/record', 'server/record/sw', 'server/record/pt',
                      'server/record/event'],
    'server/gdb': ['common', 'server/rsp', 'server/target'],
    'server/cli': ['common', 'common/ptrace', 'replay/trace', 'decode', 'replay',
                   'server/rsp', 'server/record', 'server/record/sw',
                   'server/record/pt', 'server/record/event', 'server/target',
                   'server/gdb'],
}


def library_objects(build, root):
    """Source file (relative to root) -> its object file, for the library
    and the program's main."""
    with open(os.path.join(build, 'compile_commands.json')) as f:
        commands = json.load(f)
    objs = {}
    for e in commands:
        src = os.path.relpath(os.path.join(e['directory'], e['file']), root)
        if src.split('/')[0] not in ('common', 'decode', 'replay', 'server'):
            continue
        objs[src] = os.path.join(e['directory'], e['output'])
    return objs


def symbols(obj):
    defined, used = set(), set()
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRGSV':
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == 'U':
            used.add(parts[1])
    return defined, used


def folder_of(path):
    return os.path.dirname(path)


def circles(graph, nodes):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def header_owners(root, definer):
    """include/ptrev/X.h -> the folders whose files define the functions it
    declares (empty for a header of types only)."""
    owners = {}
    inc = os.path.join(root, 'include', 'ptrev')
    for name in sorted(os.listdir(inc)):
        with open(os.path.join(inc, name)) as f:
            text = f.read()
        text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
        declared = set(re.findall(r'\b([A-Za-z_]\w*)\s*\(', text))
        owners['ptrev/' + name] = sorted({folder_of(definer[s]) for s in declared if s in definer})
    return owners


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, root = sys.argv[1], sys.argv[2]
    objs = library_objects(build, root)
    if not objs:
        print('FAIL: no object files found through %s/compile_commands.json' % build)
        return 1
    definer, uses = {}, {}
    for src, obj in objs.items():
        defined, used = symbols(obj)
        for s in defined:
            definer[s] = src
        uses[src] = used
    graph = defaultdict(set)
    for a, used in uses.items():
        for s in used:
            b = definer.get(s)
            if b and b != a:
                graph[a].add(b)
    problems = []
    for src in sorted(objs):
        if folder_of(src) not in ALLOWED:
            problems.append('%s: folder %s has no place in the layer map' % (src, folder_of(src)))
    for a in sorted(graph):
        fa = folder_of(a)
        for b in sorted(graph[a]):
            fb = folder_of(b)
            if fb != fa and fa in ALLOWED and fb not in ALLOWED[fa]:
                names = sorted(s for s in uses[a] if definer.get(s) == b)
                problems.append('%s uses %s (%s): %s may not use %s' %
                                (a, b, ', '.join(names[:4]), fa, fb))
    owners = header_owners(root, definer)
    for src in sorted(objs):
        fa = folder_of(src)
        with open(os.path.join(root, src)) as f:
            included = re.findall(r'^#include "(ptrev/[\w.]+)"', f.read(), flags=re.M)
        for h in included:
            for fb in owners.get(h, []):
                if fb != fa and fa in ALLOWED and fb not in ALLOWED[fa]:
                    problems.append('%s includes %s, a header of %s: %s may not use %s' %
                                    (src, h, fb, fa, fb))
    for comp in circles(graph, objs):
        problems.append('import circle: ' + ' '.join(comp))
    for p in problems:
        print('FAIL', p)
    print('%d files, %d uses between files, %d findings' %
          (len(objs), sum(len(v) for v in graph.values()), len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
