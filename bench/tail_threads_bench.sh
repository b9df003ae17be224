#!/bin/bash
# The first reverse-stepi at the end of a multi-threaded event recording
# (pigz -p 2 compressing SIZE KB in 32 KB blocks) with the history of its
# last runs made first, against the whole history made at that move
# (PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0), on the same
# recording in the same script (not a timed test); then two
# reverse-continues to pigz's last write, past the tail's start.
#
#   bench/tail_threads_bench.sh PTREV [SIZE_KB]
set -euo pipefail

ptrev=${1:?usage: tail_threads_bench.sh PTREV [SIZE_KB]}
size=${2:-300}
pigz=$(command -v pigz) || { echo "pigz is not installed (scripts/setup installs it)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c $((size * 1024)) "$pigz" >"$tmp/in"
t0=$(date +%s.%N)
"$pigz" -p 2 -b 32 -c "$tmp/in" >/dev/null
t1=$(date +%s.%N)
"$ptrev" record --force -o "$tmp/pigz.ptrev" -- "$pigz" -p 2 -b 32 -c "$tmp/in" >/dev/null 2>"$tmp/rec.err"
t2=$(date +%s.%N)

# session BODY: each command of BODY (python list) timed inside gdb.
session() {
	cat >"$tmp/s.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
said = gdb.execute('target remote | $ptrev replay --stdio $tmp/pigz.ptrev', to_string=True)
for cmd in $1:
    t0 = time.time()
    said += gdb.execute(cmd, to_string=True)
    print('T %s %.3f' % (cmd, time.time() - t0))
end
GDB
	gdb -nx -batch -x "$tmp/s.gdb" "$pigz" 2>&1
}

step="['reverse-stepi']"
tail=$(session "$step" | grep '^T ' | awk '{print $NF}')
whole=$(PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0 session "$step" | grep '^T ' | awk '{print $NF}')
back=$(session "['break write', 'reverse-continue', 'reverse-continue']" | grep '^T ' |
	awk '{print $NF}' | tr '\n' ' ')
awk -v n="$(echo "$t1 - $t0" | bc)" -v r="$(echo "$t2 - $t1" | bc)" -v t="$tail" -v w="$whole" \
	-v b="$back" -v s="$size" 'BEGIN {
	printf "pigz -p 2 of %d KB: native %.3f s, recorded in %.3f s\n", s, n, r
	printf "first reverse-stepi, tail of the last runs first: %.2f s\n", t
	printf "first reverse-stepi, whole history made then:     %.2f s (%.0fx the tail)\n", w, w / t
	printf "break write + two reverse-continues (tail, then past its start): %s s\n", b
}'
