#!/bin/sh
# Run each libFuzzer harness for a short, bounded time from a generated
# seed corpus; a crash, leak or sanitizer report fails that harness.
# FUZZ_SECONDS sets the time per harness (make check: 20; make fuzz: 600).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD_DIR=${BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-20}
work=${FUZZ_WORK:-$BUILD_DIR/fuzz-work}

harnesses="superblock log fmap"
echo "1..$(echo $harnesses | wc -w)"
rm -rf "$work/seeds"
mkdir -p "$work"
if ! "$BUILD_DIR/tests/fuzz/make_seeds" "$work/seeds"; then
	for f in $harnesses; do
		echo "not ok - fuzz/$f: could not write the seed corpus"
	done
	exit 1
fi
status=0
for f in $harnesses; do
	corpus="$work/corpus-$f"
	mkdir -p "$corpus"
	log="$work/$f.log"
	"$BUILD_DIR/tests/fuzz/fuzz_$f" -max_total_time="$SECONDS_EACH" \
		-timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$work/crash-$f-" \
		"$corpus" "$work/seeds/$f" >"$log" 2>&1
	rc=$?
	stats=$(grep -E '^stat::number_of_executed_units|^stat::peak_rss' "$log" |
		tr '\n' ' ')
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1)
	if [ "$rc" -eq 0 ]; then
		echo "ok - fuzz/$f ${SECONDS_EACH}s, $cov, $stats"
	else
		tail -n 30 "$log"
		echo "not ok - fuzz/$f (exit $rc; input in $work/crash-$f-*)"
		status=1
	fi
done
exit $status
