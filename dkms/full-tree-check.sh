#!/bin/sh
# Check a kernel line's patch series (patches/LINE/) as an upstream series:
# it applies cleanly to the whole linux-source-LINE tree and fs/fuse (famfs_dax.c included) builds
# there with Debian's kernel configuration, with no W=1 or sparse warning
# in the files the series touches that the unpatched tree does not have.
# The rename (rename.sh) is not involved: this is the code that goes
# upstream.
#
# Runs where the kernel's build tools are: a trixie system, or on another
# host inside the cached chroot, which has them when asked for:
#   FAMFS_CHROOT_KERNELTREE=1 scripts/trixie-chroot.sh dkms/full-tree-check.sh
#
# usage: full-tree-check.sh [-k KVER] [--src TARBALL] [--config FILE]
#                           [-o WORKDIR] [-j N] [--keep] [--key|--plan]
#   -k KVER       kernel whose Debian configuration to use (default: $KVER,
#                 else uname -r)
#   --src FILE    linux-source tarball (default
#                 /usr/src/linux-source-LINE.tar.xz, LINE from KVER)
#   --config FILE kernel configuration (default: the .config of
#                 /usr/src/linux-headers-KVER, i.e. Debian's)
#   -o WORKDIR    where the tree is unpacked and the logs kept
#                 (default: build/fulltree next to this script)
#   --keep        keep the unpacked tree (about 1.7 GB) after the run
#   --key         print the cache key of the inputs and exit (runs anywhere)
#   --plan        print how many ok/not ok lines a run makes for this
#                 series, and exit (runs anywhere): one per patch, one
#                 more per patch that touches code, and the checks of the
#                 patched tree (one per C file the series adds to fs/fuse)
#
# Prints one "ok - ..." / "not ok - ..." line per check, the new warnings
# before a failing line, and exits 1 if a check failed, 2 if the check
# could not run (no tools, no source). Logs stay in WORKDIR. It takes about
# a minute on 2 cores; tests/vm/full-tree.sh caches its result by --key (a
# hash of this script, the series and the kernel version).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
kver=${KVER:-}
src=
config=
out=$here/build/fulltree
jobs=2
keep=0
keyonly=0

die() { echo "full-tree-check: error: $*" >&2; exit 2; }
log() { echo "full-tree-check: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=$2; shift 2 ;;
	--src) src=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--key) keyonly=1; shift ;;
	--plan) keyonly=plan; shift ;;
	-h|--help) sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;$d'; exit 0 ;;
	*) die "unknown argument: $1" ;;
	esac
done
kver=${kver:-$(uname -r)}
line=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
pd=$here/patches/$line
[ -n "$line" ] && [ -f "$pd/series" ] || die "no series for kernel $kver in $here/patches"
src=${src:-/usr/src/linux-source-$line.tar.xz}
series=$(grep -v '^[[:space:]]*\(#\|$\)' "$pd/series")

# builds_fuse PATCH: the patch touches code, and fs/fuse is built after it
builds_fuse() { grep -qE '^\+\+\+ b/(fs|include)/' "$1"; }
# new_objects: the objects of the C files the series adds to fs/fuse
new_objects() {
	for p in $series; do
		awk '/^--- \/dev\/null/ { n = 1; next }
			n && /^\+\+\+ b\/fs\/fuse\/.*\.c$/ { sub(".*/", ""); sub("\\.c$", ".o"); print }
			{ n = 0 }' "$pd/$p"
	done
}

if [ $keyonly = plan ]; then
	# The loop below: "applies" per patch, "builds" per code patch; then
	# the configuration, the build, each new object, "every object
	# checked", and the gcc and sparse warnings.
	n=0
	for p in $series; do
		n=$((n + 1))
		if builds_fuse "$pd/$p"; then n=$((n + 1)); fi
	done
	echo $((n + 2 + $(new_objects | wc -l) + 1 + 2))
	exit 0
fi
if [ $keyonly = 1 ]; then
	{
		echo "$kver"
		cat "$0" "$pd/series"
		for p in $series; do cat "$pd/$p"; done
	} | sha256sum | cut -c1-16
	exit 0
fi
config=${config:-/usr/src/linux-headers-$kver/.config}
[ -f "$src" ] || die "no kernel source at $src (install linux-source-$line)"
[ -f "$config" ] || die "no kernel configuration $config (install linux-headers-$kver)"
for tool in make flex bison bc sparse patch; do
	command -v $tool >/dev/null ||
		die "$tool missing (in the chroot: FAMFS_CHROOT_KERNELTREE=1)"
