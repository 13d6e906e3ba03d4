# GET_FMAP: a famfs file's map is fetched once on open and cached; every
# malformed reply fails the open of that file with an error, never the
# kernel. minifuse answers GET_DAXDEV with /dev/dax0.0 (bound to
# famfs_dax on 6.12, fsdev_dax on 7.3), so good maps read device memory;
# $DEVREF holds the device's first bytes to compare with (famfs_raw_load).
t "famfs_fuse loaded, dax0.0 on the kernel's famfs driver" famfs_raw_load
mkdir -p /mnt/f
dmesg -c >/dev/null

fmap_ok() { # FMAP-MODE [DAXDEV-MODE]
	rm -f /tmp/ops
	minifuse -F -m "$1" -x "${2:-good}" -l /tmp/ops /mnt/f || return 1
	for i in 1 2 3; do
		# hello's 22 bytes are the first bytes of device 0 in every
		# good map: read(2) and mmap give the device's bytes.
		fvt devcmp /mnt/f/hello $DEVREF s:0:2097152 || { umount /mnt/f; return 1; }
	done
	umount /mnt/f
	n=$(grep -cx 54 /tmp/ops) d=$(grep -cx 55 /tmp/ops)
	echo "GET_FMAP requests: $n, GET_DAXDEV requests: $d"
	[ "$n" -eq 1 ] && [ "$d" -ge 1 ] && [ "$d" -le 3 ]
}
# fmap_bad FMAP-MODE DAXDEV-MODE RULE: opening hello fails with EIO and,
# when RULE (an extended regex) is given, the kernel logs a "famfs:" line
# whose whole message is RULE: the rule the reply broke (dkms/README.md,
# patch 0002), and no other.
# The rest of the mount keeps working, and the device is released after
# the unmount. The kernel's lines are rate limited per call site (10 in
# 5 s), so the cases are paced 0.6 s apart.
fmap_bad() {
	local r=0 mark
	pace 600
	mark="famfs-test: fmap_bad $1 $2 $(cut -d' ' -f1 /proc/uptime)"
	echo "$mark" >/dev/kmsg
	minifuse -F -m "$1" -x "$2" /mnt/f || return 1
	fvt expect EIO read /mnt/f/hello || r=1
	ls /mnt/f >/dev/null || { echo "the mount stopped working"; r=1; }
	umount /mnt/f || r=1
	famfs_idle || { echo "the connection was not released"; r=1; }
	[ -z "$3" ] && return $r
	dmesg | sed -n "\|$mark|,\$p" | grep 'famfs' >/tmp/lines
	cat /tmp/lines
	grep -Eq "famfs: ($3)\$" /tmp/lines || { echo "no log line 'famfs: $3'"; r=1; }
	return $r
}
# pace MS: wait until MS milliseconds have passed since the last pace
PACE_LAST=0
pace() {
	local now
	while :; do
		now=$(awk '{ printf "%d", $1 * 1000 }' /proc/uptime)
		[ $((now - PACE_LAST)) -ge "$1" ] && break
		sleep 0.1
	done
	PACE_LAST=$now
}

# MODE|RULE: a map minifuse sends and the rule it breaks ("-": no log
# line is promised: an error answer, and a reply longer than the 4 KiB the
# kernel asked for, which FUSE itself fails before famfs sees it).
# The rule is the whole message; BADMAP begins a bad map's message.
# (garbage is minifuse's fixed pseudo-random bytes: its first broken rule
# is its header's reserved field; iext-hugenbytes's chunk count wraps, and
# the strip check must catch it.)
BADMAP='bad map for inode [0-9]+: '
BAD_MAPS="short|${BADMAP}reply shorter than the header
version|${BADMAP}unknown fmap version
exttype|${BADMAP}unknown extent type
noext|${BADMAP}extent count out of range
toomany|${BADMAP}extent count out of range
unaligned|${BADMAP}extent empty or not 2 MiB aligned
zerolen|${BADMAP}extent empty or not 2 MiB aligned
baddev|${BADMAP}device index out of range
shortmap|${BADMAP}extents shorter than the file
truncated|${BADMAP}reply ends inside an extent
wrap|${BADMAP}extent wraps around
trailing|${BADMAP}reply longer than its extents
oversize|-
garbage|${BADMAP}reserved field of the header is set
error|-
iext-shortstrip|${BADMAP}strip shorter than its share of the extent
iext-manystrips|${BADMAP}strip count out of range
iext-chunk0|${BADMAP}bad chunk size
iext-midpage|${BADMAP}extent 0 ends inside a page
outofdev|map of inode [0-9]+ goes beyond the end of dax device 0
iext-hugenbytes|${BADMAP}strip shorter than its share of the extent
reserved|${BADMAP}reserved field of the header is set
se-reserved|${BADMAP}reserved field of an extent is set
filesize|map of inode [0-9]+ is for another file size"
case $(uname -r) in 6.12.*) FMAP_DRV=famfs_dax ;; *) FMAP_DRV=fsdev_dax ;; esac
BAD_DAXDEVS="short|reply has the wrong size
error|server answered with an error
badindex|reply is for another device index
relative|device name is not an absolute path
missing|device path not found
notchr|device path is not a character device
notdax|device is not a dax device bound to $FMAP_DRV
noterm|device name is not terminated"
# 1 load, 3 good maps, the 24 bad maps and 8 bad devices, 2 cross-links,
# 11 more (a list that grows without the plan fails the case).
plan 49

