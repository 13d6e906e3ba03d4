# famfs mode: the kernel offers FUSE_DAX_FMAP to a privileged mounter,
# whose server then gets it; without CAP_SYS_RAWIO it is not offered.
plan 7
t "famfs_fuse loads" insmod /lib/modules/famfs_fuse.ko
mkdir -p /mnt/f
t "kernel offers FUSE_DAX_FMAP (bit 43)" sh -c '
	minifuse -i /tmp/init1 /mnt/f && ls /mnt/f >/dev/null && umount /mnt/f &&
	v=$(cat /tmp/init1) && echo "offered $v" && [ $(( (v >> 43) & 1 )) -eq 1 ]'
# (The server answers GET_FMAP with ENODATA: hello is then read through
# FUSE; famfs maps need a device bound to famfs_dax, see 50-fmap.)
t "privileged server gets famfs mode" sh -c '
	rm -f /tmp/ops
	minifuse -F -m nodata -l /tmp/ops /mnt/f || exit 1
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]; r=$?
	umount /mnt/f; grep -qx 54 /tmp/ops && [ $r = 0 ]'
# famfs mode is offered only to a mounter with CAP_SYS_RAWIO (in the
# opener's credentials of /dev/famfs-fuse); without it the mount is plain
# FUSE, and a server that asks anyway changes nothing.
t "mounter without CAP_SYS_RAWIO: famfs mode not offered, plain FUSE" sh -c '
	rm -f /tmp/ops; minifuse -F -R -i /tmp/init2 -l /tmp/ops /mnt/f || exit 1
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]; r=$?
	umount /mnt/f; v=$(cat /tmp/init2); echo "offered $v"
	[ $r = 0 ] && [ $(( (v >> 43) & 1 )) = 0 ] && ! grep -qx 54 /tmp/ops'
t "unprivileged server without famfs still works" sh -c '
	minifuse -R /mnt/f && [ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ] &&
	umount /mnt/f'
t "module unloads" rmmod famfs_fuse
t "kernel log clean after famfs mode tests" dmesg_clean