done
# The compiler the Debian kernel was built with (CONFIG_CC_VERSION_TEXT),
# so that olddefconfig keeps every compiler-dependent option.
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$config")
command -v "$cc" >/dev/null 2>&1 || cc=gcc

rm -rf "$out"
mkdir -p "$out"
res=$out/result
: >"$res"
tree=$out/linux
cleanup() { [ $keep = 1 ] || rm -rf "$tree"; }
trap cleanup EXIT

now() { date +%s; }
t_all=$(now)
step() { log "$* ($(($(now) - t_all)) s)"; }
ok() { echo "ok - $*" | tee -a "$res"; }
notok() { echo "not ok - $*" | tee -a "$res"; }
# check NAME CMD...: one check; its output goes to $out/NAME.log and is
# shown (last lines) when it fails.
check() {
	name=$1
	shift
	if "$@" >"$out/log" 2>&1; then
		ok "$name"
	else
		tail -n 30 "$out/log" | sed 's/^/    /' | tee -a "$res"
		notok "$name"
		return 1
	fi
}
kmake() {
	make -C "$tree" -s -j"$jobs" CC="$cc" HOSTCC="$cc" "$@"
}

step "unpacking $src"
mkdir -p "$tree"
tar -xJf "$src" -C "$tree" --strip-components=1 ||
	die "cannot unpack $src"

step "configuring like Debian's $kver"
cp "$config" "$tree/.config"
kmake olddefconfig >"$out/config.log" 2>&1 ||
	die "make olddefconfig failed: $(tail -n 5 "$out/config.log")"
step "modules_prepare"
kmake modules_prepare >"$out/prepare.log" 2>&1 ||
	die "make modules_prepare failed: $(tail -n 5 "$out/prepare.log")"

# W=1 warnings come from the compiler ("... [-Wname]"), the others on the
# same "file:line:col: warning:" form from sparse (C=2: every file, built
# or not). Line numbers move with the patches: compare without them.
build_fuse() { # LOG [C=2]
	make -C "$tree" -j"$jobs" CC="$cc" HOSTCC="$cc" W=1 ${2:-} fs/fuse/ >"$1" 2>&1
}
# A comparison of nothing proves nothing: every object of fs/fuse must
# have been compiled with W=1's flags and checked by sparse.
really_checked() { # LOG
	n=0
	for o in "$tree"/fs/fuse/*.o; do
		c=fs/fuse/$(basename "$o" .o).c
		[ -f "$tree/$c" ] || continue # a composite object
		grep -q -- '-DKBUILD_EXTRA_WARN1' "${o%/*}/.${o##*/}.cmd" || {
			echo "$c was not compiled with W=1"; return 1; }
		[ -n "$nosparse" ] || grep -qE "^ *CHECK +$c\$" "$1" || {
			echo "sparse did not check $c"; return 1; }
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "no objects in fs/fuse"; return 1; }
	echo "$n"
}
warnings() { # LOG KIND(gcc|sparse): "file: message", one a line, sorted
	grep -E '^[^ :]+:[0-9]+:([0-9]+:)? (warning|error):' "$1" |
		if [ "$2" = gcc ]; then grep -E '\[-W[^]]*\]$'; else grep -vE '\[-W[^]]*\]$'; fi |
		sed -E 's/^([^ :]+):[0-9]+:([0-9]+:)? /\1: /' | LC_ALL=C sort || true
}
touched=$(for p in $series; do sed -n 's|^+++ b/||p' "$pd/$p"; done | sort -u)
# new_warnings LOG KIND: its warnings beyond their count in the unpatched
# build, in files the series touches.
new_warnings() {
	warnings "$1" "$2" | LC_ALL=C comm -13 "$out/base.$2" - |
		while IFS= read -r w; do
			for f in $touched; do
				case $w in "$f: "*) echo "$w"; break ;; esac
			done
		done
}

step "building unpatched fs/fuse (W=1, sparse)"
nosparse=
build_fuse "$out/base.log" C=2 ||
	die "the unpatched fs/fuse does not build: $(tail -n 5 "$out/base.log")"
