#!/bin/bash
# What a STATE point in a hot loop costs a replay (not a timed test). Two
# threads each run a syscall-free arithmetic loop (thread_prog 2 N); the
# event recorder, with one thread on the CPU at a time, stops the running
# one at a STATE point whenever the other has waited a time slice (1 ms
# here). A replay finds each point with a hardware breakpoint at its PC,
# a trap (~25 us) at every pass since the thread's previous event, so a
# point inside the loop costs about one trap per iteration run before it.
# A replay predicts most passes from the loop's counter instead
# (replay/event_skip.c); PTREV_STATE_SKIP=0 counts every pass, as before.
# Prints, for loops of growing length: the native run, the recording, the
# state points, and the time gdb takes to open the recording's replay
# (`target remote | ptrev replay --stdio`, which shows the end first: the
# whole recording re-run natively; gdb's own start, about 0.1 s, included)
# with passes predicted and with every pass counted, the first as a ratio
# to the native run. A replay that takes longer than LIMIT seconds is
# shown as "> LIMIT". With BASE_PTREV, the same recording's replay by that
# build too (base_s; an earlier build, to compare on one recording: points
# fall in different places in each).
#
#   bench/state_point_bench.sh PTREV THREAD_PROG [LIMIT] [BASE_PTREV]
set -euo pipefail

usage='usage: state_point_bench.sh PTREV THREAD_PROG [LIMIT] [BASE_PTREV]'
ptrev=${1:?$usage}
prog=${2:?$usage}
limit=${3:-60}
base=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# Seconds gdb takes to open the replay with ptrev build $1 (then env:
# extra variables), or "> LIMIT".
open_replay() {
	local t0 t1 build=$1
	shift
	t0=$(now)
	if env "$@" timeout "$limit" gdb -nx -batch -ex "set remotetimeout $limit" \
		-ex "target remote | $build replay --stdio $tmp/p.ptrev" -ex 'monitor why' "$prog" \
		</dev/null 2>&1 | grep -q 'Every register and all memory are available here'; then
		t1=$(now)
		secs "$t0" "$t1"
	else
		echo "> $limit"
	fi
}

printf '%-12s %10s %10s %7s %12s %10s %12s %10s\n' iterations native_s record_s points replay_s \
	replay/native counted_s base_s
for n in 20000 200000 2000000 20000000; do
	t0=$(now)
	"$prog" 2 "$n" >/dev/null
	t1=$(now)
	PTREV_EVENT_SLICE_MS=1 "$ptrev" record --backend event --force -o "$tmp/p.ptrev" -- \
		"$prog" 2 "$n" >/dev/null 2>&1
	t2=$(now)
	points=$("$ptrev" info "$tmp/p.ptrev" | sed -n 's/^state points: //p')
	replay=$(open_replay "$ptrev")
	counted=$(open_replay "$ptrev" PTREV_STATE_SKIP=0)
	based=-
	[ -n "$base" ] && based=$(open_replay "$base")
	case $replay in
	">"*) ratio="-" ;;
	*) ratio=$(awk -v a="$replay" -v b="$(secs "$t0" "$t1")" 'BEGIN { printf "%.0fx", a / b }') ;;
	esac
	printf '%-12s %10s %10s %7s %12s %10s %12s %10s\n' "$n" "$(secs "$t0" "$t1")" \
		"$(secs "$t1" "$t2")" "${points:-0}" "$replay" "$ratio" "$counted" "$based"
done
