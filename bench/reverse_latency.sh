#!/bin/sh
# Reverse-command latency through gdb, with full state, at the end of a
# recorded history, against decoding the whole history once (same script,
# same machine). usage: reverse_latency.sh PTREV BENCH_PROG LOOPS
set -eu
ptrev=$1 prog=$2 loops=${3:-20000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ptrev" record -o "$work/r.ptrev" -- "$prog" "$loops" >/dev/null 2>&1 || true
n=$("$ptrev" info "$work/r.ptrev" | sed -n 's/^instructions: //p')
t0=$(date +%s.%N)
"$ptrev" decode "$work/r.ptrev" >/dev/null
t1=$(date +%s.%N)
decode=$(echo "$t1 - $t0" | bc)
set -- -nx -batch -ex "target remote | $ptrev replay --stdio $work/r.ptrev" -ex 'break main' -ex 'python import time'
for c in reverse-stepi reverse-stepi reverse-stepi reverse-next reverse-next reverse-continue; do
	set -- "$@" -ex "python t=time.time(); gdb.execute('$c', to_string=True); print('T $c %.4f' % (time.time()-t))"
done
echo "history: $n instructions; full decode $decode s"
gdb "$@" "$prog" 2>&1 | awk -v d="$decode" '/^T / { printf "%-18s %.4f s = %.3f of a full decode\n", $2, $3, $3 / d }'
