# Creation through the master's mount in famfs mode (daemon/fused/create.c).
# mkdir logs a directory at once. A file written by cp or a shell
# redirection is served by the daemon while it is written (FUSE_CREATE
# leaves its inode plain), logged at its last close, and then mapped by
# the kernel like any famfs file: no READ of it reaches the daemon. On 7.3
# the device is on fsdev_dax, which only the kernel reaches: the daemon
# holds the bytes until the close, then writes them through a hidden file
# of its own mount (stage.c), which must be gone before the file is logged.
M=/mnt/famfs S=/mnt/famfs/.meta/.status FAMFS_FUSED=/usr/bin/famfs-fused
export FAMFS_FUSED
mkdir -p $M /opt/famfs
case $(uname -r) in 6.12.*) late=0 ;; *) late=1 ;; esac
plan 6.12=33 7.3=34

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
t "a user writes a file into a directory open to all" sh -c "
	(umask 0 && mkdir $M/pub) &&
	userns 65534 - - sh -c 'seq 1 20000 >$M/pub/user'"
t "it is logged at its close" logged $M/pub/user
t "its bytes and its owner" sh -c "
	[ \$(stat -c %u $M/pub/user) = 65534 ] && seq 1 20000 | cmp - $M/pub/user"
t "famfs creat -s through the mount: preallocated, logged" sh -c "
	famfs creat -s 3M $M/pre && [ \$(stat -c %s $M/pre) = 3145728 ]"
t "tar -x as root of a tree into the mount" sh -c "
	mkdir -p /tmp/tree/d1/d2 && for i in 1 2 3 4 5; do
		head -c \$((i * 5000)) /usr/bin/famfs >/tmp/tree/d1/d2/f\$i; done &&
	chmod 2750 /tmp/tree/d1 && chown 1000:100 /tmp/tree/d1/d2 &&
	tar -C /tmp --numeric-owner -cf /tmp/tree.tar tree &&
	tar -C $M --numeric-owner -xf /tmp/tree.tar"
