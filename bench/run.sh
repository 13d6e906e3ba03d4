#!/bin/sh
# make bench: every benchmark in one run, then one report. Each step's
# output (with its RESULT lines) goes to OUT/STEP.txt; bench/report.py
# turns them into a table (printed), OUT/bench.json and OUT/sweep.png.
#
#   bench/run.sh            (root; after ninja -C build; ~10 min)
#
# Steps: meta (bench/meta.py: creat rate, log replay, mount of a full log;
# this host), fallback (bench/fallback_read.sh: FUSE fallback read vs the
# raw file; this host), restart (bench/restart.sh: the blackout of a
# daemon restart that keeps the mount, fallback mode; this host), vm
# (bench/vm.sh 6.12: one QEMU guest on trixie's kernel, the kernel data
# path), vm-7.3 (bench/vm.sh 7.3: the same on trixie-backports' 7.3 kernel,
# famfs on fsdev_dax). A failed step is reported and its figures are
# missing; the others still run. Exit status 0 only when every step and the report
# succeeded.
#
# Environment: BENCH_OUT (default build-bench), BUILD_DIR (build),
# BENCH_QUICK=1 (short smoke run: fewer passes, less data); the guests
# use FAMFS_CACHE (6.12) and FAMFS_CACHE_7_3 (7.3) as tests/vm/run.sh does.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$top/build-bench}
export BUILD_DIR=${BUILD_DIR:-build} BENCH_OUT=$out
if [ -n "${BENCH_QUICK:-}" ]; then
	export BENCH_ROUNDS=${BENCH_ROUNDS:-3} PASSES=${PASSES:-3} \
		SIZE_MIB=${SIZE_MIB:-256}
fi
mkdir -p "$out"
rm -f "$out"/*.txt "$out/bench.json" "$out"/sweep*.png "$out"/sweep*.dat
failed=""

step() { # step NAME CMD...: run CMD, keep its output in OUT/NAME.txt
	name=$1
	shift
	echo "bench: $name: $*" >&2
	t0=$(date +%s)
	if "$@" >"$out/$name.txt" 2>"$out/$name.err"; then
		echo "bench: $name done ($(($(date +%s) - t0)) s)" >&2
	else
		cat "$out/$name.txt" "$out/$name.err" >&2
		echo "bench: $name FAILED ($(($(date +%s) - t0)) s)" >&2
		failed="$failed $name"
	fi
}

cd "$top" || exit 1
step meta bench/meta.py
step fallback bench/fallback_read.sh
step restart bench/restart.sh
step vm bench/vm.sh 6.12
step vm-7.3 bench/vm.sh 7.3
python3 bench/report.py "$out" || failed="$failed report"
if [ -n "$failed" ]; then
	echo "bench: failed:$failed" >&2
	exit 1
fi
