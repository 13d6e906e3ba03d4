#!/bin/sh
# The packages the offline guest needs to install trixie-backports' 7.3
# kernel, for the kernel-upgrade case: what apt would install in the image
# for `apt install -t trixie-backports linux-image-KVER linux-headers-KVER
# linux-source-7.3` (the image's own dpkg status decides what is missing,
# e.g. linux-base from backports and gcc-14-for-host).
#
#   tests/e2e/kernel-debs.sh ROOT_EXT4 OUTDIR
#
# The kernel packages come from the 7.3 cache of scripts/trixie-cache.sh
# (FAMFS_KLINE=7.3; FAMFS_CACHE_7_3), the same kernel the vm-7.3 tier
# tests; the few others are downloaded once into cache/e2e/kernel-7.3.
# OUTDIR gets the .debs (hard links where possible) and a file kver with
# the kernel release. Only the package lists and .debs are fetched; the
# host's apt configuration is not touched.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
root=$1
out=$2
kline=7.3
C=$top/cache/e2e/kernel-$kline
A=$C/apt
LISTS_MAX_AGE_MIN=${FAMFS_LISTS_MAX_AGE_MIN:-720}

log() { echo "kernel-debs: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v debugfs >/dev/null || die "debugfs missing (e2fsprogs)"
kver=$(FAMFS_KLINE=$kline "$top/scripts/trixie-cache.sh") ||
	die "scripts/trixie-cache.sh (FAMFS_KLINE=$kline) failed"
K=$(FAMFS_KLINE=$kline "$top/scripts/trixie-cache.sh" --dir)/debs

mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$C/debs"
# The image's package database, read from the ext4 image without mounting.
debugfs -R 'cat /var/lib/dpkg/status' "$root" >"$A/status.new" 2>/dev/null &&
	grep -q '^Package: linux-base$' "$A/status.new" ||
	die "cannot read /var/lib/dpkg/status from $root"
mv "$A/status.new" "$A/status"

. "$top/scripts/private-apt.sh"
apt_sources "$A" trixie trixie-updates trixie-security trixie-backports
apt_() { apt_state "$A" "$@"; }
fresh=$(find "$A/lists" -maxdepth 1 -name '*trixie-backports*_Packages*' \
	-mmin -"$LISTS_MAX_AGE_MIN" 2>/dev/null | head -n1)
if [ -z "$fresh" ]; then
	log "updating package lists (trixie, -updates, -security, -backports)"
	apt_ update >&2 || die "apt-get update failed"
fi

# What apt would fetch for the image: 'URI' FILE SIZE HASH per package.
apt_ install -qq --print-uris --no-install-recommends -t trixie-backports \
	"linux-image-$kver" "linux-headers-$kver" "linux-source-$kline" >"$C/uris" ||
	die "apt cannot resolve the $kline kernel for the image"
grep -q "^'[^ ]*' linux-image-${kver}_" "$C/uris" || die "no linux-image-$kver in apt's answer"

rm -rf "$out"
mkdir -p "$out"
ncache=0 nown=0
while read -r uri f _; do
	if [ -f "$K/$f" ]; then
		ncache=$((ncache + 1))
	else
		f=$(basename "$f")
		if [ ! -f "$C/debs/$f" ]; then
			n=${f%%_*} v=$(echo "$f" | cut -d_ -f2 | sed 's/%3a/:/g')
			(cd "$C/debs" && apt_ download "$n=$v" >&2) || die "cannot download $n=$v"
		fi
		nown=$((nown + 1))
	fi
	src=$K/$f
	[ -f "$src" ] || src=$C/debs/$f
	[ -f "$src" ] || die "no $f after the download (${uri})"
	ln "$src" "$out/$f" 2>/dev/null || cp "$src" "$out/$f"
done <"$C/uris"
# The kernel itself must be the cached one.
for p in linux-image-$kver linux-headers-$kver linux-source-$kline; do
	f=$(cd "$out" && ls "${p}_"*.deb 2>/dev/null | head -n1)
	[ -n "$f" ] && [ -f "$K/$f" ] ||
		die "${f:-$p} is not the cached one in $K: rerun FAMFS_KLINE=$kline scripts/trixie-cache.sh"
done
echo "$kver" >"$out/kver"
log "$kver: $ncache packages from the $kline cache, $nown others ($(ls "$out"/*.deb | wc -l) in all)"
