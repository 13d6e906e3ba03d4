# The device goes away under a famfs-mode mount: its driver (famfs_dax on
# 6.12, fsdev_dax on 7.3) is unbound from dax0.0 while a process holds a
# file mapped. Nothing hangs, the kernel stays clean (the module drops
# every mapping of the device's pages before they go: dkms patch 0006),
# files fail with ENXIO (EIO on 7.3) or SIGBUS, the daemon survives its
# own mapping being revoked and reports the device lost, and the mount
# unmounts. Runs after the cases that share 60's file system: it leaves
# dax0.0 back on device_dax.
plan 18
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-devgone.log
export FAMFS_FUSED=/usr/bin/famfs-fused
# A read of an open file after the unbind: famfs_dax (6.12) answers
# ENXIO; on 7.3 the holder marks the device failed, so EIO.
case $(uname -r) in
6.12.*) drv=famfs_dax err=ENXIO msg='No such device or address' ;;
*) drv=fsdev_dax err=EIO msg='Input/output error' ;;
esac

t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
# The famfs the earlier cases made, or a new one when this case runs alone.
mkdir -p $M
famfs fsck /dev/dax0.0 >/dev/console 2>&1 || mkfs.famfs -f /dev/dax0.0 >/dev/console 2>&1
t "mount.famfs" mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L
t "a file to lose" sh -c "famfs creat -s 8m -r -S 75 $M/gone && famfs verify -S 75 $M/gone"
pid=$(kv pid $S)
rm -f /tmp/r75 /tmp/g75
(ulimit -c 0; exec fvt holdmap $M/gone /tmp/r75 /tmp/g75) >/tmp/h75 2>&1 &
h75=$!
t "a process holds $M/gone mapped" wait_for /tmp/r75 20
dmesg -c >/dev/console
# The file is opened before the unbind and read after it, in one shell.
# busybox timeout leaves a watcher process behind for up to a second: it
# must not inherit the descriptor, or it keeps the mount busy.
t "unbinding $drv from dax0.0 under the mount returns (no hang)" sh -c "
	exec 3<$M/gone
	timeout 60 sh -c 'echo dax0.0 >/sys/bus/dax/drivers/$drv/unbind' 3<&- ||
		exit 1
	! cat <&3 >/dev/null 2>/tmp/e75; true"
t "the kernel says the device was unbound while in use" sh -c "
	dmesg; dmesg | grep -q 'unbound while in use'"
t "read(2) of a file opened before: $err (the kernel, no daemon)" sh -c "
	cat /tmp/e75; grep -q '$msg' /tmp/e75"
# Its mapping was torn down: the next access faults.
touch /tmp/g75
wait $h75
rc75=$?
t "the process that held the mapping gets SIGBUS on its next access" sh -c "
	cat /tmp/h75; echo exit $rc75; [ $rc75 -eq \$((128 + 7)) ]"
# A lookup miss makes the daemon read its mapping of the log, which the
# unbind revoked: it must mark the device lost, not die of SIGBUS.
t "a lookup that misses: EIO from the daemon" sh -c "
	! ls $M/never-made 2>/tmp/e75; cat /tmp/e75; grep -q 'Input/output error' /tmp/e75"
t "the daemon survived its mapping being revoked" sh -c "[ -n '$pid' ] && kill -0 '$pid'"
t "the daemon logged the loss once" sh -c "
	cat $L; [ \$(grep -c 'device /dev/dax0.0 is gone' $L) -eq 1 ]"
t "a new open of a file on the lost device: EIO" fvt expect EIO read $M/gone
t "famfs status: NOT HEALTHY, memory lost, exit 1" sh -c "
	famfs status $M >/tmp/st75; rc=\$?; cat /tmp/st75; [ \$rc -eq 1 ] &&
	grep -q ': NOT HEALTHY' /tmp/st75 && grep -q '^  memory: *lost' /tmp/st75"
# Nothing holds the mount any more: the first umount must work.
t "unmount after the device went away" sh -c "
	umount $M && ! grep -q ' $M ' /proc/mounts"
t "the daemon exits" wait_gone "$pid"
t "module unloads after the device went away" unload famfs_fuse
t "dax0.0 goes back to device_dax" sh -c "
	echo dax0.0 >/sys/bus/dax/drivers/device_dax/bind 2>/dev/null || true
	[ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = device_dax ]"
t "kernel log clean after the device went away" dmesg_clean
