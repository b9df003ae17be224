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
