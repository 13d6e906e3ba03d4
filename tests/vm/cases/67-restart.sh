# What systemd's Restart=on-failure does for famfs@.service, without
# systemd: the daemon binds the device to famfs_dax by itself, dies with a
# file mapped, and a new famfs-fused on the same mount point replaces the
# dead mount; the old mapping keeps working, lookups work at once and
# file data once the old mapping is gone.
plan 15
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused

drv() { basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)" 2>/dev/null; }

t "famfs_fuse loads; dax0.0 is not on famfs_dax yet" sh -c '
	insmod /lib/modules/famfs_fuse.ko || exit 1
	d=$(basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)" 2>/dev/null)
	echo "dax0.0 driver: ${d:-none}"; [ "$d" != famfs_dax ]'
t "mount.famfs binds dax0.0 to famfs_dax itself (famfs mode)" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no && grep -qx mode=famfs $S &&
	[ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = famfs_dax ]"
t "files are there" famfs verify -S 31 $M/held
pid=$(kv pid $S)
rm -f /tmp/r3 /tmp/g3
fvt holdmap $M/held /tmp/r3 /tmp/g3 >/tmp/h3 2>&1 &
h3=$!
t "a process holds $M/held mapped" wait_for /tmp/r3 20
t "daemon killed with SIGKILL" sh -c "kill -9 $pid"
t "the daemon is gone" wait_gone "$pid"
# ENOTCONN, or ECONNABORTED for a request the dying daemon had taken.
t "the dead mount fails with ENOTCONN" sh -c "
	! ls $M 2>/tmp/e3; cat /tmp/e3; grep -qE 'not connected|connection abort' /tmp/e3"
t "a new famfs-fused replaces the dead mount" famfs-fused -o fallback=no /dev/dax0.0 $M
t "the new daemon runs in famfs mode" sh -c "grep -qx mode=famfs $S && ! grep -qx pid=$pid $S"
t "lookups work at once after the restart" sh -c "ls -l $M/held $M/il2"
# The dead connection keeps its claim on dax0.0 while its file is mapped
# (dkms/README.md, Ownership): file data comes back when that ends.
t "the old mapping still reads the same" sh -c "
	touch /tmp/g3; while kill -0 $h3 2>/dev/null; do sleep 0.1; done
	cat /tmp/h3; grep -q ' same' /tmp/h3"
t "files verify once the old mapping is gone" sh -c "
	famfs verify -S 31 $M/held && famfs verify -S 13 $M/il2"
t "new files can be made after the restart" sh -c "
	famfs creat -s 4m -r -S 67 $M/after && famfs verify -S 67 $M/after"
t "unmount and unload" sh -c ". /tests/lib.sh; umount $M && unload famfs_fuse"
t "kernel log clean after the restart tests" dmesg_clean
