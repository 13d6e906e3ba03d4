#!/bin/sh
# Build the famfs .debs for the trixie guest, inside the trixie chroot
# (scripts/trixie-chroot.sh), so they link trixie's libraries (libfuse3-4;
# debs built on this bookworm host would want bookworm's libfuse3-3).
#
#   tests/e2e/build-debs.sh [OUTDIR]     (default <repo>/build-e2e/debs)
#
# Two sets, each rebuilt only when its inputs changed:
#   OUTDIR/cur/    version N: scripts/build-packages.sh on this tree (HEAD,
#                  packaging/ from the work tree, as `make deb` does)
#   OUTDIR/next/   version N+1 for the upgrade case: the same commit in a
#                  scratch clone with VERSION's last number bumped
# Needs root (the chroot). Prints the two directories.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build-e2e/debs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
case $out in "$top"/*) ;; *) echo "build-debs: OUTDIR must be inside $top (the chroot sees only the repo)" >&2; exit 2 ;; esac

log() { echo "build-debs: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Build dependencies of packaging/debian/control, in the chroot. Another
# build may install into the same chroot at the same time: wait for
# dpkg's lock instead of failing.
BDEPS="debhelper dh-dkms meson ninja-build pkgconf libcmocka-dev libfuse3-dev
libsystemd-dev uuid-dev libblkid-dev zlib1g-dev libyaml-dev libjson-c-dev libmicrohttpd-dev git dpkg-dev fakeroot"
# shellcheck disable=SC2086
"$top/scripts/trixie-chroot.sh" sh -c '
	missing=""
	for p; do
		dpkg-query -W -f="\${Status}\n" "$p" 2>/dev/null |
			grep -q "^install ok installed$" || missing="$missing $p"
	done
	[ -z "$missing" ] && exit 0
	echo "build-debs: installing into the trixie chroot:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get -q -o DPkg::Lock::Timeout=300 update >/dev/null
	apt-get -q -y -o DPkg::Lock::Timeout=300 install --no-install-recommends $missing >/dev/null
' sh $BDEPS || die "cannot install the build dependencies into the trixie chroot"

# What a package set is built from: the commit and the packaging/ files.
inputs() { # SRCDIR
	git -C "$1" rev-parse HEAD
	(cd "$1" && find packaging -type f | LC_ALL=C sort | xargs md5sum)
}

build() { # SRCDIR DEST
	s=$(inputs "$1" | md5sum | cut -d' ' -f1)
	if [ "$(cat "$2/.stamp" 2>/dev/null)" = "$s" ] && ls "$2"/famfs_*.deb >/dev/null 2>&1; then
		log "up to date: $2"
		return 0
	fi
	rm -rf "$2"
	mkdir -p "$2"
	log "building $(cat "$1/VERSION") in the trixie chroot into $2"
	"$top/scripts/trixie-chroot.sh" "$1/scripts/build-packages.sh" deb "$2" >"$2.log" 2>&1 || {
		tail -n 30 "$2.log" >&2
		die "deb build failed (log: $2.log)"
	}
	echo "$s" >"$2/.stamp"
}

build "$top" "$out/cur"

# N+1: a scratch clone of HEAD (objects shared with this repo), the work
# tree's packaging/, and a commit that bumps VERSION (build-packages.sh
# reads the version from HEAD).
n=$out/next-src
rm -rf "$n"
git clone -q --shared --no-checkout "$top" "$n"
git -C "$n" checkout -q --detach "$(git -C "$top" rev-parse HEAD)"
rm -rf "$n/packaging"
cp -a "$top/packaging" "$n/packaging"
cur=$(git -C "$top" show HEAD:VERSION)
next=$(echo "$cur" | awk -F. -v OFS=. '{ $NF = $NF + 1; print }')
echo "$next" >"$n/VERSION"
git -C "$n" -c user.name=famfs-e2e -c user.email=famfs-e2e@localhost \
	commit -q -m "e2e: test build $next" VERSION
# The stamp must not change with the throw-away commit's id: use the
# parent commit and the bumped version instead.
s=$( { inputs "$top"; echo "$next"; } | md5sum | cut -d' ' -f1)
if [ "$(cat "$out/next/.stamp" 2>/dev/null)" = "$s" ] && ls "$out/next"/famfs_*.deb >/dev/null 2>&1; then
	log "up to date: $out/next"
else
	rm -rf "$out/next"
	mkdir -p "$out/next"
	log "building $next (upgrade test) in the trixie chroot into $out/next"
	"$top/scripts/trixie-chroot.sh" "$n/scripts/build-packages.sh" deb "$out/next" \
		>"$out/next.log" 2>&1 || {
		tail -n 30 "$out/next.log" >&2
		die "deb build of $next failed (log: $out/next.log)"
	}
	echo "$s" >"$out/next/.stamp"
fi
rm -rf "$n"
echo "$out/cur"
echo "$out/next"
