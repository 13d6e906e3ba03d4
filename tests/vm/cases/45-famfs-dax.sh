# The famfs_dax driver (in famfs_fuse.ko) takes dax0.0 over from
# device_dax through new_id and serves its device node itself.
plan 8
t "famfs_dax driver registered with famfs_fuse" sh -c '
	insmod /lib/modules/famfs_fuse.ko && test -d /sys/bus/dax/drivers/famfs_dax'
t "famfs_dax binds nothing by itself" sh -c '
	! ls /sys/bus/dax/drivers/famfs_dax | grep -q "^dax"'
t "dax0.0 moves from device_dax to famfs_dax (new_id)" famfs_bind dax0.0
t "famfs_health says ok" sh -c '
	[ "$(cat /sys/bus/dax/devices/dax0.0/famfs_health)" = ok ]'
t "/dev/dax0.0 mmap (write, read back) through famfs_dax" sh -c '
	fvt mwrite /dev/dax0.0 0x10000000 1048576 7 &&
	fvt devcheck /dev/dax0.0 0x10000000 1048576 7 0x10000000'
t "module unload unbinds famfs_dax" sh -c '
	rmmod famfs_fuse && ! test -e /sys/bus/dax/devices/dax0.0/driver'
t "reload and bind again" famfs_load
t "kernel log clean after famfs_dax tests" dmesg_clean
