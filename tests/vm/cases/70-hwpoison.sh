# A memory error on a famfs file's page (madvise MADV_HWPOISON): the
# process that had it mapped gets SIGBUS, the device is marked failed,
# further access to its files fails cleanly, the daemon logs it and
# famfs status reports it, the kernel stays up and the mount unmounts.
# The error outlives the binding until the administrator clears it.
plan 23
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-hwpoison.log
export FAMFS_FUSED=/usr/bin/famfs-fused

t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
# The famfs of the cases before, or one made here when this case runs alone.
famfs_of_60 $M >/dev/console 2>&1
t "mount.famfs" mount.famfs /dev/dax0.0 $M -o fallback=no,logfile=$L
t "famfs creat a file to poison" famfs creat -s 8m -r -S 41 $M/poison
t "files readable before the error" sh -c "famfs verify -S 41 $M/poison && famfs verify -S 13 $M/il2"
t "famfs status before the error: healthy, memory ok" sh -c "
	grep -x 'device_health=ok' $S && famfs status $M &&
	famfs status $M | grep -x '  memory: *ok'"
dmesg -c >/dev/console
t "MADV_HWPOISON on a mapped famfs page: SIGBUS" fvt hwpoison $M/poison 0x100000
t "the kernel logged the memory error and failed the device" sh -c "
	dmesg | grep -E 'famfs|Memory failure|memory failure'; dmesg | grep -q 'device failed'"
# The poisoned page is at file offset 0x100000 of poison, wherever the
# allocator put the file on the device; the line names it by its path in
# the mount and the inode number stat reports.
t "the kernel log names the file the error hit, and the file offset" sh -c "
	ino=\$(stat -c %i $M/poison) &&
	dmesg | grep -E \"famfs: memory error in /poison \\(inode \$ino\\) at file offset 0x100000 \\(dax device 0 offset 0x[0-9a-f]+\\)\$\""
t "famfs_health reports the failure" sh -c "
	cat /sys/bus/dax/devices/dax0.0/famfs_health; grep -q '^failed' /sys/bus/dax/devices/dax0.0/famfs_health"
# Nothing reads .status before this check: the daemon's poll timer
# (poll_ms 1000) must notice the failure on its own.
t "famfs-fused logs a warning naming the failed device" sh -c "
	i=0; while ! grep -q 'warning: device /dev/dax0.0 failed (famfs_health: failed pfn=' $L; do
		i=\$((i + 1)); [ \$i -le 300 ] || exit 1; sleep 0.1; done; cat $L"
t "the daemon's .status says device_health=failed" grep '^device_health=failed pfn=0x' $S
t "famfs status: NOT HEALTHY, memory failed, exit 1" sh -c "
	famfs status $M >/tmp/st.txt; rc=\$?; cat /tmp/st.txt; [ \$rc -eq 1 ] &&
	grep -q ': NOT HEALTHY' /tmp/st.txt && grep -q '^  memory: *failed pfn=0x' /tmp/st.txt &&
	grep -q 'problem: .*memory error' /tmp/st.txt"
t "famfs status --json: healthy false, device_health failed" sh -c "
	famfs status --json $M >/tmp/st.json; rc=\$?; cat /tmp/st.json; [ \$rc -eq 1 ] &&
	grep -q '\"healthy\":false}\$' /tmp/st.json &&
	grep -q '\"device_health\":\"failed pfn=0x' /tmp/st.json"
t "read(2) of the poisoned file: EIO" fvt expect EIO read $M/poison
t "read(2) of another file on the device: EIO" fvt expect EIO read $M/il2
t "write(2) to a file on the device: EIO" fvt expect EIO write $M/il2
t "new mapping of a file on the device: SIGBUS" fvt expect SIGBUS mmapread $M/il4
t "the daemon still answers (metadata)" sh -c "cat $S >/dev/null && ls $M >/dev/null"
t "unmount after the memory error" umount $M
t "bound again, dax0.0 is still failed (the error is remembered)" sh -c "
	. /tests/lib.sh; H=/sys/bus/dax/devices/dax0.0/famfs_health
	echo dax0.0 >/sys/bus/dax/drivers/famfs_dax/unbind && famfs_bind dax0.0 &&
	cat \$H && grep -q '^failed pfn=0x' \$H && dmesg | grep -q 'recorded earlier'"
t "after clear, bound again, dax0.0 is healthy" sh -c "
	. /tests/lib.sh; H=/sys/bus/dax/devices/dax0.0/famfs_health
	echo clear >\$H && grep -q '^failed' \$H &&
	echo dax0.0 >/sys/bus/dax/drivers/famfs_dax/unbind && famfs_bind dax0.0 &&
	cat \$H && grep -qx ok \$H"
t "module unloads after the memory error" unload famfs_fuse
t "kernel log clean after the memory error" dmesg_clean
