#!/bin/sh
# Build the libFuzzer harness fuzz_rsp.c with clang straight from the source
# files (meson's compiler may be gcc, which has no libFuzzer) and run it for a
# bounded, seeded number of inputs. Exit 0: nothing found; 1: a finding or a
# build failure; 77: skipped (no clang with libFuzzer).
#
# usage: run_fuzz.sh SOURCE_ROOT BUILD_DIR

# Sources the harness links besides its own (relative to SOURCE_ROOT). To
# fuzz another target, add its files here and define its weak hook (see
# fuzz_rsp.c), e.g. server/gdb_server.c for gdb_server_fuzz_one.
# The whole project but main(): the server's dispatcher reaches most modules.
EXTRA_SOURCES=$(cd "${1:?}" && find server common decode replay -name '*.c' 2>/dev/null | sort |
  grep -v -e '^server/cli/main\.c$' -e '^common/hex\.c$' -e '^common/strbuf\.c$' -e '^server/rsp/rsp_packet\.c$')
# Libraries those extra sources need, e.g. "-lipt -lelf".
EXTRA_LIBS="-lipt -lZydis -lZycore -lelf"

RUNS=${FUZZ_RUNS:-300000}
MAX_SECONDS=${FUZZ_MAX_SECONDS:-60}

set -u
src=${1:?usage: run_fuzz.sh SOURCE_ROOT BUILD_DIR}
out=${2:?usage: run_fuzz.sh SOURCE_ROOT BUILD_DIR}
mkdir -p "$out" || exit 1

clang=
for c in ${CLANG:-} clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
	if command -v "$c" >/dev/null 2>&1; then
		clang=$c
		break
	fi
done
if [ -z "$clang" ]; then
	echo "SKIP: no clang found (set CLANG=...)"
	exit 77
fi

# Does this clang have libFuzzer (Debian ships it in libclang-rt-dev or
# libclang-common-N-dev)?
probe=$out/fuzz_probe.c
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe"
if ! "$clang" -fsanitize=fuzzer,address,undefined "$probe" -o "$out/fuzz_probe" >/dev/null 2>&1; then
	echo "SKIP: $clang cannot build with -fsanitize=fuzzer (libFuzzer missing)"
	exit 77
fi

sources="tests/fuzz/fuzz_rsp.c server/rsp/rsp_packet.c common/hex.c common/strbuf.c $EXTRA_SOURCES"
set --
for f in $sources; do
	set -- "$@" "$src/$f"
done
exe=$out/fuzz_rsp
echo "building $exe with $clang"
# shellcheck disable=SC2086 # EXTRA_LIBS is a list of flags
if ! "$clang" -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-I"$src/include" "$@" $EXTRA_LIBS -o "$exe"; then
	echo "FAIL: could not build the fuzz harness"
	exit 1
fi

# A fresh corpus each run, seeded with real packets, so runs are repeatable
# and the fuzzer's discoveries stay out of the source tree.
corpus=$out/fuzz_rsp_corpus
rm -rf "$corpus"
mkdir -p "$corpus" || exit 1
n=0
for seed in \
	'+$qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+#c9' \
	'$vMustReplyEmpty#3a' '$QStartNoAckMode#b0' '$g#67' \
	'$m401000,40#22' '$X1000,4:a}]}\003b#00' '$vCont;c#a8\003' \
	'$Z0,401126,1#00' '$qXfer:features:read:target.xml:0,fff#7d' \
	'$vFile:pwrite:5,0,}\004}\012#00' '0123456789abcdefABCDEF,fffffffffffffffff' \
	'$bad$g#6' '}'; do
	n=$((n + 1))
	printf "$seed" >"$corpus/seed$n"
done

# libFuzzer's own error exit code is 77, which meson reads as "skipped":
# make every finding exit 1.
echo "fuzzing: $RUNS runs, seed 1, at most ${MAX_SECONDS}s"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$exe" -runs="$RUNS" -seed=1 -max_total_time="$MAX_SECONDS" \
	-error_exitcode=1 -timeout_exitcode=1 -timeout=10 -rss_limit_mb=2048 \
	-max_len=2048 -artifact_prefix="$out/fuzz_rsp-" -print_final_stats=1 \
	"$corpus" 2>"$out/fuzz_rsp.log"
rc=$?
tail -n 25 "$out/fuzz_rsp.log"
if [ $rc -ne 0 ]; then
	echo "FAIL: the fuzzer found a problem (exit $rc); full log: $out/fuzz_rsp.log"
	ls "$out"/fuzz_rsp-* 2>/dev/null
	exit 1
fi
echo "PASS: no findings"
exit 0
