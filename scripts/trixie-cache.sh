#!/bin/sh
# Fetch the Debian trixie packages that the kernel build and the VM tests
# need into a reusable cache, without touching this host's apt setup.
#
#   scripts/trixie-cache.sh            fetch (if needed), print the kernel version
#   scripts/trixie-cache.sh --dir      print the cache directory and exit
#   FAMFS_CACHE=DIR scripts/...        use DIR instead of <repo>/cache/trixie
#   FAMFS_REFRESH=1 scripts/...        re-read the package lists even if fresh
#   FAMFS_KLINE=7.3 scripts/...        another kernel line (default 6.12, the
#                                      trixie kernel): the newest 7.3.x image
#                                      of trixie-backports and linux-source-7.3,
#                                      cached in $FAMFS_CACHE_7_3, else in
#                                      $FAMFS_CACHE-7.3 (<repo>/cache/trixie-7.3):
#                                      each line has its own cache, as the
#                                      chroot in it holds one kernel's headers
#
# Only the kernel version is written to stdout (so callers can do
# KVER=$(scripts/trixie-cache.sh)); progress goes to stderr.
#
# Cache layout ($FAMFS_CACHE):
#   apt/            private sources file, lists and archive cache
#   debs/           the downloaded .deb files
#   root/           all of them unpacked with dpkg -x (boot image, modules,
#                   headers, /usr/src/linux-source-LINE.tar.xz, libfuse3)
#   kver            the resolved kernel version (e.g. 6.12.57+deb13-amd64)
#   stamp           the package set that root/ was unpacked from
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
kline=${FAMFS_KLINE:-6.12}
case $kline in
6.12) C=${FAMFS_CACHE:-$top/cache/trixie} ;;
[0-9]*.[0-9]*)
	# FAMFS_CACHE_7_3 for 7.3, else next to the 6.12 cache.
	eval "C=\${FAMFS_CACHE_$(echo "$kline" | tr . _):-}"
	[ -n "$C" ] || C=${FAMFS_CACHE:-$top/cache/trixie}-$kline ;;
*) echo "trixie-cache: error: bad FAMFS_KLINE '$kline' (e.g. 6.12, 7.3)" >&2; exit 1 ;;
esac
# --dir: only say where the cache of this line is.
if [ "${1:-}" = --dir ]; then echo "$C"; exit 0; fi
A=$C/apt
LISTS_MAX_AGE_MIN=${FAMFS_LISTS_MAX_AGE_MIN:-720}

log() { echo "trixie-cache: $*" >&2; }
die() { log "error: $*"; exit 1; }

command -v apt-get >/dev/null || die "apt-get not found"
command -v dpkg >/dev/null || die "dpkg not found"

mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$C/debs"

# Same mirror as the host's own sources, other suites; newer kernel lines
# come from trixie-backports.
. "$top/scripts/private-apt.sh"
suites="trixie trixie-updates trixie-security"
[ "$kline" = 6.12 ] || suites="$suites trixie-backports"
# shellcheck disable=SC2086
apt_sources "$A" $suites

# An empty dpkg status keeps the host's installed packages out of the picture.
[ -f "$A/status" ] || : >"$A/status"

apt_() { apt_state "$A" -o APT::Get::Download-Only=true "$@"; }
aptc() {
	apt-cache \
		-o Dir::Etc::sourcelist="$A/sources.list" \
		-o Dir::Etc::sourceparts=/dev/null \
		-o Dir::State::Lists="$A/lists" \
		-o Dir::State::status="$A/status" \
		-o Dir::Cache="$A/cache" \
		-o APT::Architecture=amd64 "$@"
}

fresh=$(find "$A/lists" -maxdepth 1 -name '*trixie-security*_Packages*' \
	-mmin -"$LISTS_MAX_AGE_MIN" 2>/dev/null | head -n1)
if [ -n "${FAMFS_REFRESH:-}" ] || [ -z "$fresh" ]; then
	log "updating package lists (trixie, trixie-updates, trixie-security)"
	apt_ update >&2 || {
		# Offline but cached: go on with what we have.
		[ -s "$C/kver" ] && [ -f "$C/stamp" ] || die "apt-get update failed"
		log "update failed; using the cached set"
		cat "$C/kver"
		exit 0
	}
fi

# Nothing changed since the last complete run: answer from the cache.
if [ -f "$C/stamp" ] && [ -s "$C/kver" ] && [ -d "$C/root/boot" ] &&
	[ -z "$(find "$A/lists" -maxdepth 1 -name '*_Packages*' -newer "$C/stamp")" ]; then
	log "cache up to date ($(cat "$C/kver"))"
	cat "$C/kver"
	exit 0
fi

