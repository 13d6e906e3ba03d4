# Hardening: what an attacker or a careless server could do to a famfs
# connection. Each check here failed on the module before its fix.
# minifuse's hello is one 2 MiB extent at offset 0 of its device 0, which
# it names /dev/dax0.0; dax1.0, the second NVDIMM, is the decoy. On 6.12
# both are on famfs_dax, whose nodes take the test patterns. On 7.3 the
# kernel's fsdev_dax serves famfs and its nodes cannot be read or mapped:
# the patterns go in through device_dax, then both devices move to
# fsdev_dax; the checks of famfs_dax itself (raw device mappings, its
# binding, famfs_health) are 6.12's alone.
case $(uname -r) in
6.12.*) drv=famfs_dax raw=4 FMAP_BIT=43 ;;
# FUSE_DAX_FMAP is INIT bit 44 from protocol 7.46 on (40-famfs-mode).
*) drv=fsdev_dax raw=0 FMAP_BIT=44 ;;
esac
export drv FMAP_BIT
# 35 checks; on 7.3 seven of them (famfs_dax's own) are skipped as
# impossible there, and said so.
plan 35
NO_FAMFS_DAX="impossible: on $(uname -r) the kernel's fsdev_dax serves famfs; famfs_dax, its raw node and famfs_health are 6.12's"
# Loaded afresh: a case before this one may have left a memory-error
# record on dax0.0 (46-fsdev), which the module keeps while loaded.
t "famfs_fuse loaded afresh, dax0.0 ready for famfs" sh -c '
	. /tests/lib.sh
	{ ! grep -q "^famfs_fuse " /proc/modules || unload famfs_fuse; } && famfs_load'

mkdir -p /mnt/f
dmesg -c >/dev/null
# Different bytes on the two devices: pattern 70 on dax0.0, 71 on dax1.0.
if [ $raw = 4 ]; then
	t "second NVDIMM becomes dax1.0 on famfs_dax" sh -c '
		. /tests/lib.sh
		ndctl create-namespace -f -e namespace1.0 --mode=devdax --align=2M &&
		wait_for /dev/dax1.0 10 && famfs_bind dax1.0'
	t "distinct patterns on dax0.0 and dax1.0" sh -c '
		fvt mwrite /dev/dax0.0 0 4096 70 && fvt mwrite /dev/dax1.0 0 4096 71 &&
		fvt devcheck /dev/dax0.0 0 4096 70 0 && fvt devcheck /dev/dax1.0 0 4096 71 0'
else
	t "second NVDIMM becomes dax1.0 on device_dax" sh -c '
		. /tests/lib.sh
		ndctl create-namespace -f -e namespace1.0 --mode=devdax --align=2M &&
		wait_for /dev/dax1.0 10 && famfs_bind dax1.0 device_dax'
	# device_dax maps whole 2 MiB pages only.
	t "distinct patterns on dax0.0 and dax1.0, both then on fsdev_dax" sh -c '
		. /tests/lib.sh; famfs_bind dax0.0 device_dax && M=2097152 &&
		fvt mwrite /dev/dax0.0 0 $M 70 && fvt mwrite /dev/dax1.0 0 $M 71 &&
		fvt devcheck /dev/dax0.0 0 $M 70 0 && fvt devcheck /dev/dax1.0 0 $M 71 0 &&
		famfs_bind dax0.0 fsdev_dax && famfs_bind dax1.0 fsdev_dax'
fi

# GET_DAXDEV's path is the server's, resolved where the mount was made:
# an opener's own mount namespace must not choose the device.
t "a root opener in its own mount namespace cannot redirect the device" sh -c '
	minifuse -F -a /mnt/f || exit 1
	unshare -m sh -c "mount --bind /dev/dax1.0 /dev/dax0.0 &&
		fvt check /mnt/f/hello 0 22 70"; a=$?
	fvt check /mnt/f/hello 0 22 70; b=$?
	umount /mnt/f; [ $a = 0 ] && [ $b = 0 ]'
