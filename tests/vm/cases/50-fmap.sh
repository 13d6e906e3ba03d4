# GET_FMAP: a famfs file's map is fetched once on open and cached; every
# malformed reply fails the open of that file with an error, never the
# kernel. minifuse answers GET_DAXDEV with /dev/dax0.0 (bound to
# famfs_dax), so good maps read device memory.
t "famfs_fuse loaded, dax0.0 on famfs_dax" famfs_load
mkdir -p /mnt/f
dmesg -c >/dev/null

fmap_ok() {
	rm -f /tmp/ops
	minifuse -F -m "$1" -l /tmp/ops /mnt/f || return 1
	for i in 1 2 3; do
		# hello's 22 bytes are the first bytes of device 0 in every
		# good map: read(2) and mmap give the device's bytes.
		fvt devcmp /mnt/f/hello /dev/dax0.0 s:0:2097152 || { umount /mnt/f; return 1; }
	done
	umount /mnt/f
	n=$(grep -cx 54 /tmp/ops) d=$(grep -cx 55 /tmp/ops)
	echo "GET_FMAP requests: $n, GET_DAXDEV requests: $d"
	[ "$n" -eq 1 ] && [ "$d" -ge 1 ] && [ "$d" -le 3 ]
}
fmap_bad() {
	minifuse -F -m "$1" -x "${2:-good}" /mnt/f || return 1
	if cat /mnt/f/hello >/dev/null 2>/tmp/err; then
		umount /mnt/f
		return 1
	fi
	cat /tmp/err
	# The rest of the mount still works.
	ls /mnt/f >/dev/null || { umount /mnt/f; return 1; }
	umount /mnt/f
}

for m in good good-multi good-iext; do
	t "fmap $m: open works, one GET_FMAP for three opens" fmap_ok $m
done
for m in short version exttype noext toomany unaligned zerolen baddev \
	shortmap truncated wrap trailing oversize garbage error \
	iext-shortstrip iext-manystrips iext-chunk0 iext-midpage outofdev \
	iext-hugenbytes reserved se-reserved filesize; do
	t "fmap $m: open fails" fmap_bad $m
done
for x in short error badindex relative missing notchr notdax noterm; do
	t "daxdev $x: open fails" fmap_bad good $x
done
# A map that uses one memory twice (by one device index, or by two that
# name one device) is refused as a cross-link: EUCLEAN, not EIO.
for m in selfdup dupdev; do
	t "fmap $m: open fails with EUCLEAN" sh -c "
		minifuse -F -m $m /mnt/f || exit 1
		fvt expect EUCLEAN read /mnt/f/hello; r=\$?; umount /mnt/f; exit \$r"
done
# Two files, one memory: every map minifuse sends is the same, so "twin"
# overlaps "hello". The first map fetched wins; the other file is refused,
# whatever the server says, and nothing warns (dmesg checked at the end).
fmap_twin() {
	minifuse -F -T /mnt/f || return 1
	fvt devcmp /mnt/f/hello /dev/dax0.0 s:0:2097152 &&
		fvt expect EUCLEAN read /mnt/f/twin &&
		fvt expect EUCLEAN mmapread /mnt/f/twin &&
		fvt devcmp /mnt/f/hello /dev/dax0.0 s:0:2097152
	r=$?
	umount /mnt/f
	dmesg | grep "uses memory that inode" | tail -n 2
	[ $r = 0 ] && dmesg | grep -q "map of inode 3 uses memory that inode 2 uses"
}
t "two files over the same memory: the second is refused (EUCLEAN)" fmap_twin
# Random maps: with fuzz:SEED minifuse answers GET_FMAP with a good map
# changed at random (a bit, a field set to an edge value, cut, grown).
# Each map is either served, by read(2) and mmap alike, or refused; the
# kernel log stays clean (checked at the end). One mount per map: most
# good maps start at offset 0 of device 0, so on one mount every map after
# the first would be refused as overlapping it (fmap_twin above).
fmap_fuzz() { # COUNT FIRST-SEED
	local served=0 refused=0 i=0 r=0 held
	held=$(dmesg | grep -c "held by another famfs connection")
	while [ $i -lt "$1" ]; do
		minifuse -F -m "fuzz:$(($2 + i))" /mnt/f || return 1
		if cat /mnt/f/hello >/dev/null 2>&1; then
			served=$((served + 1))
			fvt mmapread /mnt/f/hello >/dev/null ||
				{ echo "seed $(($2 + i)): read(2) works, mmap does not"; r=1; }
		else
			refused=$((refused + 1))
		fi
		umount /mnt/f || return 1
		i=$((i + 1))
	done
	echo "$1 random maps: $served served, $refused refused"
	# A refusal must be the map's, not a device still held by the last mount.
	[ "$(dmesg | grep -c "held by another famfs connection")" = "$held" ] ||
		{ echo "the device was still held by an earlier mount"; r=1; }
	[ $r = 0 ] && [ $served -gt 0 ] && [ $refused -gt 0 ]
}
t "200 random GET_FMAP replies: each served (read and mmap) or refused" fmap_fuzz 200 1
t "ENODATA for GET_FMAP: a plain FUSE file" sh -c '
	minifuse -F -m nodata /mnt/f &&
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]; r=$?; umount /mnt/f; exit $r'
t "a device held by one mount is refused to another" sh -c '
	mkdir -p /mnt/g
	minifuse -F /mnt/f && minifuse -F /mnt/g || exit 1
	cat /mnt/f/hello >/dev/null; a=$?
	cat /mnt/g/hello >/dev/null 2>&1; b=$?
	umount /mnt/g; umount /mnt/f
	dmesg | grep -q "held by another famfs connection" && [ $a = 0 ] && [ $b != 0 ]'
t "device free again after the holder unmounts" sh -c '
	sleep 0.2; minifuse -F /mnt/g && cat /mnt/g/hello >/dev/null; r=$?; umount /mnt/g; exit $r'
t "no famfs GET_FMAP without famfs mode" sh -c '
	rm -f /tmp/ops; minifuse -l /tmp/ops /mnt/f && cat /mnt/f/hello >/dev/null &&
	umount /mnt/f && ! grep -qx 54 /tmp/ops'
t "bad maps and devices were logged" sh -c '
	dmesg | grep "famfs: bad map" | head -n 3 | grep -q . &&
	dmesg | grep -q "famfs: dax device 0: device name is not terminated"'
t "module unloads" rmmod famfs_fuse
t "kernel log clean after fmap tests" dmesg_clean
