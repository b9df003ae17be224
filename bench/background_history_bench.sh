#!/bin/bash
# How long the first reverse move of an event recording's replay takes
# when its history is made in the background from the start, against the
# same move with the history made only then (PTREV_BACKGROUND_HISTORY=0),
# in the same script (not a timed test).
#
#   bench/background_history_bench.sh PTREV [LINES] [IDLE_SECONDS]
#
# The workload is sort of LINES lines (default 1,000), recorded with the
# event backend. gdb connects with `target remote | ptrev replay --stdio`,
# stays at the end for IDLE_SECONDS (default 5: a user reading the crash
# site), then makes one reverse-stepi; its wall time is measured inside
# gdb. Prints both times, their ratio, and how long making the history
# takes (ptrev's own figure).
set -euo pipefail

ptrev=${1:?usage: background_history_bench.sh PTREV [LINES] [IDLE_SECONDS]}
lines=${2:-1000}
idle=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk -v n="$lines" 'BEGIN { for (i = 0; i < n; i++) print (i * 7919) % 10007, "row", i }' \
	>"$tmp/in.txt"
cp /usr/bin/sort "$tmp/sort"
"$ptrev" record --backend event --force -o "$tmp/sort.ptrev" -- "$tmp/sort" "$tmp/in.txt" \
	>/dev/null

cat >"$tmp/move.gdb" <<GDB
set remotetimeout 600
target remote | $ptrev replay --stdio $tmp/sort.ptrev
python
import time
time.sleep($idle)
t0 = time.time()
said = gdb.execute('reverse-stepi', to_string=True)
print('first move: %.3f s' % (time.time() - t0))
# ptrev's stderr reaches gdb through the pipe target: in said.
print('\\n'.join(l for l in said.splitlines() if 'history made' in l))
end
GDB

# move: the first move's seconds, and ptrev's "history made" line.
move() {
	local out
	out=$(gdb -nx -batch -x "$tmp/move.gdb" "$tmp/sort" 2>&1)
	sed -n 's/^first move: \([0-9.]*\) s$/\1/p' <<<"$out"
	grep -o 'history made: .*' <<<"$out" | head -1
}

mapfile -t fg < <(PTREV_BACKGROUND_HISTORY=0 move)
mapfile -t bg < <(move)
ratio=$(awk -v a="${bg[0]}" -v b="${fg[0]}" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
echo "sort of $lines lines, first reverse-stepi after ${idle} s at the end:"
echo "  history made at the move:       ${fg[0]} s  (${fg[1]:-?})"
echo "  history made in the background: ${bg[0]} s  (${bg[1]:-?})"
echo "  ratio background/foreground: $ratio"
