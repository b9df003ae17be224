#!/bin/bash
# Live recording (`ptrev serve --record`) by the sw and the event recorder
# against no recording (plain serve), in the same script (not a timed
# test): gdb runs a program to a breakpoint near its end, then goes back
# one instruction and forward again; each gdb command is timed inside gdb.
# The program: md5sum of SIZE KB (default 64; the sw recorder steps every
# block of it).
#
#   bench/live_record_bench.sh PTREV [SIZE_KB]
set -euo pipefail

ptrev=${1:?usage: live_record_bench.sh PTREV [SIZE_KB]}
size=${2:-64}
prog=$(command -v md5sum)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c $((size * 1024)) /dev/urandom >"$tmp/in"
t0=$(date +%s.%N)
"$prog" "$tmp/in" >/dev/null
t1=$(date +%s.%N)

# session SERVE-OPTIONS: the times of continue (to the exit's hold, or the
# exit without recording), reverse-stepi and stepi.
session() {
	cat >"$tmp/s.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
said = gdb.execute('target remote | $ptrev serve --stdio $1 -- $prog $tmp/in', to_string=True)
for cmd in $2:
    t0 = time.time()
    try:
        said += gdb.execute(cmd, to_string=True)
    except gdb.error as e:
        said += str(e)
    print('T %s %.3f' % (cmd, time.time() - t0))
end
GDB
	gdb -nx -batch -x "$tmp/s.gdb" "$prog" 2>/dev/null | grep '^T ' | awk '{print $NF}' | tr '\n' ' '
}

moves="['continue', 'reverse-stepi', 'stepi']"
plain=$(session "" "['continue']")
event=$(session "--record --backend event" "$moves")
sw=$(session "--record --backend sw" "$moves")
awk -v n="$(echo "$t1 - $t0" | bc)" -v p="$plain" -v e="$event" -v w="$sw" -v s="$size" 'BEGIN {
	split(e, E, " "); split(w, W, " ")
	printf "md5sum of %d KB: native %.3f s\n", s, n
	printf "run to the end under gdb, no recording:      %.2f s\n", p
	printf "run to the end, live event recording:         %.2f s (%.1fx no recording)\n", E[1], E[1] / p
	printf "run to the end, live sw recording:            %.2f s (%.1fx no recording, %.0fx event)\n", W[1], W[1] / p, W[1] / E[1]
	printf "then reverse-stepi, stepi: event %.2f s, %.2f s; sw %.2f s, %.2f s\n", E[2], E[3], W[2], W[3]
}'
