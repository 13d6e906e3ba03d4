#!/bin/sh
# Run the C unit tests (built with ASan and UBSan in $BUILD_DIR) and print
# one line per case for tests/run-all.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD_DIR=${BUILD_DIR:-build-test}
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

status=0
for t in "$BUILD_DIR"/tests/unit/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	group=${t##*/test_}
	out=$("$t" 2>&1)
	rc=$?
	# Diagnostics first, then the cases renamed unit/GROUP/NAME.
	printf '%s\n' "$out" | grep -Ev '^(not )?ok [0-9]+ - |^1\.\.|^# (not )?ok - '
	printf '%s\n' "$out" |
		sed -nE "s/^(not ok|ok) [0-9]+ - (.*)/\1 - unit\/$group\/\2/p"
	if [ "$rc" -ne 0 ]; then
		printf '%s\n' "$out" | grep -Eq '^not ok [0-9]+ - ' ||
			echo "not ok - unit/$group exited with status $rc"
		status=1
	fi
done
exit $status