t "an unprivileged opener in a user namespace cannot redirect the device" sh -c '
	minifuse -F -a /mnt/f || exit 1
	userns 65534 /dev/dax1.0 /dev/dax0.0 fvt check /mnt/f/hello 0 22 70; a=$?
	fvt check /mnt/f/hello 0 22 70; b=$?
	umount /mnt/f; echo "user namespace: $a, initial: $b"; [ $a = 0 ] && [ $b = 0 ]'
# ... and it is looked up as the mounter (second review, finding 10): a
# node that only root can reach serves the mount whatever user opens a
# file first. (Before, the lookup ran as the first opener: uid 65534
# opening hello first got EIO.)
t "the device path is looked up as the mounter, not as the first opener" sh -c '
	rm -rf /tmp/rootonly && mkdir -m 700 /tmp/rootonly || exit 1
	set -- $(stat -c "%t %T" /dev/dax0.0) &&
		mknod /tmp/rootonly/dax c $((0x$1)) $((0x$2)) || exit 1
	minifuse -F -a -D /tmp/rootonly/dax /mnt/f || exit 1
	userns 65534 - - fvt check /mnt/f/hello 0 22 70; r=$?
	umount /mnt/f; echo "read as uid 65534 first: $r"; [ $r = 0 ]'

# A famfs inode stays cached across attribute refreshes (minifuse's
# attribute and entry timeouts are 1 s): one GET_FMAP for all opens.
t "reopening after the attribute timeout sends no GET_FMAP" sh -c '
	rm -f /tmp/ops; minifuse -F -l /tmp/ops /mnt/f || exit 1
	for i in 1 2 3 4; do fvt check /mnt/f/hello 0 22 70 || break; sleep 1.5; done
	stat /mnt/f/hello >/dev/null; fvt check /mnt/f/hello 0 22 70; r=$?
	umount /mnt/f; n=$(grep -cx 54 /tmp/ops)
	. /tests/lib.sh; report "# measure: GET_FMAP for 5 opens 1.5 s apart (attribute timeout 1 s): $n"
	[ $r = 0 ] && [ "$n" = 1 ]'

# Device memory is shared: no private copies of it.
t "private writable mapping: EINVAL" sh -c '
	minifuse -F /mnt/f || exit 1
	fvt expect EINVAL mmap-private-write /mnt/f/hello; r=$?; umount /mnt/f; exit $r'
t "private read-only mapping works" sh -c '
	minifuse -F /mnt/f || exit 1
	fvt expect 0 mmap-private-read /mnt/f/hello; r=$?; umount /mnt/f; exit $r'
[ $raw = 4 ] ||
	skip "raw device: private writable mapping EINVAL, read-only works" "$NO_FAMFS_DAX"
[ $raw = 0 ] ||
	t "raw device: private writable mapping EINVAL, read-only works" sh -c '
		fvt expect EINVAL mmap-private-write /dev/dax0.0 &&
		fvt expect 0 mmap-private-read /dev/dax0.0 &&
		fvt expect EACCES mprotect-write /dev/dax0.0'
t "private mapping made writable by mprotect: EACCES" sh -c '
	minifuse -F /mnt/f || exit 1
	fvt expect EACCES mprotect-write /mnt/f/hello; r=$?; umount /mnt/f; exit $r'

# famfs mode needs the mounter's CAP_SYS_RAWIO, not the INIT writer's.
t "a mounter without CAP_SYS_RAWIO is not offered famfs mode" sh -c '
	rm -f /tmp/ops; minifuse -F -r -i /tmp/init -l /tmp/ops /mnt/f || exit 1
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]; r=$?
	umount /mnt/f; v=$(cat /tmp/init); echo "offered $v"
	[ $r = 0 ] && [ $(( (v >> FMAP_BIT) & 1 )) = 0 ] && ! grep -qx 54 /tmp/ops'
# ... and default_permissions: the kernel checks modes, so a size change
# it refuses is one the caller was allowed to try.
t "a mount without default_permissions is not offered famfs mode" sh -c '
	minifuse -F -P -i /tmp/init /mnt/f || exit 1
	[ "$(cat /mnt/f/hello)" = "hello from famfs_fuse" ]; r=$?
	umount /mnt/f; v=$(cat /tmp/init); echo "offered $v"
	[ $r = 0 ] && [ $(( (v >> FMAP_BIT) & 1 )) = 0 ]'

