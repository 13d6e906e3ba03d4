# A FUSE server (minifuse, raw protocol) serves a mount through
# /dev/famfs-fuse; the built-in fuse is not involved.
plan 13
t "famfs_fuse loads" insmod /lib/modules/famfs_fuse.ko
mkdir -p /mnt/f
t "minifuse mounts type famfs_fuse" minifuse -i /tmp/init-flags /mnt/f
t "mount is listed as famfs_fuse" grep -q ' /mnt/f famfs_fuse ' /proc/mounts
t "readdir shows hello" sh -c 'ls /mnt/f; ls /mnt/f | grep -qx hello'
t "read returns the file content" sh -c '
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]'
t "stat size is right" sh -c '[ "$(stat -c %s /mnt/f/hello)" = 22 ]'
t "missing file gives ENOENT" fvt expect ENOENT read /mnt/f/nothere
t "connection shows in famfs_fusectl" sh -c '
	mount -t famfs_fusectl none /sys/fs/famfs_fuse/connections &&
	ls /sys/fs/famfs_fuse/connections | grep -q . &&
	umount /sys/fs/famfs_fuse/connections'
t "built-in fuse has no connection" sh -c '
	mount -t fusectl none /sys/fs/fuse/connections &&
	n=$(ls /sys/fs/fuse/connections | wc -l) &&
	umount /sys/fs/fuse/connections && [ "$n" -eq 0 ]'
t "module is in use while mounted" sh -c '! rmmod famfs_fuse 2>/dev/null'
t "unmount" umount /mnt/f
t "module unloads after unmount" rmmod famfs_fuse
t "kernel log clean after mount tests" dmesg_clean
