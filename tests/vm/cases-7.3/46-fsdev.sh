# 7.3: famfs files on a dax device bound to the kernel's fsdev_dax (no
# famfs_dax there). The claim with fs_dax_get(): one connection at a time,
# released when it ends, refused on device_dax; the data path; unbinding
# fsdev_dax under a mapping (dkms patch 0006, finding 6 on 7.3); a memory
# error (notify_failure), the file it names in the log (patch 0009) and its
# record across claims (finding 15 on 7.3), kept by physical address
# (second review, finding 11). minifuse serves hello (22
# bytes) from offset 0 of /dev/dax0.0 (from 2 MiB for the memory error).
plan 25
FF=/lib/modules/famfs_fuse.ko
mkdir -p /mnt/f /mnt/g
drv() { basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)"; }
# dax_bind DRIVER: dax0.0 moves to DRIVER (unbound from its driver first)
dax_bind() {
	local d=/sys/bus/dax/devices/dax0.0
	[ "$(drv)" = "$1" ] && return 0
	[ -e $d/driver ] && echo dax0.0 >$d/driver/unbind
	echo dax0.0 >/sys/bus/dax/drivers/$1/new_id 2>/dev/null ||
		echo dax0.0 >/sys/bus/dax/drivers/$1/bind
	[ "$(drv)" = "$1" ]
}
# mark NAME / since NAME: the kernel log from a mark on
mark() { echo "famfs-test: $1" >/dev/kmsg; }
since() { dmesg | sed -n "\|famfs-test: $1\$|,\$p"; }

loads() {
	insmod $FF && test -d /sys/bus/dax/drivers/fsdev_dax &&
		! test -e /sys/bus/dax/drivers/famfs_dax
}
t "famfs_fuse loads; fsdev_dax is there, no famfs_dax driver" loads
pattern() { [ "$(drv)" = device_dax ] && fvt mwrite /dev/dax0.0 0 2097152 5; }
t "a pattern written to dax0.0 through device_dax" pattern
t "dax0.0 moves from device_dax to fsdev_dax" dax_bind fsdev_dax
t "fsdev_dax's node serves no read(2)" sh -c '
	! dd if=/dev/dax0.0 of=/dev/null bs=4096 count=1'
famfs_mode() {
	local n d
	rm -f /tmp/ops
	minifuse -F -l /tmp/ops /mnt/f || return 1
	fvt check /mnt/f/hello 0 22 5 && fvt mmapread /mnt/f/hello || return 1
	n=$(grep -cx 54 /tmp/ops) d=$(grep -cx 55 /tmp/ops)
	echo "GET_FMAP $n GET_DAXDEV $d"
	[ "$n" = 1 ] && [ "$d" -ge 1 ]
}
t "famfs mode: one GET_FMAP, hello is the device's bytes (read, mmap)" famfs_mode
t "write(2) through the famfs file, read back" sh -c '
	fvt pwrite /mnt/f/hello 0 22 9 && fvt check /mnt/f/hello 0 22 9'
# refused_logged MNT WHY: on a new minifuse mount at MNT, reading hello
# fails with EIO and the kernel logs a famfs line saying WHY.
refused_logged() {
	local r
	mark "$1"
	minifuse -F "$1" || return 1
	fvt expect EIO read "$1/hello"
	r=$?
	umount "$1"
	since "$1" | grep famfs | grep "$2" && [ $r = 0 ]
}
second() { refused_logged /mnt/g 'held by another famfs connection'; }
t "a second connection cannot claim the held device (EIO, logged)" second
release() {
	local r
	umount /mnt/f && famfs_idle || return 1
	minifuse -F /mnt/g && fvt check /mnt/g/hello 0 22 9
	r=$?
	umount /mnt/g
	famfs_idle && [ $r = 0 ]
}
t "the unmount releases the claim: another connection takes it" release
in_device() { dax_bind device_dax && fvt devcheck /dev/dax0.0 0 22 9 0; }
t "the bytes written through famfs are in the device (on device_dax)" in_device
refused() {
	local r
	refused_logged /mnt/f 'bound to fsdev_dax'
	r=$?
	famfs_idle
	return $r
}
t "a device on device_dax is refused (EIO, logged)" refused
t "dax0.0 back on fsdev_dax" dax_bind fsdev_dax
# Unbinding fsdev_dax while a process maps a famfs file of it.
rm -f /tmp/r46 /tmp/g46
minifuse -F /mnt/f
(ulimit -c 0; exec fvt holdmap /mnt/f/hello /tmp/r46 /tmp/g46) >/tmp/h46 2>&1 &
h46=$!
t "a process holds hello mapped" wait_for /tmp/r46 20
unbind_in_use() {
	mark unbind
	timeout 60 sh -c 'echo dax0.0 >/sys/bus/dax/drivers/fsdev_dax/unbind' &&
		since unbind | grep 'unbound while in use'
}
t "unbinding fsdev_dax under the mapping returns, logged" unbind_in_use
touch /tmp/g46
wait $h46
rc46=$?
t "the process that held the mapping gets SIGBUS on its next access" sh -c "
	cat /tmp/h46; echo exit $rc46; [ $rc46 -eq \$((128 + 7)) ]"