# The server's page-cache messages and copy offload bypass fs-dax.
t "FUSE_NOTIFY_STORE for a famfs file is refused" sh -c '
	rm -f /tmp/ops; minifuse -F -N store -l /tmp/ops /mnt/f || exit 1
	fvt check /mnt/f/hello 0 22 70; r=$?; umount /mnt/f
	grep notify-store /tmp/ops; [ $r = 0 ] && grep -qx "notify-store 22" /tmp/ops'
# RETRIEVE would have the kernel send (opcode 41) what the page cache of a
# file holds, and a famfs file has none.
t "FUSE_NOTIFY_RETRIEVE for a famfs file is refused" sh -c '
	rm -f /tmp/ops; minifuse -F -N retrieve -l /tmp/ops /mnt/f || exit 1
	fvt check /mnt/f/hello 0 22 70; r=$?; umount /mnt/f
	grep notify-retrieve /tmp/ops; [ $r = 0 ] &&
	grep -qx "notify-retrieve 22" /tmp/ops && ! grep -qx 41 /tmp/ops'
# The page cache of a famfs file is its dax entries: a server must not be
# able to drop them under a live mapping, neither with INVAL_INODE (minifuse
# sends it for all of hello at each open) nor through an mtime that changes
# with auto_inval_data (second review, finding 3). Before, 7.3 warned in
# dax_disassociate_entry() (a page still mapped); 6.12 showed nothing.
# map_hello MINIFUSE-ARG: minifuse serves, hello is mapped and read (its
# 22 bytes, pattern 70) until /tmp/wm-g exists; the watcher's pid in $wm,
# the length of the kernel log in $klog
map_hello() {
	rm -f /tmp/ops /tmp/wm-r /tmp/wm-g
	minifuse -F "$1" -l /tmp/ops /mnt/f || return 1
	klog=$(dmesg | wc -l)
	fvt watchmap /mnt/f/hello 22 70 70 /tmp/wm-r /tmp/wm-g >/tmp/wm.out 2>&1 &
	wm=$!
	wait_for /tmp/wm-r 20 || { umount /mnt/f; return 1; }
}
# hello_rss: the resident size of the watcher's mapping of hello (kB)
hello_rss() {
	awk '/ \/mnt\/f\/hello$/ { m = 1; next } m && /^Rss:/ { print $2; exit }' \
		/proc/$wm/smaps
}
# unmap_hello RSS: the mapping still has RSS kB resident (nothing dropped
# it), the watcher reads the bytes again through it, they are there and
# the kernel log is clean
unmap_hello() {
	local r now=$(hello_rss)
	touch /tmp/wm-g; wait $wm; r=$?
	cat /tmp/wm.out; umount /mnt/f
	echo "resident: $1 kB, then $now kB"
	! dmesg | tail -n +$((klog + 1)) | grep -E "WARNING|BUG|Oops" &&
		[ $r = 0 ] && [ "$now" = "$1" ]
}
inval_inode() {
	local n
	map_hello -Ninval || return 1
	rss=$(hello_rss)
	cat /mnt/f/hello >/dev/null	# an open: INVAL_INODE under the mapping
	unmap_hello "$rss" || return 1
	n=$(grep -cx "notify-inval 0" /tmp/ops)
	echo "INVAL_INODE sent and accepted: $n times"; [ "$n" = 2 ]
}
t "FUSE_NOTIFY_INVAL_INODE leaves a famfs file's mapping alone" inval_inode
changed_mtime() {
	local a b
	map_hello -M || return 1
	rss=$(hello_rss)
	# past the 1 s attribute timeout each stat fetches a newer mtime
	sleep 1.5; a=$(stat -c %Y /mnt/f/hello); sleep 1.5; b=$(stat -c %Y /mnt/f/hello)
	unmap_hello "$rss" || return 1
	echo "mtime $a, then $b"; [ "$a" != "$b" ]
}
t "a changed mtime (auto_inval_data) leaves a famfs file's mapping alone" changed_mtime
# msync and fsync must push the CPU caches over the dirty pages out to the
# memory (persistent or shared with other hosts). fs-dax does that only for
# a device with its write cache set (famfs_dax sets it on 6.12, the claim of
# an fsdev_dax device on 7.3); arch_wb_cache_pmem() is the flush.
# calls FUNC[,FUNC...] CMD...: CMD succeeds, and the function tracer saw it
# call FUNC (the first of the names that this kernel can trace)
calls() {
	local T=/sys/kernel/tracing f r n
	[ -e $T/trace ] || mount -t tracefs none $T || return 1
	for f in $(echo "$1" | tr , " "); do
		grep -qx "$f" $T/available_filter_functions && break
	done
	shift
	echo "$f" >$T/set_ftrace_filter &&
		echo function >$T/current_tracer && echo >$T/trace || return 1
	"$@"
	r=$?
	n=$(grep -c " $f <-" $T/trace)
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	echo "calls of $f: $n"
	[ $r = 0 ] && [ "$n" -gt 0 ]
}
# flushes CMD...: CMD succeeds, and the function tracer saw it flush.
flushes() { calls arch_wb_cache_pmem "$@"; }
# traced NAME CMD: t NAME CMD, a check that counts calls with the function
# tracer; a kernel built without one (the debug kernels) cannot count
# them, and the check is skipped there as impossible, with the reason.
[ -e /sys/kernel/tracing/trace ] ||
	mount -t tracefs none /sys/kernel/tracing 2>/dev/null
