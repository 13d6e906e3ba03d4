#!/bin/sh
# Install every Debian package the build, the tests and the tools need.
# Idempotent: only missing packages are installed, and apt's lists are
# refreshed only when something has to be installed.
set -eu

# Grouped by what needs them; keep this the single list of build deps.
BUILD="build-essential pkg-config meson ninja-build clang libclang-rt-14-dev
       zlib1g-dev uuid-dev libblkid-dev libfuse3-dev libsystemd-dev libyaml-dev
       libjson-c-dev libmicrohttpd-dev"
TEST="libcmocka-dev fuse3 python3 python3-pytest python3-pytest-timeout
      python3-yaml util-linux dbus python3-dbus python3-gi rsync"
# Packages inside the trixie chroot (kernel builds, sparse, the guest's user
# space) are listed in scripts/trixie-chroot.sh, which installs them there.
KERNEL="debootstrap qemu-system-x86 qemu-utils busybox-static cpio xz-utils
        zstd kmod ndctl"
PACKAGE="debhelper dh-dkms dkms dpkg-dev fakeroot lintian rpm rpmlint"
BENCH="gnuplot-nox"

want=""
for p in $BUILD $TEST ${DEPS_KERNEL:+$KERNEL} ${DEPS_PACKAGE:+$PACKAGE} \
	${DEPS_BENCH:+$BENCH}; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || want="$want $p"
done

[ -z "$want" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$want" >&2
	echo "deps: run 'sudo $0' or install them with apt-get" >&2
	exit 1
fi

echo "deps: installing:$want"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $want >/dev/null