t "the tree is logged" logged $M/tree/d1/d2/f1 $M/tree/d1/d2/f5
t "the tree's bytes" diff -r /tmp/tree $M/tree
t "its directories' modes and owners, as archived" sh -c "
	cd /tmp/tree && a=\$(stat -c '%n %a %u %g' . d1 d1/d2) &&
	cd $M/tree && [ \"\$(stat -c '%n %a %u %g' . d1 d1/d2)\" = \"\$a\" ] &&
	[ \"\$(stat -c %a:%u:%g d1/d2)\" = 755:1000:100 ]"
# The hidden file a pending file's bytes go through (7.3) is its copying
# thread's alone: root, probing its name while the bytes of a 64 MiB copy
# are on their way, never opens it. Stage inode = pending inode - 2^41 +
# 2^42 (daemon/fused/fused.h).
t "a killed writer leaves no file" sh -c "
	sh -c 'exec 3>$M/killed; echo partial >&3; kill -9 \$\$'; sleep 0.5
	! [ -e $M/killed ] && ! famfs getmap -q $M/killed"
t "a 64 MiB copy reads back at once" sh -c "
	dd if=/dev/urandom of=/tmp/big bs=1M count=64 2>/dev/null &&
	cp /tmp/big $M/big && cmp /tmp/big $M/big"
t "it is logged at its close" logged $M/big
t "the logged file reads back the same" sh -c "cmp /tmp/big $M/big && rm /tmp/big"
if [ $late = 1 ]; then
	t "nobody but the daemon's copying thread opens the hidden file" sh -c '
		dd if=/dev/urandom of=/tmp/big2 bs=1M count=64 2>/dev/null && cp /tmp/big2 '$M'/big2 &&
		ino=$(stat -c %i '$M'/big2) && tries=0 got=0 &&
		stage=$((ino - (1 << 41) + (1 << 42))) &&
		while [ "$(stat -c %i '$M'/big2)" = $ino ]; do
			tries=$((tries + 1))
			cat '$M'/.meta/.stage.$stage >/dev/null 2>&1 && got=1
		done
		echo "stage $stage: $tries probes while pending, opened: $got"
		rm /tmp/big2; [ $tries -gt 0 ] && [ $got = 0 ]'
fi
# A file still open for writing is not logged: kill the daemon then, and
# the next mount has nothing of it.
t "a daemon killed before a written file is logged leaves nothing, and frees its memory" sh -c "
	free=\$(stat -f -c %f $M) &&
	dd if=/dev/urandom of=/tmp/big3 bs=1M count=32 2>/dev/null &&
	exec 3>$M/big3 && cat /tmp/big3 >&3 && [ \$(stat -c %i $M/big3) -ge \$((1 << 41)) ] &&
	pid=\$(sed -n 's/^pid=//p' $S) && kill -9 \$pid &&
	while kill -0 \$pid 2>/dev/null; do sleep 0.1; done && exec 3<&- && rm /tmp/big3 &&
	umount $M && mount.famfs /dev/dax0.0 $M -o fallback=no &&
	! [ -e $M/big3 ] && ! famfs getmap -q $M/big3 && [ \$(stat -f -c %f $M) = \$free ]"
# umount(8) does not wait for the daemon: a file closed just before it
# must still be logged (on 7.3 its bytes may still be on their way), and
# the next mount must wait for that daemon rather than take the device
# from under it.
t "umount right after a copy: the next mount has the whole file" sh -c "
	dd if=/dev/urandom of=/tmp/big4 bs=1M count=32 2>/dev/null &&
	taken=\$(dmesg | grep -c 'unbound while in use' || true) &&
	cp /tmp/big4 $M/big4 && umount $M &&
	mount.famfs /dev/dax0.0 $M -o fallback=no && cmp /tmp/big4 $M/big4 &&
	rm /tmp/big4 && [ \$(dmesg | grep -c 'unbound while in use') = \$taken ]"
# A second actor: the mount lazily unmounted while a file is still being
# written; a new mount of the device starts before the writer closes it.
# On 7.3 the new mount waits for the old daemon, which logs the file at
# its close and only then lets go of the device. mount.famfs inherits the
# writer's fd: it must not keep that file (and its file system) open.
t "umount -l under a writer, a new mount meanwhile: the file is logged whole" sh -c "
	exec 3>$M/lazy && echo before >&3 && umount -l $M || exit 1
	mount.famfs /dev/dax0.0 $M -o fallback=no & mp=\$!
	sleep 2; echo after >&3; exec 3>&-
	wait \$mp || exit 1
	i=0; until famfs getmap -q $M/lazy; do
		i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done
	printf 'before\nafter\n' | cmp - $M/lazy"
t "no hidden file is left in the kernel, nor refused a map" sh -c "
	! ls -a $M/.meta | grep -q stage && ! dmesg | grep -q 'uses memory that inode'"
# Not yet logged, a file's name is the daemon's: a rename while it is
# written is logged as its name. With commit_delay= a closed file waits,
# so a rename after the close (rsync's) works too; on 7.3 its bytes are
# on the device by then, and it is read back from the daemon's copy. The
# umount logs it at once (once the reader's RELEASE is in: it may come
# after the umount), and the next mount finds it logged.
t "a file renamed while it is written is logged under its new name" sh -c "
	exec 3>$M/part && echo x >&3 && mv $M/part $M/a/whole && echo y >&3 &&
	exec 3>&- && ! [ -e $M/part ] && i=0 &&
	until famfs getmap -q $M/a/whole; do
		i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done
	printf 'x\ny\n' | cmp - $M/a/whole"
t "commit_delay: a copy renamed after its close is logged, by the umount, under its new name" sh -c "
	umount $M && mount.famfs /dev/dax0.0 $M -o fallback=no,commit_delay=60000 &&
	cp /usr/bin/famfs $M/.tmpcopy && mv $M/.tmpcopy $M/renamed &&
	! famfs getmap -q $M/renamed && cmp /usr/bin/famfs $M/renamed &&
	umount $M && mount.famfs /dev/dax0.0 $M -o fallback=no || exit 1
	i=0; until famfs getmap -q $M/renamed; do
		i=\$((i + 1)); [ \$i -lt \$((100 * SLOW)) ] || exit 1; sleep 0.1; done
	! [ -e $M/.tmpcopy ] && cmp /usr/bin/famfs $M/renamed"
t "umount, mount again: what was made is there" sh -c "
	umount $M && mount.famfs /dev/dax0.0 $M -o fallback=no && [ -d $M/a/b ] &&
	cmp /usr/bin/famfs $M/a/b/copy && seq 1 20000 | cmp - $M/pub/user"
t "famfs fsck: clean" famfs fsck $M
t "unmount" umount $M
t "kernel log clean" dmesg_clean
