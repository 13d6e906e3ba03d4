#!/bin/sh
# The patch series as an upstream series (dkms/full-tree-check.sh): it
# applies to the whole linux-source-6.12 tree, and fs/fuse builds there
# with Debian's configuration and no new W=1 or sparse warnings. The check
# runs in the trixie chroot (about a minute on 2 cores) once per series and
# kernel: its result is kept in $FAMFS_CACHE/fulltree/KEY, shared by every
# checkout, and printed again at once while the key stays the same.
#
#   tests/vm/full-tree.sh [KVER]   ok/not ok lines; exit 1 if one failed
#   FULLTREE_FORCE=1               run the check even when a result is kept
#
# Needs root (the chroot). Never loads anything into the host's kernel.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
C=$("$top/scripts/trixie-cache.sh" --dir)
kver=${1:-$("$top/scripts/trixie-cache.sh")}
key=$("$top/dkms/full-tree-check.sh" --key -k "$kver")
res=$C/fulltree/$key

if [ -f "$res" ] && [ -z "${FULLTREE_FORCE:-}" ]; then
	echo "full-tree: result kept for this series and $kver ($key)" >&2
	cat "$res"
	if grep -q '^not ok' "$res"; then exit 1; fi
	exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
FAMFS_CHROOT_KERNELTREE=1 "$top/scripts/trixie-chroot.sh" \
	dkms/full-tree-check.sh -k "$kver" >"$out" || rc=$?
cat "$out"
# 0 and 1 are results (a failing series fails again until it changes);
# anything else means the check could not run: not kept.
if [ $rc -le 1 ] && grep -q '^ok' "$out"; then
	mkdir -p "$C/fulltree"
	cp "$out" "$res.tmp.$$" && mv "$res.tmp.$$" "$res"
else
	echo "not ok - the full-tree check of the series ran (exit $rc)"
fi
[ $rc -eq 0 ]
