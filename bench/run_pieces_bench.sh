#!/bin/bash
# Going back to breakpoint hits in a multi-threaded event recording: pigz
# -p 2 compressing BYTES of text (a writer thread and two compressing
# workers), opened in gdb with `break write`, then four moves timed
# inside gdb: a reverse-continue from the end to the last write, two more
# to the writes before it (the third far back: most of the compression
# lies between), and a continue back to the second. Each hit's run of the
# recorded thread order is found natively; the history made is that run
# alone (a piece), where PTREV_RUN_PIECES=0, the reference run in the same
# script, makes the tail from that run to the recording's end. Figures:
# seconds per move for both, their ratio, and the native run.
#
#   bench/run_pieces_bench.sh PTREV [BYTES]
set -euo pipefail

ptrev=${1:?usage: run_pieces_bench.sh PTREV [BYTES]}
bytes=${2:-400000}
prog=$(command -v pigz) || { echo "pigz is not installed (scripts/setup installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Numbers from a fixed pseudo-random sequence: text that compresses to
# many blocks (seq's output compresses to a few writes).
awk -v n="$bytes" 'BEGIN { srand(1); while (len < n) { s = int(rand() * 200000); print s;
	len += length(s) + 1 } }' | head -c "$bytes" >"$tmp/data.txt"
t0=$(date +%s.%N)
"$prog" -p 2 -c "$tmp/data.txt" >/dev/null
t1=$(date +%s.%N)
"$ptrev" record --force -o "$tmp/pigz.ptrev" -- "$prog" -p 2 -c "$tmp/data.txt" >/dev/null 2>&1
native=$(echo "$t1 - $t0" | bc)

# moves: the seconds of each move, and the byte counts of the writes it
# stopped at (the same in both runs, or the figures compare nothing).
moves() {
	cat >"$tmp/m.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
gdb.execute('target remote | $ptrev replay --stdio $tmp/pigz.ptrev', to_string=True)
gdb.execute('break write', to_string=True)
for move in ('reverse-continue', 'reverse-continue', 'reverse-continue', 'continue'):
    t0 = time.time()
    gdb.execute(move, to_string=True)
    print('T %.3f %s' % (time.time() - t0, gdb.parse_and_eval('nbytes')))
end
GDB
	PTREV_BACKGROUND_HISTORY=0 gdb -nx -batch -x "$tmp/m.gdb" "$prog" 2>/dev/null |
		awk '$1 == "T" { printf "%s %s ", $2, $3 } END { print "" }'
}

read -r p1 w1 p2 w2 p3 w3 p4 w4 <<<"$(moves)"
read -r r1 v1 r2 v2 r3 v3 r4 v4 <<<"$(PTREV_RUN_PIECES=0 moves)"
printf 'pigz -p 2 of %s bytes: native run %.3f s\n' "$bytes" "$native"
for m in "reverse-continue-1 $p1 $r1 $w1 $v1" "reverse-continue-2 $p2 $r2 $w2 $v2" \
	 "reverse-continue-3 $p3 $r3 $w3 $v3" "continue-4 $p4 $r4 $w4 $v4"; do
	read -r name p r w v <<<"$m"
	same=$([ "$w" = "$v" ] && echo same || echo DIFFERENT)
	printf '%-20s pieces %8.3f s  reference (PTREV_RUN_PIECES=0) %8.3f s  ratio %.4f  (write of %s bytes, %s)\n' \
		"$name" "$p" "$r" "$(echo "$p / $r" | bc -l)" "$w" "$same"
done
