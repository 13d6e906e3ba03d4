#!/bin/sh
# A cached Debian trixie build chroot with the target kernel's headers, for
# building kernel code on a host whose glibc/gcc are too old for the trixie
# headers' build tools.
#
#   scripts/trixie-chroot.sh                 create it if missing, print its path
#   scripts/trixie-chroot.sh CMD [ARG...]    run CMD inside, in the repo
#
# The repository is bind-mounted at the same path inside the chroot and CMD
# starts in the caller's working directory when that is inside the repo
# (else in the repo root). Mounts live in a private mount namespace and go
# away with the command. Needs root (debootstrap, chroot, mount).
#
# Location: $FAMFS_CACHE/chroot (default <repo>/cache/trixie/chroot, for
# FAMFS_KLINE=7.3 <repo>/cache/trixie-7.3/chroot: see trixie-cache.sh).
# FAMFS_CHROOT_BIND="DIR ..." binds more host directories at the same path
# inside (e.g. the debug kernel's tree in the cache).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
C=$("$top/scripts/trixie-cache.sh" --dir)
R=$C/chroot

log() { echo "trixie-chroot: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
command -v debootstrap >/dev/null ||
	die "debootstrap missing (run: DEPS_KERNEL=1 scripts/deps.sh)"

kver=$("$top/scripts/trixie-cache.sh")
abi=${kver%-amd64}

mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources \
	2>/dev/null | grep -v security | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}

if [ ! -f "$R/.famfs-base" ]; then
	log "debootstrap trixie into $R (about a minute)"
	rm -rf "$R"
	mkdir -p "$R"
	debootstrap --variant=buildd \
		--include=gcc-14,libelf1t64,libssl3t64,libzstd1,zlib1g,dwarves,xz-utils,patch,kmod \
		trixie "$R" "$mirror" >"$C/debootstrap.log" 2>&1 || {
		tail -n 20 "$C/debootstrap.log" >&2
		die "debootstrap failed (log: $C/debootstrap.log)"
	}
	rm -rf "$R/var/cache/apt/archives/"*.deb
	touch "$R/.famfs-base"
fi

# Headers and kbuild of the current target kernel, unpacked straight into
# the chroot (their dependencies are all in the base set).
if [ "$(cat "$R/.famfs-headers" 2>/dev/null)" != "$kver" ]; then
	log "installing headers for $kver"
	for old in "$R"/usr/src/linux-headers-*; do
		[ -e "$old" ] || continue
		case $old in *"/linux-headers-$abi"*) ;; *) rm -rf "$old" ;; esac
	done
	for d in "$C/debs/linux-headers-$kver"_*.deb \
		"$C/debs/linux-headers-$abi-common"_*.deb \
		"$C/debs/linux-kbuild-$abi"_*.deb; do
		[ -f "$d" ] || die "missing $d (cache incomplete?)"
		dpkg -x "$d" "$R"
	done
	[ -d "$R/usr/src/linux-headers-$kver" ] || die "headers not unpacked"
	# The image's System.map/config are handy for checks in the chroot.
	mkdir -p "$R/boot"
	cp -f "$C/root/boot/config-$kver" "$C/root/boot/System.map-$kver" "$R/boot/" 2>/dev/null || true
	echo "$kver" >"$R/.famfs-headers"
fi

# Package groups installed once with apt inside the chroot when asked for
# (and again when a list changes); another caller may hold dpkg's lock,
# so wait for it instead of failing.
#   FAMFS_CHROOT_USERSPACE=1   user-space build tools for the guest's daemon
#                              and CLI (they must link trixie's libfuse3/glibc)
#   FAMFS_CHROOT_KERNELTREE=1  what configuring and building a full kernel
#                              tree needs, and sparse (dkms/full-tree-check.sh)
USERSPACE_PKGS="meson ninja-build pkg-config gcc libfuse3-dev zlib1g-dev uuid-dev libblkid-dev libsystemd-dev libyaml-dev libjson-c-dev libmicrohttpd-dev"
KERNELTREE_PKGS="make flex bison bc libssl-dev libelf-dev sparse zstd"
apt_group() { # NAME PKG...
	name=$1
	shift
	[ "$(cat "$R/.famfs-$name" 2>/dev/null)" != "$*" ] || return 0
	log "installing $name packages: $*"
	unshare -m --propagation private sh -eu -c '
		R=$1; shift
		mount -t proc proc "$R/proc"
		mount --bind /dev "$R/dev"
		cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
		chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c "
			apt-get -o DPkg::Lock::Timeout=300 update -qq &&
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
				--no-install-recommends $* &&
			apt-get clean"
	' sh "$R" "$@" >"$C/chroot-$name.log" 2>&1 || {
		tail -n 20 "$C/chroot-$name.log" >&2
		die "installing $name packages failed (log: $C/chroot-$name.log)"
	}
	echo "$*" >"$R/.famfs-$name"
}
# shellcheck disable=SC2086
[ -z "${FAMFS_CHROOT_USERSPACE:-}" ] || apt_group userspace $USERSPACE_PKGS
# shellcheck disable=SC2086
[ -z "${FAMFS_CHROOT_KERNELTREE:-}" ] || apt_group kerneltree $KERNELTREE_PKGS

if [ $# -eq 0 ]; then
	echo "$R"
	exit 0
fi

cwd=$(pwd)
case $cwd in "$top"|"$top"/*) ;; *) cwd=$top ;; esac
# In a git worktree .git is a file naming the repository elsewhere: bind
# that too, so git works inside (the package build reads HEAD).
gitdir=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
case $gitdir in "$top"/*) gitdir= ;; esac

# Run in a private mount namespace: nothing to clean up afterwards.
exec unshare -m --propagation private sh -eu -c '
	R=$1 top=$2 cwd=$3 gitdir=$4 binds=$5; shift 5
	mount -t proc proc "$R/proc"
	mount --bind /dev "$R/dev"
	mount -t tmpfs tmpfs "$R/tmp"
	# After /tmp: a checkout under /tmp must not be hidden by the tmpfs.
	mkdir -p "$R$top"
	mount --bind "$top" "$R$top"
	if [ -n "$gitdir" ]; then
		mkdir -p "$R$gitdir"
		mount --bind "$gitdir" "$R$gitdir"
	fi
	for b in $binds; do
		mkdir -p "$R$b"
		mount --bind "$b" "$R$b"
	done
	# Make the chroot look like a trixie system with the kernel line
	# linux-source-LINE (6.12, or 7.3 from trixie-backports).
	for src in "$(dirname "$R")"/root/usr/src/linux-source-*.tar.xz; do
		[ -f "$src" ] || continue
		: >"$R/usr/src/${src##*/}"
		mount --bind "$src" "$R/usr/src/${src##*/}"
	done
	cd /
	exec chroot "$R" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		KVER="$(cat "$R/.famfs-headers")" \
		sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' sh "$R" "$top" "$cwd" "$gitdir" "${FAMFS_CHROOT_BIND:-}" "$@"