gone() { umount /mnt/f && famfs_idle && dax_bind fsdev_dax; }
t "unmount after the unbind; fsdev_dax bound again" gone
# A page that only a pipe holds while its mount goes away (second
# review, finding 2): the umount waits in the eviction of hello
# (dax_break_layout_final) with its super block already off the
# connection's list of mounts. An unbind of fsdev_dax meanwhile must wait
# until that inode has dropped its dax entry, for fsdev_dax frees the
# struct pages right after. (Before the fix the unbind returned at once
# and draining the pipe oopsed on the freed page.)
pinned_umount() {
	rm -f /tmp/pu-r /tmp/pu-g
	minifuse -F /mnt/f || return 1
	fvt pinpage /mnt/f/hello /tmp/pu-r /tmp/pu-g >/tmp/pu.out 2>&1 &
	p=$!
	wait_for /tmp/pu-r 20 || { cat /tmp/pu.out; return 1; }
	umount /mnt/f &
	m=$!
	sleeps_in $m dax_break_layout_final 20; parked=$?
	a=$(fvt now); mark pinned-unbind
	echo dax0.0 >/sys/bus/dax/drivers/fsdev_dax/unbind &
	u=$!
	sleeps_in $u famfs_fsdev_notify_failure 20; w=$?
	sleep 2; kill -0 $u 2>/dev/null; still=$?
	touch /tmp/pu-g; wait $p; pr=$?; wait $m; mr=$?; wait $u; ur=$?
	report "# measure: unbind of dax0.0 while a umount waits for a page pinned in a pipe, drained 2 s after the unbind was seen waiting: $(awk -v a=$a -v b=$(fvt now) "BEGIN { printf \"%.3f\", b - a }") s"
	cat /tmp/pu.out
	echo "umount parked: $parked, unbind asleep in the wait: $w," \
		"still waiting 2 s later: $still (0: yes), drain $pr, umount $mr, unbind $ur"
	famfs_idle && dax_bind fsdev_dax && [ $parked = 0 ] && [ $w = 0 ] &&
		[ $still = 0 ] && [ $pr = 0 ] && [ $mr = 0 ] && [ $ur = 0 ]
}
t "unbind while a umount waits for a pinned page: waits for the eviction" pinned_umount
# A server that names a device number which is no live dax device bound
# to fsdev_dax (second review, finding 4): the dax-core minor of a pmem
# namespace (fsdax mode: a dax device with no node and no dev_dax), and the
# number of a devdax device that is gone. The kernel must refuse them
# before it touches them. (Before: the first was a NULL dereference in
# fs_dax_get(), the second oopsed there on the freed device's memory.)
node_of() { set -- $(stat -c "%t %T" "$1") && echo "$((0x$1)) $((0x$2))"; }
# refuses_node NODE: a server naming NODE: reading hello fails with EIO
refuses_node() {
	minifuse -F -D "$1" /mnt/g || return 1
	fvt expect EIO read /mnt/g/hello
	r=$?
	umount /mnt/g
	return $r
}
pmem_minors() {
	local maj m n=0 live
	ndctl create-namespace -f -e namespace1.0 -m fsdax >/dev/null &&
		wait_for /dev/pmem1 10 || return 1
	live=$(node_of /dev/dax0.0)
	maj=${live% *}
	# every minor of the dax core but dax0.0's (live, ours)
	for m in $(seq 0 15); do
		[ "$maj $m" = "$live" ] && continue
		rm -f /tmp/daxm && mknod /tmp/daxm c "$maj" "$m" &&
			refuses_node /tmp/daxm || { echo "minor $m"; return 1; }
		n=$((n + 1))
	done
	echo "dax-core minors refused: $n"
	famfs_idle
}
t "a server naming a dax-core minor with no devdax device: EIO, no oops" pmem_minors
stale_devdax() {
	local n
	ndctl create-namespace -f -e namespace1.0 -m devdax --align=2M >/dev/null &&
		wait_for /dev/dax1.0 10 || return 1
	n=$(node_of /dev/dax1.0)
	ndctl create-namespace -f -e namespace1.0 -m raw >/dev/null &&
		[ ! -e /dev/dax1.0 ] || return 1
	echo "dax1.0 was $n"
	rm -f /tmp/stale && mknod /tmp/stale c $n && refuses_node /tmp/stale &&
		famfs_idle
}
t "a server naming a devdax device that is gone: EIO, no oops" stale_devdax
# A memory error on a mapped famfs page; hello's map is here one extent at
# offset 2 MiB of device 0.
poison() {
	mark poison
	minifuse -F -m good-2m /mnt/f || return 1
	fvt hwpoison /mnt/f/hello 0 || return 1
	since poison | grep -E 'famfs|emory failure'
	since poison | grep -q 'device failed, its famfs files now fail with EIO'
}
t "MADV_HWPOISON: SIGBUS, notify_failure fails the device (logged)" poison
# The poisoned page is file offset 0 and device offset 2 MiB; the line
# names the file by its path in the mount and the inode number stat
# reports.
named() {
	local ino
	ino=$(stat -c %i /mnt/f/hello) || return 1
	since poison | grep -F "famfs: memory error in /hello (inode $ino) at file offset 0x0 (dax device 0 offset 0x200000)"
}
t "the kernel log names the file the error hit, and the file offset" named
t "read(2) of the file after the error: EIO" fvt expect EIO read /mnt/f/hello
remembered() {
	local r
	umount /mnt/f && famfs_idle || return 1
	mark remembered
	minifuse -F /mnt/f || return 1
	fvt expect EIO read /mnt/f/hello
	r=$?
	umount /mnt/f
	famfs_idle
	since remembered | grep 'had a memory error' && [ $r = 0 ]
}
t "the next claim of the device finds the error recorded (EIO)" remembered
# The record is of the memory, not of the device number (second review,
# finding 11): with both namespaces disabled (no device holds a dax minor;
# a minor is freed an RCU grace period after its device, hence the pause),
# namespace1.0, on the other nvdimm, is made a devdax device that the dax
# core gives dax0.0's old minor (the lowest free one, once dax0.0 has
# taken any lower one: see below). Its memory had no error:
# its claim must not be failed. (Before: it inherited dax0.0's record, and
# every file on it failed with EIO.)
reused_minor() {
	local n0 n1 r
	n0=$(node_of /dev/dax0.0) || return 1
	ndctl disable-namespace namespace0.0 >/dev/null &&
		ndctl disable-namespace namespace1.0 >/dev/null &&
		[ ! -e /dev/dax0.0 ] || return 1
	sleep 1
	# A new device takes the lowest free minor, and dax devices without a
	# node (other namespaces' fsdax) hold some: dax0.0, enabled again
	# first, takes the lowest. If that is its own, it gives it back and
	# namespace1.0 gets it; if lower, namespace1.0 gets the next, dax0.0's.
	ndctl enable-namespace namespace0.0 >/dev/null &&
		wait_for /dev/dax0.0 10 || return 1
	if [ "$(node_of /dev/dax0.0)" = "$n0" ]; then
		ndctl disable-namespace namespace0.0 >/dev/null &&
			[ ! -e /dev/dax0.0 ] || return 1
		sleep 1
	fi
	ndctl create-namespace -f -e namespace1.0 -m devdax --align=2M >/dev/null &&
		wait_for /dev/dax1.0 10 || return 1
	n1=$(node_of /dev/dax1.0)
	echo "dax0.0 had $n0, dax1.0 has $n1"
	[ "$n0" = "$n1" ] || { echo "minor not handed on: the case shows nothing"; return 1; }
	echo dax1.0 >/sys/bus/dax/devices/dax1.0/driver/unbind || return 1
	echo dax1.0 >/sys/bus/dax/drivers/fsdev_dax/new_id 2>/dev/null ||
		echo dax1.0 >/sys/bus/dax/drivers/fsdev_dax/bind || return 1
	mark reused
	minifuse -F -D /dev/dax1.0 /mnt/g || return 1
	cat /mnt/g/hello >/dev/null
	r=$?
	umount /mnt/g
	famfs_idle || return 1
	! since reused | grep 'had a memory error' && [ $r = 0 ]
}
t "a new device with the minor of the failed one: not failed (read works)" reused_minor
# And dax0.0, back over its old memory, is failed at its first claim.
same_memory() {
	local r
	ndctl create-namespace -f -e namespace1.0 -m raw >/dev/null &&
		[ ! -e /dev/dax1.0 ] || return 1
	{ [ -e /dev/dax0.0 ] || ndctl enable-namespace namespace0.0 >/dev/null; } &&
		wait_for /dev/dax0.0 10 && dax_bind fsdev_dax || return 1
	mark same
	minifuse -F /mnt/f || return 1
	fvt expect EIO read /mnt/f/hello
	r=$?
	umount /mnt/f
	famfs_idle
	since same | grep 'had a memory error at 0x200000' && [ $r = 0 ]
}
t "dax0.0 enabled again over the memory that failed: failed (EIO, logged)" same_memory
t "kernel log clean after the fsdev_dax cases" dmesg_clean
