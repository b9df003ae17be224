#!/bin/bash
# The sw backend's two steppers on the same program, in the same script
# (not a timed test): the block stepper (one stop per basic block, the
# default) against the single-stepper (PTREV_SW_STEPPER=insn, one stop per
# instruction), and the block stepper with debug registers only
# (block-hw, what it uses when the program has several threads).
#
#   bench/stepper_bench.sh PTREV BENCH_PROG [ITERATIONS] [THREAD_PROG] [ROUNDS]
#
# Prints, per stepper, the instructions recorded, the seconds of the whole
# `ptrev record` and the throughput (instructions/s), the best of ROUNDS
# interleaved runs (the machine is shared: the best run is the one least
# disturbed), then the ratio block / insn (the goal is >= 4) with the
# absolute rates beside it. The recordings of both steppers must decode to
# the same instructions. With THREAD_PROG, the same for two threads
# (`thread_prog 2 N`, debug registers), for information.
set -euo pipefail

ptrev=${1:?usage: stepper_bench.sh PTREV BENCH_PROG [ITERATIONS] [THREAD_PROG] [ROUNDS]}
prog=${2:?usage: stepper_bench.sh PTREV BENCH_PROG [ITERATIONS] [THREAD_PROG] [ROUNDS]}
n=${3:-5000}
tprog=${4:-}
rounds=${5:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"

# record STEPPER NAME PROG ARGS... -> "instructions seconds rate"
record() {
	local stepper=$1 name=$2 t0 t1 insns secs
	shift 2
	# The program inherits the environment: one size for every stepper,
	# so that it runs the same instructions.
	local pad=xxxxxxxxxxxxxxxx
	t0=$(now)
	PTREV_SW_STEPPER=$stepper PTREV_BENCH_PAD=${pad:${#stepper}} \
		"$ptrev" record --backend sw -o "$tmp/$name.ptrev" -- "$@" >/dev/null 2>&1
	t1=$(now)
	insns=$("$ptrev" info "$tmp/$name.ptrev" | sed -n 's/^instructions: //p')
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "$insns $secs $(awk -v i="$insns" -v s="$secs" 'BEGIN { printf "%.0f", i / s }')"
}

# compare PROG ARGS...: best of $rounds per stepper into best_<stepper>
compare() {
	local label=$1
	shift
	declare -A best=() line=()
	for ((i = 0; i < rounds; i++)); do
		for s in insn block block-hw; do
			read -r insns secs rate < <(record "$s" "$label-$s" "$@")
			if [ -z "${best[$s]:-}" ] || [ "$rate" -gt "${best[$s]}" ]; then
				best[$s]=$rate
				line[$s]="$insns instructions in $secs s"
			fi
		done
	done
	# The same PT: the decoded instruction lists are identical (thread
	# ids aside).
	"$ptrev" decode "$tmp/$label-insn.ptrev" | sed 's/^\[thread [0-9]*\]/[thread]/' >"$tmp/insn.txt"
	for s in block block-hw; do
		"$ptrev" decode "$tmp/$label-$s.ptrev" | sed 's/^\[thread [0-9]*\]/[thread]/' >"$tmp/$s.txt"
		cmp -s "$tmp/insn.txt" "$tmp/$s.txt" ||
			{ echo "$label: $s and insn recordings decode differently"; exit 1; }
	done
	echo "program: $label ($*), best of $rounds"
	for s in insn block block-hw; do
		printf '  %-9s %s = %s insn/s\n' "$s:" "${line[$s]}" "${best[$s]}"
	done
	ratio=$(awk -v a="${best[block]}" -v b="${best[insn]}" 'BEGIN { printf "%.2f", a / b }')
	ratio_hw=$(awk -v a="${best[block-hw]}" -v b="${best[insn]}" 'BEGIN { printf "%.2f", a / b }')
	echo "  ratio block / insn:    $ratio (${best[block]} / ${best[insn]} insn/s)"
	echo "  ratio block-hw / insn: $ratio_hw (${best[block-hw]} / ${best[insn]} insn/s)"
}

compare bench_prog "$prog" "$n"
main_ratio=$ratio
if [ -n "$tprog" ]; then
	compare thread_prog "$tprog" 2 "$((n * 4))"
fi
awk -v r="$main_ratio" 'BEGIN { exit !(r >= 4) }' || { echo "ratio below 4"; exit 1; }