traced() {
	if [ -e /sys/kernel/tracing/available_filter_functions ]; then
		t "$@"
	else
		skip "$1" "impossible: $(uname -r) has no function tracer to count the calls with"
	fi
}
msync_flushes() {
	local r
	minifuse -F /mnt/f || return 1
	flushes fvt mwrite /mnt/f/hello 0 4 70
	r=$?
	umount /mnt/f
	return $r
}
traced "msync of a famfs mapping flushes the CPU caches" msync_flushes
# A server may give any block size, and change it at any time. fs-dax
# writes back page-sized blocks only (dax_writeback_mapping_range() warns
# and fails otherwise), so a famfs file keeps i_blkbits at the page size
# and stat alone shows the server's block size (7.3's FUSE does so for
# every file; 6.12's famfs patch does so for famfs-mode files): msync
# flushes and succeeds. (Before, on 6.12: i_blkbits followed the server,
# msync failed with EIO, and a change between famfs's check and the
# writeback reached the WARN.)
msync_blksize() {
	local r b
	minifuse -F -b 2097152 /mnt/f || return 1
	b=$(stat -c %o /mnt/f/hello)
	echo "block size in stat: $b"
	flushes fvt expect 0 msync /mnt/f/hello
	r=$?
	fvt check /mnt/f/hello 0 22 70 || r=1
	umount /mnt/f
	[ $r = 0 ] && [ "$b" = 2097152 ]
}
# A read(2) copies device memory to the reader: an uncorrected memory
# error consumed there must end as EIO, not as a machine check in the
# kernel, so the copy is the machine-check-safe one (second review,
# finding 5; a dax device set "nomc", as pmem's and device_dax's are).
# TCG injects no machine checks: that the copy is the recovering one is
# what can be checked (6.12 cannot trace _copy_mc_to_iter: there the copy
# it makes, copy_mc_to_user, is counted). (Before, on 6.12: 0 calls;
# famfs_dax's dax device was not set so.)
mc_safe_read() {
	local r
	minifuse -F /mnt/f || return 1
	calls _copy_mc_to_iter,copy_mc_to_user fvt check /mnt/f/hello 0 22 70
	r=$?
	umount /mnt/f
	return $r
}
traced "read(2) of a famfs file copies with machine-check recovery" mc_safe_read
traced "msync with a server-given 2 MiB block size flushes the CPU caches" msync_blksize
t "copy_file_range within a famfs file is not sent to the server" sh -c '
	rm -f /tmp/ops; minifuse -F -l /tmp/ops /mnt/f || exit 1
	fvt expect 0 copyrange /mnt/f/hello; fvt check /mnt/f/hello 0 22 70; r=$?
	umount /mnt/f; [ $r = 0 ] && ! grep -qx 47 /tmp/ops'

