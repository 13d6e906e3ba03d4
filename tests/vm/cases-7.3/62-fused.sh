# 7.3: the real daemon in famfs mode on fsdev_dax, whose device node
# cannot be read or mapped. famfs-fused reads the superblock and log on
# device_dax, moves the device to fsdev_dax, mounts, and maps them again
# through a private clone of its mount (daemon/fused/metamap.c); file data
# is served by the kernel with no upcalls. umount(8) must still work, and a
# restart keeps the mount (the open .meta files go with the connection).
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-73.log
export FAMFS_FUSED=/usr/bin/famfs-fused
mkdir -p $M /opt/famfs
drv() { basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)" 2>/dev/null; }
plan 21

# Loaded afresh: an earlier case may leave a memory-error record (46-fsdev),
# kept while the module is loaded.
t "famfs_fuse loads afresh" sh -c '
	. /tests/lib.sh
	{ ! grep -q "^famfs_fuse " /proc/modules || unload famfs_fuse; } &&
	insmod /lib/modules/famfs_fuse.ko'
# Earlier cases leave dax0.0 on fsdev_dax, whose node cannot be read.
t "mkfs.famfs /dev/dax0.0 (it moves the device to device_dax to write it)" sh -c '
	echo "dax0.0 driver before: $(basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)")"
	mkfs.famfs -f /dev/dax0.0 &&
	[ "$(basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)")" = device_dax ]'
t "mount.famfs in famfs mode (fallback=no)" mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L
t ".meta/.status says mode=famfs; dax0.0 is on fsdev_dax" sh -c "
	cat $S; grep -qx mode=famfs $S && [ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = fsdev_dax ]"
t "the daemon says it maps the superblock and log through the mount" \
	grep -q 'mapped through the mount' $L
# il2 is for 65-lifecycle, which runs next on 7.3 as after 60 on 6.12.
t "famfs creat: simple 7 MiB, interleaved 37 and 20 MiB, patterns" sh -c "
	famfs creat -s 7m -r -S 11 $M/simple &&
	famfs creat -N 4 -B 8 -C 2m -s 37m -r -S 12 $M/il4 &&
	famfs creat -N 2 -B 4 -C 4m -s 20m -r -S 13 $M/il2"
t "famfs verify them" sh -c "
	famfs verify -S 11 $M/simple && famfs verify -S 12 $M/il4 && famfs verify -S 13 $M/il2"
t "famfs mkdir + cp of a host file, byte-exact" sh -c "
	famfs mkdir $M/d && famfs cp /usr/bin/famfs $M/d/famfs.copy &&
	cmp /usr/bin/famfs $M/d/famfs.copy"
t "famfs creat 64 MiB; no upcalls while reading it all by mmap" sh -c "
	famfs creat -s 64m $M/big && fvt mmapread $M/big $S"
# The daemon's view follows the log: a file logged now is seen at once.
t "files logged after the mount are served (the daemon re-reads the log)" sh -c "
	famfs creat -s 2m -r -S 14 $M/late && ls -l $M/late && famfs verify -S 14 $M/late"
off=$(famfs getmap $M/simple | awk '/offset/ {for (i=1;i<=NF;i++) if ($i=="offset") {print $(i+1); exit}}')
t "write(2) into the simple file reads back" sh -c "
	fvt pwrite $M/simple 4096 100000 21 && fvt check $M/simple 4096 100000 21"
# The daemon's files are open in its clone of the mount, not in the mount:
# umount(8) is not refused as busy, and the daemon then ends.
pid=$(kv pid $S)
t "umount(8) works; the daemon exits and lets go of the device" sh -c "
	. /tests/lib.sh; umount $M && wait_gone $pid && famfs_idle"
t "dax0.0 stays on fsdev_dax after the unmount" sh -c '[ "$(basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)")" = fsdev_dax ]'
t "mount again from fsdev_dax: the files are all there" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no && grep -qx mode=famfs $S &&
	famfs verify -S 12 $M/il4 && famfs verify -S 14 $M/late &&
	fvt check $M/simple 4096 100000 21"
t "a second mount of the device is refused, saying where it is mounted" sh -c "
	mkdir -p /mnt/g; mount.famfs /dev/dax0.0 /mnt/g -o fallback=no,ro 2>/tmp/e47 && exit 1
	cat /tmp/e47; grep -q $M /tmp/e47"
# A restart keeps the mount: fdsd plays systemd's fd store (see 68-takeover).
t "umount before the restart test" sh -c ". /tests/lib.sh; umount $M && famfs_idle"
t "6 restarts (2 SIGKILL) in famfs mode: no failed operation, one mount" sh -c "
	fdsd $M $M/held 6 2 -- /usr/bin/famfs-fused -f -o fallback=no,logfile=$L.tko /dev/dax0.0 $M >/tmp/fdsd47.out; rc=\$?
	cat /tmp/fdsd47.out; exit \$rc"
t "every daemon took over in famfs mode with the kept .meta files" sh -c "
	tail -n 30 $L.tko; [ \$(grep -c 'took over the FUSE connection' $L.tko) -eq 6 ] &&
	! grep -q 'fallback mode\|mounting anew' $L.tko"
# Off the mount, tools that read the device move it back to device_dax.
t "famfs fsck /dev/dax0.0 (moves it to device_dax) finds it clean" sh -c "
	. /tests/lib.sh; famfs_idle && famfs fsck /dev/dax0.0 && [ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = device_dax ]"
t "the bytes written through famfs are in the device" \
	fvt devcheck /dev/dax0.0 $((off + 4096)) 100000 21 4096
t "unload; kernel log clean" sh -c ". /tests/lib.sh; unload famfs_fuse && dmesg_clean"
