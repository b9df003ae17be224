# Wall-clock helpers the bench scripts share: `. "$(dirname "$0")/timing.sh"`.

now() { date +%s.%N; }

# best_of N INPUT CMD...: the shortest wall time of N runs of CMD, each
# reading INPUT (a file: every run reads it whole) with its output
# dropped and its status ignored, in seconds. The best of several, as the
# machines are noisy and a run is never faster than it can be.
best_of() {
	local n=$1 input=$2 best= t0 t1
	shift 2
	for _ in $(seq "$n"); do
		t0=$(now)
		"$@" <"$input" >/dev/null 2>&1 || true
		t1=$(now)
		best=$(awk -v a="$t0" -v b="$t1" -v c="$best" \
			'BEGIN { d = b - a; print (c == "" || d < c) ? d : c }')
	done
	echo "$best"
}

# gdb_timed: the start of a gdb script (pagination off, then Python) that
# defines timed(WHAT, CMD): CMD run, and `T WHAT SECONDS` printed. The
# caller's lines go on in Python and end with `end`.
gdb_timed() {
	cat <<'GDB'
set pagination off
python
import time
def timed(what, cmd):
    t0 = time.time()
    gdb.execute(cmd, to_string=True)
    print('T %s %.3f' % (what, time.time() - t0))
GDB
}

# gdb_moves SCRIPT PROG [VAR=VALUE...]: gdb -batch running SCRIPT (begun
# with gdb_timed) on PROG, with the variables set and histories made only
# when a move needs them (PTREV_BACKGROUND_HISTORY=0): one line per timed
# move, its name and seconds; gdb's errors and ptrev's `cannot` lines on
# stderr.
gdb_moves() {
	local script=$1 prog=$2 out
	shift 2
	out=$(mktemp)
	env PTREV_BACKGROUND_HISTORY=0 "$@" gdb -nx -batch -x "$script" "$prog" >"$out" 2>&1 || true
	awk '$1 == "T" { print $2, $3 }' "$out"
	grep -E '^(Python Exception|Error|ptrev: cannot)' "$out" >&2 || true
	rm -f "$out"
}

# ratio_table BASE NEW NEW_TITLE BASE_TITLE: the moves NEW timed (gdb_moves'
# lines) with BASE's beside them and NEW's time over BASE's.
ratio_table() {
	printf '%-20s %14s %16s %10s\n' move "$3" "$4" ratio
	awk 'NR == FNR { b[$1] = $2; next }
		{ printf "%-20s %14.3f", $1, $2
		  if ($1 in b) printf " %16.3f %10.3f", b[$1], (b[$1] > 0 ? $2 / b[$1] : 0)
		  printf "\n" }' "$1" "$2"
}
