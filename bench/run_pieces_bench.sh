#!/bin/bash
# Going back to breakpoint hits in a multi-threaded event recording: pigz
# -p 2 compressing BYTES of text (a writer thread and two compressing
# workers), opened in gdb with `break write`, then four moves timed
# inside gdb: a reverse-continue from the end to the last write, two more
# to the writes before it (the third far back: most of the compression
# lies between), and a continue back to the second. Each hit's run of the
# recorded thread order is found natively; the history made is that run
# alone (a piece), where PTREV_RUN_PIECES=0, the reference run in the
# same script, makes the tail from that run to the recording's end.
# Figures: seconds per move for both and their ratio (each move's name
# says the size of the write it stopped at: the same in both, or the
# rows do not pair), and the native run.
#
#   bench/run_pieces_bench.sh PTREV [BYTES]
set -euo pipefail
. "$(dirname "$0")/timing.sh"

ptrev=${1:?usage: run_pieces_bench.sh PTREV [BYTES]}
bytes=${2:-400000}
prog=$(command -v pigz) || { echo "pigz is not installed (scripts/setup installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Numbers from a fixed pseudo-random sequence: text that compresses to
# many blocks (seq's output compresses to a few writes).
awk -v n="$bytes" 'BEGIN { srand(1); while (len < n) { s = int(rand() * 200000); print s;
	len += length(s) + 1 } }' | head -c "$bytes" >"$tmp/data.txt"
native=$(best_of 3 /dev/null "$prog" -p 2 -c "$tmp/data.txt")
"$ptrev" record --force -o "$tmp/pigz.ptrev" -- "$prog" -p 2 -c "$tmp/data.txt" >/dev/null 2>&1

{ gdb_timed; cat <<GDB; } >"$tmp/m.gdb"
gdb.execute('set remotetimeout 900', to_string=True)
gdb.execute('target remote | $ptrev replay --stdio $tmp/pigz.ptrev', to_string=True)
gdb.execute('break write', to_string=True)
for i, move in enumerate(('reverse-continue', 'reverse-continue', 'reverse-continue',
                          'continue')):
    t0 = time.time()
    gdb.execute(move, to_string=True)
    print('T %s-%d(write-of-%s) %.3f' % (move, i + 1, gdb.parse_and_eval('nbytes'),
                                         time.time() - t0))
end
GDB
gdb_moves "$tmp/m.gdb" "$prog" >"$tmp/pieces"
gdb_moves "$tmp/m.gdb" "$prog" PTREV_RUN_PIECES=0 >"$tmp/reference"
printf 'pigz -p 2 of %s bytes: native run %.3f s\n' "$bytes" "$native"
ratio_table "$tmp/reference" "$tmp/pieces" pieces 'RUN_PIECES=0'
