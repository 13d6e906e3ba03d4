#!/bin/sh
# Host tier: the daemon, mount.famfs and the CLI on this machine's
# /dev/fuse (fallback mode) against file-backed famfs images.
# Builds nothing: run after 'ninja -C ${BUILD_DIR:-build}'.
# Prints one "ok - NAME" / "not ok - NAME" / "ok - NAME # SKIP why" line per
# case and exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
export BUILD_DIR="${BUILD_DIR:-build}"

# Debian's interpreter, where python3-pytest lives (not a pyenv shim).
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
tap=$(mktemp)
out=$(mktemp)
trap 'rm -f "$tap" "$out"' EXIT

if ! "$PY" -c 'import pytest' 2>/dev/null; then
	echo "ok - host tier # SKIP python3-pytest is not installed (scripts/deps.sh)"
	exit 0
fi

FAMFS_TAP="$tap" "$PY" -m pytest -q -p no:cacheprovider -s \
	--basetemp="$(mktemp -d /tmp/famfs-host.XXXXXX)" tests/host >"$out" 2>&1
rc=$?
# Details only when something went wrong; the measurements always.
if [ "$rc" -ne 0 ]; then
	cat "$out"
else
	grep '^# ' "$out"
fi
cat "$tap"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$tap"; then
	echo "not ok - pytest exited with status $rc"
fi
exit "$rc"