# Once a file has been opened without a map (ENODATA), it stays a plain
# FUSE file for the inode's life: no S_DAX under its page cache.
t "a file first served without a map does not become famfs later" sh -c '
	rm -f /tmp/ops; minifuse -F -m nodata-once -l /tmp/ops /mnt/f || exit 1
	a=$(cat /mnt/f/hello); b=$(cat /mnt/f/hello)
	umount /mnt/f; n=$(grep -cx 54 /tmp/ops); echo "GET_FMAP: $n"
	[ "$a" = "hello from famfs_fuse" ] && [ "$b" = "$a" ] && [ "$n" = 1 ]'

# The same for a file that FUSE_CREATE made and opened (that open never
# asks for a map): it is plain for its life, so opening it again while the
# creator still holds it sends no GET_FMAP, and reads go to the server
# (hello's text), not to the device (pattern 70).
t "a file made by FUSE_CREATE does not become famfs later" sh -c '
	rm -f /tmp/ops; minifuse -F -C -l /tmp/ops /mnt/f || exit 1
	exec 3>/mnt/f/made; a=$(cat /mnt/f/made); exec 3>&-
	b=$(cat /mnt/f/made); umount /mnt/f
	c=$(grep -cx 35 /tmp/ops); n=$(grep -cx 54 /tmp/ops)
	echo "CREATE: $c, GET_FMAP: $n, read: $a"
	[ "$c" = 1 ] && [ "$n" = 0 ] && [ "$a" = "hello from famfs_fuse" ] &&
	[ "$b" = "$a" ]'

# A write by a user without CAP_FSETID drops setuid and setgid, as on any
# file system (minifuse's hello is 06777 with -S; the write changes
# dax0.0's first bytes).
t "a write by another user drops setuid and setgid" sh -c '
	minifuse -F -a -S /mnt/f || exit 1
	userns 65534 - - fvt pwrite /mnt/f/hello 0 4 9; w=$?
	m=$(stat -c %a /mnt/f/hello); umount /mnt/f
	echo "write: $w, mode after: $m"; [ $w = 0 ] && [ "$m" = 777 ]'
# A page that only a pipe holds (vmsplice; an O_DIRECT in flight is the
# same) after its mapping and its file are gone: unbinding the device
# waits for it before it drops the file's dax entries, and the struct
# pages go only after that. (On the module before the fix the unbind
# returned at once, and draining the pipe then oopsed on the freed page.)
t "unbinding a device waits while a page of it is pinned" sh -c '
	. /tests/lib.sh; rm -f /tmp/pin-r /tmp/pin-g
	minifuse -F /mnt/f || exit 1
	fvt pinpage /mnt/f/hello /tmp/pin-r /tmp/pin-g >/tmp/pin.out 2>&1 &
	p=$!
	wait_for /tmp/pin-r 20 || { cat /tmp/pin.out; umount /mnt/f; exit 1; }
	a=$(fvt now); echo dax0.0 >/sys/bus/dax/drivers/$drv/unbind &
	u=$!
	sleeps_in $u famfs_daxdev_wait_unpinned 20; blocked=$?
	# drained 2 s after the unbind was seen waiting
	sleep 2; touch /tmp/pin-g; wait $p; pr=$?; wait $u; ur=$?
	report "# measure: unbind of dax0.0 with a page pinned in a pipe, drained 2 s after the unbind was seen waiting: $(awk -v a=$a -v b=$(fvt now) "BEGIN { printf \"%.3f\", b - a }") s"
	cat /tmp/pin.out; umount /mnt/f; m=$?
	echo "unbind asleep in the wait: $blocked (0: yes), pin $pr, unbind $ur, umount $m"
	famfs_bind dax0.0 $drv && [ $blocked = 0 ] && [ $pr = 0 ] && [ $ur = 0 ] && [ $m = 0 ]'
