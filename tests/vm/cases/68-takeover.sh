# A restart that does not unmount, in famfs mode: fdsd plays systemd for
# famfs@.service (the notify socket, the fd store, LISTEN_FDS) while the
# daemon is handed over 20 times and SIGKILLed 3 times; a process keeps a
# file open and mapped and stats, opens and reads the files another keeps
# creating. Nothing may fail, the mount stays the same, the final stop
# unmounts and empties the store.
M=/mnt/famfs
S=$M/.meta/.status
L=/tmp/fused-takeover.log
export FAMFS_FUSED=/usr/bin/famfs-fused
mkdir -p $M /opt/famfs

plan 8
t "famfs_fuse loaded, dax0.0 ready for famfs" famfs_load
# The famfs the earlier cases made, or a new one when this case runs alone.
famfs fsck /dev/dax0.0 >/dev/console 2>&1 || mkfs.famfs -f /dev/dax0.0 >/dev/console 2>&1
t "23 restarts (3 SIGKILL) in famfs mode: no failed operation, one mount; a stop unmounts" sh -c "
	fdsd $M $M/held 23 3 -- /usr/bin/famfs-fused -f -o fallback=no,logfile=$L /dev/dax0.0 $M >/tmp/fdsd.out; rc=\$?
	cat /tmp/fdsd.out; exit \$rc"
# The figures (blackout median and max, longest operation) in the run's
# output as "# measure:" lines; bench/README.md points here for famfs mode.
while read -r line; do report "# measure: takeover: $line"; done </tmp/fdsd.out
# The bound: a few daemon starts under emulation (TCG runs the guest tens
# of times slower than hardware; the host tier measures tens of ms).
t "no operation waited longer than 10 s across a restart" sh -c "
	ms=\$(sed -n 's/.*longest_op_ms=\([0-9]*\).*/\1/p' /tmp/fdsd.out)
	echo longest \${ms:-?} ms; [ -n \"\$ms\" ] && [ \"\$ms\" -lt 10000 ]"
t "every daemon ran in famfs mode and took over" sh -c "
	tail -n 40 $L; [ \$(grep -c 'took over the FUSE connection' $L) -eq 23 ] &&
	! grep -q 'fallback mode' $L"
t "the kernel queued requests again for the new daemons" sh -c "
	grep -q 'unanswered requests queued again' $L &&
	! grep -q 'FUSE_NOTIFY_RESEND refused\|no FUSE_HAS_RESEND' $L"
# Every file the creator made (tko00 up to files=N, seed i + 1), at once.
t "every file made across the restarts verifies" sh -c "
	n=\$(sed -n 's/.* files=\([0-9]*\) .*/\1/p' /tmp/fdsd.out)
	[ \"\${n:-0}\" -gt 0 ] || { echo 'no files were made'; exit 1; }
	mount.famfs /dev/dax0.0 $M -o fallback=no || exit 1
	args= i=0
	while [ \$i -lt \$n ]; do
		args=\"\$args -m $M/tko\$(printf %02d \$i),\$((i + 1))\"; i=\$((i + 1))
	done
	famfs verify -q \$args; r=\$?; echo \"\$n files checked: \$r\"
	umount $M && exit \$r"
t "unload" unload famfs_fuse
t "kernel log clean after the takeover tests" dmesg_clean