cand() { aptc policy "$1" 2>/dev/null | sed -n 's/^  Candidate: //p'; }
if [ "$kline" = 6.12 ]; then
	# linux-image-amd64 -> linux-image-<kver> (the signed image package).
	meta_ver=$(cand linux-image-amd64)
	[ -n "$meta_ver" ] && [ "$meta_ver" != "(none)" ] ||
		die "linux-image-amd64 not found in trixie lists"
	img=$(aptc show "linux-image-amd64=$meta_ver" 2>/dev/null |
		sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*-amd64\).*/\1/p' | head -n1)
	[ -n "$img" ] || die "cannot resolve linux-image-amd64 $meta_ver"
	log "linux-image-amd64 $meta_ver -> $img"
else
	# The newest linux-image-LINE.N+debNN-amd64 of the lists.
	re=$(echo "$kline" | sed 's/\./\\./g')
	img=$(aptc pkgnames "linux-image-$kline." 2>/dev/null |
		grep -E "^linux-image-$re\.[0-9]+\+deb[0-9]+-amd64\$" | sort -V | tail -n1)
	[ -n "$img" ] || die "no linux-image-$kline.*-amd64 in trixie-backports"
fi
kver=${img#linux-image-}
kver=${kver%-unsigned}
abi=${kver%-amd64}             # e.g. 6.12.57+deb13
kpkgver=$(cand "$img")
log "kernel image $img ($kpkgver)"
# Newer images are a meta package over linux-base-KVER (config,
# System.map), linux-binary-KVER (vmlinuz) and linux-modules-KVER: take
# every package of the image's Depends named for this kernel.
kre=$(echo "$kver" | sed 's/[.+]/\\&/g')
parts=$(aptc show "$img=$kpkgver" 2>/dev/null | sed -n 's/^Depends: //p' |
	head -n1 | tr ',|' '\n\n' | sed 's/^ *//; s/ .*//' |
	grep -E -- "-$kre\$" | grep -v '^linux-image-' | sort -u | tr '\n' ' ')

# linux-source-LINE must be the same upload as the image.
src_ver=$(cand "linux-source-$kline")
[ "$src_ver" = "$kpkgver" ] ||
	log "warning: linux-source-$kline is $src_ver but the image is $kpkgver"

pkgs="$img $parts linux-headers-$kver linux-headers-$abi-common linux-kbuild-$abi
linux-source-$kline libfuse3-4 fuse3"
set -- $pkgs
want=""
for p; do
	v=$(cand "$p")
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "package $p not in the lists"
	want="$want $p=$v"
done
want=${want# }

if [ "$(cat "$C/stamp" 2>/dev/null)" = "$want" ] && [ -d "$C/root/boot" ]; then
	log "cache up to date ($kver)"
	echo "$kver" >"$C/kver"
	echo "$kver"
	exit 0
fi

log "downloading: $want"
# shellcheck disable=SC2086
(cd "$C/debs" && apt_ download $want >&2) || die "download failed"

log "unpacking into $C/root"
rm -rf "$C/root.new"
mkdir -p "$C/root.new"
for p; do
	v=$(cand "$p")
	f=$(ls "$C/debs/${p}_"*"_"*.deb 2>/dev/null | while read -r d; do
		dv=$(dpkg-deb -f "$d" Version)
		[ "$dv" = "$v" ] && echo "$d"
	done | head -n1)
	[ -n "$f" ] || die "no .deb for $p=$v in $C/debs"
	dpkg -x "$f" "$C/root.new"
done
# Newer images keep vmlinuz, config and System.map in /usr/lib/modules/KVER
# only; the cache offers them under /boot as for 6.12.
mkdir -p "$C/root.new/boot"
for f in vmlinuz config System.map; do
	m=$C/root.new/usr/lib/modules/$kver/$f
	[ -f "$C/root.new/boot/$f-$kver" ] || [ ! -f "$m" ] || ln "$m" "$C/root.new/boot/$f-$kver"
done
rm -rf "$C/root"
mv "$C/root.new" "$C/root"

# Old versions from earlier runs are of no further use.
for d in "$C/debs"/*.deb; do
	keep=0
	for p; do
		case $(basename "$d") in "${p}_"*) [ "$(dpkg-deb -f "$d" Version)" = "$(cand "$p")" ] && keep=1 ;; esac
	done
	[ $keep = 1 ] || rm -f "$d"
done

[ -f "$C/root/boot/vmlinuz-$kver" ] || die "no /boot/vmlinuz-$kver in the image"
[ -f "$C/root/usr/src/linux-source-$kline.tar.xz" ] || die "no linux-source tarball"
echo "$want" >"$C/stamp"
echo "$kver" >"$C/kver"
log "kernel $kver ready"
echo "$kver"
