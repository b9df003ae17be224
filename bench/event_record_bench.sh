#!/bin/bash
# The event backend against the native run of real programs, in the same
# script (not a timed test): wall time of `ptrev record --backend event`
# over the wall time of the program run natively with the same input.
#
#   bench/event_record_bench.sh PTREV [ROUNDS] [--history]
#
# Workloads (the issue's): gzip -c of a 1 MB file, sqlite3 running a
# 1,000-row script, python3 -c of a short script, sort of 10,000 lines,
# pigz -p 2 of 1 MB (skipped where pigz is not installed). Each figure is
# the best of ROUNDS interleaved runs (the machine is shared: the best run
# is the least disturbed). Prints native and recorded seconds beside their
# ratio (the goal is <= 3x). With --history, also the time `ptrev decode`
# takes to make each recording's history (re-executing it block by block)
# and the instructions it holds.
set -euo pipefail

ptrev=${1:?usage: event_record_bench.sh PTREV [ROUNDS] [--history]}
rounds=${2:-3}
history=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/timing.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
less() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# Inputs: the same bytes every run.
seq 1 170000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >"$tmp/1mb.txt"
head -c 1048576 "$tmp/1mb.txt" >"$tmp/in.txt"
awk 'BEGIN { for (i = 0; i < 10000; i++) print (i * 7919) % 10007, "row", i }' >"$tmp/10k.txt"
{
	echo 'create table t(id integer primary key, name text, v real);'
	echo 'begin;'
	for i in $(seq 1 1000); do echo "insert into t(name, v) values('row$i', $i * 1.5);"; done
	echo 'commit;'
	echo 'select count(*), sum(v), max(name) from t;'
} >"$tmp/rows.sql"
py=/usr/bin/python3
script='import json; d={str(i): [i*i, str(i)] for i in range(20000)}; print(len(json.dumps(d)))'

# workload NAME: the command line, reading its input from a file.
run_native() {
	case $1 in
	gzip) gzip -c "$tmp/in.txt" ;;
	sqlite3) sqlite3 :memory: <"$tmp/rows.sql" ;;
	python3) "$py" -c "$script" ;;
	sort) sort "$tmp/10k.txt" ;;
	pigz) pigz -p 2 -c "$tmp/in.txt" ;;
	esac
}
run_recorded() {
	local out=$2
	case $1 in
	gzip) "$ptrev" record --backend event -o "$out" -- gzip -c "$tmp/in.txt" ;;
	sqlite3) "$ptrev" record --backend event -o "$out" -- sqlite3 :memory: <"$tmp/rows.sql" ;;
	python3) "$ptrev" record --backend event -o "$out" -- "$py" -c "$script" ;;
	sort) "$ptrev" record --backend event -o "$out" -- sort "$tmp/10k.txt" ;;
	pigz) "$ptrev" record --backend event -o "$out" -- pigz -p 2 -c "$tmp/in.txt" ;;
	esac
}

printf '%-8s %10s %10s %8s\n' program native_s record_s ratio
for w in gzip sqlite3 python3 sort pigz; do
	if [ "$w" = pigz ] && ! command -v pigz >/dev/null; then
		echo "pigz     (not installed: skipped)"
		continue
	fi
	best_n=999 best_r=999
	for r in $(seq 1 "$rounds"); do
		t0=$(now); run_native "$w" >"$tmp/native.out" 2>/dev/null; t1=$(now)
		n=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		less "$n" "$best_n" && best_n=$n
		t0=$(now); run_recorded "$w" "$tmp/$w.ptrev" >"$tmp/rec.out" 2>"$tmp/rec.err"; t1=$(now)
		n=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		less "$n" "$best_r" && best_r=$n
		# The recorded run must do what the native one did.
		cmp -s "$tmp/native.out" "$tmp/rec.out" ||
			{ echo "$w: the recorded run's output differs from the native run's" >&2; exit 1; }
	done
	printf '%-8s %10.4f %10.4f %7sx\n' "$w" "$best_n" "$best_r" "$(ratio "$best_r" "$best_n")"
done

if [ "$history" = --history ]; then
	echo
	printf '%-8s %12s %10s %12s\n' program instructions history_s insn/s
	for w in gzip sqlite3 python3 sort pigz; do
		[ -f "$tmp/$w.ptrev" ] || continue
		t0=$(now)
		if ! "$ptrev" decode "$tmp/$w.ptrev" >"$tmp/decode.txt" 2>"$tmp/decode.err"; then
			printf '%-8s %s\n' "$w" "history not made: $(tail -1 "$tmp/decode.err")"
			continue
		fi
		t1=$(now)
		insns=$(grep -c '^[0-9a-f]\{16\}$' "$tmp/decode.txt" || true)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		printf '%-8s %12s %10.2f %12s\n' "$w" "$insns" "$secs" \
			"$(awk -v a="$insns" -v b="$secs" 'BEGIN { printf "%.0f", a / b }')"
	done
fi
