#!/bin/sh
# Build famfs_fuse.ko for a Debian kernel of a supported line (trixie's
# 6.12, trixie-backports' 7.3) from that line's linux-source-LINE, our patch
# series for the line (patches/LINE/) and the rename script. DKMS runs this
# (see dkms.conf); on a non-trixie host run it inside scripts/trixie-chroot.sh.
#
# usage: build.sh [-k KVER] [--kdir DIR] [--src TARBALL] [-o OUTDIR] [-j N]
#                 [--line LINE] [--prepare] [--no-rename] [--clean]
#   -k KVER      target kernel release (default: $kernelver, else uname -r)
#   --kdir DIR   its build tree (default /lib/modules/KVER/build)
#   --line LINE  kernel line, e.g. 6.12 (default: the first two numbers of KVER)
#   --src FILE   linux-source tarball (default /usr/src/linux-source-LINE.tar.xz)
#   -o OUTDIR    work and output directory (default: build/ next to this script)
#   --prepare    extract, patch and rename, but do not compile
#   --no-rename  stop after the series (a plain fs/fuse tree, for review)
#   --clean      remove OUTDIR
#
# Result: OUTDIR/famfs_fuse.ko. OUTDIR/tree is the partial kernel tree it was
# built from. Unchanged inputs are not rebuilt.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
kver=${kernelver:-}
kdir=
src=
line=
out=$here/build
jobs=2
prepare=0
rename=1

die() { echo "famfs-dkms: error: $*" >&2; exit 1; }
log() { echo "famfs-dkms: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=$2; shift 2 ;;
	--kdir) kdir=$2; shift 2 ;;
	--src) src=$2; shift 2 ;;
	--line) line=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	--prepare) prepare=1; shift ;;
	--no-rename) rename=0; prepare=1; shift ;;
	--clean) rm -rf "$out"; exit 0 ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
	*) die "unknown argument: $1" ;;
	esac
done

kver=${kver:-$(uname -r)}
kdir=${kdir:-/lib/modules/$kver/build}
line=${line:-$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')}
pd=$here/patches/$line
[ -n "$line" ] && [ -f "$pd/series" ] ||
	die "kernel $kver is not supported: famfs-dkms has series for $(ls "$here/patches" | tr '\n' ' ')"
src=${src:-/usr/src/linux-source-$line.tar.xz}
# The paths taken from the tarball: the series' own list, else the common one.
sf=$pd/source-files
[ -f "$sf" ] || sf=$here/source-files
[ -f "$src" ] || die "no kernel source at $src (install linux-source-$line)"
if [ $prepare = 0 ]; then
	[ -f "$kdir/Makefile" ] ||
		die "no kernel build tree at $kdir (install linux-headers-$kver)"
fi

# The upstream version the target kernel was built from, e.g. 6.12.118.
target_version() {
	r=
	[ -f "$kdir/include/config/kernel.release" ] &&
		r=$(cat "$kdir/include/config/kernel.release")
	r=${r:-$kver}
	echo "$r" | sed 's/^\([0-9]*\.[0-9]*\.[0-9]*\).*/\1/'
}

# Inputs that decide the result: any change rebuilds from scratch.
inputs() {
	ls -l --time-style=+%s "$src" | awk '{print $5, $6}'
	echo "$kver $kdir $rename $prepare $line"
	cat "$here/rename.sh" "$sf" "$pd/series"
	grep -v '^[[:space:]]*\(#\|$\)' "$pd/series" | while read -r p; do
		cat "$pd/$p"
	done
	cat "$here/include/uapi/"*.h 2>/dev/null || true
}
mkdir -p "$out"
out=$(cd "$out" && pwd) # make -C elsewhere needs it absolute
stamp=$(inputs | md5sum | cut -d' ' -f1)
if [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ] &&
	{ [ $prepare = 1 ] || [ -f "$out/famfs_fuse.ko" ]; }; then
	log "up to date: $out"
	exit 0
fi
rm -f "$out/stamp" "$out/famfs_fuse.ko"

# 1. Pristine sources, extracted once per tarball and file list.
tarid=$(ls -l --time-style=+%s "$src" | awk '{print $5 "-" $6}')-$(md5sum <"$sf" | cut -c1-12)
pristine=$out/pristine
if [ "$(cat "$pristine/.tarid" 2>/dev/null)" != "$tarid" ]; then
	log "extracting fs/fuse and friends from $src"
	rm -rf "$pristine" "$pristine.tmp"
	mkdir -p "$pristine.tmp"
	list=$(grep -v '^[[:space:]]*\(#\|$\)' "$sf" |
		sed "s|^|linux-source-$line/|")
	# shellcheck disable=SC2086
	tar -xJf "$src" -C "$pristine.tmp" --strip-components=1 $list ||
		die "cannot extract sources from $src"
	echo "$tarid" >"$pristine.tmp/.tarid"
	mv "$pristine.tmp" "$pristine"
fi

# 2. Refuse a source that is not the target kernel's.
sv=$(awk -F' *= *' '/^VERSION/{v=$2} /^PATCHLEVEL/{p=$2} /^SUBLEVEL/{s=$2}
	END{print v "." p "." s}' "$pristine/Makefile")
if [ $prepare = 0 ]; then
	tv=$(target_version)
	[ "$sv" = "$tv" ] || die "linux-source is $sv but kernel $kver is $tv;
  the private headers taken from it must match the running kernel exactly.
  Install the linux-source-$line package of the same version as linux-image-$kver."
	# On a Debian system also compare the package revisions.
	if command -v dpkg-query >/dev/null 2>&1; then
		a=$(dpkg-query -W -f='${Version}' "linux-source-$line" 2>/dev/null || true)
		b=$(dpkg-query -W -f='${Version}' "linux-headers-$kver" 2>/dev/null || true)
		[ -z "$a" ] || [ -z "$b" ] || [ "$a" = "$b" ] ||
			die "linux-source-$line $a does not match linux-headers-$kver $b"
	fi
fi

# 3. A fresh tree: pristine + series (+ rename).
t=$out/tree
rm -rf "$t"
cp -a "$pristine" "$t"
n=0
for p in $(grep -v '^[[:space:]]*\(#\|$\)' "$pd/series"); do
	patch -d "$t" -p1 --forward --batch --fuzz=0 -s <"$pd/$p" ||
		die "patch $p does not apply to linux-source $sv"
	n=$((n + 1))
done
log "applied $n patches of the $line series"
if [ $rename = 1 ]; then
	sh "$here/rename.sh" "$t" >&2
fi
if [ $prepare = 1 ]; then
	echo "$stamp" >"$out/stamp"
	log "prepared tree: $t"
	exit 0
fi

# 4. Build.
log "building against $kdir"
make -C "$kdir" M="$t/fs/fuse" -j"$jobs" modules >&2 ||
	die "module build failed"
ko=$t/fs/fuse/famfs_fuse.ko
[ -f "$ko" ] || die "no famfs_fuse.ko produced"

# 5. None of our exports may clash with the kernel's.
if [ -f "$kdir/Module.symvers" ] && [ -f "$t/fs/fuse/Module.symvers" ]; then
	clash=$(awk 'NR==FNR {k[$2]=1; next} ($2 in k) {print $2}' \
		"$kdir/Module.symvers" "$t/fs/fuse/Module.symvers")
	[ -z "$clash" ] || die "exports clash with the kernel's: $clash"
fi
cp "$ko" "$out/famfs_fuse.ko"
echo "$stamp" >"$out/stamp"
log "built $out/famfs_fuse.ko for $kver (source $sv)"
