# famfs mode: the kernel offers FUSE_DAX_FMAP to a privileged mounter,
# whose server then gets it; without CAP_SYS_RAWIO it is not offered.
plan 7
# FUSE_DAX_FMAP's bit: 43 on 6.12 (protocol 7.41), 44 from protocol 7.46 on
# (famfs_fuse_abi.h), where 43 is FUSE_HAS_IO_URING_BUFPOOL.
case $(uname -r) in 6.*) FMAP_BIT=43 ;; *) FMAP_BIT=44 ;; esac
export FMAP_BIT
t "famfs_fuse loads" insmod /lib/modules/famfs_fuse.ko
mkdir -p /mnt/f
t "kernel offers FUSE_DAX_FMAP (bit $FMAP_BIT)" sh -c '
	minifuse -i /tmp/init1 /mnt/f && ls /mnt/f >/dev/null && umount /mnt/f &&
	v=$(cat /tmp/init1) && echo "offered $v" && [ $(( (v >> FMAP_BIT) & 1 )) -eq 1 ]'
# (The server answers GET_FMAP with ENODATA: hello is then read through
# FUSE; famfs maps need a device bound to famfs_dax, see 50-fmap, or on
# 7.3 to fsdev_dax, see cases-7.3/46-fsdev.)
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
	[ $r = 0 ] && [ $(( (v >> FMAP_BIT) & 1 )) = 0 ] && ! grep -qx 54 /tmp/ops'
t "unprivileged server without famfs still works" sh -c '
	minifuse -R /mnt/f && [ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ] &&
	umount /mnt/f'
t "module unloads" rmmod famfs_fuse
t "kernel log clean after famfs mode tests" dmesg_clean
