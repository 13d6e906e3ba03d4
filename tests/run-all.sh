#!/bin/sh
# Run test tiers and print one summary line: "N passed, N failed, N skipped".
#
# Each tier is tests/<tier>/run.sh. A tier prints one line per test case:
#   ok - NAME                 a pass
#   not ok - NAME             a failure (details on the lines before it)
#   ok - NAME # SKIP REASON   a case that could not run here
# and exits non-zero if any case failed. A tier that exits non-zero without
# printing a failure counts as one failed case, so a crash never passes.
set -u
cd "$(dirname "$0")/.." || exit 1

tiers=${*:-unit fuzz host}
pass=0 fail=0 skip=0 out=$(mktemp)
trap 'rm -f "$out"' EXIT

for t in $tiers; do
	echo "=== tier: $t"
	if [ ! -x "tests/$t/run.sh" ]; then
		echo "not ok - tier $t: tests/$t/run.sh is missing"
		fail=$((fail + 1))
		continue
	fi
	"tests/$t/run.sh" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -Ec '^ok( [0-9]+)? - ' "$out")
	s=$(grep -Ec '^ok( [0-9]+)? - .*# SKIP' "$out")
	f=$(grep -Ec '^not ok( [0-9]+)? - ' "$out")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - tier $t exited with status $rc"
		f=1
	fi
	pass=$((pass + p - s))
	skip=$((skip + s))
	fail=$((fail + f))
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
