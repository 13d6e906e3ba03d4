# Two files over the same memory (famfs clone makes the cross-link on
# purpose; a damaged or forged log could hold one). fs-dax lets a device
# page belong to one file only, and a second file faulting it in warns in
# dax_associate_entry; so the daemon must refuse the second file and the
# kernel must never be asked to map it. On a fresh file system: the cases
# before share 60's and expect it clean.
plan 14
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-crosslink.log
export FAMFS_FUSED=/usr/bin/famfs-fused

mkdir -p $M
# From here on the kernel log is this case's: 50-fmap logs overlapping
# maps on purpose (the console keeps the whole log for the host's check).
dmesg -c >/dev/console
t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
t "mkfs.famfs and mount.famfs" sh -c "
	mkfs.famfs -f /dev/dax0.0 >/dev/null &&
	mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L"
t "a file, faulted in by mmap" sh -c "
	famfs creat -s 8m -r -S 80 $M/owner && fvt mmapread $M/owner >/dev/null"
t "famfs clone cross-links it, as asked" famfs clone $M/owner $M/thief
t "the clone is listed with the owner's size" sh -c "
	[ \$(stat -c %s $M/thief) -eq 8388608 ]"
# The kernel asks for the clone's map at each open; the daemon refuses it
# (the kernel would refuse the map too, patch 0005, but must not need to).
t "opening the clone fails with EUCLEAN (for read(2) and for mmap)" sh -c "
	fvt expect EUCLEAN read $M/thief && fvt expect EUCLEAN mmapread $M/thief"
t "the daemon refused it: the kernel never saw an overlapping map" sh -c "
	! dmesg | grep 'uses memory that inode'"
t "the daemon counts one refused file" sh -c "
	. /tests/lib.sh; [ \$(kv overlapping_files $S) -eq 1 ]"
t "the daemon logged why" grep -q 'file "thief") uses memory of an earlier file' $L
t "the owner still maps and verifies" sh -c "
	fvt mmapread $M/owner >/dev/null && famfs verify -S 80 $M/owner"
t "fsck and status report the cross-link (exit 1)" sh -c "
	famfs fsck $M; r1=\$?; famfs status $M; r2=\$?; [ \$r1 -eq 1 ] && [ \$r2 -eq 1 ]"
t "unmount" umount $M
t "module unloads" unload famfs_fuse
t "kernel log clean after the cross-link" dmesg_clean
