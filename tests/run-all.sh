#!/bin/sh
# Run test tiers and print one summary line: "N passed, N failed, N skipped".
#
# Each tier is tests/<tier>/run.sh. A tier prints its plan, one line
#   1..N                      the number of cases it means to run
# (anywhere in its output) and one line per test case:
#   ok - NAME                 a pass
#   not ok - NAME             a failure (details on the lines before it)
#   ok - NAME # SKIP REASON   a case that could not run here
# and exits non-zero if any case failed. A tier that exits non-zero without
# printing a failure counts as one failed case, so a crash never passes; a
# tier without exactly one plan line, or whose cases do not add up to its
# plan, fails too, so a run that lost cases never passes.
#
# Strict mode (FAMFS_NO_SKIP=1, which make check sets, or CI=true): a skip
# is a failure unless its reason starts with "impossible:", the mark for a
# case no machine of this kind can run. Anything a machine can be given
# (root, /dev/fuse, pytest, a build) must not be skipped there.
set -u
cd "$(dirname "$0")/.." || exit 1

tiers=${*:-unit fuzz host}
strict=
[ "${FAMFS_NO_SKIP:-}" = 1 ] || [ "${CI:-}" = true ] && strict=1
pass=0 fail=0 skip=0 out=$(mktemp) summary=
trap 'rm -f "$out"' EXIT

for t in $tiers; do
	echo "=== tier: $t"
	if [ ! -x "tests/$t/run.sh" ]; then
		echo "not ok - tier $t: tests/$t/run.sh is missing"
		fail=$((fail + 1))
		summary="$summary$t: no tier
"
		continue
	fi
	"tests/$t/run.sh" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -Ec '^ok( [0-9]+)? - ' "$out")
	s=$(grep -Ec '^ok( [0-9]+)? - .*# SKIP' "$out")
	f=$(grep -Ec '^not ok( [0-9]+)? - ' "$out")
	ran=$((p + f))
	plans=$(grep -Ec '^1\.\.[0-9]+$' "$out")
	plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$out" | head -n 1)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - tier $t exited with status $rc"
		f=$((f + 1))
	fi
	if [ "$plans" -ne 1 ]; then
		echo "not ok - tier $t printed $plans plan lines (1..N), wants exactly one"
		f=$((f + 1))
		plan="?"
	elif [ "$ran" -ne "$plan" ]; then
		echo "not ok - tier $t planned $plan cases but ran $ran"
		f=$((f + 1))
	fi
	if [ -n "$strict" ] && [ "$s" -gt 0 ]; then
		# The skips that the machine could have run become failures.
		n=$(grep -E '^ok( [0-9]+)? - .*# SKIP' "$out" |
			grep -Evc '# SKIP impossible:')
		grep -E '^ok( [0-9]+)? - .*# SKIP' "$out" | grep -Ev '# SKIP impossible:' |
			sed -E 's/^ok( [0-9]+)? - (.*) # SKIP (.*)/not ok - \2 (skipped in strict mode: \3)/'
		s=$((s - n))
		p=$((p - n))
		f=$((f + n))
	fi
	pass=$((pass + p - s))
	skip=$((skip + s))
	fail=$((fail + f))
	summary="$summary$t: planned $plan, ran $ran ($((p - s)) passed, $f failed, $s skipped)
"
done

echo "=== per tier"
printf '%s' "$summary"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
