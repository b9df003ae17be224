#!/bin/bash
# How long the first reverse moves at the end of a long event recording
# take now that the history of its tail is made first (issue 11's latency
# goals: connect + bt at the end, reverse-stepi, each <= 2 s on a
# recording of >= 10^8 instructions), and the first reverse-stepi against
# the whole history made at that move (PTREV_TAIL_HISTORY=0
# PTREV_BACKGROUND_HISTORY=0) on a shorter recording of the same program,
# in the same script (not a timed test).
#
#   bench/tail_history_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERATIONS] [SHORT_ROUNDS]
#                               [SPLIT_ITERATIONS]
#
# TAIL_WORK is tests/programs/tail_work: ROUNDS rounds (default 400) of
# ITERATIONS loop iterations (default 50,000; about 5 instructions each),
# each ended by a write. The short recording has SHORT_ROUNDS rounds
# (default 12), whose whole history ptrev makes; its instruction count
# gives the long one's (rounds are alike). Last, a tail inside one long
# stretch: a recording of 2 rounds of SPLIT_ITERATIONS (default
# 1,000,000), whose last round is one stretch of about a millisecond; its
# first reverse-stepi with the tail begun inside that stretch (the
# default) against the tail of the whole stretch (PTREV_TAIL_SPLIT=0).
# And three reverse-continues to round_done from the end, two of them
# past the tail's start: the whole history made at the first against the
# tail that begins with the last hit's stretch (found natively), on the
# short recording; on the long one with the tail only.
# (tail_work's exit status is its total's low bit: not a failure.)
set -euo pipefail

ptrev=${1:?usage: tail_history_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERATIONS] [SHORT_ROUNDS]}
prog=${2:?usage: tail_history_bench.sh PTREV TAIL_WORK [ROUNDS] [ITERATIONS] [SHORT_ROUNDS]}
rounds=${3:-400}
iters=${4:-50000}
short=${5:-12}
split_iters=${6:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$prog" "$tmp/tail_work"

# session TRACE: seconds of each step, measured inside gdb.
session() {
	cat >"$tmp/s.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
def timed(what, cmd):
    t0 = time.time()
    said = gdb.execute(cmd, to_string=True)
    print('T %s %.3f' % (what, time.time() - t0))
    return said
said = timed('connect+bt', 'target remote | $ptrev replay --stdio $1')
said += timed('connect+bt', 'bt')
said += timed('reverse-stepi', 'reverse-stepi')
said += timed('reverse-stepi-again', 'reverse-stepi')
said += timed('reverse-next', 'reverse-next')
print('\\n'.join('M ' + l for l in said.splitlines() if 'history' in l and 'ptrev:' in l))
end
GDB
	gdb -nx -batch -x "$tmp/s.gdb" "$tmp/tail_work" 2>&1
}

# session_back TRACE: three reverse-continues to round_done from the end
# (the first in the tail, the others past its start), timed in gdb.
session_back() {
	cat >"$tmp/b.gdb" <<GDB
set pagination off
set remotetimeout 900
python
import time
def timed(what, cmd):
    t0 = time.time()
    said = gdb.execute(cmd, to_string=True)
    print('T %s %.3f' % (what, time.time() - t0))
    return said
said = timed('connect', 'target remote | $ptrev replay --stdio $1')
gdb.execute('break round_done', to_string=True)
for i in range(3):
    said += timed('reverse-continue', 'reverse-continue')
said += timed('reverse-continue', 'print round')
print('\n'.join('M ' + l for l in said.splitlines() if ('history' in l and 'ptrev:' in l)
                 or l.startswith('\$')))
end
GDB
	gdb -nx -batch -x "$tmp/b.gdb" "$tmp/tail_work" 2>&1
}

sum() { awk -v k="$1" '$1 == "T" && $2 == k { s += $3 } END { printf "%.3f", s }'; }

"$ptrev" record --backend event --force -o "$tmp/short.ptrev" -- "$tmp/tail_work" "$short" \
	"$iters" >/dev/null || true
"$ptrev" record --backend event --force -o "$tmp/long.ptrev" -- "$tmp/tail_work" "$rounds" \
	"$iters" >/dev/null || true
"$ptrev" record --backend event --force -o "$tmp/split.ptrev" -- "$tmp/tail_work" 2 \
	"$split_iters" >/dev/null || true

whole=$(PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0 session "$tmp/short.ptrev")
tail_short=$(session "$tmp/short.ptrev")
tail_long=$(session "$tmp/long.ptrev")
made=$(sed -n 's/.*history made: \([0-9]*\) instructions.*/\1/p' <<<"$whole" | head -1)
long_insns=$(awk -v m="${made:-0}" -v s="$short" -v r="$rounds" 'BEGIN { printf "%.3g", m / s * r }')

w=$(sum reverse-stepi <<<"$whole")
t=$(sum reverse-stepi <<<"$tail_short")
echo "tail_work, $iters iterations a round:"
echo "  $short rounds (${made:-?} instructions), first reverse-stepi:"
echo "    whole history made at the move: $w s"
echo "    tail made first:                $t s"
echo "    ratio tail/whole: $(awk -v a="$t" -v b="$w" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
echo "  $rounds rounds (about $long_insns instructions), tail made first:"
for k in connect+bt reverse-stepi reverse-stepi-again reverse-next; do
	printf '    %-20s %s s\n' "$k" "$(sum "$k" <<<"$tail_long")"
done
sed -n 's/^M ptrev: /    ptrev: /p' <<<"$tail_long"

unsplit=$(PTREV_TAIL_SPLIT=0 PTREV_BACKGROUND_HISTORY=0 session "$tmp/split.ptrev")
split=$(PTREV_BACKGROUND_HISTORY=0 session "$tmp/split.ptrev")
u=$(sum reverse-stepi <<<"$unsplit")
s=$(sum reverse-stepi <<<"$split")
echo "  2 rounds of $split_iters iterations, first reverse-stepi:"
echo "    tail of the whole last stretch:   $u s"
echo "    tail begun inside it:             $s s"
echo "    ratio inside/whole stretch: $(awk -v a="$s" -v b="$u" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
sed -n 's/^M ptrev: /    ptrev: /p' <<<"$unsplit$(printf '\n')$split"

wback=$(PTREV_TAIL_HISTORY=0 PTREV_BACKGROUND_HISTORY=0 session_back "$tmp/short.ptrev")
tback=$(PTREV_BACKGROUND_HISTORY=0 session_back "$tmp/short.ptrev")
lback=$(PTREV_BACKGROUND_HISTORY=0 session_back "$tmp/long.ptrev")
w=$(sum reverse-continue <<<"$wback")
t=$(sum reverse-continue <<<"$tback")
echo "  three reverse-continues to round_done from the end (past the tail's start):"
echo "    $short rounds, whole history made at the first: $w s"
echo "    $short rounds, tail, then the one from the last hit: $t s"
echo "    ratio: $(awk -v a="$t" -v b="$w" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"
echo "    $rounds rounds, tail, then the one from the last hit: $(sum reverse-continue <<<"$lback") s"
sed -n 's/^M ptrev: /    ptrev: /p' <<<"$lback"