for m in good good-multi good-iext; do
	t "fmap $m: open works, one GET_FMAP for three opens" fmap_ok $m
done
printf '%s\n' "$BAD_MAPS" >/tmp/bad-maps
while IFS='|' read -r m rule; do
	[ "$rule" = - ] && rule=
	t "fmap $m: open fails with EIO${rule:+, the log names the rule}" fmap_bad "$m" good "$rule" </dev/null
done </tmp/bad-maps
printf '%s\n' "$BAD_DAXDEVS" >/tmp/bad-daxdevs
while IFS='|' read -r x rule; do
	t "daxdev $x: open fails with EIO, the log names the rule" fmap_bad good "$x" "dax device 0: $rule" </dev/null
done </tmp/bad-daxdevs
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
	fvt devcmp /mnt/f/hello $DEVREF s:0:2097152 &&
		fvt expect EUCLEAN read /mnt/f/twin &&
		fvt expect EUCLEAN mmapread /mnt/f/twin &&
		fvt devcmp /mnt/f/hello $DEVREF s:0:2097152
	r=$?
	umount /mnt/f
	dmesg | grep "uses memory that inode" | tail -n 2
	[ $r = 0 ] && dmesg | grep -q "map of inode 3 uses memory that inode 2 uses"
}
t "two files over the same memory: the second is refused (EUCLEAN)" fmap_twin
# The memory stays hello's while hello has dax entries, and is free to
# claim once hello is evicted: then twin gets it and hello is refused.
fmap_twin_evicted() {
	minifuse -F -T /mnt/f || return 1
	fvt mmapread /mnt/f/hello >/dev/null &&
		fvt expect EUCLEAN read /mnt/f/twin &&
		for i in 1 2 3; do echo 2 >/proc/sys/vm/drop_caches; done &&
		fvt devcmp /mnt/f/twin $DEVREF s:0:2097152 &&
		fvt expect EUCLEAN read /mnt/f/hello
	r=$?
	umount /mnt/f
	[ $r = 0 ] && dmesg | grep -q "map of inode 2 uses memory that inode 3 uses"
}
t "once the first file is evicted, its memory goes to the second" fmap_twin_evicted
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
# Upstream's kernel series sends GET_DAXDEV with the device index in the
# request's nodeid and no body, and upstream's server reads it there: the
# kernel sends both forms at once (issue "drop-in, round 2", item 3;
# before, the nodeid was hello's, 2, and the open failed).
t "a server that reads the device index from nodeid (upstream's) is served" \
	fmap_ok good upstream
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
	. /tests/lib.sh; famfs_idle || exit 1
	minifuse -F /mnt/g && cat /mnt/g/hello >/dev/null; r=$?; umount /mnt/g; exit $r'
t "no famfs GET_FMAP without famfs mode" sh -c '
	rm -f /tmp/ops; minifuse -l /tmp/ops /mnt/f && cat /mnt/f/hello >/dev/null &&
	umount /mnt/f && ! grep -qx 54 /tmp/ops'
t "bad maps and devices were logged" sh -c '
	dmesg | grep "famfs: bad map" | head -n 3 | grep -q . &&
	dmesg | grep -q "famfs: dax device 0: device name is not terminated"'
t "module unloads" unload famfs_fuse
t "kernel log clean after fmap tests" dmesg_clean
