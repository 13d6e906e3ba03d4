# famfs_fuse.ko loads beside the built-in fuse, registers its own names,
# and unloads cleanly.
plan 11
FF=/lib/modules/famfs_fuse.ko

t "built-in fuse present" sh -c 'grep -qx "nodev	fuse" /proc/filesystems && test -c /dev/fuse'
t "famfs_fuse loads beside the built-in fuse" insmod $FF
t "/dev/famfs-fuse appears" sh -c '. /tests/lib.sh; wait_for /dev/famfs-fuse 5 && test -c /dev/famfs-fuse'
t "/dev/famfs-fuse has a dynamic minor" sh -c '
	m=$(awk "\$2 == \"famfs-fuse\" {print \$1}" /proc/misc)
	echo "famfs-fuse minor $m"; [ -n "$m" ] && [ "$m" != 229 ]'
t "/proc/filesystems lists famfs_fuse" grep -qx 'nodev	famfs_fuse' /proc/filesystems
t "famfs_fuseblk and famfs_fusectl registered" sh -c '
	grep -qx "	famfs_fuseblk" /proc/filesystems &&
	grep -qx "nodev	famfs_fusectl" /proc/filesystems'
t "built-in fuse names untouched" sh -c '
	grep -qx "nodev	fuse" /proc/filesystems && grep -qx "	fuseblk" /proc/filesystems &&
	awk "\$2 == \"fuse\" {f=1} END {exit !f}" /proc/misc'
t "famfs_fusectl mounts on /sys/fs/famfs_fuse/connections" sh -c '
	test -d /sys/fs/famfs_fuse/connections &&
	mount -t famfs_fusectl none /sys/fs/famfs_fuse/connections &&
	umount /sys/fs/famfs_fuse/connections'
t "module unloads" sh -c '
	rmmod famfs_fuse && ! grep -q famfs_fuse /proc/filesystems &&
	! test -e /dev/famfs-fuse && ! test -e /sys/fs/famfs_fuse'
t "module loads again after unload" sh -c "insmod $FF && rmmod famfs_fuse"
t "kernel log clean after load/unload" dmesg_clean
