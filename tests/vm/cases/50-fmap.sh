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
	iext-shortstrip iext-manystrips iext-chunk0 iext-midpage outofdev; do
	t "fmap $m: open fails" fmap_bad $m
done
for x in short error badindex relative missing notchr notdax noterm; do
	t "daxdev $x: open fails" fmap_bad good $x
done
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