# The same wait while the user still maps the file: uid 65534 keeps its
# mapping of hello, pins its first page in a pipe, and faults another page
# once the unbind waits. The unbind must not wait holding the file's
# invalidate lock, which the fault takes (before the fix both stayed in D
# for good, even after SIGKILL: the unbind in famfs_daxdev_wait_unpinned,
# the fault in famfs_fault). Now the fault gets SIGBUS at once (the device
# is going), the unbind waits on until the pipe is drained, then finishes.
t "a fault while an unbind waits for a pinned page ends, then the unbind" sh -c '
	. /tests/lib.sh; rm -rf /tmp/pf; mkdir -m 777 /tmp/pf
	minifuse -F -a /mnt/f || exit 1
	userns 65534 - - fvt pinfault /mnt/f/hello /tmp/pf/r /tmp/pf/g /tmp/pf/d \
		/tmp/pf/x >/tmp/pf.out 2>&1 &
	p=$!
	wait_for /tmp/pf/r 20 || { cat /tmp/pf.out; umount /mnt/f; exit 1; }
	echo dax0.0 >/sys/bus/dax/drivers/$drv/unbind &
	u=$!
	sleeps_in $u famfs_daxdev_wait_unpinned 20; w=$?
	touch /tmp/pf/g
	if ! wait_for /tmp/pf/d 10; then
		echo "the fault does not end:"; task_where $(cat /tmp/pf/r)
		task_where $u; kill -9 $(cat /tmp/pf/r); sleep 5
		echo "5 s after SIGKILL:"; task_where $(cat /tmp/pf/r); task_where $u
		exit 1
	fi
	kill -0 $u 2>/dev/null; still=$?
	touch /tmp/pf/x; wait $p; pr=$?; wait $u; ur=$?
	cat /tmp/pf.out; umount /mnt/f; m=$?
	echo "unbind asleep in the wait: $w, fault: $(cat /tmp/pf/d)," \
		"unbind still waiting after it: $still (0: yes), drain $pr, unbind $ur, umount $m"
	famfs_bind dax0.0 $drv && [ $w = 0 ] && [ "$(cat /tmp/pf/d)" = sigbus ] &&
	[ $still = 0 ] && [ $pr = 0 ] && [ $ur = 0 ] && [ $m = 0 ]'
