# Creation through the master's mount in famfs mode (daemon/fused/create.c).
# mkdir logs a directory at once. On 6.12 a file written by cp or a shell
# redirection is served by the daemon while it is written (FUSE_CREATE
# leaves its inode plain), logged at its last close, and then mapped by
# the kernel like any famfs file: no READ of it reaches the daemon. On 7.3
# the device is on fsdev_dax, which only the kernel reaches: create is
# refused with EPERM, mkdir works.
M=/mnt/famfs S=/mnt/famfs/.meta/.status FAMFS_FUSED=/usr/bin/famfs-fused
export FAMFS_FUSED
mkdir -p $M /opt/famfs
case $(uname -r) in 6.12.*) late=0 ;; *) late=1 ;; esac
plan 6.12=15 7.3=9

# logged NAME...: wait (10 s at most) until famfs getmap finds each NAME
# in the log (the kernel sends the last close just after close(2) returns)
logged() {
	for f; do
		i=0
		until famfs getmap -q "$f" 2>/dev/null; do
			i=$((i + 1))
			[ $i -lt $((100 * SLOW)) ] || return 1
			sleep 0.1
		done
	done
}

t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
t "mkfs.famfs /dev/dax0.0" mkfs.famfs -f /dev/dax0.0
t "mount.famfs in famfs mode" mount.famfs /dev/dax0.0 $M -o fallback=no
t "mkdir -p through the mount" sh -c "mkdir -p $M/a/b && [ -d $M/a/b ]"
if [ $late = 0 ]; then
	t "cp into the mount" cp /usr/bin/famfs $M/a/b/copy
	t "the copy is logged at its close" logged $M/a/b/copy
	t "the logged copy is byte-exact" cmp /usr/bin/famfs $M/a/b/copy
	t "the kernel maps it: no upcalls reading it by mmap" fvt mmapread $M/a/b/copy $S
	t "shell redirection, and dd past the start (a hole)" sh -c "
		echo hello >$M/hello &&
		dd if=/dev/zero of=$M/holey bs=1 count=1 seek=3000000 2>/dev/null"
	t "both are logged at their close" logged $M/hello $M/holey
	t "their bytes: the text, and zeros over the hole" sh -c "
		[ \"\$(cat $M/hello)\" = hello ] && [ \$(stat -c %s $M/holey) = 3000001 ] &&
		[ \$(tr -d '\\000' <$M/holey | wc -c) = 0 ]"
else
	t "create is refused with EPERM: only the kernel reaches the device" sh -c "
		! touch $M/a/x 2>/tmp/err; cat /tmp/err; grep -q 'not permitted' /tmp/err"
fi
t "umount, mount again: what was made is there" sh -c "
	umount $M && mount.famfs /dev/dax0.0 $M -o fallback=no && [ -d $M/a/b ] &&
	{ [ $late = 1 ] || cmp /usr/bin/famfs $M/a/b/copy; }"
t "famfs fsck: clean" famfs fsck $M
t "unmount" umount $M
t "kernel log clean" dmesg_clean
