#!/bin/bash
# Breakpoint hits in the middle of long stretches: tail_work (the test
# program) of ROUNDS rounds of ITERS passes each, fold called every 256
# passes, a round's computation one stretch of about 17 instructions a
# pass. In gdb: break round_done, reverse-continue twice from the end (to
# the start of the last round but one), then break fold there,
# reverse-continue three times (into the round before), a reverse-stepi,
# then continue three times (the third into the next round); then a
# breakpoint at the snprintf after a round's loop, hit once late in each
# round's stretch, and reverse-continue to it and reverse-next. Each move
# timed, with pieces that begin at the hit before and continues that make
# only the way to the next hit (the default; a piece with no hit before
# it near its end begins about a first tail's run before it), and with
# pieces from the stretch's start and continues that make the next hit's
# stretch whole (PTREV_HIT_NEAR=0, the reference), in the same script;
# the program's native run beside them. Histories are made only when a
# move needs them (PTREV_BACKGROUND_HISTORY=0).
#
#   bench/hit_near_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: hit_near_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
prog=${2:?usage: hit_near_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
rounds=${3:-4}
iters=${4:-400000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

moves() { # HIT_NEAR: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $ptrev replay --stdio $tmp/tw.ptrev')
gdb.execute('break round_done', to_string=True)
for i in (1, 2):
    timed('to-round_done-%d' % i, 'reverse-continue')
gdb.execute('delete', to_string=True)
gdb.execute('break fold', to_string=True)
for i in (1, 2, 3):
    timed('reverse-continue-%d' % i, 'reverse-continue')
timed('reverse-stepi', 'reverse-stepi')
for i in (1, 2, 3):
    timed('continue-%d' % i, 'continue')
gdb.execute('delete', to_string=True)
gdb.execute('break tail_work.c:38', to_string=True)
timed('to-snprintf', 'reverse-continue')
timed('reverse-next', 'reverse-next')
end
GDB
	gdb_moves "$tmp/m.gdb" "$prog" PTREV_HIT_NEAR="$1"
}

"$ptrev" record -o "$tmp/tw.ptrev" -- "$prog" "$rounds" "$iters" >/dev/null 2>&1 || true
nat=$(best_of 3 /dev/null "$prog" "$rounds" "$iters")
printf 'tail_work %d rounds of %d passes: native %.4f s\n' "$rounds" "$iters" "$nat"
moves 0 >"$tmp/base"
moves '' >"$tmp/new"
ratio_table "$tmp/base" "$tmp/new" 'near (s)' 'whole stretch (s)'
