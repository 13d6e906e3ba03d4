#!/bin/sh
# Run the C unit tests (built with ASan and UBSan in $BUILD_DIR) and print
# one line per case for tests/run-all.sh, and the tier's plan ("1..N").
#
# The plan is read from the sources: one test binary per tests/unit/test_*.c
# and one case per cmocka_unit_test*() entry in it. A missing binary, a
# binary whose own plan line differs from its source, or a case that never
# reported fails. Each binary runs under `timeout` (UNIT_TIMEOUT seconds,
# default 900); a hung one is killed and the case it hung in is named.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD_DIR=${BUILD_DIR:-build-test}
LIMIT=${UNIT_TIMEOUT:-900}
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# cases SOURCE: the case names a test source registers, in order
cases() {
	sed -nE 's/.*cmocka_unit_test[a-z_]*\(([A-Za-z0-9_]+).*/\1/p' "$1"
}

plan=0
for src in tests/unit/test_*.c; do
	[ -f "$src" ] || continue
	plan=$((plan + $(cases "$src" | wc -l)))
done
echo "1..$plan"
[ "$plan" -gt 0 ] || { echo "not ok - unit: no test cases in tests/unit/test_*.c"; exit 1; }

status=0
for src in tests/unit/test_*.c; do
	group=$(basename "$src" .c)
	group=${group#test_}
	t=$BUILD_DIR/tests/unit/test_$group
	if [ ! -x "$t" ]; then
		# One line per planned case, so the count still adds up.
		for c in $(cases "$src"); do
			echo "not ok - unit/$group/$c (no binary $t: ninja -C $BUILD_DIR)"
		done
		status=1
		continue
	fi
	out=$(timeout -k 5 "$LIMIT" "$t" 2>&1)
	rc=$?
	# Diagnostics first, then the cases renamed unit/GROUP/NAME; a cmocka
	# skip ("not ok N # SKIP name") is a skip, not lost.
	printf '%s\n' "$out" | grep -Ev '^(not )?ok [0-9]+ |^1\.\.|^# (not )?ok - '
	printf '%s\n' "$out" | sed -nE \
		-e "s/^not ok [0-9]+ # SKIP (.*)/ok - unit\/$group\/\1 # SKIP skip() in the test/p" \
		-e "s/^(not ok|ok) [0-9]+ - (.*)/\1 - unit\/$group\/\2/p"
	want=$(cases "$src" | wc -l)
	got=$(printf '%s\n' "$out" | sed -nE 's/^1\.\.([0-9]+)$/\1/p' | head -n 1)
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		# Output is line-buffered (helpers.c): the first listed case
		# without a result is the one that hung.
		for c in $(cases "$src"); do
			printf '%s\n' "$out" | grep -Eq "^(not )?ok [0-9]+ (- |# SKIP )$c\$" && continue
			echo "not ok - unit/$group/$c hung: killed after $LIMIT s"
			break
		done
		status=1
	elif [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | grep -Eq '^not ok [0-9]+ - ' ||
			echo "# unit/$group exited with status $rc"
		status=1
	fi
	if [ "${got:-x}" != "$want" ]; then
		echo "# unit/$group: plan line '1..${got:-}' but $src registers $want cases"
		status=1
	fi
done
exit $status
