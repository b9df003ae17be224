#!/bin/bash
# Recording benchmark for threads (not a timed test): the same work done by
# one thread and by two, recorded with the sw backend in the same script.
# The recorder runs one thread's instructions at a time and logs the order
# (SCHED runs), so two threads should record about as fast as one; the
# ratio two/one, the thread switches and the bits per instruction show what
# the order costs.
#
#   bench/thread_record_bench.sh PTREV THREAD_PROG [ITERATIONS]
set -euo pipefail

ptrev=${1:?usage: thread_record_bench.sh PTREV THREAD_PROG [ITERATIONS]}
prog=${2:?usage: thread_record_bench.sh PTREV THREAD_PROG [ITERATIONS]}
n=${3:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"

run() { # THREADS ITERATIONS_EACH -> "insns secs rate switches bits"
	local t0 t1 insns secs
	t0=$(now)
	"$ptrev" record --backend sw -o "$tmp/t$1.ptrev" -- "$prog" "$1" "$2" >/dev/null 2>&1
	t1=$(now)
	"$ptrev" info "$tmp/t$1.ptrev" >"$tmp/i$1.txt" 2>/dev/null
	insns=$(sed -n 's/^instructions: //p' "$tmp/i$1.txt")
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "$insns $secs $(awk -v i="$insns" -v s="$secs" 'BEGIN { printf "%.0f", i / s }')" \
	     "$(sed -n 's/^thread switches: //p' "$tmp/i$1.txt")" \
	     "$(sed -n 's/^bits per instruction: //p' "$tmp/i$1.txt")"
}

read -r i1 s1 r1 w1 b1 < <(run 1 $((2 * n)))
read -r i2 s2 r2 w2 b2 < <(run 2 "$n")
echo "one thread:  $i1 instructions in $s1 s = $r1 insn/s, $b1 bits/insn"
echo "two threads: $i2 instructions in $s2 s = $r2 insn/s, $b2 bits/insn, $w2 thread switches"
awk -v a="$r2" -v b="$r1" 'BEGIN { printf "ratio two/one threads: %.2f\n", a / b }'
