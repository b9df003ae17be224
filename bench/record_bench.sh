#!/bin/bash
# Recording benchmark (not a timed test): the sw backend against gdb's own
# `record full` on the same program, in the same script.
#
#   bench/record_bench.sh PTREV BENCH_PROG [ITERATIONS]
#
# Prints for each recorder the instructions recorded and the throughput
# (instructions/s), the ratio sw / gdb (the goal is >= 2), the sw trace's
# bits per instruction and the decode throughput of the recording.
# gdb records from main to bench_end() (its `record full` cannot start
# earlier); ptrev records the whole program, start-up included. Both rates
# are instructions per second of recording, so they compare directly.
set -euo pipefail

ptrev=${1:?usage: record_bench.sh PTREV BENCH_PROG [ITERATIONS]}
prog=${2:?usage: record_bench.sh PTREV BENCH_PROG [ITERATIONS]}
n=${3:-5000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"
rate() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b > 0 ? a / b : 0) }'; }

# --- ptrev record --backend sw ---
t0=$(now)
"$ptrev" record --backend sw -o "$tmp/b.ptrev" -- "$prog" "$n" >/dev/null
t1=$(now)
"$ptrev" decode "$tmp/b.ptrev" >"$tmp/decode.txt"
t2=$(now)
sw_insns=$(grep -c '^[0-9a-f]\{16\}$' "$tmp/decode.txt")
sw_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
dec_secs=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.3f", b - a }')
bits=$("$ptrev" info "$tmp/b.ptrev" 2>/dev/null | sed -n 's/^bits per instruction: //p' || true)
trace_bytes=$("$ptrev" info "$tmp/b.ptrev" 2>/dev/null | sed -n 's/^trace bytes: //p' || true)

# --- gdb record full (AVX off in glibc: record full cannot record it) ---
cat >"$tmp/g.gdb" <<GDB
set pagination off
set confirm off
break main
run $n >/dev/null
record full
set record full insn-number-max unlimited
break bench_end
python import time; t0 = time.time()
continue
python print("GDB_SECONDS %.3f" % (time.time() - t0))
info record
kill
quit
GDB
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD,-EVEX,-AVX2,-AVX \
	gdb -batch -nx -x "$tmp/g.gdb" "$prog" >"$tmp/gdb.txt" 2>&1 || true
gdb_secs=$(sed -n 's/^GDB_SECONDS //p' "$tmp/gdb.txt")
gdb_insns=$(sed -n 's/^Log contains \([0-9]*\) instructions.*/\1/p' "$tmp/gdb.txt")
if [ -z "$gdb_secs" ] || [ -z "$gdb_insns" ]; then
	echo "gdb record full did not run:"; cat "$tmp/gdb.txt"; exit 1
fi

sw_rate=$(rate "$sw_insns" "$sw_secs")
gdb_rate=$(rate "$gdb_insns" "$gdb_secs")
ratio=$(awk -v a="$sw_rate" -v b="$gdb_rate" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "program: $prog $n"
echo "sw record:        $sw_insns instructions in $sw_secs s = $sw_rate insn/s"
echo "gdb record full:  $gdb_insns instructions in $gdb_secs s = $gdb_rate insn/s"
echo "ratio sw / gdb:   $ratio (goal >= 2)"
echo "trace bytes:      ${trace_bytes:-unknown}"
echo "bits/instruction: ${bits:-unknown}"
echo "decode:           $sw_insns instructions in $dec_secs s = $(rate "$sw_insns" "$dec_secs") insn/s"
awk -v r="$ratio" 'BEGIN { exit !(r >= 2) }' || { echo "ratio below 2"; exit 1; }
