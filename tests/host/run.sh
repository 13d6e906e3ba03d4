#!/bin/sh
# Host tier: the daemon, mount.famfs and the CLI on this machine's
# /dev/fuse (fallback mode) against file-backed famfs images.
# Builds nothing: run after 'ninja -C ${BUILD_DIR:-build}'.
# Prints the plan ("1..N", every test pytest collected), one
# "ok - NAME" / "not ok - NAME" / "ok - NAME # SKIP why" line per case and
# exits non-zero if any failed. Each test is bounded by pytest-timeout
# (HOST_TIMEOUT seconds, default 300; the hung test fails with its name and
# stack), the whole run by timeout(1) (HOST_TIER_TIMEOUT, default 3600 s;
# the test it was in is named).
set -u
cd "$(dirname "$0")/../.." || exit 1
export BUILD_DIR="${BUILD_DIR:-build}"
LIMIT=${HOST_TIMEOUT:-300}
TIER_LIMIT=${HOST_TIER_TIMEOUT:-3600}

# Debian's interpreter, where python3-pytest lives (not a pyenv shim).
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
tap=$(mktemp)
out=$(mktemp)
# pytest's --basetemp: the tests' images (over a GiB a run), removed at the
# end. Anything still mounted below it is unmounted first, and rm stays on
# this file system, so it never reaches into a famfs.
base=$(mktemp -d /tmp/famfs-host.XXXXXX)
cleanup() {
	grep -o " $base/[^ ]*" /proc/self/mountinfo | sort -r |
		while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$base"
	rm -f "$tap" "$tap.plan" "$tap.running" "$out"
}
trap cleanup EXIT

for m in pytest pytest_timeout; do
	if ! "$PY" -c "import $m" 2>/dev/null; then
		echo "1..1"
		echo "ok - host tier # SKIP python3 module $m is not installed (scripts/deps.sh)"
		exit 0
	fi
done

FAMFS_TAP="$tap" timeout -k 10 "$TIER_LIMIT" "$PY" -m pytest -q \
	-p no:cacheprovider -s --timeout="$LIMIT" --timeout-method=signal \
	--basetemp="$base" tests/host >"$out" 2>&1
rc=$?
# Details only when something went wrong; the measurements always.
if [ "$rc" -ne 0 ]; then
	cat "$out"
	echo
else
	grep '^# ' "$out"
fi
[ -f "$tap.plan" ] && cat "$tap.plan"
cat "$tap"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "not ok - host tier killed after $TIER_LIMIT s, in $(cat "$tap.running" 2>/dev/null)"
elif [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$tap"; then
	echo "not ok - pytest exited with status $rc"
fi
exit "$rc"
