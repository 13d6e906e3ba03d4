# Guest part of bench/vm.sh (run by tests/vm/run.sh with VM_EXTRA_CASES;
# bench/vm.sh puts the settings KLINE, PASSES, SPECS and READ_SIZE in
# front of this file). A 1 GiB famfs file in famfs mode, read by mmap and
# read(2), against a stock devdax mapping and, on 6.12, the same memory
# through a raw /dev/dax0.0 mapping (fbench); page faults and daemon
# requests per GiB. Every figure is one "# bench: RESULT ..." line for
# bench/report.py.
#
# 6.12: dax0.0 is bound to our famfs_dax, which also serves its node.
# 7.3: there is no famfs_dax; mkfs.famfs writes dax0.0 on device_dax and
# the daemon moves it to the kernel's fsdev_dax, whose node has no mmap:
# no raw node side there.
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused
B=1g
mkdir -p $M /opt/famfs
plan 6.12=23 7.3=19
bench() { report "# bench: $*"; }
requests() { sed -n 's/^requests=//p' $S; }

# The second NVDIMM (bench/vm.sh adds it) becomes dax1.0 on the stock
# device_dax driver: the baseline devdax users know (2 MiB faults).
t "bench: second NVDIMM is dax1.0 on device_dax" sh -c '
	ndctl create-namespace -f -e namespace1.0 --mode=devdax --align=2M &&
	. /tests/lib.sh && wait_for /dev/dax1.0 10 &&
	[ "$(basename "$(readlink /sys/bus/dax/devices/dax1.0/driver)")" = device_dax ] &&
	[ "$(cat /sys/bus/dax/devices/dax1.0/size)" -ge 1073741824 ]'
# How the daemon puts a file's bytes into device memory: memcpy and a
# flush, or non-temporal stores (famfs_cache_copy), into dax1.0.
t "bench: fcopy into dax1.0, $PASSES passes" sh -c "fcopy /dev/dax1.0 256 $PASSES >/tmp/fcopy"
bench "$(sed 's/^RESULT devcopy/RESULT vm_devcopy/' /tmp/fcopy)"
drv() { basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)" 2>/dev/null; }
if [ "$KLINE" = 6.12 ]; then
	t "bench: famfs_fuse loaded, dax0.0 on famfs_dax" famfs_load
	fsdrv=famfs_dax
else
	t "bench: famfs_fuse loaded, dax0.0 on device_dax" sh -c "
		insmod /lib/modules/famfs_fuse.ko && [ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = device_dax ]"
	fsdrv=fsdev_dax
fi
t "bench: mkfs + mount.famfs (famfs mode, dax0.0 on $fsdrv)" sh -c "mkfs.famfs -f /dev/dax0.0 && mount.famfs /dev/dax0.0 $M -o fallback=no && grep -q '^mode=famfs' $S"
t "bench: dax0.0 is on $fsdrv" test "$(drv)" = "$fsdrv"
t "bench: famfs creat $B (one extent)" sh -c "famfs creat -s $B $M/bench && famfs getmap $M/bench"
off=$(fmap_spec $M/bench | sed -n 's/^s:\([^:,]*\):[^,]*$/\1/p')
t "bench: the file is one extent" test -n "$off"

# Faults and daemon requests of a first touch of every page by mmap
# (fvt subtracts what reading .status costs).
t "bench: faults and daemon requests of a first mmap touch" sh -c "fvt touch $M/bench $S >/tmp/touch"
bench "RESULT vm_mmap_touch $(sed 's/^touch //; s/ x=[0-9]*//' /tmp/touch) requests_per_gib=$(sed -n 's/.*upcalls=\([0-9-]*\).*/\1/p' /tmp/touch)"
# Daemon requests of reading READ_SIZE with read(2), 1 MiB at a time,
# net of what reading .status costs; open and close are included.
a=$(requests); b=$(requests)
t "bench: read(2) of $READ_SIZE by dd" dd if=$M/bench of=/dev/null bs=1M count=$((READ_SIZE >> 20))
c=$(requests)
bench "RESULT vm_read_requests bytes=$READ_SIZE requests=$((c - b - (b - a))) requests_per_gib=$(((c - b - (b - a)) * (1 << 30) / READ_SIZE))"

# The raw node side only where dax0.0's node maps (famfs_dax, 6.12).
raw=-
[ "$fsdrv" != famfs_dax ] || raw=/dev/dax0.0
# shellcheck disable=SC2086
t "bench: fbench, $PASSES passes" sh -c "fbench -d /dev/dax1.0 $M/bench $raw $off $B $PASSES $SPECS >/tmp/fbench"
while read -r l; do bench "$l"; done </tmp/fbench

