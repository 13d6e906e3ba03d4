#!/bin/sh
# The VM test tier: builds famfs_fuse.ko for the trixie kernel (in the
# trixie chroot), boots that kernel in QEMU with a busybox initramfs and an
# NVDIMM, runs tests/vm/cases/*.sh in the guest, then the pair (two guests
# sharing one NVDIMM backing file, tests/vm/pair/), and prints one line per
# check, then "N passed, N failed, N skipped". Exit status 0 only if all passed.
#
#   tests/vm/run.sh [CASE,...]     e.g. tests/vm/run.sh 10-module; "pair"
#                                  names the pair (default: all, and the pair)
#
# Environment:
#   FAMFS_CACHE     trixie cache (default <repo>/cache/trixie)
#   FAMFS_KLINE     kernel line (default 6.12; 7.3: trixie-backports' kernel
#                   with the 7.3 series, cache from scripts/trixie-cache.sh
#                   --dir; tests/vm-7.3/run.sh is that tier)
#   VM_TIMEOUT      seconds before the guest is killed (default 300)
#   VM_MEM          guest RAM (default 1G)
#   VM_SMP          guest CPUs (default 1)
#   VM_KEEP         keep the work directory (logs) and print its path
#   VM_VERBOSE      copy the guest console to stderr after the run
#   VM_NVDIMM       size of the guest's NVDIMM backing file (default 3G;
#                   sparse: only what the guest writes takes host disk)
#   VM_PMEM_PREALLOC  1: the NVDIMMs' backing files are allocated before
#                   the guest boots (QEMU's prealloc=on), as a device's
#                   memory exists before it is used; else the host
#                   allocates a sparse file's blocks at the guest's first
#                   touch of each page (bench/vm.sh sets it)
#   VM_ALONE        1: each case in a guest of its own (a case must build
#                   the state it needs, so that any case runs alone)
#   VM_FULLTREE     1: the full-tree check even when not all cases run
#                   (tests/vm-7.3 runs a subset and wants it)
#   VM_EXTRA_CASES  a directory of more case files for the guest (e.g.
#                   bench/vm); name them in CASE to run them
#   VM_EXTRA_BIN    a directory of more static programs for the guest's
#                   /usr/bin (e.g. bench/vm.sh's fbench)
#   VM_QEMU_ARGS    more QEMU arguments, split at blanks (e.g. a second
#                   NVDIMM for bench/vm.sh); when empty, the single guest
#                   gets a second NVDIMM (1 GiB backing file,
#                   sparse), which 55-hardening makes dax1.0
#   VM_DEBUG        1: boot the debug kernel (debug-kernel.sh: KASAN,
#                   lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_VM; built once and
#                   cached, over an hour cold) with the module built against
#                   it; VM_TIMEOUT defaults to 2400 and VM_MEM to 2G, and
#                   lockdep and KASAN reports fail the console check too
#
# Never loads anything into the host's kernel. Needs root only for the
# chroot build (debootstrap/chroot/mount).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
C=$("$top/scripts/trixie-cache.sh" --dir)
cases=${1:-all}
line=${FAMFS_KLINE:-6.12}
debug=${VM_DEBUG:-}
[ "$debug" != 0 ] || debug=
if [ -n "$debug" ]; then
	timeout_s=${VM_TIMEOUT:-2400}
	mem=${VM_MEM:-2G}
else
	timeout_s=${VM_TIMEOUT:-300}
	mem=${VM_MEM:-1G}
fi

