#!/bin/bash
# The first reverse moves at the end of event recordings of real programs,
# as a user meets them: `target remote | ptrev replay --stdio` (the end
# shown), then reverse-stepi, reverse-stepi, reverse-next, each timed in
# gdb, beside the program's own native run in the same script (ratios
# against it, absolute figures beside). Programs: sort -n of LINES
# shuffled numbers, python3 -S -c (json of small lists), and dd of BLOCKS
# one-byte blocks (a syscall per byte: what the native replays cost).
# With BASE_PTREV the same moves on the same recordings by that build too
# (an earlier one), in turn with this one.
#
#   bench/first_move_bench.sh PTREV [LINES] [BLOCKS] [BASE_PTREV]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: first_move_bench.sh PTREV [LINES] [BLOCKS] [BASE_PTREV]}
lines=${2:-20000}
blocks=${3:-30000}
base=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python=$(command -v python3)
seq 1 "$lines" | awk 'BEGIN { srand(1) } { print rand() "\t" $0 }' | sort | cut -f2 \
	>"$tmp/nums.txt"

# moves PTREV TRACE PROG: the seconds of each move, one line each.
moves() {
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $1 replay --stdio $2')
for what in ('reverse-stepi', 'reverse-stepi-again', 'reverse-next'):
    timed(what, what.replace('-again', ''))
end
GDB
	gdb -nx -batch -x "$tmp/m.gdb" "$3" 2>&1 | awk '$1 == "T" { print $2, $3 }'
}

run() { # NAME PROG ARGV...
	local name=$1 prog=$2
	shift 2
	local n
	n=$(best_of 3 "$tmp/nums.txt" "$@")
	"$ptrev" record --force -o "$tmp/$name.ptrev" -- "$@" <"$tmp/nums.txt" >/dev/null 2>&1 || true
	echo "$name (native run $n s):"
	for who in this ${base:+base}; do
		local p=$ptrev
		[ "$who" = base ] && p=$base
		moves "$p" "$tmp/$name.ptrev" "$prog" | while read -r what s; do
			printf '  %-5s %-20s %7.2f s  %9.0fx native\n' "$who" "$what" "$s" \
				"$(awk -v a="$s" -v b="$n" 'BEGIN { print (b > 0 ? a / b : 0) }')"
		done
	done
}

run sort "$(command -v sort)" "$(command -v sort)" -n
run python3 "$python" "$python" -S -c \
	'import json; print(sum(len(json.dumps(list(range(i)))) for i in range(300)))'
run dd "$(command -v dd)" "$(command -v dd)" if=/dev/zero of=/dev/null bs=1 count="$blocks"
