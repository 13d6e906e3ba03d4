#!/bin/sh
# Run the kernel's checkpatch.pl --strict on every patch of every kernel
# line's series (patches/LINE/series), with the checkpatch.pl of that
# line's own linux-source-LINE tarball.
#
#   dkms/checkpatch.sh [LINE...]   default: every line in patches/
# The tarball: /usr/src/linux-source-LINE.tar.xz, else the one in the
# line's trixie cache (scripts/trixie-cache.sh --dir with FAMFS_KLINE=LINE).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lines=${*:-$(ls "$here/patches")}
rc=0
for line in $lines; do
	pd=$here/patches/$line
	[ -f "$pd/series" ] || { echo "not ok $line: no series $pd/series"; rc=1; continue; }
	src=/usr/src/linux-source-$line.tar.xz
	[ -f "$src" ] ||
		src=$(FAMFS_KLINE=$line "$top/scripts/trixie-cache.sh" --dir)/root/usr/src/linux-source-$line.tar.xz
	cp_dir=$here/build/checkpatch-$line
	if [ ! -f "$cp_dir/scripts/checkpatch.pl" ]; then
		mkdir -p "$cp_dir"
		tar -xJf "$src" -C "$cp_dir" --strip-components=1 \
			"linux-source-$line/scripts/checkpatch.pl" \
			"linux-source-$line/scripts/spelling.txt" \
			"linux-source-$line/scripts/const_structs.checkpatch"
	fi
	for p in $(grep -v '^[[:space:]]*\(#\|$\)' "$pd/series"); do
		if out=$(perl "$cp_dir/scripts/checkpatch.pl" --strict --no-tree -q \
			"$pd/$p" 2>&1); then
			echo "ok $line/$p"
		else
			echo "not ok $line/$p"
			echo "$out" | sed 's/^/    /'
			rc=1
		fi
	done
done
exit $rc
