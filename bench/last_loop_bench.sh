#!/bin/bash
# A recording that ends with a long computation: last_loop (the test
# program) of PASSES passes of one loop with no call and no syscall, then
# its output. In gdb: break write, reverse-continue from the end (the
# first move: the history of the tail), reverse-finish twice (out of
# report() and of its call in main), then reverse-stepi into the loop's
# last passes (the whole history, then the replayer's run to there) and a
# reverse-next and stepi there. Each move timed with what this ptrev does
# (the tail begins where the loop is left; the whole history's replayer
# starts from the copies its making left on the way) and with neither
# (PTREV_TAIL_SPLIT=0, the tail begins with the loop's stretch;
# PTREV_HISTORY_CHECKPOINTS=0, the replayer starts from the program's
# start: the reference), in the same script; the program's native run
# beside them. Histories are made only when a move needs them
# (PTREV_BACKGROUND_HISTORY=0).
#
#   bench/last_loop_bench.sh PTREV LAST_LOOP [PASSES]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: last_loop_bench.sh PTREV LAST_LOOP [PASSES]}
prog=${2:?usage: last_loop_bench.sh PTREV LAST_LOOP [PASSES]}
passes=${3:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

moves() { # VAR=VALUE...: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $ptrev replay --stdio $tmp/ll.ptrev')
gdb.execute('break write', to_string=True)
timed('reverse-continue', 'reverse-continue')
timed('reverse-finish-1', 'reverse-finish')
timed('reverse-finish-2', 'reverse-finish')
timed('reverse-stepi-30', 'reverse-stepi 30')
timed('reverse-next', 'reverse-next')
timed('stepi', 'stepi')
end
GDB
	gdb_moves "$tmp/m.gdb" "$prog" "$@"
}

"$ptrev" record -o "$tmp/ll.ptrev" -- "$prog" "$passes" >/dev/null 2>&1 || true
nat=$(best_of 3 /dev/null "$prog" "$passes")
printf 'last_loop of %d passes: native %.4f s\n' "$passes" "$nat"
moves PTREV_TAIL_SPLIT=0 PTREV_HISTORY_CHECKPOINTS=0 >"$tmp/base"
moves >"$tmp/new"
ratio_table "$tmp/base" "$tmp/new" 'now (s)' 'reference (s)'
