# Concurrent first opens. On a fresh mount no file has its map yet; many
# processes then open six files at the same moment, so the openers of one
# file race each other's GET_FMAP and the files race each other through
# the kernel's overlap check as their maps are published. Every open must
# succeed and read its own file's bytes; each file's map is fetched at
# least once and at most once per opener, and is kept: a second round of
# opens fetches none. On a fresh file system, as 80-crosslink leaves one
# that is cross-linked on purpose.
plan 11
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused
FILES="$M/r0 $M/r1 $M/r2 $M/r3 $M/d/r4 $M/d/r5"
COPIES=6	# openers per file: even ones read(2), odd ones mmap

mkdir -p $M
t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
t "mkfs.famfs and mount.famfs" sh -c "
	mkfs.famfs -f /dev/dax0.0 >/dev/null &&
	mount.famfs /dev/dax0.0 $M -o fallback=no"
t "six files, simple and interleaved, each with its own pattern" sh -c "
	famfs mkdir $M/d && famfs creat -s 2m $M/r0 && famfs creat -s 6m $M/r1 &&
	famfs creat -N 2 -B 4 -C 2m -s 8m $M/r2 && famfs creat -s 3m $M/r3 &&
	famfs creat -N 2 -B 2 -C 2m -s 4m $M/d/r4 && famfs creat -s 1m $M/d/r5 || exit 1
	k=0
	for f in $FILES; do
		fvt pwrite \$f 0 \$(stat -c %s \$f) \$((500 + k)) || exit 1
		k=\$((k + 1))
	done"
pid=$(kv pid $S)
t "unmount; the daemon exits" sh -c ". /tests/lib.sh; umount $M && wait_gone $pid"
# A new mount has new inodes: none has a map. Reading .status once first
# settles its own first open, so the count read next is the baseline.
t "mount again" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no && cat $S >/dev/null &&
	sed -n 's/^get_fmap=//p' $S >/tmp/race.fm0 && cat /tmp/race.fm0"
t "$((6 * COPIES)) processes open 6 files at once: every open reads its file's bytes" \
	fvt openrace $COPIES 500 $FILES
t "GET_FMAP: at least one per file, at most one per opener" sh -c "
	. /tests/lib.sh; n=\$((\$(kv get_fmap $S) - \$(cat /tmp/race.fm0)))
	report \"# measure: GET_FMAP for $((6 * COPIES)) racing first opens of 6 files: \$n\"
	[ \$n -ge 6 ] && [ \$n -le $((6 * COPIES)) ]"
t "a second round of opens fetches no map (every map was kept)" sh -c "
	. /tests/lib.sh; a=\$(kv get_fmap $S)
	fvt openrace 2 500 $FILES || exit 1
	b=\$(kv get_fmap $S); echo \"GET_FMAP \$a -> \$b\"; [ \$a -eq \$b ]"
t "unmount" umount $M
t "module unloads" unload famfs_fuse
t "kernel log clean after the racing opens" dmesg_clean