# The kernel refuses a sparse too old for its sources (7.3 uses
# __typeof_unqual__, which sparse 0.6.4, the newest in trixie and
# trixie-backports, cannot parse): then W=1 alone is checked, and the
# sparse check is reported as impossible here.
if grep -q 'specified, but .* is not available or not up to date' "$out/base.log"; then
	nosparse="$(sparse --version 2>/dev/null | head -n1 || echo '?'), the newest Debian trixie and trixie-backports have, is rejected by this kernel's scripts/checker-valid.sh (it cannot parse __typeof_unqual__)"
	log "no sparse check: $nosparse"
fi
nbase=$(really_checked "$out/base.log") || die "unpatched build: $nbase"
warnings "$out/base.log" gcc >"$out/base.gcc"
warnings "$out/base.log" sparse >"$out/base.sparse"

# Patch by patch: each applies exactly and, if it touches code, fs/fuse
# builds with it and the ones before (a series must bisect).
applied=1
for p in $series; do
	step "applying and building $p"
	name="$p applies to the full tree without offset or fuzz"
	if patch -d "$tree" -p1 --forward --batch --fuzz=0 \
		<"$pd/$p" >"$out/log" 2>&1 &&
		! grep -qE 'offset|fuzz' "$out/log"; then
		ok "$name"
	else
		sed 's/^/    /' "$out/log" | tee -a "$res"
		notok "$name"
		applied=0
	fi
	[ $applied = 1 ] || continue
	builds_fuse "$pd/$p" || continue
	name="fs/fuse builds with ${p%%-*} (W=1, no new warnings)"
	# famfs support is off unless asked for (a privileged feature): on,
	# as the DKMS build has it (a no-op before the patch that adds it)
	"$tree/scripts/config" --file "$tree/.config" --enable FUSE_FAMFS_DAX
	kmake olddefconfig >"$out/config.log" 2>&1 ||
		die "make olddefconfig failed: $(tail -n 5 "$out/config.log")"
	if ! build_fuse "$out/step.log"; then
		grep -E 'error|Error' "$out/step.log" | head -n 20 |
			sed 's/^/    /' | tee -a "$res"
		notok "$name"
	elif new=$(new_warnings "$out/step.log" gcc) && [ -n "$new" ]; then
		echo "$new" | sed 's/^/    /' | tee -a "$res"
		notok "$name"
	else
		ok "$name"
	fi
done

if [ $applied = 1 ]; then
	step "building patched fs/fuse from scratch (W=1, sparse)"
	check "CONFIG_FUSE_FAMFS_DAX=y with Debian's configuration once enabled" \
		grep -x 'CONFIG_FUSE_FAMFS_DAX=y' "$tree/.config" || true
	rm -f "$tree"/fs/fuse/*.o
	if build_fuse "$out/patched.log" C=2; then
		ok "fs/fuse with the series builds in the full tree"
	else
		grep -E 'error|Error' "$out/patched.log" | head -n 30 |
			sed 's/^/    /' | tee -a "$res"
		notok "fs/fuse with the series builds in the full tree"
	fi
	# Every C file the series adds to fs/fuse (famfs.c, the dax glue).
	for o in $(new_objects); do
		check "fs/fuse/$o built in" test -f "$tree/fs/fuse/$o" || true
	done
	what="compiled with W=1 and checked by sparse"
	[ -z "$nosparse" ] || what="compiled with W=1 (no sparse here, below)"
	check "every fs/fuse object $what" really_checked "$out/patched.log" || true
	npatched=$(really_checked "$out/patched.log" || echo 0)
	for kind in gcc sparse; do
		what=$([ $kind = gcc ] && echo "W=1" || echo "sparse")
		if [ $kind = sparse ] && [ -n "$nosparse" ]; then
			echo "ok - no new sparse warnings in the files the series touches # SKIP impossible: sparse $nosparse" |
				tee -a "$res"
			continue
		fi
		new=$(new_warnings "$out/patched.log" $kind)
		if [ -z "$new" ]; then
			ok "no new $what warnings in the files the series touches ($nbase files checked before, $npatched after; $(wc -l <"$out/base.$kind") and $(warnings "$out/patched.log" $kind | wc -l) warnings in all)"
		else
			echo "$new" | sed 's/^/    /' | tee -a "$res"
			notok "no new $what warnings in the files the series touches"
		fi
	done
fi

step "done"
if grep -q '^not ok' "$res"; then exit 1; fi
