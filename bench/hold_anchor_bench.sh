#!/bin/bash
# A multi-threaded event recording's state inside a long run: pigz -p 2
# compressing SIZE KB in 128 KB blocks (each worker's block is one run of
# millions of instructions), `break deflate`, a reverse-continue to the
# last call and two reverse-stepi, each timed inside gdb; with the held
# replay reaching its position natively through an anchor (the default),
# against stepping the run that holds it from its start
# (PTREV_HOLD_ANCHOR=0), on the same recording in the same script (not a
# timed test). Both sessions must show the same registers.
#
#   bench/hold_anchor_bench.sh PTREV [SIZE_KB]
set -euo pipefail

ptrev=${1:?usage: hold_anchor_bench.sh PTREV [SIZE_KB]}
size=${2:-512}
pigz=$(command -v pigz) || { echo "pigz is not installed (scripts/setup installs it)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ seq 1 100000000 || true; } | head -c $((size * 1024)) >"$tmp/in"
"$ptrev" record --force -o "$tmp/pigz.ptrev" -- "$pigz" -p 2 -c "$tmp/in" >/dev/null 2>"$tmp/rec.err"

session() {
	cat >"$tmp/s.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
gdb.execute('target remote | $ptrev replay --stdio $tmp/pigz.ptrev', to_string=True)
gdb.execute('break deflate', to_string=True)
for cmd in ['reverse-continue', 'reverse-stepi', 'reverse-stepi']:
    t0 = time.time()
    gdb.execute(cmd, to_string=True)
    print('T %s %.3f' % (cmd, time.time() - t0))
    print('R ' + ' '.join(gdb.execute('info registers rip rsp rax rdi', to_string=True).split()))
end
GDB
	gdb -nx -batch -x "$tmp/s.gdb" "$pigz" 2>&1
}

with=$(session)
without=$(PTREV_HOLD_ANCHOR=0 session)
if [ "$(grep '^R ' <<<"$with")" != "$(grep '^R ' <<<"$without")" ]; then
	echo "the two sessions disagree:"
	diff <(grep '^R ' <<<"$with") <(grep '^R ' <<<"$without") || true
	exit 1
fi
paste <(grep '^T ' <<<"$with" | awk '{print $2, $3}') <(grep '^T ' <<<"$without" | awk '{print $3}') |
	awk -v s="$size" 'BEGIN { printf "pigz -p 2 of %d KB, break deflate:\n", s }
	{ printf "%-17s anchored %7.2f s   stepped from the run start %7.2f s   (%.1fx)\n",
	  $1, $2, $3, ($2 > 0 ? $3 / $2 : 0) }'
