# Opening a famfs file that another process maps. Whatever the server
# answers about FOPEN_KEEP_CACHE (minifuse never sets it), the kernel must
# not drop the file's page cache at open (dkms patch 0007): a famfs file
# has none, only dax entries, and tearing those out from under the process
# that maps them warns in 7.3's dax_disassociate_entry().
plan 5
mkdir -p /mnt/f
# Loaded afresh: 46-fsdev leaves a memory-error record, kept while loaded.
t "famfs_fuse loaded afresh, dax0.0 on fsdev_dax" sh -c '
	. /tests/lib.sh
	{ ! grep -q "^famfs_fuse " /proc/modules || unload famfs_fuse; } &&
	insmod /lib/modules/famfs_fuse.ko && famfs_bind dax0.0 fsdev_dax'
t "minifuse in famfs mode" minifuse -F /mnt/f
rm -f /tmp/r48 /tmp/g48
fvt holdmap /mnt/f/hello /tmp/r48 /tmp/g48 >/tmp/h48 2>&1 &
h48=$!
t "a process holds hello mapped" wait_for /tmp/r48 20
t "another process opens and reads hello (3 times)" sh -c '
	for i in 1 2 3; do cat /mnt/f/hello >/dev/null || exit 1; done'
t "the mapping reads the same; no kernel warning" sh -c "
	touch /tmp/g48; while kill -0 $h48 2>/dev/null; do sleep 0.1; done
	cat /tmp/h48; umount /mnt/f; . /tests/lib.sh; famfs_idle
	grep -q ' same' /tmp/h48 && dmesg_clean"
