# A famfs over three NVDIMMs in famfs mode: mkfs.famfs over dax0.0 and
# dax1.0, famfs devadd of dax2.0 while a file on dax0.0 is mapped, a file
# striped over all three whose bytes the kernel serves from each device
# (no upcalls); a memory error on dax2.0, then dax2.0 unbound:
# only the files on it fail. Last, a damaged secondary superblock, which
# fsck names. Runs last: it leaves every device on device_dax.
plan 30
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-devices.log
export FAMFS_FUSED=/usr/bin/famfs-fused
case $(uname -r) in
6.12.*) drv=famfs_dax msg='No such device or address' ;;
*) drv=fsdev_dax msg='Input/output error' ;;
esac

# region N's namespace as devdax daxN.0, on device_dax (readable)
devdax() {
	wait_for /sys/bus/nd/devices/region$1 10 || return 1
	[ -c /dev/dax$1.0 ] ||
		ndctl create-namespace -f -e namespace$1.0 --mode=devdax --align=2M ||
		ndctl create-namespace -r region$1 --mode=devdax --align=2M ||
		return 1
	wait_for /dev/dax$1.0 10 && famfs_bind dax$1.0 device_dax
}

three() { devdax 0 && devdax 1 && devdax 2; }

t "three NVDIMMs: dax0.0, dax1.0, dax2.0 on device_dax" three
t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
t "mkfs.famfs over dax0.0 and dax1.0" sh -c "
	mkfs.famfs -f /dev/dax0.0 /dev/dax1.0 >/tmp/mkfs90; rc=\$?; cat /tmp/mkfs90
	[ \$rc = 0 ] && grep -q 'device 1: */dev/dax1.0' /tmp/mkfs90"
