#!/bin/bash
# What a STATE point in a hot loop costs a replay (not a timed test). Two
# threads each run a syscall-free arithmetic loop (thread_prog 2 N); the
# event recorder, with one thread on the CPU at a time, stops the running
# one at a STATE point whenever the other has waited a time slice (1 ms
# here). A replay finds each point with a hardware breakpoint at its PC,
# a trap (~25 us) at every pass since the thread's previous event, so a
# point inside the loop costs about one trap per iteration run before it.
# Prints, for loops of growing length: the native run, the recording, the
# state points, and the time gdb takes to open the recording's replay
# (`target remote | ptrev replay --stdio`, which shows the end first: the
# whole recording re-run natively; gdb's own start, about 0.1 s, included),
# as a ratio to the native run. A replay
# that takes longer than LIMIT seconds is shown as "> LIMIT".
#
#   bench/state_point_bench.sh PTREV THREAD_PROG [LIMIT]
set -euo pipefail

ptrev=${1:?usage: state_point_bench.sh PTREV THREAD_PROG [LIMIT]}
prog=${2:?usage: state_point_bench.sh PTREV THREAD_PROG [LIMIT]}
limit=${3:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

printf '%-12s %10s %10s %7s %12s %10s\n' iterations native_s record_s points replay_s replay/native
for n in 20000 200000 2000000 20000000; do
	t0=$(now)
	"$prog" 2 "$n" >/dev/null
	t1=$(now)
	PTREV_EVENT_SLICE_MS=1 "$ptrev" record --backend event --force -o "$tmp/p.ptrev" -- \
		"$prog" 2 "$n" >/dev/null 2>&1
	t2=$(now)
	points=$("$ptrev" info "$tmp/p.ptrev" | sed -n 's/^state points: //p')
	t3=$(now)
	if timeout "$limit" gdb -nx -batch -ex "set remotetimeout $limit" \
		-ex "target remote | $ptrev replay --stdio $tmp/p.ptrev" -ex 'monitor why' "$prog" \
		</dev/null 2>&1 | grep -q 'Every register and all memory are available here'; then
		t4=$(now)
		replay=$(secs "$t3" "$t4")
		ratio=$(awk -v a="$replay" -v b="$(secs "$t0" "$t1")" 'BEGIN { printf "%.0fx", a / b }')
	else
		replay="> $limit"
		ratio="-"
	fi
	printf '%-12s %10s %10s %7s %12s %10s\n' "$n" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" \
		"${points:-0}" "$replay" "$ratio"
done
