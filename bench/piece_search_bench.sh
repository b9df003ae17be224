#!/bin/bash
# Going back to a program's start and forwards again through an event
# recording whose whole history is long: perl summing N squares (one
# stretch of some 380 instructions a square, no syscall in it) and
# writing the sum to a file and "done" to stdout. In gdb: break write,
# reverse-continue to each write and on to the program's start (no hit
# before it), then continue to each write again, each move timed, beside
# the program's own native run in the same script (ratios against it,
# absolute figures beside). Histories are made only when a move needs
# them (PTREV_BACKGROUND_HISTORY=0): what each move costs by itself. With
# BASE_PTREV the same moves on the same recording by that build too (an
# earlier one), in turn with this one.
#
# Then pigz -p 2 of KB kilobytes (where installed; a multi-threaded
# recording, whose history has no pieces but the program's start):
# reverse-continue from the end to the program's start, timed the same way.
#
#   bench/piece_search_bench.sh PTREV [N] [BASE_PTREV] [KB]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: piece_search_bench.sh PTREV [N] [BASE_PTREV]}
n=${2:-200000}
base=${3:-}
kb=${4:-512}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
script="my \$s = 0; for my \$i (1..$n) { \$s += \$i * \$i } open(F, '>', '$tmp/sum.txt');
print F \"\$s\\n\"; close F; print \"done\\n\""

moves() { # PTREV: one line per move, its name and seconds
	{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
timed('open', 'target remote | $1 replay --stdio $tmp/perl.ptrev')
gdb.execute('break write', to_string=True)
for what in ('reverse-continue-1', 'reverse-continue-2', 'reverse-continue-3',
             'continue-1', 'continue-2'):
    timed(what, what.split('-')[0] if what.startswith('continue') else 'reverse-continue')
end
GDB
	PTREV_BACKGROUND_HISTORY=0 gdb -nx -batch -x "$tmp/m.gdb" "$(command -v perl)" \
		>"$tmp/gdb.out" 2>&1 || true
	awk '$1 == "T" { print $2, $3 }' "$tmp/gdb.out"
	grep -E '^(Python Exception|Error|ptrev: cannot)' "$tmp/gdb.out" >&2 || true
}

"$ptrev" record -o "$tmp/perl.ptrev" -- perl -e "$script" >/dev/null 2>&1
nat=$(best_of 3 /dev/null perl -e "$script")
printf 'perl summing %d squares: native %.4f s\n' "$n" "$nat"
moves "$ptrev" >"$tmp/new"
if [ -n "$base" ]; then
	moves "$base" >"$tmp/base"
else
	: >"$tmp/base"
fi
printf '%-20s %12s %14s %12s %14s\n' move 'this (s)' 'x native' 'base (s)' 'this/base'
awk -v nat="$nat" 'NR == FNR { b[$1] = $2; next }
	{ printf "%-20s %12.3f %14.0f", $1, $2, $2 / nat
	  if ($1 in b) printf " %12.3f %14.3f", b[$1], (b[$1] > 0 ? $2 / b[$1] : 0)
	  printf "\n" }' "$tmp/base" "$tmp/new"

# The same for pigz: one move, back to the start from the end.
pigz=$(command -v pigz || true)
[ -n "$pigz" ] || { echo 'pigz: not installed'; exit 0; }
head -c $((kb * 1024)) /dev/urandom | base64 >"$tmp/in.txt"
"$ptrev" record -o "$tmp/pigz.ptrev" -- "$pigz" -p 2 -c "$tmp/in.txt" >/dev/null 2>&1
t0=$(date +%s.%N)
"$pigz" -p 2 -c "$tmp/in.txt" >/dev/null
pnat=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
pmove() { # PTREV: seconds of the reverse-continue to the start
	cat >"$tmp/p.gdb" <<GDB
set pagination off
python
import time
gdb.execute('target remote | $1 replay --stdio $tmp/pigz.ptrev', to_string=True)
t0 = time.time()
gdb.execute('reverse-continue', to_string=True)
print('T reverse-continue %.3f' % (time.time() - t0))
end
GDB
	PTREV_BACKGROUND_HISTORY=0 gdb -nx -batch -x "$tmp/p.gdb" "$pigz" 2>&1 |
		awk '$1 == "T" { print $3 }'
}
pnew=$(pmove "$ptrev")
pbase=$([ -n "$base" ] && pmove "$base" || echo)
printf 'pigz -p 2 of %d KB: native %.4f s; reverse-continue to the start: %s s (x%.0f native)' \
	"$kb" "$pnat" "$pnew" "$(awk -v a="$pnew" -v b="$pnat" 'BEGIN { print a / b }')"
[ -n "$pbase" ] && printf ', base %s s (this/base %.3f)' "$pbase" \
	"$(awk -v a="$pnew" -v b="$pbase" 'BEGIN { print a / b }')"
printf '\n'
