#!/bin/sh
# The debug kernel of the VM tier (make vm-test-debug, vm-test-debug-7.3):
# the kernel of the line FAMFS_KLINE (trixie's 6.12 by default, or
# trixie-backports' 7.3) built from linux-source-LINE with Debian's
# configuration plus the options of debug-kernel.config (KASAN, lockdep,
# DEBUG_ATOMIC_SLEEP, DEBUG_VM), trimmed by localmodconfig to the modules the
# guest loads (tests/vm/modules, tests/vm/modules-LINE, and their
# dependencies). Built in the trixie chroot, once: the result is
# kept in $FAMFS_CACHE/debugkernel/KEY, KEY a hash of its inputs (this
# script, the fragment, the module lists, Debian's configuration and the
# source tarball), and shared by every checkout. Each line has its own
# cache (scripts/trixie-cache.sh), so each its own debug kernel.
#
#   tests/vm/debug-kernel.sh        build it if needed; print its directory
#   tests/vm/debug-kernel.sh --key  print KEY only
#
# The directory holds bzImage, kernel.release, modules/ (modules_install)
# and linux/, the built tree that external modules are built against
# (objects deleted). A cold build takes one to two hours on 2 cores; it runs
# at nice 19, and one at a time (a lock in the cache). Needs root (the
# chroot). Never loads anything into the host's kernel.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
C=$("$top/scripts/trixie-cache.sh" --dir)
D=$C/debugkernel
line=${FAMFS_KLINE:-6.12}
# The guest's modules: the common list and the line's own, if any.
modlists=$here/modules
[ ! -f "$here/modules-$line" ] || modlists="$modlists $here/modules-$line"

die() { echo "debug-kernel: error: $*" >&2; exit 1; }
log() { echo "debug-kernel: $*" >&2; }

# Inside the chroot: debug-kernel.sh --build DIR KVER LINE. DIR holds lsmod.
if [ "${1:-}" = --build ]; then
	out=$2 kver=$3 line=$4
	src=/usr/src/linux-source-$line.tar.xz
	t=$out/linux
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "/boot/config-$kver")
	command -v "$cc" >/dev/null 2>&1 || cc=gcc
	kmake() { nice -n 19 make -C "$t" -j2 CC="$cc" HOSTCC="$cc" "$@"; }
	log "unpacking $src"
	rm -rf "$t"
	mkdir -p "$t"
	tar -xJf "$src" -C "$t" --strip-components=1
	cp "/boot/config-$kver" "$t/.config"
	log "configuring: Debian's $kver, localmodconfig, debug-kernel.config"
	kmake -s olddefconfig
	kmake -s LSMOD="$out/lsmod" localmodconfig </dev/null
	cat "$here/debug-kernel.config" >>"$t/.config"
	kmake -s olddefconfig
	# Every line of the fragment must hold.
	grep -E '^(CONFIG_|# CONFIG_)' "$here/debug-kernel.config" | while IFS= read -r l; do
		case $l in
		"# "*) s=${l#\# }; s=${s%% *}
			! grep -q "^$s=" "$t/.config" || die "$s is still set" ;;
		*) grep -qxF "$l" "$t/.config" || die "$l did not hold" ;;
		esac
	done
	log "building bzImage and modules (nice 19, -j2)"
	kmake bzImage modules
	rm -rf "$out/modules"
	kmake -s INSTALL_MOD_PATH="$out/modules" modules_install
	cp "$t/arch/x86/boot/bzImage" "$out/bzImage"
	cp "$t/include/config/kernel.release" "$out/kernel.release"
	# What external module builds need stays (.config, headers, scripts,
	# Module.symvers, objtool); the objects go.
	find "$t" -name '*.o' ! -path "$t/scripts/*" ! -path "$t/tools/*" -delete
	rm -f "$t/vmlinux" "$t/vmlinux.a" "$t/arch/x86/boot/compressed/vmlinux"
	exit 0
fi

kver=$("$top/scripts/trixie-cache.sh") || die "trixie cache failed"
config=$C/root/boot/config-$kver
tarball=$C/root/usr/src/linux-source-$line.tar.xz
[ -f "$config" ] || die "no $config"
[ -f "$tarball" ] || die "no $tarball"
key=$( {
	echo "$kver"
	ls -l --time-style=+%s "$tarball" | awk '{print $5, $6}'
	# shellcheck disable=SC2086 # a list of files
	cat "$0" "$here/debug-kernel.config" $modlists "$config"
} | sha256sum | cut -c1-16)
if [ "${1:-}" = --key ]; then
	echo "$key"
	exit 0
fi
out=$D/$key
if [ -f "$out/ok" ]; then
	echo "$out"
	exit 0
fi

# One kernel build at a time on this machine (other checkouts included).
mkdir -p "$D"
exec 9>"$D/.lock"
if ! flock -n 9; then
	log "another debug-kernel build is running; waiting for it"
	flock 9
fi
if [ -f "$out/ok" ]; then
	echo "$out"
	exit 0
fi
rm -rf "$out"
mkdir -p "$out"

# The modules the guest loads, with their dependencies, as lsmod would list
# them (localmodconfig keeps these and drops every other module).
mods=$C/root/usr/lib/modules/$kver
# shellcheck disable=SC2086 # a list of files
roots=$(cat $modlists | grep -v '^[[:space:]]*\(#\|$\)')
{
	echo "Module                  Size  Used by"
	todo=$roots seen=
	while [ -n "$todo" ]; do
		set -- $todo
		m=$1
		shift
		todo=$*
		case " $seen " in *" $m "*) continue ;; esac
		seen="$seen $m"
		p=$(find "$mods/kernel" -name "$m.ko*" -o -name "$(echo "$m" | tr _ -).ko*" | head -n1)
		[ -n "$p" ] || continue # built in
		echo "$m 16384 0"
		todo="$todo $(modinfo -F depends "$p" | tr , ' ')"
	done
} >"$out/lsmod"
log "building $key for modules: $(awk 'NR > 1 {printf "%s ", $1}' "$out/lsmod")"

start=$(date +%s)
FAMFS_KLINE=$line FAMFS_CHROOT_KERNELTREE=1 FAMFS_CHROOT_BIND="$D" \
	"$top/scripts/trixie-chroot.sh" tests/vm/debug-kernel.sh --build "$out" "$kver" "$line" >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "debug kernel build failed (log: $out/build.log)"
}
echo $(($(date +%s) - start)) >"$out/build-seconds"
touch "$out/ok"
log "built $(cat "$out/kernel.release") in $(cat "$out/build-seconds") s: $out"
echo "$out"
