# GET_FMAP: a famfs file's map is fetched once on open and cached; every
# malformed reply fails the open of that file with an error, never the
# kernel.
t "famfs_fuse loads" insmod /lib/modules/famfs_fuse.ko
mkdir -p /mnt/f
dmesg -c >/dev/null

fmap_ok() {
	rm -f /tmp/ops
	minifuse -F -m "$1" -l /tmp/ops /mnt/f || return 1
	for i in 1 2 3; do
		[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ] || { umount /mnt/f; return 1; }
	done
	umount /mnt/f
	n=$(grep -cx 54 /tmp/ops)
	echo "GET_FMAP requests: $n"
	[ "$n" -eq 1 ]
}
fmap_bad() {
	minifuse -F -m "$1" /mnt/f || return 1
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
	iext-shortstrip iext-manystrips iext-chunk0; do
	t "fmap $m: open fails" fmap_bad $m
done
t "no famfs GET_FMAP without famfs mode" sh -c '
	rm -f /tmp/ops; minifuse -l /tmp/ops /mnt/f && cat /mnt/f/hello >/dev/null &&
	umount /mnt/f && ! grep -qx 54 /tmp/ops'
t "bad maps were logged" sh -c 'dmesg | grep "famfs: bad map" | head -n 3 | grep -q .'
t "module unloads" rmmod famfs_fuse
t "kernel log clean after fmap tests" dmesg_clean
