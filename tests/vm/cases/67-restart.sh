# A restart without systemd's fd store (a daemon started by hand, or one
# that gave up a takeover): the daemon puts the device on famfs's driver
# by itself, dies with a file mapped, and a new famfs-fused on the same
# mount point replaces the dead mount.
#
# 6.12 (famfs_dax serves the node): the old mapping keeps working;
# lookups work at once, file data once the old mapping is gone (the dead
# connection keeps its claim on the device until then).
# 7.3 (fsdev_dax, whose node cannot be read): the new daemon reads the
# superblock on device_dax, so moving the device there revokes the dead
# connection's mappings and ends its claim; file data works at once and
# the old mapping gets SIGBUS on its next access (dkms/README.md,
# "Ownership").
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-67.log
export FAMFS_FUSED=/usr/bin/famfs-fused

case $(uname -r) in
6.12.*) FSDRV=famfs_dax ;;
*) FSDRV=fsdev_dax ;;
esac
plan 6.12=15 7.3=17

# The famfs the earlier cases made, or a new one when this case runs alone.
mkdir -p $M
famfs fsck /dev/dax0.0 >/dev/console 2>&1 || mkfs.famfs -f /dev/dax0.0 >/dev/console 2>&1
# 7.3: earlier cases leave dax0.0 on fsdev_dax; put it on device_dax so
# that the daemon is the one that moves it.
t "famfs_fuse loads; dax0.0 is not on $FSDRV yet" sh -c "
	. /tests/lib.sh
	insmod /lib/modules/famfs_fuse.ko || exit 1
	[ $FSDRV = famfs_dax ] || famfs_bind dax0.0 device_dax || exit 1
	d=\$(basename \"\$(readlink /sys/bus/dax/devices/dax0.0/driver)\" 2>/dev/null)
	echo \"dax0.0 driver: \${d:-none}\"; [ \"\$d\" != $FSDRV ]"
t "mount.famfs moves dax0.0 to $FSDRV itself (famfs mode)" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no && grep -qx mode=famfs $S &&
	[ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = $FSDRV ]"
# Its own files (the famfs is the one an earlier case made: 60-famfs on
# 6.12, 62-fused on 7.3).
t "files for the test: simple 16 MiB, interleaved 20 MiB" sh -c "
	famfs creat -s 16m -r -S 67 $M/r67 && famfs verify -S 67 $M/r67 &&
	famfs creat -N 2 -B 4 -C 4m -s 20m -r -S 68 $M/r67i && famfs verify -S 68 $M/r67i"
pid=$(kv pid $S)
rm -f /tmp/r3 /tmp/g3
fvt holdmap $M/r67 /tmp/r3 /tmp/g3 >/tmp/h3 2>&1 &
h3=$!
t "a process holds $M/r67 mapped" wait_for /tmp/r3 20
t "daemon killed with SIGKILL" sh -c "kill -9 $pid"
t "the daemon is gone" wait_gone "$pid"
# ENOTCONN, or ECONNABORTED for a request the dying daemon had taken.
t "the dead mount fails with ENOTCONN" sh -c "
	! ls $M 2>/tmp/e3; cat /tmp/e3; grep -qE 'not connected|connection abort' /tmp/e3"
echo "famfs-test: restart" >/dev/kmsg
t "a new famfs-fused replaces the dead mount" sh -c "
	famfs-fused -o fallback=no,logfile=$L /dev/dax0.0 $M; rc=\$?
	cat $L; exit \$rc"
t "the new daemon runs in famfs mode" sh -c "grep -qx mode=famfs $S && ! grep -qx pid=$pid $S"
t "lookups work at once after the restart" sh -c "ls -l $M/r67 $M/r67i"
if [ $FSDRV = famfs_dax ]; then
	# The dead connection keeps its claim on dax0.0 while its file is
	# mapped (dkms/README.md, Ownership): file data comes back when that
	# ends.
	t "the old mapping still reads the same" sh -c "
		touch /tmp/g3; while kill -0 $h3 2>/dev/null; do sleep 0.1; done
		cat /tmp/h3; grep -q ' same' /tmp/h3"
else
	t "the move to device_dax revoked the dead mount's mappings (logged)" sh -c "
		dmesg | sed -n '/famfs-test: restart\$/,\$p' >/tmp/k3; cat /tmp/k3
		grep -q 'unbound while in use' /tmp/k3"
	t "files verify while the old mapping is still held" sh -c "
		kill -0 $h3 && famfs verify -S 67 $M/r67 && famfs verify -S 68 $M/r67i"
	touch /tmp/g3
	wait $h3
	rc3=$?
	t "the old mapping gets SIGBUS on its next access" sh -c "
		cat /tmp/h3; echo exit $rc3; [ $rc3 -eq \$((128 + 7)) ]"
fi
t "files verify once the old mapping is gone" sh -c "
	famfs verify -S 67 $M/r67 && famfs verify -S 68 $M/r67i"
t "new files can be made after the restart" sh -c "
	famfs creat -s 4m -r -S 69 $M/after && famfs verify -S 69 $M/after"
t "unmount and unload" sh -c ". /tests/lib.sh; umount $M && unload famfs_fuse"
t "kernel log clean after the restart tests" dmesg_clean