# Fallback mode on devdax (issue 32): a client mount, whose daemon serves
# every READ from its mapping of the device node, against read(2) of the
# same amount of the famfs-mode file (the kernel copying from device
# memory of the same kind). Two devices: dax1.0 on the stock device_dax
# (the fallback of a host where our module cannot load: the kernel pins
# the daemon's mapping and copies from it) and, on 6.12, dax0.0 on
# famfs_dax beside the famfs mount (its node maps VM_PFNMAP, so the
# daemon copies each reply first: map_replies=0). fsdev_dax's node (7.3)
# has no mmap, so no fallback there. dd bs=1M of FB_MIB MiB, the two
# sides in alternating order within each pass; the ratio is taken per
# pass. A client drops a file's page cache at every open, so every pass
# of its side is served by the daemon: FUSE requests and the daemon's CPU
# time (utime + stime) are counted for that side.
FB_MIB=512
# Seconds a read of FB_MIB MiB of FILE takes (busybox dd prints no time).
secs() {
	local t0 t1
	t0=$(cut -d' ' -f1 /proc/uptime)
	dd if="$1" of=/dev/null bs=1M count=$FB_MIB 2>/dev/null || return 1
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$t0 $t1" | awk '{ print $2 - $1 }'
}
ticks() { awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' /proc/$1/stat; }
# fallback_passes KEY FAMFS_FILE CLIENT_FILE CLIENT_STATUS: /tmp/fallback-KEY
fallback_passes() {
	local key=$1 fam=$2 cli=$3 st=$4 i=0 pid r0 r1 c0 c1 tf tc
	pid=$(kv pid "$st")
	: >/tmp/fallback.passes
	r0=$(kv requests "$st"); c0=$(ticks "$pid")
	while [ $i -lt "$PASSES" ]; do
		if [ $((i % 2)) = 0 ]; then
			tf=$(secs "$fam") && tc=$(secs "$cli") || return 1
		else
			tc=$(secs "$cli") && tf=$(secs "$fam") || return 1
		fi
		echo "pass $i: famfs $tf s, client $tc s"
		echo "$tf $tc" >>/tmp/fallback.passes
		i=$((i + 1))
	done
	r1=$(kv requests "$st"); c1=$(ticks "$pid")
	# m: GiB read per side; a pass's ratio: famfs time / client time.
	awk -v key="$key" -v n="$PASSES" -v req=$((r1 - r0)) \
		-v cpu=$((c1 - c0)) -v mib="$FB_MIB" -v mr="$(kv map_replies "$st")" '
		{ r[NR] = $1 / $2; f += $1; c += $2 }
		END {
			m = mib / 1024 * n
			# the median and range of the per-pass ratios
			for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++)
				if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
			printf "RESULT vm_fallback_%s passes=%d ratio=%.3f ratio_min=%.3f ratio_max=%.3f client_mibs=%.0f famfs_mibs=%.0f requests_per_gib=%.0f cpu_ms_per_gib=%.0f map_replies=%d\n",
				key, NR, r[int((NR + 1) / 2)], r[1], r[NR],
				m * 1024 / c, m * 1024 / f, req / m, cpu * 10 / m, mr
		}' /tmp/fallback.passes >"/tmp/fallback-$key"
}
# fallback_side KEY DEV MNT FILE: DEV mounted on MNT as a client in
# fallback mode, its FILE read against the famfs file, then unmounted.
fallback_side() {
	t "bench: client mount of $2 in fallback mode ($1)" sh -c "
		mkdir -p $3 && mount.famfs $2 $3 -o role=client,fallback=yes &&
		grep -q '^mode=fallback' $3/.meta/.status"
	t "bench: fallback read(2) on $1 against famfs read(2), $PASSES passes" \
		fallback_passes "$1" $M/bench "$3/$4" "$3/.meta/.status"
	bench "$(cat "/tmp/fallback-$1")"
	# The same read(2) against a memcpy from the stock mapping (fbench's
	# fread and dmap sides, side by side in each pass): under TCG a fairer
	# baseline than famfs read(2), whose machine-check-safe copy is slow.
	t "bench: fallback read(2) on $1 against memcpy from dax1.0, $PASSES passes" sh -c "
		fbench -d /dev/dax1.0 $3/$4 - 0 ${FB_MIB}m $PASSES \
			fallback_$1_memcpy:seq:1m:${FB_MIB}m >/tmp/fbench-$1"
	bench "$(grep "^RESULT vm_fallback_$1_memcpy " "/tmp/fbench-$1")"
	t "bench: client unmount ($1)" umount "$3"
}
t "bench: famfs on dax1.0 (device_dax) with a $FB_MIB MiB file" sh -c "
	mkfs.famfs -f /dev/dax1.0 && famfs -D /dev/dax1.0 creat -s ${FB_MIB}m -r -S 5 /fb"
