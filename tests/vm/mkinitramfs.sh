#!/bin/sh
# Build the base initramfs of the VM tests: busybox, ndctl with its
# libraries, and the trixie kernel modules the guests need (with their
# dependencies, resolved from each module's depends= field because this
# host has no depmod for the trixie tree). Cached: rebuilt only when one of
# its inputs changes.
#
#   tests/vm/mkinitramfs.sh KVER OUT.cpio.gz
#   MKINITRAMFS_MODULES=DIR   take the modules from DIR (a modules_install
#                             tree, e.g. the debug kernel's) instead of the
#                             trixie image's /usr/lib/modules/KVER
#
# Our own files (famfs_fuse.ko, the guest scripts and the test cases) are
# not in here: run.sh appends them as a second, uncompressed cpio archive
# on every run.
set -eu

kver=${1:?usage: mkinitramfs.sh KVER OUT}
out=${2:?usage: mkinitramfs.sh KVER OUT}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
C=$("$top/scripts/trixie-cache.sh" --dir)
mods=${MKINITRAMFS_MODULES:-$C/root/usr/lib/modules/$kver}

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }

[ -d "$mods/kernel" ] || die "no modules for $kver in $C/root (run scripts/trixie-cache.sh)"
bb=$(command -v busybox) || die "busybox missing (DEPS_KERNEL=1 scripts/deps.sh)"
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$bb" 2>&1 | grep -q 'not a dynamic' ||
	die "$bb is not static (install busybox-static)"
for t in cpio gzip xz modinfo ldd; do
	command -v $t >/dev/null || die "$t missing"
done

# Host binaries copied into the guest with their shared libraries.
bins=$(command -v ndctl) || die "ndctl missing (DEPS_KERNEL=1 scripts/deps.sh)"
# Modules the guest loads at boot, dependencies first (see guest/init).
# More modules of one kernel line: modules-LINE (e.g. modules-7.3).
line=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
lm=
[ ! -f "$here/modules-$line" ] || lm=$here/modules-$line
roots=$(cat "$here/modules" $lm | grep -v '^[[:space:]]*\(#\|$\)')

key=$( {
	echo "$kver $mods"
	cat "$0" "$here/modules" $lm
	md5sum "$bb" $bins
	for b in $bins; do ldd "$b" | sed "s/ (0x[0-9a-f]*)//"; done
} | md5sum | cut -d' ' -f1)
if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
	exit 0
fi

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
r=$w/root
mkdir -p "$r/bin" "$r/sbin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/run" \
	"$r/mnt" "$r/etc" "$r/lib/modules" "$r/usr/bin" "$r/usr/sbin" "$r/root"
cp "$bb" "$r/bin/busybox"
for a in $("$bb" --list); do
	[ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"
done

# Shared libraries: same paths as on the host.
for b in $bins; do
	cp "$b" "$r/usr/bin/"
	ldd "$b" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r l; do
		mkdir -p "$r$(dirname "$l")"
		cp -L "$l" "$r$l"
	done
done
mkdir -p "$r/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$r/lib64/"

# name -> path index of the image's modules (names use _ for -).
idx=$w/index
find "$mods/kernel" -name '*.ko*' | awk '{ n = $0; sub(/.*\//, "", n);
	sub(/\.ko.*/, "", n); gsub(/-/, "_", n); print n, $0 }' >"$idx"

# Depth-first: dependencies before the module itself. (local: dash and
# busybox sh have it.)
order=$w/order
: >"$order"
add() {
	local n p dep
	n=$(echo "$1" | tr - _)
	grep -qx "$n" "$order" && return 0
	p=$(awk -v n="$n" '$1 == n {print $2; exit}' "$idx")
	if [ -z "$p" ]; then
		grep -q "/$n.ko" "$mods/modules.builtin" 2>/dev/null && return 0
		grep -q "/$(echo "$1" | tr _ -).ko" "$mods/modules.builtin" 2>/dev/null && return 0
		die "module $1 not found for $kver"
	fi
	for dep in $(modinfo -F depends "$p" | tr , ' '); do
		add "$dep"
	done
	grep -qx "$n" "$order" && return 0
	echo "$n" >>"$order"
	case $p in
	*.xz) xz -dc "$p" >"$r/lib/modules/$n.ko" ;;
	*.zst) zstd -qdc "$p" >"$r/lib/modules/$n.ko" ;;
	*.gz) gzip -dc "$p" >"$r/lib/modules/$n.ko" ;;
	*) cp "$p" "$r/lib/modules/$n.ko" ;;
	esac
}
for m in $roots; do add "$m"; done
cp "$order" "$r/lib/modules/load-order"
echo "$kver" >"$r/etc/kernel-release"

(cd "$r" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$key" >"$out.key"
echo "mkinitramfs: $(wc -l <"$order") modules, $(du -h "$out" | cut -f1) -> $out" >&2