die() {
	echo "vm-test: error: $*" >&2
	printf '1..1\nnot ok - vm tier: %s\n0 passed, 1 failed\n' "$*"
	exit 1
}
log() { echo "vm-test: $*" >&2; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Every case named must exist: a misspelt name would run nothing and pass.
for c in $(echo "$cases" | tr ',' ' '); do
	[ "$c" = all ] || [ "$c" = pair ] || [ -f "$here/cases/$c.sh" ] ||
		{ [ -n "${VM_EXTRA_CASES:-}" ] && [ -f "$VM_EXTRA_CASES/$c.sh" ]; } ||
		die "no case named '$c' (tests/vm/cases/*.sh, pair)"
done

# The plan comes from what was asked for, never from what ran: the
# cases each guest is to run (in the guest's order, by name), and each
# case file's "plan N" (or "plan 6.12=N 7.3=M", by kernel line).
case_file() {
	for d in "$here/cases" ${VM_EXTRA_CASES:-} "$here/pair"; do
		[ -f "$d/$1.sh" ] && { echo "$d/$1.sh"; return 0; }
	done
	return 1
}
plan_of() { # CASE: its planned checks on this kernel line
	awk -v line="$line" '/^plan / {
		for (i = 2; i <= NF && $i !~ /^#/; i++) {
			if ($i ~ /^[0-9]+$/) { print $i; exit }
			if (index($i, line "=") == 1) { print substr($i, length(line) + 2); exit }
		}
		exit }' "$(case_file "$1")"
}
if [ "$cases" = all ] || echo ",$cases," | grep -q ',all,'; then
	single=$(for f in "$here/cases/"*.sh ${VM_EXTRA_CASES:+"$VM_EXTRA_CASES"/*.sh}; do
		basename "$f" .sh; done | sort -u | tr '\n' ',' | sed 's/,$//')
else
	single=$(echo "$cases" | tr ',' '\n' | grep -vx pair | sort -u | tr '\n' ',' | sed 's/,$//')
fi
for c in $(echo "$single" | tr ',' ' ') pair-a pair-b; do
	n=$(plan_of "$c")
	case $n in
	'' | *[!0-9]*) die "case $c: no 'plan N' (or 'plan $line=N') line the host can read" ;;
	esac
done

command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 missing (DEPS_KERNEL=1 scripts/deps.sh)"

# 1. Trixie packages and the module.
kver=$("$top/scripts/trixie-cache.sh") || die "trixie cache failed"
stock_kver=$kver
vmlinuz=$C/root/boot/vmlinuz-$kver
# The module's build: the trixie kernel's headers, or the debug kernel's
# tree (bound into the chroot from the cache).
kodir=$top/dkms/build
[ "$line" = 6.12 ] || kodir=$top/dkms/build-$line
kbuild="-k $kver -o $kodir"
unset MKINITRAMFS_MODULES
if [ -n "$debug" ]; then
	t0=$(now)
	dk=$("$here/debug-kernel.sh") || die "debug kernel build failed"
	kver=$(cat "$dk/kernel.release")
	vmlinuz=$dk/bzImage
	kodir=$top/dkms/build-debug
	[ "$line" = 6.12 ] || kodir=$top/dkms/build-debug-$line
	kbuild="-k $kver --kdir $dk/linux -o $kodir"
	FAMFS_CHROOT_BIND=$(dirname "$dk")
	export FAMFS_CHROOT_BIND
	MKINITRAMFS_MODULES=$dk/modules/lib/modules/$kver
	[ -d "$MKINITRAMFS_MODULES" ] || MKINITRAMFS_MODULES=$dk/modules/usr/lib/modules/$kver
	export MKINITRAMFS_MODULES
	log "debug kernel $kver ready ($(since "$t0") s): $dk"
fi
[ -f "$vmlinuz" ] || die "no $vmlinuz"

w=$(mktemp -d "${TMPDIR:-/tmp}/famfs-vm.XXXXXX")
if [ -n "${VM_KEEP:-}" ]; then
	log "work directory: $w"
else
	trap 'rm -rf "$w"' EXIT
fi

t0=$(now)
# shellcheck disable=SC2086 # kbuild is split on purpose
"$top/scripts/trixie-chroot.sh" dkms/build.sh $kbuild >"$w/build.log" 2>&1 || {
	tail -n 30 "$w/build.log" >&2
	die "module build failed (log above)"
}
ko=$kodir/famfs_fuse.ko
[ -f "$ko" ] || die "no $ko after the build"
log "module ready ($(since "$t0") s)"
# The daemon and tools for the guest: built in the trixie chroot against
# trixie's libfuse3 and glibc (the host's would not run on the guest's
# libraries, and vice versa), into build-trixie/ (incremental).
t0=$(now)
FAMFS_CHROOT_USERSPACE=1 "$top/scripts/trixie-chroot.sh" sh -c '
	{ [ -f build-trixie/build.ninja ] ||
		meson setup build-trixie -Dtests=false -Dfuzz=false; } &&
	ninja -C build-trixie daemon/fused/famfs-fused daemon/mount/mount.famfs \
		daemon/tools/famfs daemon/tools/mkfs.famfs daemon/tools/pcq' >"$w/userspace.log" 2>&1 || {
	tail -n 30 "$w/userspace.log" >&2
	die "building the daemon for the guest failed (log above)"
}
log "guest user space ready ($(since "$t0") s)"
# Host-side check: the daemon's ABI header matches the patched fuse.h.
abi_ok=0
"$top/dkms/abi-check.sh" "$kodir/tree" >"$w/abi.log" 2>&1 && abi_ok=1 || cat "$w/abi.log" >&2
# Another line than 6.12: its famfs core is 6.12's (dkms/core-diff.sh).
core_ok=
if [ "$line" != 6.12 ]; then
	core_ok=0
	"$top/dkms/core-diff.sh" 6.12 "$line" >"$w/core.log" 2>&1 && core_ok=1 || cat "$w/core.log" >&2
fi
# The series as an upstream series in the full kernel tree (full-tree.sh:
# about a minute when the series or the kernel changed, else kept). Only
# with all cases: a run of a few cases is someone working on those.
: >"$w/fulltree.txt"
ft_plan=0
if [ "$cases" = all ] || [ "${VM_FULLTREE:-}" = 1 ]; then
	# planned from the series, before the check runs
	ft_plan=$("$top/dkms/full-tree-check.sh" --plan -k "$stock_kver") ||
		die "full-tree-check.sh --plan failed"
	t0=$(now)
	"$here/full-tree.sh" "$stock_kver" >"$w/fulltree.txt" 2>"$w/fulltree.log" || {
		tail -n 20 "$w/fulltree.log" >&2
		grep -q '^not ok' "$w/fulltree.txt" ||
			echo "not ok - tests/vm/full-tree.sh failed" >>"$w/fulltree.txt"
	}
	log "full-tree check done ($(since "$t0") s)"
fi

# 2. Initramfs: cached base + our files.
t0=$(now)
mkdir -p "$C/vm"
base=$C/vm/base-$kver.cpio.gz
"$here/mkinitramfs.sh" "$kver" "$base" || die "initramfs build failed"
o=$w/overlay
mkdir -p "$o/tests/cases" "$o/lib/modules"
cp "$here/guest/init" "$o/init"
cp "$here/guest/lib.sh" "$here/guest/pair.sh" "$o/tests/"
cp "$top/tests/lib/guest-verdict.sh" "$o/tests/"
cp "$here/cases/"*.sh "$o/tests/cases/"
mkdir -p "$o/tests/pair"
cp "$here/pair/"*.sh "$o/tests/pair/"
[ -z "${VM_EXTRA_CASES:-}" ] || cp "$VM_EXTRA_CASES"/*.sh "$o/tests/cases/"
[ -z "${VM_EXTRA_BIN:-}" ] || { mkdir -p "$o/usr/bin" && cp "$VM_EXTRA_BIN"/* "$o/usr/bin/"; }
cp "$ko" "$o/lib/modules/"
# Guest helper programs (tests/vm/guest-src/*.c), static, built here,
# into this work tree (the cache is shared by work trees whose sources
# may differ).
mkdir -p "$o/usr/bin" "$top/build-vm"
for src in "$here/guest-src/"*.c; do
	b=$top/build-vm/$(basename "$src" .c)
	if [ ! -x "$b" ] || [ "$src" -nt "$b" ] ||
		[ -n "$(find "$top/dkms/include" -newer "$b" -name '*.h' 2>/dev/null)" ]; then
		${CC:-cc} -static -O2 -Wall -Wextra -Werror -I"$top/dkms/include/uapi" \
			-o "$b" "$src" || die "cannot build $src"
	fi
	cp "$b" "$o/usr/bin/"
done
# The daemon, mount helper and CLI (trixie builds) with their trixie
# libraries and loader, at the paths they have in the chroot. They replace
# the base's bookworm glibc, which the host's ndctl runs on as well.
R=$("$top/scripts/trixie-chroot.sh")
ub="$top/build-trixie/daemon/fused/famfs-fused $top/build-trixie/daemon/mount/mount.famfs
$top/build-trixie/daemon/tools/famfs $top/build-trixie/daemon/tools/mkfs.famfs
$top/build-trixie/daemon/tools/pcq"
for b in $ub; do
	cp "$b" "$o/usr/bin/"
done
# shellcheck disable=SC2086
"$top/scripts/trixie-chroot.sh" ldd $ub 2>/dev/null |
	awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u | while read -r l; do
	mkdir -p "$o$(dirname "$l")"
	cp -L "$R$l" "$o$l"
done
mkdir -p "$o/lib64"
cp -L "$R/lib64/ld-linux-x86-64.so.2" "$o/lib64/"
chmod +x "$o/init"
# Concatenated archives: the kernel unpacks them in order. An uncompressed
# archive is only recognised at a 4-byte aligned offset, so pad the
# compressed base with zeros (which the kernel skips).
(cd "$o" && find . | cpio -o -H newc --quiet) >"$w/overlay.cpio"
cp "$base" "$w/initrd"
pad=$(( (512 - $(stat -c %s "$base") % 512) % 512 ))
head -c "$pad" /dev/zero >>"$w/initrd"
cat "$w/overlay.cpio" >>"$w/initrd"
log "initramfs ready ($(since "$t0") s)"

# 3. Boot. boot NAME CASES [QEMU ARGS...] runs one guest to its end with
# the cases CASES; its console, results and QEMU messages go to
# $w/NAME.console, .results and .qemu, its exit status to $w/NAME.rc.
# The NVDIMM's backing file is sparse and has no labels (the namespace is
# set up on each boot).
nvsize=${VM_NVDIMM:-3G}
boot() {
	local name=$1 cases=$2
	shift 2
	: >"$w/$name.results"
	# shellcheck disable=SC2086 # VM_QEMU_ARGS is split on purpose
	if timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max -smp "${VM_SMP:-1}" \
		-machine pc,nvdimm=on -m "$mem,slots=3,maxmem=8G" \
		-object memory-backend-file,id=pmem0,share=on,mem-path="$w/$name.pmem",size=$nvsize,align=2M${VM_PMEM_PREALLOC:+,prealloc=on} \
		-device nvdimm,memdev=pmem0,id=nvdimm0 \
		"$@" ${VM_QEMU_ARGS:-} \
		-kernel "$vmlinuz" -initrd "$w/initrd" \
		-append "console=ttyS0 panic=-1 famfs.test=$cases${debug:+ famfs.slow=4}" \
		-display none -monitor none -no-reboot \
		-serial file:"$w/$name.console" -serial file:"$w/$name.results" \
		</dev/null >"$w/$name.qemu" 2>&1; then
		echo 0 >"$w/$name.rc"
	else
		echo $? >"$w/$name.rc"
	fi
}

# 4. Results. results NAME CASES [LABEL]: print the guest's checks (names
# prefixed with LABEL), add "the guest finished its plan" and "its kernel
# log is clean", and count them into pass, fail and plan. The plan is the
# sum of the plans of CASES, read from their files (plan_of): a case that
# never began, or stopped short of its plan, gets one "not ok" line for
# each check it did not make, so the plan never shrinks to what ran.
. "$top/tests/lib/guest-verdict.sh"
trouble=
[ -z "$debug" ] || trouble="possible circular locking|possible recursive locking|DEBUG_LOCKS_WARN_ON|INFO: "
pass=0
fail=0
skip=0
plan=0
results() {
	local name=$1 list=$2 label=${3:-} p f gp want=0 c n ran why=
	tr -d '\r' <"$w/$name.results" >"$w/$name.txt"
	p=$(grep -c '^ok ' "$w/$name.txt" || true)
	f=$(grep -c '^not ok ' "$w/$name.txt" || true)
	grep -E '^(ok|not ok) |^# bench|^# measure|^# plan broken' "$w/$name.txt" |
		sed -E "s/^((not )?ok [0-9]+ - )/\1$label/" || true
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + $(grep -c '^ok .*# SKIP' "$w/$name.txt" || true)))
	for c in $(echo "$list" | tr ',' ' '); do
		n=$(plan_of "$c")
		want=$((want + n))
		# the checks made between this case's "# case" note and the next
		ran=$(awk -v c="$c" '/^# case / { cur = $3 }
			/^(ok|not ok) / && cur == c { k++ } END { print k + 0 }' "$w/$name.txt")
		gp=$(sed -nE "s/^# plan $c ([0-9]+)\$/\1/p" "$w/$name.txt" | tail -n 1)
		if [ -n "$gp" ] && [ "$gp" != "$n" ]; then
			why="${why:+$why; }case $c planned $gp checks in the guest, $n in its file"
		fi
		if ! grep -qx "# case $c" "$w/$name.txt"; then
			why="${why:+$why; }case $c never began"
		fi
		while [ "$ran" -lt "$n" ]; do
			ran=$((ran + 1))
			fail=$((fail + 1))
			echo "not ok - ${label}$c: planned check $ran of $n did not run"
		done
	done
	plan=$((plan + want + 2))
	if ! grep -q '^# done' "$w/$name.txt"; then
		why="did not finish (qemu exit $(cat "$w/$name.rc"), timeout ${timeout_s}s)${why:+; $why}"
		cat "$w/$name.qemu" >&2
		tail -n 40 "$w/$name.console" >&2
	elif grep -q '^# plan broken' "$w/$name.txt"; then
		why="a case's checks differ from its plan${why:+; $why}"
	elif [ $((p + f)) -ne "$want" ]; then
		why="planned $want checks, ran $((p + f))${why:+; $why}"
	fi
	if [ -n "$why" ]; then
		fail=$((fail + 1))
		echo "not ok - ${label}guest finished its plan: $why"
	else
		pass=$((pass + 1))
		echo "ok - ${label}guest finished its plan ($want checks)"
	fi
	# The host also checks the whole console for kernel trouble; on the
	# debug kernel also for the reports of lockdep and the other checkers
	# that do not say BUG: or WARNING: (lockdep reports one problem per
	# boot, then turns itself off).
	if kernel_trouble "$w/$name.console" "$w/$name.trouble" "$trouble"; then
		fail=$((fail + 1))
		echo "not ok - ${label}kernel log of the guest is clean"
		head -n 20 "$w/$name.trouble" >&2
		# The first reports on stdout too: they are the result.
		grep -E 'BUG:|WARNING:|INFO: |possible|DEBUG_LOCKS|UBSAN:|Oops|panic|Call Trace' \
			"$w/$name.trouble" | head -n 5 | sed "s/^/# ${label}kernel: /" || true
	else
		pass=$((pass + 1))
		echo "ok - ${label}kernel log of the guest is clean"
	fi
	[ -z "${VM_VERBOSE:-}" ] || cat "$w/$name.console" >&2
}

# The single guest runs every case but the pair ($single, from the
# request above); the pair runs when asked for ("pair" in CASE, or all).
# VM_ALONE=1 gives each case a fresh guest of its own.
pair=
case ",$cases," in *,all,*|*,pair,*) pair=1 ;; esac
one() { # NAME CASES: one single guest, with its three NVDIMMs
	truncate -s "$nvsize" "$w/$1.pmem"
	nv2=
	if [ -z "${VM_QEMU_ARGS:-}" ]; then
		for n in 2 3; do
			truncate -s 1024M "$w/$1-$n.pmem"
			nv2="$nv2 -object memory-backend-file,id=pmem$((n - 1)),share=on,mem-path=$w/$1-$n.pmem,size=1024M,align=2M${VM_PMEM_PREALLOC:+,prealloc=on} -device nvdimm,memdev=pmem$((n - 1)),id=nvdimm$((n - 1))"
		done
	fi
	t0=$(now)
	# shellcheck disable=SC2086
	boot "$1" "$2" $nv2
	log "guest $1 ran $(since "$t0") s (qemu exit $(cat "$w/$1.rc"))"
	rm -f "$w/$1.pmem" "$w/$1-2.pmem" "$w/$1-3.pmem"
}
if [ -n "$single" ] && [ "${VM_ALONE:-}" = 1 ]; then
	for c in $(echo "$single" | tr ',' ' '); do
		one "$c" "$c"
		results "$c" "$c" "$c alone: "
	done
elif [ -n "$single" ]; then
	one one "$single"
	results one "$single"
fi
# The pair: guests A and B share one NVDIMM backing file (both map the
# same host pages: memory-backend-file share=on) and talk through a
# shared ivshmem-plain device, the mailbox (see README.md).
if [ -n "$pair" ]; then
	truncate -s "$nvsize" "$w/shared.pmem"
	ln -sf shared.pmem "$w/a.pmem"
	ln -sf shared.pmem "$w/b.pmem"
	truncate -s 1M "$w/mbox.img"
	mbox="-object memory-backend-file,id=mbox,share=on,mem-path=$w/mbox.img,size=1M -device ivshmem-plain,memdev=mbox"
	# two more shared NVDIMMs, which B lists in the other order
	nv() { echo "-object memory-backend-file,id=pmem$1,share=on,mem-path=$w/shared-$2.pmem,size=256M,align=2M -device nvdimm,memdev=pmem$1,id=nvdimm$1"; }
	truncate -s 256M "$w/shared-2.pmem" "$w/shared-3.pmem"
	t0=$(now)
	# shellcheck disable=SC2086
	boot a pair-a $mbox $(nv 1 2) $(nv 2 3) &
	# shellcheck disable=SC2086
	boot b pair-b $mbox $(nv 1 3) $(nv 2 2) &
	wait
	log "pair ran $(since "$t0") s (qemu exit $(cat "$w/a.rc") and $(cat "$w/b.rc"))"
	results a pair-a "A: "
	results b pair-b "B: "
fi
cat "$w/fulltree.txt"
pass=$((pass + $(grep -c '^ok' "$w/fulltree.txt" || true)))
fail=$((fail + $(grep -c '^not ok' "$w/fulltree.txt" || true)))
skip=$((skip + $(grep -c '^ok.*# SKIP' "$w/fulltree.txt" || true)))
# The full-tree check's plan came from the series (ft_plan): the checks
# it did not make (a patch that did not apply stops the rest) fail here.
ft_ran=$(grep -c '^\(not \)\?ok' "$w/fulltree.txt" || true)
while [ "$ft_ran" -lt "$ft_plan" ]; do
	ft_ran=$((ft_ran + 1))
	fail=$((fail + 1))
	echo "not ok - full-tree check $ft_ran of $ft_plan did not run"
done
# the ABI check below is one more
plan=$((plan + ft_plan + 1))
case $core_ok in
1) pass=$((pass + 1)) plan=$((plan + 1))
	echo "ok - fs/fuse/famfs.c of the $line series is the 6.12 one (dkms/core-diff.sh)" ;;
0) fail=$((fail + 1)) plan=$((plan + 1))
	echo "not ok - fs/fuse/famfs.c of the $line series is the 6.12 one (dkms/core-diff.sh)" ;;
esac
if [ $abi_ok = 1 ]; then
	pass=$((pass + 1))
	echo "ok - famfs_fuse_abi.h matches the patched uapi fuse.h"
else
	fail=$((fail + 1))
	echo "not ok - famfs_fuse_abi.h matches the patched uapi fuse.h"
fi
if [ "$fail" -ne 0 ] && [ -z "${VM_KEEP:-}" ]; then
	mkdir -p "$C/vm/last-failure"
	rm -f "$C/vm/last-failure/"*
	for f in "$w"/*.console "$w"/*.txt "$w/build.log"; do
		if [ -f "$f" ]; then cp "$f" "$C/vm/last-failure/"; fi
	done
	log "logs of this run: $C/vm/last-failure/"
fi
echo "1..$plan"
# A skip is not a pass.
echo "$((pass - skip)) passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
