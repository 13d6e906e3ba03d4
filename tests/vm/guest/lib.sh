# Helpers for the VM test cases (sourced by /init, busybox sh).
# Results go to /dev/ttyS1 (the host's results file); the console
# (/dev/ttyS0) gets the commands' output for debugging.

T_N=0
T_FAIL=0
T_PLANNED=0	# checks all cases so far said they would make
T_CASE=		# the case being run, its plan and its first check
T_PLAN=
T_START=0
RES=/dev/ttyS1
[ -c "$RES" ] || RES=/dev/console
# famfs.slow=N on the kernel command line (run.sh gives it to the debug
# kernel) stretches the waits of these helpers and the pair's N times.
SLOW=$(sed -n 's/.*famfs\.slow=\([0-9]*\).*/\1/p' /proc/cmdline 2>/dev/null)
SLOW=${SLOW:-1}

report() { echo "$*" >"$RES"; echo "famfs-vm: $*" >/dev/console; }
note() { report "# $*"; }

# t NAME CMD [ARG...]: one check; passes when CMD exits 0.
t() {
	local name=$1 rc
	shift
	T_N=$((T_N + 1))
	echo "famfs-vm: -- $T_N $name: $*" >/dev/console
	"$@" >/dev/console 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		report "ok $T_N - $name"
	else
		T_FAIL=$((T_FAIL + 1))
		report "not ok $T_N - $name (exit $rc)"
	fi
	return $rc
}

# plan N, or plan LINE=N ...: the case being run makes N checks (on the
# kernel line LINE: 6.12, 7.3); its first statement, with numbers written
# out, for the host reads the plan from the file (tests/vm/run.sh).
# case_end compares, so a check lost to control flow fails the case.
plan() {
	local a n=
	for a; do
		case $a in
		*=*) case $(uname -r) in "${a%%=*}".*) n=${a#*=} ;; esac ;;
		*) n=$a ;;
		esac
	done
	T_PLAN=${n:-0}
	T_PLANNED=$((T_PLANNED + T_PLAN))
	note "plan $T_CASE $T_PLAN"
}

# skip NAME REASON: a check this kernel cannot make, counted in the plan
# and reported as skipped ("impossible: ..." where no kernel of this line
# could make it; tests/README.md).
skip() {
	T_N=$((T_N + 1))
	report "ok $T_N - $1 # SKIP $2"
}

# case_begin NAME / case_end: around each sourced case file (init).
case_begin() {
	T_CASE=$1 T_PLAN= T_START=$T_N
	note "case $1"
}
case_end() {
	local ran=$((T_N - T_START))
	# The host turns these into a failed check (tests/vm/run.sh).
	if [ -z "$T_PLAN" ]; then
		T_FAIL=$((T_FAIL + 1))
		note "plan broken: case $T_CASE declares no plan (plan N)"
	elif [ "$ran" -ne "$T_PLAN" ]; then
		T_FAIL=$((T_FAIL + 1))
		note "plan broken: case $T_CASE planned $T_PLAN checks but ran $ran"
	fi
}

