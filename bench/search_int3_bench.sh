#!/bin/bash
# Native searches for breakpoint hits where the debug registers do not
# trap (replay/event_soft.c: int3s in the code while a thread runs).
# tail_work (the test program) of ROUNDS rounds of ITERS passes each, fold
# called every 256 passes: a postmortem session goes back to fold's last
# hit, three more back, two on, then to round_done twice back and once on;
# each move timed with the debug registers taken for dead
# (PTREV_DEBUG_REGISTERS=0: int3s), and, the reference in the same
# script, with the whole history made at the first move by stepping
# (PTREV_TAIL_HISTORY=0: what such a machine did before, the search being
# refused there); where the registers trap, also with them. The program's
# native run beside them. Histories are made only when a move needs them.
#
#   bench/search_int3_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: search_int3_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
prog=${2:?usage: search_int3_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERS]}
rounds=${3:-4}
iters=${4:-400000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

moves() { # VAR=VALUE...: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $ptrev replay --stdio $tmp/tw.ptrev')
gdb.execute('break fold', to_string=True)
timed('to-last-fold', 'reverse-continue')
for i in (1, 2, 3):
    timed('reverse-continue-%d' % i, 'reverse-continue')
for i in (1, 2):
    timed('continue-%d' % i, 'continue')
gdb.execute('delete', to_string=True)
gdb.execute('break round_done', to_string=True)
for i in (1, 2):
    timed('to-round_done-%d' % i, 'reverse-continue')
timed('on-round_done', 'continue')
end
GDB
	gdb_moves "$tmp/m.gdb" "$prog" "$@"
}

"$ptrev" record -o "$tmp/tw.ptrev" -- "$prog" "$rounds" "$iters" >/dev/null 2>&1 || true
nat=$(best_of 3 /dev/null "$prog" "$rounds" "$iters")
printf 'tail_work %d rounds of %d passes: native %.4f s\n' "$rounds" "$iters" "$nat"
"$ptrev" info --machine | grep '^debug registers'
moves PTREV_TAIL_HISTORY=0 >"$tmp/base"
moves PTREV_DEBUG_REGISTERS=0 >"$tmp/new"
ratio_table "$tmp/base" "$tmp/new" 'int3 (s)' 'stepped (s)'
if "$ptrev" info --machine | grep -q '^debug registers: trap'; then
	moves >"$tmp/regs"
	echo
	ratio_table "$tmp/regs" "$tmp/new" 'int3 (s)' 'registers (s)'
fi
