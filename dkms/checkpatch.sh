#!/bin/sh
# Run the kernel's checkpatch.pl --strict on every patch in patches/series.
# checkpatch.pl comes from the same linux-source-6.12 tarball as the code.
#
#   dkms/checkpatch.sh [--src TARBALL]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=/usr/src/linux-source-6.12.tar.xz
top=$(cd "$here/.." && pwd)
[ -f "$src" ] || src=${FAMFS_CACHE:-$top/cache/trixie}/root/usr/src/linux-source-6.12.tar.xz
[ "${1:-}" = --src ] && src=$2
cp_dir=$here/build/checkpatch
if [ ! -f "$cp_dir/scripts/checkpatch.pl" ]; then
	mkdir -p "$cp_dir"
	tar -xJf "$src" -C "$cp_dir" --strip-components=1 \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
fi
rc=0
for p in $(grep -v '^[[:space:]]*\(#\|$\)' "$here/patches/series"); do
	if out=$(perl "$cp_dir/scripts/checkpatch.pl" --strict --no-tree -q \
		"$here/patches/$p" 2>&1); then
		echo "ok $p"
	else
		echo "not ok $p"
		echo "$out" | sed 's/^/    /'
		rc=1
	fi
done
exit $rc
