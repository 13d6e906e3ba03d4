#!/bin/sh
# The end-to-end tier: the famfs packages installed and used in a booted
# Debian trixie image (mkosi.conf.d/) under QEMU TCG with an NVDIMM devdax
# device, through reboots of the same disk; plus the RPMs checked with
# rpm --root on this host. One line per case:
#   ok - NAME   /   not ok - NAME   /   ok - NAME # SKIP reason
# and a non-zero exit on any failure. Progress and timings go to stderr
# and to build-e2e/last-run/.
#
#   tests/e2e/run.sh [SET]      SET: all (default) | check | CASE[,CASE...]
#                               (or E2E_CASES=SET, for tests/run-all.sh e2e)
#     check   = install,fstab-mount,systemctl-status,daemon-restart,
#               daemon-upgrade,rpm (2 boots, 1 DKMS build; what make
#               check runs)
#     all     = check + persistence,kernel-upgrade,upgrade,remove-purge
#               (7 boots, 3 DKMS builds)
#
# Environment:
#   E2E_BOOT_TIMEOUT  seconds one boot may take (default 2400; the install,
#                     persist and kernel-install boots build the module
#                     with DKMS under TCG)
#   E2E_REBUILD=1     rebuild the image even if its configuration is unchanged
#   E2E_VERBOSE=1     copy each guest console to stderr
#   E2E_STATE=DIR E2E_START=N   (for working on the tests) start at boot N
#                     from a copy of disk.qcow2, pmem0.img, checks (and
#                     boot-7.3/, for the 7.3 boot) that an earlier run left
#                     in build-e2e/last-run (saved to DIR)
#
# Caches (reused between runs, all gitignored):
#   cache/e2e/tools        mkosi 25 from trixie, unpacked (runs from there)
#   cache/e2e/apt          private apt state used to fetch it
#   cache/e2e/mkosi.*      mkosi's package cache, workspace and output
#   cache/e2e/image        root.ext4, vmlinuz, initrd of the current image
#   cache/e2e/kernel-7.3   apt state and the few .debs the 7.3 kernel needs
#                          beyond the 7.3 cache (kernel-debs.sh)
#   build-e2e/debs         trixie debs, version N and N+1 (build-debs.sh)
#   build-e2e/rpm          the RPMs (scripts/build-packages.sh rpm)
# Needs root (the trixie chroot, mkosi). Never loads anything into this
# host's kernel: DKMS runs in the guest only.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/guest-verdict.sh"
C=$top/cache/e2e
B=$top/build-e2e
W=$B/last-run
set_=${1:-${E2E_CASES:-all}}
boot_timeout=${E2E_BOOT_TIMEOUT:-2400}

log() { echo "e2e: $*" >&2; }
now() { date +%s; }
T_START=$(now)
timing() { # WHAT SECONDS
	echo "$1: $2 s" >>"$W/timings.txt"
	log "timing: $1: $2 s"
}

# ---------------------------------------------------------------- cases
ALL="install fstab-mount systemctl-status daemon-restart daemon-upgrade persistence kernel-upgrade upgrade remove-purge rpm"
case $set_ in
all) want=$ALL ;;
check) want="install fstab-mount systemctl-status daemon-restart daemon-upgrade rpm" ;;
*) want=$(echo "$set_" | tr ',' ' ') ;;
esac
for c in $want; do
	case " $ALL " in *" $c "*) ;; *) echo "e2e: unknown case $c (one of: $ALL)" >&2; exit 2 ;; esac
done
wants() { case " $want " in *" $1 "*) return 0 ;; esac; return 1; }
# The boots (guest stages, in this order) the wanted cases need: install
# (+device setup); fstab (+status, restart, daemon-upgrade; makes the
# files); persist (+upgrade to N+1); kernel-install, kernel-new,
# kernel-back (the 7.3 kernel installed, booted, and 6.12 again);
# upgraded (+remove). Every stage after install needs fstab's files.
need() { for c; do wants "$c" && return 0; done; return 1; }
stages=
need install fstab-mount systemctl-status daemon-restart daemon-upgrade \
	persistence kernel-upgrade upgrade remove-purge && stages=install
