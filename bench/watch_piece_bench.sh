#!/bin/bash
# A write watchpoint going back: watch_writes (a test program) of ROUNDS
# rounds, each writing its watched byte (by a store in even rounds, by a
# read() in odd ones) and then computing PASSES passes (one stretch of the
# recording, about 8 instructions a pass). In gdb: watch cell[0], then
# reverse-continue from the end through every round's write, then a
# reverse-stepi. Each move timed with pieces of the history for
# watchpoints (the default: the history of the write's stretch alone, up
# to the store; a read()'s event and the stretch after it), and with
# longer tails to the recording's end (PTREV_WATCH_PIECES=0, the
# reference), in the same script; the program's native run beside them.
# Histories are made only when a move needs them
# (PTREV_BACKGROUND_HISTORY=0).
#
#   bench/watch_piece_bench.sh PTREV WATCH_WRITES [ROUNDS] [PASSES]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

usage='usage: watch_piece_bench.sh PTREV WATCH_WRITES [ROUNDS] [PASSES]'
ptrev=${1:?$usage}
prog=${2:?$usage}
rounds=${3:-6}
passes=${4:-400000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

moves() { # WATCH_PIECES: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $ptrev replay --stdio $tmp/ww.ptrev')
gdb.execute('watch cell[0]', to_string=True)
for i in range(1, $rounds + 1):
    timed('reverse-continue-%d' % i, 'reverse-continue')
timed('reverse-stepi', 'reverse-stepi')
end
GDB
	gdb_moves "$tmp/m.gdb" "$prog" PTREV_WATCH_PIECES="$1"
}

"$ptrev" record -o "$tmp/ww.ptrev" -- "$prog" "$rounds" "$passes" >/dev/null 2>&1
nat=$(best_of 3 /dev/null "$prog" "$rounds" "$passes")
printf 'watch_writes %d rounds of %d passes: native %.4f s\n' "$rounds" "$passes" "$nat"
moves 0 >"$tmp/base"
moves '' >"$tmp/new"
ratio_table "$tmp/base" "$tmp/new" 'pieces (s)' 'tails (s)'