mkdir -p $M
t "mount.famfs in famfs mode: two devices, none missing" sh -c "
	. /tests/lib.sh
	mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L || exit 1
	cat $S; [ \"\$(kv mode $S)\" = famfs ] && [ \"\$(kv devices $S)\" = 2 ] &&
	[ \"\$(kv devices_missing $S)\" = 0 ]"
t "a file on dax0.0, mapped by a process" sh -c "
	famfs creat -s 8m -r -S 91 $M/first || exit 1
	famfs getmap $M/first | grep -q 'dev 0'"
rm -f /tmp/r90 /tmp/g90
fvt holdmap $M/first /tmp/r90 /tmp/g90 >/tmp/h90 2>&1 &
h90=$!
t "the process holds it mapped" sh -c ". /tests/lib.sh; wait_for /tmp/r90 20"
t "famfs devadd dax2.0 under the mapping: the mount serves it" sh -c "
	famfs devadd -v $M /dev/dax2.0 >/tmp/add90 2>&1; rc=\$?; cat /tmp/add90
	[ \$rc = 0 ] && grep -q 'is device 2' /tmp/add90 && grep -q 'serves it' /tmp/add90"
touch /tmp/g90
wait $h90
rc90=$?
t "the mapping stayed good across devadd" sh -c "cat /tmp/h90; [ $rc90 = 0 ]"
t "famfs daxdev: three devices, each found at its node" sh -c "
	famfs daxdev $M >/tmp/dd90; rc=\$?; cat /tmp/dd90
	[ \$rc = 0 ] && grep -q ' 1 .* /dev/dax1.0' /tmp/dd90 &&
	grep -q ' 2 .* /dev/dax2.0' /tmp/dd90"
t "a file striped over the three devices" sh -c "
	famfs creat -N 3 -C 2m -s 30m -r -S 92 $M/striped || exit 1
	famfs getmap $M/striped >/tmp/map90; cat /tmp/map90
	for d in 0 1 2; do grep -q \"dev \$d\" /tmp/map90 || exit 1; done"
t "the striped file reads back (famfs verify)" famfs verify -S 92 $M/striped
t "read(2) == mmap over the three devices" famfs chkread $M/striped
t "no upcalls while faulting in and reading it by mmap" fvt mmapread $M/striped $S
t "GET_DAXDEV fetched the added devices" sh -c "
	. /tests/lib.sh; cat $S; [ \"\$(kv get_daxdev $S)\" -ge 3 ]"
# Each added device's superblock as the mount serves it (the kernel maps
# it from that device); fsck of the mount checks them, on 7.3 through
# these files, as fsdev_dax hides the nodes.
t ".meta/.superblock.2 is dax2.0's secondary superblock: read == mmap" sh -c "
	famfs chkread -s $M/.meta/.superblock.2 >/tmp/sb90; rc=\$?; cat /tmp/sb90
	fs=\$(famfs chkread -s $M/.meta/.superblock | sed -n 's/.* uuid \\([^ ]*\\) crc.*/\\1/p' | head -n 1)
	[ \$rc = 0 ] && [ -n \"\$fs\" ] &&
	[ \$(grep -c \"log 0x0+0 uuid \$fs crc good\" /tmp/sb90) = 2 ]"
t "fsck of the mount: clean, all three devices present" sh -c "
	famfs fsck --json $M >/tmp/fj90; rc=\$?; cat /tmp/fj90
	[ \$rc = 0 ] && [ \$(grep -o '\"present\": *true' /tmp/fj90 | wc -l) = 3 ]"
# Mounted again: on 7.3 the added devices are still on fsdev_dax, whose
# node cannot be read; the records of the mount that left them there
# (now gone) free them to be checked again on device_dax.
t "mounted again: every device found again, the striped file reads back" sh -c "
	. /tests/lib.sh
	umount $M && famfs_idle && mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L || exit 1
	cat $S; [ \"\$(kv devices_missing $S)\" = 0 ] && famfs verify -S 92 $M/striped"
t "a write through the mount lands on every device" sh -c "
	fvt pwrite $M/striped 1000000 20000000 93 && fvt check $M/striped 1000000 20000000 93"
# Restarts that keep the mount (fdsd plays systemd's fd store, as in
# 68-takeover): each successor finds the three devices again (on 7.3
# through the holder records of the mount it takes over) while a reader
# keeps the striped file mapped and files are created across devices.
L2=/tmp/fused-devices-takeover.log
t "4 restarts (1 SIGKILL) of the daemon of a famfs over three devices: nothing failed" sh -c "
	. /tests/lib.sh
	umount $M && famfs_idle || exit 1
	fdsd $M $M/striped 4 1 -- /usr/bin/famfs-fused -f -o fallback=no,logfile=$L2 /dev/dax0.0 $M >/tmp/fdsd90.out; rc=\$?
	cat /tmp/fdsd90.out; exit \$rc"
t "every successor took over with no device missing; what was made verifies" sh -c "
	. /tests/lib.sh
	tail -n 30 $L2; [ \$(grep -c 'took over the FUSE connection' $L2) -eq 4 ] &&
	! grep -q 'devices of this famfs are missing' $L2 || exit 1
	n=\$(sed -n 's/.* files=\\([0-9]*\\) .*/\\1/p' /tmp/fdsd90.out)
	[ \"\${n:-0}\" -gt 0 ] || { echo 'no files were made'; exit 1; }
	mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L || exit 1
	[ \"\$(kv devices_missing $S)\" = 0 ] || exit 1
	args= i=0
	while [ \$i -lt \$n ]; do
		args=\"\$args -m $M/tko\$(printf %02d \$i),\$((i + 1))\"; i=\$((i + 1))
	done
	famfs verify -q \$args && fvt check $M/striped 1000000 20000000 93"
# A memory error in the strip on dax2.0 (famfs_dax on 6.12, fsdev_dax's
# notify_failure on 7.3): that device fails, the others serve on.
k=$(famfs getmap $M/striped | awk '/dev /{ if ($2 == 2) { print n; exit } n++ }')
off=$(((${k:-0} * 2097152) + 4096))
dmesg -c >/dev/console
t "MADV_HWPOISON on the striped file's page on dax2.0: SIGBUS" \
	fvt hwpoison $M/striped $off
t "the kernel names the file, its offset and dax device 2" sh -c "
	ino=\$(stat -c %i $M/striped); dmesg | grep famfs
	dmesg | grep -q \"famfs: memory error in /striped (inode \$ino) at file offset $(printf 0x%x $off) (dax device 2 offset\""
# Only the bytes on the failed device: its other strips read on.
t "the striped file's bytes on dax2.0 give EIO; the rest is served" sh -c "
	! dd if=$M/striped of=/dev/null bs=4096 skip=$((off / 4096)) count=1 2>/tmp/e90h
	cat /tmp/e90h; grep -q 'Input/output error' /tmp/e90h &&
	dd if=$M/striped of=/dev/null bs=4096 count=1 \
		skip=$((((${k:-0} + 1) % 3) * 512)) &&
	famfs verify -S 91 $M/first"
t "a file on dax0.0 alone" famfs creat -s 4m -r -S 94 $M/safe
dmesg -c >/dev/console
t "unbinding $drv from dax2.0 under the mount returns" sh -c "
	timeout 60 sh -c 'echo dax2.0 >/sys/bus/dax/drivers/$drv/unbind'"
t "the file striped onto dax2.0 fails" sh -c "
	! cat $M/striped >/dev/null 2>/tmp/e90; cat /tmp/e90
	grep -Eq '$msg|Input/output error' /tmp/e90"
t "the files on the other devices are served" sh -c "
	famfs verify -S 91 $M/first && famfs verify -S 94 $M/safe"
t "umount" sh -c ". /tests/lib.sh; umount $M && famfs_idle"
# A secondary superblock overwritten: fsck of the primary names it.
t "fsck names device 1 once its superblock is damaged" sh -c "
	. /tests/lib.sh
	famfs_bind dax2.0 device_dax && famfs_bind dax1.0 device_dax &&
	famfs_bind dax0.0 device_dax || exit 1
	famfs fsck /dev/dax0.0 >/tmp/f90a || { cat /tmp/f90a; exit 1; }
	fvt mwrite /dev/dax1.0 0 2097152 95 || exit 1
	famfs fsck /dev/dax0.0 >/tmp/f90; rc=\$?; cat /tmp/f90
	[ \$rc = 1 ] && grep -q 'device 1 (uuid' /tmp/f90 &&
	grep -q '/dev/dax1.0' /tmp/f90"
# fsck of a secondary is no check of a file system: it names what is.
t "fsck of dax2.0, a secondary, names the primary to check (exit 2)" sh -c "
	famfs fsck /dev/dax2.0 >/tmp/f90s; rc=\$?; cat /tmp/f90s
	[ \$rc = 2 ] && grep -q 'secondary device' /tmp/f90s &&
	grep -q 'famfs fsck /dev/dax0.0' /tmp/f90s"