need fstab-mount systemctl-status daemon-restart daemon-upgrade \
	persistence kernel-upgrade upgrade remove-purge && stages="$stages fstab"
need persistence upgrade remove-purge && stages="$stages persist"
need kernel-upgrade && stages="$stages kernel-install kernel-new kernel-back"
need upgrade remove-purge && stages="$stages upgraded"
nboots=$(echo $stages | wc -w)

rm -rf "$W"
mkdir -p "$W" "$C"
: >"$W/results"

result() { # ok|fail|skip NAME [REASON]
	case $1 in
	ok) echo "ok - $2" ;;
	fail) echo "not ok - $2${3:+ ($3)}" ;;
	skip) echo "ok - $2 # SKIP $3" ;;
	esac | tee -a "$W/results"
}
# The plan: one line per wanted case, and one for the boots.
BOOTS_CASE="boots: every guest finished its stage with a clean kernel log"
echo "1..$(($(echo $want | wc -w) + (nboots > 0)))"
fatal() { # message: every wanted case fails
	log "error: $*"
	for c in $want; do result fail "$c" "$*"; done
	[ $nboots -eq 0 ] || result fail "$BOOTS_CASE" "$*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || fatal "must run as root (trixie chroot, mkosi)"
for p in qemu-system-x86_64 qemu-img mkfs.ext4 python3 apt-get dpkg; do
	command -v $p >/dev/null || fatal "$p missing (DEPS_KERNEL=1 DEPS_PACKAGE=1 scripts/deps.sh)"
done

units_packaged=0
[ -n "$(find "$top/units" -type f ! -name README.md 2>/dev/null)" ] && units_packaged=1

# ---------------------------------------------------------------- mkosi
# trixie's mkosi 25.3 (bookworm's systemd is too old for its package, but
# the unpacked Python code runs). Fetched with a private apt state.
A=$C/apt
. "$top/scripts/private-apt.sh"
apt_() { apt_state "$A" "$@"; }
get_mkosi() {
	MK=$C/tools/root/usr/lib/python3/dist-packages
	[ -f "$MK/mkosi/__main__.py" ] && return 0
	log "fetching mkosi from trixie"
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$C/tools"
	apt_sources "$A" trixie
	[ -f "$A/status" ] || : >"$A/status"
	apt_ update >"$W/mkosi-fetch.log" 2>&1 &&
		(cd "$C/tools" && rm -f mkosi_*.deb && apt_ download mkosi) >>"$W/mkosi-fetch.log" 2>&1 ||
		{ cat "$W/mkosi-fetch.log" >&2; return 1; }
	rm -rf "$C/tools/root"
	dpkg -x "$C/tools"/mkosi_*.deb "$C/tools/root"
	[ -f "$MK/mkosi/__main__.py" ]
}
mkosi_() { PYTHONPATH=$MK python3 -m mkosi "$@"; }

# ---------------------------------------------------------------- image
# mkosi's apt sources: the host's mirror, trixie + updates + security
# (mkosi's default list adds the debug archive, which the mirror rejects).
sandbox() {
	mkdir -p "$C/sandbox/etc/apt/sources.list.d"
	cat >"$C/sandbox/etc/apt/sources.list.d/mkosi.sources" <<EOF
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: $kr

Types: deb
URIs: $secmirror
Suites: trixie-security
Components: main
Signed-By: $kr
EOF
}

I=$C/image
# What the image is made from (documentation files excluded).
image_stamp() {
	{ mkosi_ --version; cat "$C/sandbox/etc/apt/sources.list.d/mkosi.sources"
	(cd "$top" && find mkosi.conf.d \( -type f -o -type l \) ! -name '*.md' | LC_ALL=C sort |
		while read -r f; do echo "$f"; if [ -L "$f" ]; then readlink "$f"; else cat "$f"; fi; done); } |
		md5sum | cut -d' ' -f1
}
build_image() {
	sandbox
	stamp=$(image_stamp)
	if [ -z "${E2E_REBUILD:-}" ] && [ "$(cat "$I/stamp" 2>/dev/null)" = "$stamp" ] &&
		[ -f "$I/root.ext4" ] && [ -f "$I/vmlinuz" ] && [ -f "$I/initrd" ]; then
		log "image up to date ($I)"
		timing "image (warm, reused)" 0
		return 0
	fi
	t0=$(now)
	log "building the trixie image with mkosi (log: $W/mkosi.log)"
	(cd "$top" && mkosi_ -C "$top" --sandbox-tree="$C/sandbox" --force build) \
		>"$W/mkosi.log" 2>&1 || { tail -n 30 "$W/mkosi.log" >&2; return 1; }
	O=$C/mkosi.output/famfs-e2e
	kv=$(ls "$O/lib/modules" | head -n1)
	[ -n "$kv" ] && [ -f "$O/boot/vmlinuz-$kv" ] && [ -f "$O/boot/initrd.img-$kv" ] || {
		log "no kernel/initrd in $O/boot"
		return 1
	}
	t1=$(now)
	rm -rf "$I"
	mkdir -p "$I"
	cp "$O/boot/vmlinuz-$kv" "$I/vmlinuz"
	cp "$O/boot/initrd.img-$kv" "$I/initrd"
	echo "$kv" >"$I/kver"
	# Room for two DKMS builds and the packages.
	mkfs.ext4 -q -F -L famfs-e2e -d "$O" "$I/root.ext4" 4G >"$W/mkfs.log" 2>&1 ||
		{ cat "$W/mkfs.log" >&2; return 1; }
	echo "$stamp" >"$I/stamp"
	timing "image build (mkosi, cold or changed config)" $((t1 - t0))
	timing "image to ext4 (mkfs.ext4 -d)" $(($(now) - t1))
}

# ---------------------------------------------------------------- guests
# One disk (a qcow2 overlay on the image) and one NVDIMM backing file for
# the whole scenario, so every boot sees the state the last one left.
QEMU_UUID=5a3c9e1e-4f0b-4d7e-9f52-0000fa3f5e2e
boot() { # N STAGE
	n=$1 stage=$2
	echo "exec sh /run/e2e/guest/stages.sh $stage" >"$W/share/stage.sh"
	# The image's kernel (6.12), but for the boot into the 7.3 kernel that
	# the kernel-install stage installed in the guest and copied out.
	kd=$I
	[ "$stage" != kernel-new ] || kd=$W/boot-7.3
	[ -f "$kd/vmlinuz" ] || {
		echo "not ok - boot$n: no kernel to boot in $kd" >>"$W/checks"
		return 1
	}
	log "boot $n: $stage (kernel $(cat "$kd/kver" 2>/dev/null))"
	t0=$(now)
	timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 \
		-accel tcg,thread=single -cpu max -smp 1 -m 2G,slots=2,maxmem=8G \
		-machine pc,nvdimm=on -uuid $QEMU_UUID \
		-object memory-backend-file,id=m1,share=on,mem-path="$W/pmem0.img",size=1026M,align=2M \
		-device nvdimm,memdev=m1,id=nv1,label-size=128K \
		-drive file="$W/disk.qcow2",if=virtio,format=qcow2,cache=unsafe \
		-virtfs local,path="$W/share",mount_tag=e2e,security_model=none,id=e2e \
		-kernel "$kd/vmlinuz" -initrd "$kd/initrd" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 famfs.e2e=1 famfs.e2e_boot=$n systemd.show_status=error" \
		-nic none -vga none -display none -monitor none -no-reboot \
		-serial file:"$W/console-$n.log" </dev/null >"$W/qemu-$n.log" 2>&1
	qrc=$?
	timing "boot $n ($stage)" $(($(now) - t0))
	[ -n "${E2E_VERBOSE:-}" ] && cat "$W/console-$n.log" >&2
	tr -d '\r' <"$W/share/out/$n.log" >"$W/stage-$n.log" 2>/dev/null || : >"$W/stage-$n.log"
	cat "$W/stage-$n.log" >>"$W/checks"
	# Finished means: the stage runner wrote exit status 0 and the stage
	# printed its last line; a stage that stopped half way fails here even
	# if every check it reached passed.
	if ! why=$(stage_finished "$stage" "$W/stage-$n.log" "$W/share/out/$n.rc"); then
		log "boot $n did not finish (qemu exit $qrc; $why; timeout ${boot_timeout}s); console tail:"
		tail -n 25 "$W/console-$n.log" >&2
		echo "not ok - boot$n: guest finished stage $stage (qemu exit $qrc, $why)" >>"$W/checks"
		return 1
	fi
	# The kernel the kernel-install stage installed, for kernel-new.
	if [ "$stage" = kernel-install ] && [ -f "$W/share/out/boot/kver" ]; then
		mkdir -p "$W/boot-7.3"
		cp "$W/share/out/boot/vmlinuz" "$W/share/out/boot/initrd" "$W/share/out/boot/kver" "$W/boot-7.3/"
	fi
	# The same kernel trouble the VM tier looks for.
	kernel_trouble "$W/console-$n.log" "$W/trouble-$n" &&
		{ echo "not ok - boot$n: kernel log clean"; sed 's/^/#   /' "$W/trouble-$n"; } >>"$W/checks"
	return 0
}

# Fold the guest's checks (prefix "CASE:") into one line per case. Every
# path through a stage prints the same checks, so a case passes only if
# all PLANNED of them ran and none failed: a stage that stopped early
# (a guest that died, a shell error) cannot pass on the checks it made.
case_from_checks() { # NAME PREFIX PLANNED
	ran=$(grep -cE "^(not )?ok - $2: " "$W/checks" 2>/dev/null)
	if [ "${ran:-0}" = 0 ]; then
		result fail "$1" "no checks ran (see $W/stage-*.log)"
		return
	fi
	grep -E "^(not )?ok - $2: |^not ok - boot" "$W/checks" | sed 's/^/#   /' >&2
	if grep -qE "^not ok - $2: " "$W/checks"; then
		bad=$(grep -E "^not ok - $2: " "$W/checks" | head -n 3 | sed "s/^not ok - $2: //" | paste -sd ';' -)
		result fail "$1" "$bad"
	elif [ "$ran" != "$3" ]; then
		result fail "$1" "planned $3 checks, ran $ran (see $W/stage-*.log)"
	else
		result ok "$1"
	fi
}

# The figures a case printed (not checks: install and build times, the
# longest operation), "# CASE: ..." but not its application's own lines,
# to stderr and timings.txt.
figures() { # CASE
	grep "^# $1: " "$W/checks" | grep -v "^# $1: app: " | sed 's/^# //' | while read -r l; do
		log "$l"
		echo "$l" >>"$W/timings.txt"
	done
}

run_guests() {
	tg0=$(now)
	get_mkosi || fatal "cannot fetch mkosi"
	t1=$(now)
	"$here/build-debs.sh" "$B/debs" >"$W/build-debs.log" 2>&1 ||
		{ cat "$W/build-debs.log" >&2; fatal "deb build in the trixie chroot failed"; }
	timing "trixie debs N and N+1 (chroot)" $(($(now) - t1))
	build_image || fatal "image build failed (log: $W/mkosi.log)"

	mkdir -p "$W/share/debs/cur" "$W/share/debs/next" "$W/share/data" "$W/share/out" "$W/share/guest"
	cp "$here/guest/stages.sh" "$W/share/guest/"
	cp "$B/debs/cur/"*.deb "$W/share/debs/cur/"
	cp "$B/debs/next/"*.deb "$W/share/debs/next/"
	dpkg-deb -f "$B/debs/next/"famfs_*_amd64.deb Version >"$W/share/debs/next-version"
	if need kernel-upgrade; then
		t1=$(now)
		"$here/kernel-debs.sh" "$I/root.ext4" "$W/share/debs/kernel-7.3" >"$W/kernel-debs.log" 2>&1 ||
			{ cat "$W/kernel-debs.log" >&2; fatal "cannot gather the 7.3 kernel packages"; }
		timing "7.3 kernel packages for the guest (kernel-debs.sh)" $(($(now) - t1))
	fi
	# Random-looking but the same in every run (a resumed run verifies it).
	python3 -c 'import random, sys; random.seed(20261203); sys.stdout.buffer.write(random.randbytes(5 << 20))' \
		>"$W/share/data/blob"
	[ "${E2E_START:-1}" -gt 1 ] && [ -f "${E2E_STATE:-}/blob" ] && cp "$E2E_STATE/blob" "$W/share/data/blob"
	sha256sum <"$W/share/data/blob" | cut -d' ' -f1 >"$W/share/data/blob.sha256"
	[ $units_packaged = 1 ] && : >"$W/share/units-packaged"
	start=${E2E_START:-1}
	if [ "$start" -gt 1 ]; then
		cp --sparse=always "$E2E_STATE/disk.qcow2" "$E2E_STATE/pmem0.img" \
			"$E2E_STATE/checks" "$W/" || fatal "no saved state in ${E2E_STATE:-}"
		[ ! -d "$E2E_STATE/boot-7.3" ] || cp -r "$E2E_STATE/boot-7.3" "$W/"
	else
		qemu-img create -q -f qcow2 -b "$I/root.ext4" -F raw "$W/disk.qcow2" ||
			fatal "qemu-img create failed"
		# 1 GiB region: room for the labels and alignment needs 1026 MiB.
		truncate -s 1026M "$W/pmem0.img"
		: >"$W/checks"
	fi

	ok=1 n=0
	for st in $stages; do
		n=$((n + 1))
		[ $n -ge "$start" ] && [ $ok = 1 ] || continue
		boot $n $st || ok=0
	done
	timing "guests total (mkosi fetch, debs, image, boots)" $(($(now) - tg0))

	wants install && case_from_checks install install 9
	wants fstab-mount && case_from_checks fstab-mount fstab 19
	if wants systemctl-status; then
		if [ $units_packaged = 0 ]; then
			grep -E "^(not )?ok - status: " "$W/checks" | sed 's/^/#   (units missing) /' >&2
			result skip systemctl-status "units not packaged yet (units/ has no unit files)"
		else
			case_from_checks systemctl-status status 4
		fi
	fi
	wants daemon-restart && case_from_checks daemon-restart restart 16
	if wants daemon-upgrade; then
		case_from_checks daemon-upgrade daemon-upgrade 18
		figures daemon-upgrade
	fi
	wants persistence && case_from_checks persistence persist 9
	if wants kernel-upgrade; then
		case_from_checks kernel-upgrade kernel-upgrade 35
		figures kernel-upgrade
	fi
	wants upgrade && case_from_checks upgrade upgrade 28
	wants remove-purge && case_from_checks remove-purge remove 11
	# A boot that died, or whose kernel log is not clean, is a failure
	# even if its case was not asked for.
	if grep -q '^not ok - boot' "$W/checks"; then
		result fail "$BOOTS_CASE" "$(grep '^not ok - boot' "$W/checks" | sed 's/^not ok - //' | paste -sd ';' -)"
	else
		result ok "$BOOTS_CASE"
	fi
}

# ---------------------------------------------------------------- rpm
# No RPM-based system is reachable: the RPMs are built here with rpmbuild
# and checked with rpm --root on a scratch database (see case_rpm).
case_rpm() {
	t0=$(now)
	command -v rpmbuild >/dev/null || { result fail rpm "rpmbuild missing (DEPS_PACKAGE=1 scripts/deps.sh)"; return; }
	sh "$here/rpm-check.sh" "$B/rpm" >"$W/rpm.log" 2>&1
	rc=$?
	grep -E '^(not )?ok - ' "$W/rpm.log" | sed 's/^/#   /' >&2
	if [ $rc -eq 0 ] && ! grep -q '^not ok - ' "$W/rpm.log"; then
		result ok rpm
	else
		tail -n 30 "$W/rpm.log" | grep -v '^ok - ' >&2
		result fail rpm "$(grep '^not ok - ' "$W/rpm.log" | head -n 3 | sed 's/^not ok - //' | paste -sd ';' -)"
	fi
	timing "case rpm (build + checks)" $(($(now) - t0))
}

[ $nboots -gt 0 ] && run_guests
wants rpm && case_rpm

timing "e2e total ($set_)" $(($(now) - T_START))
log "logs: $W"
! grep -q '^not ok - ' "$W/results"