fallback_side devdax /dev/dax1.0 /mnt/fb fb
[ "$fsdrv" != famfs_dax ] || fallback_side famfs_dax /dev/dax0.0 /mnt/cli bench
# Creation through the master's mount: tar -x of POSIX_FILES small files
# and cp of a POSIX_CP_MIB MiB file into the mount (each file served by
# the daemon while written, logged at its close; on 7.3, where only the
# kernel reaches fsdev_dax memory, held by the daemon and copied to the
# device through a hidden file at the close), into the guest's /tmp, and
# into famfs-bench-fuse-null (a FUSE server that accepts every request at
# once and keeps nothing: what FUSE itself costs, with the kernel checking
# permissions as famfs-fused has it do), the sides taking turns;
# a round's ratio is /tmp time / famfs time (famfs speed as a fraction of
# /tmp's). The tar holds files only, so the row counts file creations.
POSIX_FILES=100 POSIX_CP_MIB=64 POSIX_ROUNDS=3
NUL=/mnt/nul
# posix_time DIR: seconds of the tar -x and of the cp into DIR
posix_time() {
	local t0 t1 t2
	mkdir -p "$1/t" && t0=$(fvt now) &&
		tar -x -f /tmp/posix.tar -C "$1/t" && t1=$(fvt now) &&
		cp /tmp/posix.src "$1/c" && t2=$(fvt now) &&
		echo "$t0 $t1 $t2" | awk '{ printf "%.6f %.6f\n", $2 - $1, $3 - $2 }'
}
posix_rounds() {
	local i=0 f t n
	: >/tmp/posix.rounds
	while [ $i -lt $POSIX_ROUNDS ]; do
		case $((i % 3)) in
		0) f=$(posix_time $M/p$i) && t=$(posix_time /tmp/p$i) &&
			n=$(posix_time $NUL/p$i) ;;
		1) t=$(posix_time /tmp/p$i) && n=$(posix_time $NUL/p$i) &&
			f=$(posix_time $M/p$i) ;;
		*) n=$(posix_time $NUL/p$i) && f=$(posix_time $M/p$i) &&
			t=$(posix_time /tmp/p$i) ;;
		esac || return 1
		echo "round $i: famfs $f s, /tmp $t s, null $n s"
		echo "$f $t $n" >>/tmp/posix.rounds
		rm -rf /tmp/p$i
		i=$((i + 1))
	done
	awk -v n=$POSIX_FILES -v mib=$POSIX_CP_MIB '
		function med(a, k,  i, j, x) {
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
				if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
			return a[int((k + 1) / 2)]
		}
		{ tr[NR] = $3 / $1; cr[NR] = $4 / $2; tf[NR] = $1; tt[NR] = $3
		  cf[NR] = $2; ct[NR] = $4; tn[NR] = $5; cn[NR] = $6
		  tnr[NR] = $3 / $5; cnr[NR] = $4 / $6 }
		END {
			t = med(tr, NR); c = med(cr, NR)
			tn1 = med(tnr, NR); cn1 = med(cnr, NR)
			printf "RESULT vm_posix_tar files=%d rounds=%d ratio=%.3f ratio_min=%.3f ratio_max=%.3f famfs_files_per_s=%.0f tmp_files_per_s=%.0f null_files_per_s=%.0f null_ratio=%.3f null_ratio_min=%.3f null_ratio_max=%.3f\n",
				n, NR, t, tr[1], tr[NR], n / med(tf, NR), n / med(tt, NR),
				n / med(tn, NR), tn1, tnr[1], tnr[NR]
			printf "RESULT vm_posix_cp mib=%d rounds=%d ratio=%.3f ratio_min=%.3f ratio_max=%.3f famfs_mibs=%.1f tmp_mibs=%.1f null_mibs=%.1f null_ratio=%.3f null_ratio_min=%.3f null_ratio_max=%.3f\n",
				mib, NR, c, cr[1], cr[NR], mib / med(cf, NR), mib / med(ct, NR),
				mib / med(cn, NR), cn1, cnr[1], cnr[NR]
		}' /tmp/posix.rounds >/tmp/posix.result
}
t "bench: a FUSE server that does nothing at $NUL" sh -c "
	mkdir -p $NUL && { famfs-bench-fuse-null $NUL 16 1024 1 default_permissions & } &&
	i=0 && while ! grep -q ' $NUL ' /proc/mounts; do
		[ \$i -lt 100 ] || exit 1; sleep 0.05; i=\$((i + 1)); done"
t "bench: $POSIX_FILES small files in a tar, a $POSIX_CP_MIB MiB file" sh -c "
	mkdir -p /tmp/posix/d && i=0 &&
	while [ \$i -lt $POSIX_FILES ]; do
		dd if=/dev/urandom of=/tmp/posix/d/f\$i bs=1k count=\$((1 + i % 16)) 2>/dev/null
		i=\$((i + 1))
	done &&
	tar -c -f /tmp/posix.tar -C /tmp/posix/d \$(cd /tmp/posix/d && ls) &&
	dd if=/dev/urandom of=/tmp/posix.src bs=1M count=$POSIX_CP_MIB 2>/dev/null"
t "bench: tar -x and cp into the mount against /tmp, $POSIX_ROUNDS rounds" posix_rounds
while read -r l; do bench "$l"; done </tmp/posix.result
t "bench: unmount" sh -c "umount $NUL && umount $M"
