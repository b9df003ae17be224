#!/bin/bash
# Going back to breakpoint hits early in long stretches: tail_work (the
# test program) of ROUNDS rounds of ITERS passes each, every round a
# computation of about 8 instructions a pass ended by a write, and
# round_done called right after that write. In gdb: break round_done,
# reverse-continue three times from the end (the last round's hit lies in
# the first tail; each earlier one at the start of a round's stretch),
# then a stepi past the hit. Each move timed, with pieces that end at
# the hit (the default) and with pieces of the hit's whole stretch
# (PTREV_HIT_POINT=0, the reference), in the same script; the program's
# native run beside them. Histories are made only when a move needs them
# (PTREV_BACKGROUND_HISTORY=0).
#
#   bench/hit_piece_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: hit_piece_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
prog=${2:?usage: hit_piece_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
rounds=${3:-4}
iters=${4:-400000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

moves() { # HIT_POINT: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $ptrev replay --stdio $tmp/tw.ptrev')
gdb.execute('break round_done', to_string=True)
for i in (1, 2, 3):
    timed('reverse-continue-%d' % i, 'reverse-continue')
timed('stepi', 'stepi')
end
GDB
	gdb_moves "$tmp/m.gdb" "$prog" PTREV_HIT_POINT="$1"
}

"$ptrev" record -o "$tmp/tw.ptrev" -- "$prog" "$rounds" "$iters" >/dev/null 2>&1 || true
nat=$(best_of 3 /dev/null "$prog" "$rounds" "$iters")
printf 'tail_work %d rounds of %d passes: native %.4f s\n' "$rounds" "$iters" "$nat"
moves 0 >"$tmp/base"
moves '' >"$tmp/new"
ratio_table "$tmp/base" "$tmp/new" 'to hit (s)' 'whole stretch (s)'