# wait_for PATH [SECONDS]: wait until PATH exists.
wait_for() {
	local i=0 n=$((${2:-10} * SLOW))
	while [ ! -e "$1" ]; do
		[ $i -ge $((n * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# wait_gone PID [SECONDS]: wait (default 30 s) until PID has exited.
wait_gone() {
	local i=0 n=$((${2:-30} * SLOW))
	while kill -0 "$1" 2>/dev/null; do
		[ $i -ge $((n * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# famfs_idle [SECONDS]: wait (default 30 s) until nothing holds
# famfs_fuse.ko: every connection, and with it its claim on a dax device,
# is gone (an unmount returns before the server's side lets go).
famfs_idle() {
	local i=0 n=$((${1:-30} * SLOW))
	while [ "$(cat /sys/module/famfs_fuse/refcnt 2>/dev/null)" != 0 ]; do
		if [ $i -ge $((n * 10)) ]; then
			echo "famfs_fuse still in use: refcnt $(cat /sys/module/famfs_fuse/refcnt)"
			return 1
		fi
		sleep 0.1
		i=$((i + 1))
	done
}

# unload MODULE: rmmod once nothing holds famfs_fuse any more.
unload() {
	famfs_idle && rmmod "$1"
}

# The hosts' verdicts on a guest (tests/lib/guest-verdict.sh), shipped in
# by run.sh: its list of kernel trouble is the one dmesg_clean uses.
. "${FAMFS_VERDICT:-/tests/guest-verdict.sh}"

# dmesg_clean: the kernel log reports no trouble (KERNEL_TROUBLE: oops,
# BUG, WARNING, panic, KASAN, UBSAN, ...); the lines found are printed.
dmesg_clean() {
	dmesg >/tmp/dmesg.txt
	! kernel_trouble /tmp/dmesg.txt /tmp/dmesg.trouble ||
		{ cat /tmp/dmesg.trouble; return 1; }
}

finish() {
	report "1..$T_PLANNED"
	report "# done $T_N"
	sync
	poweroff -f
}

# dax_ready: the NVDIMM's namespace0.0 in devdax mode, /dev/dax0.0 there
# (what 20-devdax checks; init makes it so before every later case, so
# that each case runs alone too). Nothing is changed when it is there.
dax_ready() {
	[ -e /sys/bus/dax/devices/dax0.0 ] && return 0
	wait_for /sys/bus/nd/devices/region0 10 || return 1
	ndctl create-namespace -f -e namespace0.0 --mode=devdax --align=2M ||
		ndctl create-namespace -r region0 --mode=devdax --align=2M ||
		return 1
	wait_for /dev/dax0.0 10
}

# famfs_of_60 MNT: the famfs on dax0.0 holds 60-famfs's interleaved files
# il4 (seed 12) and il2 (seed 13), as 60 made them, and is left unmounted:
# for the cases that use the famfs the cases before them made. When they
# are not there (the case runs alone) they are made, and a famfs too if
# there is none; a famfs that is there is never remade. Needs famfs_load.
famfs_of_60() {
	local spec
	mkdir -p "$1"
	if ! mount.famfs /dev/dax0.0 "$1" -o fallback=no; then
		echo "famfs_of_60: no famfs on dax0.0; making one"
		mkfs.famfs -f /dev/dax0.0 >/dev/null &&
			mount.famfs /dev/dax0.0 "$1" -o fallback=no || return 1
	fi
	for spec in "il4 12 -N 4 -B 8 -C 2m -s 37m" "il2 13 -N 2 -B 4 -C 4m -s 20m"; do
		set -- "$1" $spec
		famfs verify -S "$3" "$1/$2" >/dev/null 2>&1 && continue
		echo "famfs_of_60: making $2"
		# shellcheck disable=SC2046 # the layout options, split
		famfs creat $(echo "$spec" | cut -d' ' -f3-) -r -S "$3" "$1/$2" ||
			{ umount "$1"; return 1; }
	done
	umount "$1"
}

# famfs_load: famfs_fuse.ko loaded and dax0.0 ready for famfs. On 6.12
# that is dax0.0 bound to the module's famfs_dax driver (unbound from
# device_dax first), which then serves /dev/dax0.0. On 7.3 the kernel's
# fsdev_dax serves famfs and its node cannot be read: dax0.0 stays where
# it is, and the tools and the daemon move it as they need.
famfs_load() {
	grep -q '^famfs_fuse ' /proc/modules || insmod /lib/modules/famfs_fuse.ko || return 1
	case $(uname -r) in
	6.12.*) famfs_bind dax0.0 ;;
	*) test -d /sys/bus/dax/drivers/fsdev_dax ;;
	esac
}

# famfs_raw_load: for a raw server (minifuse) in famfs mode: famfs_fuse
# loaded and dax0.0 on the driver the kernel's famfs claims. Sets DEVREF
# to a file whose first 2 MiB are dax0.0's, for fvt devcmp: the node
# itself on 6.12 (famfs_dax serves it); on 7.3, whose fsdev_dax node
# cannot be read, a file holding the pattern written to dax0.0 through
# device_dax before the move.
famfs_raw_load() {
	grep -q '^famfs_fuse ' /proc/modules || insmod /lib/modules/famfs_fuse.ko || return 1
	case $(uname -r) in
	6.12.*)
		DEVREF=/dev/dax0.0
		famfs_bind dax0.0 ;;
	*)
		DEVREF=/tmp/dax0.ref
		famfs_bind dax0.0 device_dax &&
			fvt mwrite /dev/dax0.0 0 2097152 50 &&
			truncate -s 2M $DEVREF && fvt pwrite $DEVREF 0 2097152 50 &&
			famfs_bind dax0.0 fsdev_dax ;;
	esac
}

# dev_bytes FILE: FILE, by read(2) and by mmap, holds its bytes in dax0.0
# at the extents famfs getmap gives. On 6.12 famfs_dax serves the node and
# the device is compared at once. On 7.3 the fsdev_dax node cannot be read
# under a mount: read(2) and mmap are compared now, and a copy of FILE with
# its map is kept (a later copy of the same FILE replaces it) for
# dev_bytes_kept, once the device is unmounted and back on device_dax.
dev_bytes() {
	local m k
	m=$(fmap_spec "$1") || return 1
	echo "map $m"
	case $(uname -r) in
	6.12.*) fvt devcmp "$1" /dev/dax0.0 "$m" ;;
	*)
		k=/tmp/devbytes/$(echo "$1" | tr / _)
		mkdir -p /tmp/devbytes
		fvt devcmp "$1" "$1" "s:0:$(stat -c %s "$1")" &&
			cp "$1" "$k.data" && echo "$m" >"$k.map" ;;
	esac
}

# dev_bytes_kept: every copy dev_bytes kept equals the device bytes at its
# map (7.3; dax0.0 readable again). Fails when none was kept.
dev_bytes_kept() {
	local f n=0
	for f in /tmp/devbytes/*.map; do
		[ -f "$f" ] || return 1
		fvt devcmp "${f%.map}.data" /dev/dax0.0 "$(cat "$f")" || return 1
		n=$((n + 1))
	done
	echo "$n files equal the device bytes"
	rm -rf /tmp/devbytes
}

# famfs_bind DEV [DRIVER]: dax device DEV bound to DRIVER (famfs_dax)
famfs_bind() {
	local d=/sys/bus/dax/devices/$1 want=${2:-famfs_dax} drv
	drv=$(readlink "$d/driver" 2>/dev/null)
	[ "${drv##*/}" = "$want" ] && return 0
	[ -n "$drv" ] && echo "$1" >"$d/driver/unbind"
	echo "$1" >/sys/bus/dax/drivers/$want/new_id 2>/dev/null ||
		echo "$1" >/sys/bus/dax/drivers/$want/bind
	drv=$(readlink "$d/driver" 2>/dev/null)
	[ "${drv##*/}" = "$want" ]
}

# kv KEY FILE: the value of KEY= in a key=value file
kv() { sed -n "s/^$1=//p" "$2" | head -n1; }

# fmap_spec FILE: the map of a famfs file for "fvt devcmp", from getmap
fmap_spec() {
	famfs getmap "$1" | awk '
		/interleaved extent/ { il = 1; for (i = 1; i <= NF; i++)
			if ($i == "size") chunk = $(i + 1) }
		/dev [0-9]+.*offset/ { for (i = 1; i <= NF; i++) {
			if ($i == "offset") off = $(i + 1)
			if ($i == "length") len = $(i + 1) }
			if (il) s = s (n++ ? "," : "") off
			else s = s (n++ ? "," : "") "s:" off ":" len }
		END { if (il) print "i:" chunk ":" s; else print s }'
}

# task_where PID: the task's state, wchan and kernel stack, on one line
task_where() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d" " -f1)
	echo "pid $1 state ${st:-gone} wchan $(cat "/proc/$1/wchan" 2>/dev/null)" \
		"stack $(tr -s ' \n' ' ' <"/proc/$1/stack" 2>/dev/null)"
}

# sleeps_in PID FUNC SECS: wait up to SECS for task PID to sleep in the
# kernel (state D) with FUNC in its wchan or kernel stack (seen from the
# kernel, not inferred from time)
sleeps_in() {
	local i=0 n=$((${3:-10} * SLOW * 10)) w
	while [ $i -lt $n ]; do
		w=$(task_where "$1")
		case $w in
		*" state D "*"$2"*) echo "$w"; return 0 ;;
		esac
		sleep 0.1
		i=$((i + 1))
	done
	echo "not asleep in $2: $w"
	return 1
}
