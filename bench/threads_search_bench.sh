#!/bin/bash
# Going back from the end of a multi-threaded event recording to a hit far
# before it: thread_late ROUNDS LATE (two threads handing a token through
# pipes ROUNDS times; late_mark, the one write of late_value, in round
# LATE). Each session opens the recording in gdb and times, inside gdb,
# `reverse-continue` to `break late_mark` (the native search finds the
# run of the hit and the history is made from there), then, in a second
# session, `reverse-continue` to `watch late_value` (the stepped
# re-execution that compares the watched bytes), beside the same moves
# with the whole history made at the first move (PTREV_TAIL_HISTORY=0)
# and the program's own native run, in the same script. With BASE_PTREV
# the same sessions by that build too (an earlier one: before the native
# search covered threads, the break went back through tails four times
# as long each, and the watch was not seen at all).
#
#   bench/threads_search_bench.sh PTREV THREAD_LATE [ROUNDS] [LATE] [BASE_PTREV]
set -euo pipefail

ptrev=${1:?usage: threads_search_bench.sh PTREV THREAD_LATE [ROUNDS] [LATE] [BASE_PTREV]}
prog=${2:?usage: threads_search_bench.sh PTREV THREAD_LATE [ROUNDS] [LATE] [BASE_PTREV]}
rounds=${3:-3000}
late=${4:-2000}
base=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

t0=$(date +%s.%N)
"$prog" "$rounds" "$late" >/dev/null
t1=$(date +%s.%N)
"$ptrev" record --force -o "$tmp/late.ptrev" -- "$prog" "$rounds" "$late" >/dev/null 2>&1
native=$(echo "$t1 - $t0" | bc)

# moves PTREV POINT: the seconds of reverse-continue to POINT (a gdb
# command setting it), the recording already open.
moves() {
	cat >"$tmp/m.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
gdb.execute('target remote | $1 replay --stdio $tmp/late.ptrev', to_string=True)
gdb.execute('$2', to_string=True)
t0 = time.time()
gdb.execute('reverse-continue', to_string=True)
t = time.time() - t0
said = gdb.execute('frame', to_string=True)
print('T %.3f %s' % (t, 'late_mark (round=$late' in said))
end
GDB
	PTREV_BACKGROUND_HISTORY=0 gdb -nx -batch -x "$tmp/m.gdb" "$prog" 2>/dev/null |
		awk '$1 == "T" { print $2, $3 }'
}

printf 'thread_late %s %s: native run %.3f s\n' "$rounds" "$late" "$native"
for who in this ${base:+base}; do
	p=$ptrev
	[ "$who" = base ] && p=$base
	for point in 'break late_mark' 'watch late_value'; do
		read -r tail_s tail_ok <<<"$(moves "$p" "$point")"
		read -r whole_s whole_ok <<<"$(PTREV_TAIL_HISTORY=0 moves "$p" "$point")"
		printf '  %-5s %-17s reverse-continue %7.2f s (stopped there: %s), whole history ' \
			"$who" "$point" "$tail_s" "$tail_ok"
		printf 'at the first move %7.2f s (%s), %.0fx and %.0fx native\n' "$whole_s" "$whole_ok" \
			"$(echo "$tail_s / $native" | bc -l)" "$(echo "$whole_s / $native" | bc -l)"
	done
done
