#!/bin/sh
# One famfs core for every kernel line: fs/fuse/famfs.c as each series
# leaves it must be the same file, except for the lines listed in
# dkms/core-diff.allow (kernel interfaces that checkpatch of one line asks
# for and the other line lacks). Everything else that differs between
# kernels belongs in the series' famfs_compat.h or dax glue.
#
#   dkms/core-diff.sh [LINE LINE]   default: 6.12 7.3
# Prints the differences that are not allowed and exits 1 if there are
# any. Needs only the patches (famfs.c is a file the series create).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
a=${1:-6.12} b=${2:-7.3}
allow=$here/core-diff.allow
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# famfs.c after LINE's series, from the famfs.c parts of its patches.
core() { # LINE OUT
	mkdir -p "$w/$1/fs/fuse"
	for p in $(grep -v '^[[:space:]]*\(#\|$\)' "$here/patches/$1/series"); do
		awk '/^diff --git / { on = ($3 == "a/fs/fuse/famfs.c") } on' \
			"$here/patches/$1/$p" >"$w/part"
		[ -s "$w/part" ] || continue
		patch -d "$w/$1" -p1 --batch --fuzz=0 -s <"$w/part" ||
			{ echo "core-diff: $1/$p: famfs.c does not apply" >&2; exit 2; }
	done
	[ -f "$w/$1/fs/fuse/famfs.c" ] ||
		{ echo "core-diff: the $1 series has no fs/fuse/famfs.c" >&2; exit 2; }
	cp "$w/$1/fs/fuse/famfs.c" "$2"
}
core "$a" "$w/a.c"
core "$b" "$w/b.c"
diff -u "$w/a.c" "$w/b.c" >"$w/diff" || true
# Changed lines, without the diff's own headers.
sed -n '3,$p' "$w/diff" | grep '^[-+]' >"$w/changed" || true
bad=$(grep -vxFf "$allow" "$w/changed" || true)
if [ -n "$bad" ]; then
	echo "core-diff: fs/fuse/famfs.c of $a (-) and $b (+) differ beyond dkms/core-diff.allow:"
	echo "$bad"
	exit 1
fi
echo "core-diff: fs/fuse/famfs.c is the same in $a and $b but for $(grep -c '^-' "$w/changed" || true) listed lines"
