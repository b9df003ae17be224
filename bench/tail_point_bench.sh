#!/bin/bash
# What a tail that begins inside a long stretch costs when its point lies
# where the loop passes unevenly (not a timed test). rec_loop N calls one
# of three small functions per iteration, chosen by the data; its last
# stretch runs tens of ms without a syscall, so the first reverse-stepi
# makes the history of a tail that begins at a point ptrev takes inside
# it (replay/event_split.c), and every replay of that tail finds the
# point again with a breakpoint at its PC. Where the PC is in one of the
# three functions no register or stack lane steps evenly between its
# passes: the replay estimates the passes left from the caller's counter,
# which rises at each (pass_model_rough_left), and lets most of them go;
# PTREV_STATE_SKIP=0 counts every pass (the reference, in this script).
# For a few tail lengths (PTREV_TAIL_US: each puts the point elsewhere)
# prints the seconds from gdb's reverse-stepi to its stop at the end of
# one recording (`target remote | ptrev replay --stdio`; the end shown
# first, the tail made, the replayer started) with passes let go and with
# every pass counted, and their ratio. A move that takes longer than
# LIMIT seconds is shown as "> LIMIT".
#
#   bench/tail_point_bench.sh PTREV REC_LOOP [LIMIT]
set -euo pipefail

usage='usage: tail_point_bench.sh PTREV REC_LOOP [LIMIT]'
ptrev=${1:?$usage}
prog=${2:?$usage}
limit=${3:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Seconds of the first reverse-stepi (env: $@), or "> LIMIT"; the PC of
# the tail's point in $tmp/pc when ptrev named it.
first_step() {
	local t0 t1 out
	t0=$(now)
	out=$(env "$@" timeout "$limit" gdb -nx -batch -ex "set remotetimeout $limit" \
		-ex "target remote | $ptrev replay --stdio $tmp/p.ptrev" \
		-ex 'shell date +T0%s.%N' -ex 'reverse-stepi' -ex 'shell date +T1%s.%N' \
		-ex 'monitor why' "$tmp/rec_loop" </dev/null 2>&1) || true
	t0=$(sed -n 's/^T0//p' <<<"$out")
	t1=$(sed -n 's/^T1//p' <<<"$out")
	if [ -n "$t0" ] && [ -n "$t1" ] && grep -q 'available here' <<<"$out"; then
		secs "$t0" "$t1"
	else
		echo "> $limit"
	fi
}

cp "$prog" "$tmp/rec_loop"
"$ptrev" record --backend event --force -o "$tmp/p.ptrev" -- "$tmp/rec_loop" 3000000 \
	>/dev/null 2>&1
printf '%-10s %12s %12s %8s\n' tail_us estimated_s counted_s ratio
for us in 3000 5000 7000 9000; do
	est=$(first_step PTREV_TAIL_US="$us")
	cnt=$(first_step PTREV_TAIL_US="$us" PTREV_STATE_SKIP=0)
	case $est$cnt in
	*">"*) ratio="-" ;;
	*) ratio=$(awk -v a="$est" -v b="$cnt" 'BEGIN { printf "%.2f", a / b }') ;;
	esac
	printf '%-10s %12s %12s %8s\n' "$us" "$est" "$cnt" "$ratio"
done