# An unbind drops the mappings of the files that use the device going
# away, and only those (second review, finding 12): minifuse serves hello
# from dax0.0 and twin from dax1.0 in one mount; twin is read (the
# connection claims dax1.0), a process maps hello and reads it, dax1.0 is
# unbound from its driver, and the process reads hello again through its
# mapping: the same bytes, with no page fault (nothing unmapped it).
# (Before: every famfs file of the connection was unmapped: a fault.)
other_device() {
	local drv r
	drv=$(basename "$(readlink /sys/bus/dax/devices/dax1.0/driver)")
	rm -f /tmp/od-r /tmp/od-g
	minifuse -F -T -m split -D /dev/dax0.0,/dev/dax1.0 /mnt/f || return 1
	klog=$(dmesg | wc -l)
	cat /mnt/f/twin >/dev/null || { umount /mnt/f; return 1; }
	fvt holdmap /mnt/f/hello /tmp/od-r /tmp/od-g >/tmp/od.out 2>&1 &
	r=$!
	wait_for /tmp/od-r 20 || { umount /mnt/f; return 1; }
	echo dax1.0 >/sys/bus/dax/devices/dax1.0/driver/unbind || return 1
	touch /tmp/od-g; wait $r; r=$?
	cat /tmp/od.out; umount /mnt/f
	! dmesg | tail -n +$((klog + 1)) | grep -E "WARNING|BUG|Oops" &&
		famfs_idle && famfs_bind dax1.0 "$drv" && [ $r = 0 ] &&
		grep -q " same faults=0$" /tmp/od.out
}
t "an unbind of dax1.0 leaves the mapping of a file on dax0.0 alone" other_device
# famfs_dax's own checks (6.12). On 7.3 dax1.0 goes back to device_dax,
# where ndctl made it.
if [ $raw = 4 ]; then
	# The node's cdev is the dax device's own: famfs_dax must not take it over
	# while a file opened under device_dax still holds it (last here: on the
	# module before the fix this wrecked the character device table).
	t "famfs_dax refuses dax1.0 while its node is open under device_dax" sh -c '
		. /tests/lib.sh; a=$(fvt now)
		echo dax1.0 >/sys/bus/dax/drivers/famfs_dax/unbind || exit 1
		report "# measure: unbinding famfs_dax from dax1.0 ($(cat /sys/bus/dax/devices/dax1.0/size) bytes, idle): $(awk -v a=$a -v b=$(fvt now) "BEGIN { printf \"%.3f\", b - a }") s"
		echo dax1.0 >/sys/bus/dax/drivers/device_dax/bind || exit 1
		exec 3</dev/dax1.0 || exit 1
		echo dax1.0 >/sys/bus/dax/drivers/device_dax/unbind
		echo dax1.0 >/sys/bus/dax/drivers/famfs_dax/bind 2>/dev/null
		d=$(readlink /sys/bus/dax/devices/dax1.0/driver); exec 3<&-
		echo "driver with the node open: ${d##*/}"; [ -z "$d" ] &&
			dmesg | grep -q "device node still open under the previous driver"'
	t "famfs_dax takes dax1.0 once the node is closed" famfs_bind dax1.0
	# The other way (second review, finding 7): a file opened through
	# famfs_dax outlives its unbind, device_dax binds meanwhile, then the
	# file is closed. Its close must put famfs_dax's cdev and module: on
	# the module before the fix the node's cdev was the dax device's own,
	# which device_dax's probe re-initialised, so the close put device_dax
	# (its module count dropped by one) and famfs_fuse kept a reference.
	# Until the close, the node the file opened leads to famfs_dax's
	# cdev, so an open of that node fails with ENXIO meanwhile.
	t "a node opened under famfs_dax, closed once device_dax has dax1.0: references balance" sh -c '
		. /tests/lib.sh
		f0=$(cat /sys/module/famfs_fuse/refcnt)
		exec 3</dev/dax1.0 || exit 1
		echo dax1.0 >/sys/bus/dax/drivers/famfs_dax/unbind &&
			echo dax1.0 >/sys/bus/dax/drivers/device_dax/bind || exit 1
		d0=$(cat /sys/module/device_dax/refcnt)
		# until that close, the node it opened still leads to famfs_dax,
		# which has no device bound: a new open there fails
		if (exec 4</dev/dax1.0) 2>/dev/null; then echo "an open reached device_dax meanwhile"; exit 1; fi
		exec 3<&-
		f1=$(cat /sys/module/famfs_fuse/refcnt) d1=$(cat /sys/module/device_dax/refcnt)
		echo "famfs_fuse: $f0 before the open, $f1 after the close; device_dax: $d0 before the close, $d1 after"
		[ "$f1" = "$f0" ] && [ "$d1" = "$d0" ]'
	t "device_dax serves dax1.0 after that close (mmap write, read back)" sh -c '
		fvt mwrite /dev/dax1.0 0 2097152 3 && fvt devcheck /dev/dax1.0 0 2097152 3 0'
	t "famfs_dax takes dax1.0 back" famfs_bind dax1.0
	t "famfs_health is for root only (0600)" sh -c '
		m=$(stat -c %a /sys/bus/dax/devices/dax0.0/famfs_health); echo "mode $m"; [ "$m" = 600 ]'
	t "module unloads" unload famfs_fuse
else
	skip "famfs_dax refuses dax1.0 while its node is open under device_dax" "$NO_FAMFS_DAX"
	skip "famfs_dax takes dax1.0 once the node is closed" "$NO_FAMFS_DAX"
	skip "a node opened under famfs_dax, closed once device_dax has dax1.0: references balance" "$NO_FAMFS_DAX"
	skip "device_dax serves dax1.0 after that close (mmap write, read back)" "$NO_FAMFS_DAX"
	skip "famfs_dax takes dax1.0 back" "$NO_FAMFS_DAX"
	skip "famfs_health is for root only (0600)" "$NO_FAMFS_DAX"
	t "module unloads, dax1.0 back on device_dax" sh -c '
		. /tests/lib.sh; a=$(fvt now)
		echo dax1.0 >/sys/bus/dax/drivers/fsdev_dax/unbind || exit 1
		report "# measure: unbinding fsdev_dax from dax1.0 ($(cat /sys/bus/dax/devices/dax1.0/size) bytes, idle): $(awk -v a=$a -v b=$(fvt now) "BEGIN { printf \"%.3f\", b - a }") s"
		famfs_bind dax1.0 device_dax && unload famfs_fuse'
fi
t "kernel log clean after hardening tests" dmesg_clean
