# Guest B of the two-guest test, a client: finds the memory guest A set
# up, mounts A's famfs and checks what it sees against what A says it
# wrote (pair-a.sh; the steps match message by message). B writes to the
# shared memory only in the first exchange and as pcq's consumer.
plan 68	# 63 checks, and one for each of the five files it watches
. /tests/pair.sh
pair_init b

t "own system UUID (not A's)" set_uuid bbbbbbbb-0000-4000-8000-00000000000b
t "A made dax0.0 devdax" hear devdax
asize=$HEARD
# A's namespace set-up wrote a devdax info block into the shared memory;
# probing the namespace again finds it (B's kernel saw a raw namespace
# at boot). The bind fails with ENXIO: nd_pmem hands the namespace over.
reprobe() {
	echo namespace0.0 >/sys/bus/nd/drivers/nd_pmem/unbind
	echo namespace0.0 >/sys/bus/nd/drivers/nd_pmem/bind 2>/dev/null
	wait_for /dev/dax0.0 10 &&
		[ "$(cat /sys/bus/dax/devices/dax0.0/size)" = "$asize" ]
}
t "dax0.0 from A's devdax info block, A's size ($asize)" reprobe
t "struct pages in B's own RAM (map=mem)" sh -c 'ndctl list -N | tee /dev/console | grep -q "\"map\":\"mem\""'
t "famfs_fuse loaded (dax0.0 on famfs_dax on 6.12)" famfs_load
t "A's pattern is in B's dax0.0 (one shared memory)" \
	fvt devcheck /dev/dax0.0 0x10000000 2m 7 0x10000000
t "pattern written into dax0.0 for A" fvt mwrite /dev/dax0.0 0x10200000 2m 8
say devdax-ok

t "A made and mounted its famfs" hear mounted
t "mount as master refused: B is a client (exit 32, says so)" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no,role=master 2>/tmp/err; rc=\$?
	cat /tmp/err; [ \$rc -eq 32 ] && grep -q 'client' /tmp/err &&
	! grep -q ' $M ' /proc/mounts"
t0=$(fvt now)
t "mount.famfs in famfs mode" mount.famfs /dev/dax0.0 $M -o fallback=no
measure "B mounted the famfs ($(kv log_entries $S) log entries) in $(seconds_since $t0) s"
t "mount is famfs mode, role client, read-only" sh -c ". /tests/lib.sh
	[ \"\$(kv mode $S)\" = famfs ] && [ \"\$(kv role $S)\" = client ] &&
	[ \"\$(kv readonly $S)\" = 1 ]"
say mounted

# Visibility of a file A creates: from the moment B sees A's commit in
# the shared log until B's mount shows the name; first through a lookup
# (the daemon re-reads the log on a miss), then through its poll alone
# (poll_ms=1000 by default).
for i in 1 2 3 4 5; do
	how=-
	[ $i -gt 2 ] && how=$S
	rm -f /tmp/ready
	fvt visible $M/.meta/.log $M/v$i $how /tmp/ready $((60 * SLOW)) >/tmp/vis$i 2>&1 &
	vpid=$!
	wait_for /tmp/ready 10
	say watch$i
	hear made$i
	wait $vpid
	vrc=$?
	what="lookup"
	[ $i -gt 2 ] && what="the daemon's poll only"
	# Seen at all, within a bound generous for two TCG guests on a busy
	# host; the delay is printed, and measured by make bench.
	t "v$i seen by $what (within 60 s)" sh -c "cat /tmp/vis$i; exit $vrc"
	grep -q delay_ms= /tmp/vis$i && measure "$(cat /tmp/vis$i)"
done
say measured

# A's tree: same names, same bytes by mmap, without any step on B.
t "A made a tree" hear tree
anames=$HEARD
find $M/tree | sort >/tmp/tree.names
t "B sees A's tree: the same names" same /tmp/tree.names "$anames"
t "A's checksums" hear sums
asums=$HEARD
fvt msum $(find $M/tree -type f | sort) >/tmp/tree.sums
t "B reads the same bytes by mmap (checksums equal A's)" \
	same /tmp/tree.sums "$asums"
t "read(2) == mmap, and on 6.12 == the device bytes at each file's extents" \
	devcmp_all $(find $M/tree -type f)
t "famfs verify: the patterns A wrote" sh -c "famfs verify -S 11 $M/tree/simple &&
	famfs verify -S 12 $M/tree/il4 && famfs verify -S 13 $M/tree/sub/il2"
t "famfs getmap on B: il4 is interleaved" sh -c "famfs getmap $M/tree/il4 | grep -q interleave"
say tree-checked

# B may not write: the CLI says why, the mount refuses writes.
refused() {
	"$@" 2>/tmp/err
	local rc=$?
	cat /tmp/err
	[ $rc -eq 1 ] && grep -q 'this host is a client of this famfs' /tmp/err
}
t "famfs creat on B: exit 1, 'this host is a client'" refused famfs creat -s 2m $M/fromb
t "famfs mkdir on B: exit 1, 'this host is a client'" refused famfs mkdir $M/dirb
t "famfs cp on B: exit 1, 'this host is a client'" refused famfs cp /usr/bin/famfs $M/cpb
t "writing the log (.meta/.log) on B: EROFS" fvt expect EROFS write $M/.meta/.log
t "writing a file on B: EROFS" fvt expect EROFS write $M/tree/simple
t "creating through B's mount: refused" sh -c "! touch $M/touched 2>/dev/null && ! test -e $M/touched"
say refused

# A writes a file B has mapped: B's mapping shows A's new bytes (device
# memory, no page cache in between).
t "A wrote shared" hear shared
rm -f /tmp/wready /tmp/wgo
fvt watchmap $M/shared 8m 41 42 /tmp/wready /tmp/wgo >/tmp/watch 2>&1 &
wpid=$!
wait_for /tmp/wready 20
say mapped
t "A rewrote shared" hear rewritten
touch /tmp/wgo
wait $wpid
t "B's mapping showed 41, then A's new 42" sh -c "cat /tmp/watch; grep -q '41 ok, then seed 42 ok' /tmp/watch"
t "read(2) on B shows 42 too" fvt check $M/shared 0 8m 42
say rewritten-seen

# A copies a large file into its mount. A file is logged whole at its
# close, so B looks it up over and over while A writes it: absent, then
# A's size and bytes the first time it is there.
t "A is about to copy big" hear copying
set -- $HEARD
watch_big() {
	local n=0 size
	while [ ! -e $M/big ]; do
		n=$((n + 1))
	done
	size=$(stat -c %s $M/big)
	echo "absent $n times, then $size bytes (A's: $2)"
	[ "$size" = "$2" ] && [ $n -gt 0 ] &&
		[ "$(md5sum <$M/big | cut -d' ' -f1)" = "$1" ]
}
watch_big "$1" "$2" >/tmp/big.watch 2>&1 &
bpid=$!
say looking
hear copied 300
# logged at the release that follows A's close: give it a minute
i=0
while kill -0 $bpid 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill $bpid 2>/dev/null
wait $bpid
brc=$?
t "big: absent while A copied it, then whole (size and md5 as A's)" \
	sh -c "cat /tmp/big.watch; [ $brc -eq 0 ]"
measure "B: $(head -n1 /tmp/big.watch)"
say big-checked

# B holds files open and mapped while A logs more; B's kernel keeps the
# maps it has, its daemon learns the new entries, nothing maps outside
# the extents in the log.
rm -f /tmp/h1 /tmp/h2 /tmp/g
fvt holdmap $M/tree/il4 /tmp/h1 /tmp/g >/tmp/hold1 2>&1 &
hp1=$!
fvt holdmap $M/tree/sub/il2 /tmp/h2 /tmp/g >/tmp/hold2 2>&1 &
hp2=$!
wait_for /tmp/h1 20 && wait_for /tmp/h2 20
say holding
t "A logged more files" hear more
amore=$HEARD
touch /tmp/g
wait $hp1 $hp2
t "held mappings read the same while A extended the log" sh -c "
	cat /tmp/hold1 /tmp/hold2; grep -q ' same' /tmp/hold1 && grep -q ' same' /tmp/hold2"
fvt msum $M/tree/il4 $M/tree/sub/il2 >/tmp/held.sums
t "held files still have A's checksums" same /tmp/held.sums \
	"$(echo "$asums" | grep -e '/tree/il4 ' -e '/tree/sub/il2 ')"
fvt msum $(find $M/more -type f | sort) >/tmp/more.sums
t "new files: A's bytes by mmap (checksums)" same /tmp/more.sums "$amore"
t "new files: read(2) == mmap, and on 6.12 == the device bytes at their extents" \
	devcmp_all $(find $M/more -type f)
t "B's kernel log clean with stale maps and a growing log" dmesg_clean
say more-checked

# pcq: B consumes what A produces. The consumer writes its index in the
# queue's second file, which a client may do only when mounted client_rw.
t "A made a queue" hear queue
t "unmount, to mount again with client_rw" umount $M
t "mount.famfs -o client_rw" mount.famfs /dev/dax0.0 $M -o fallback=no,client_rw
t "client_rw: a client, the log read-only, file data writable" sh -c ". /tests/lib.sh
	[ \"\$(kv role $S)\" = client ] && [ \"\$(kv readonly $S)\" = 1 ] &&
	[ \"\$(kv data_readonly $S)\" = 0 ] && [ \"\$(kv mode $S)\" = famfs ]"
t "client_rw: writing the log (.meta/.log) is still EROFS" fvt expect EROFS write $M/.meta/.log
timeout 600 pcq -c -S 42 -N 20000 -s 10 -f /tmp/cst $M/q >/tmp/pcq.out 2>&1 &
pc=$!
say consuming
wait $pc
rc=$?
t "pcq consumer on B: A's 20000 messages, each payload, CRC and sequence right" sh -c "
	cat /tmp/pcq.out; [ $rc -eq 0 ] && grep -q 'nreceived=20000 nerrors=0' /tmp/pcq.out &&
	[ \"\$(cat /tmp/cst)\" = 20000 ]"
measure "pcq across the guests: $(grep '^pcq consumer' /tmp/pcq.out)"
say consumed
t "A queued 100 more" hear queued
t "pcq --drain on B: 100 messages, no errors" sh -c "
	pcq --drain -S 42 -f /tmp/dst $M/q >/tmp/drain.out 2>&1; rc=\$?; cat /tmp/drain.out
	[ \$rc -eq 0 ] && grep -q 'nreceived=100 nerrors=0' /tmp/drain.out && [ \"\$(cat /tmp/dst)\" = 100 ]"
say drained
hear nf-ready
timeout 150 pcq -c -D -S 43 -N 20000 $M/q >/tmp/nf.out 2>&1 &
pc=$!
say nf-consuming
wait $pc
measure "pcq --dontflush, B: $(grep '^pcq consumer' /tmp/nf.out)"
say nf-done

# A full log replayed by a daemon started after A wrote it.
t "unmount" umount $M
say unmounted
t "A filled the log" hear full 300
set -- $HEARD
aentries=$1 afiles=$2 adirs=$3 anames=$4 alist=$5
t0=$(fvt now)
t "mount.famfs again: replays the full log" mount.famfs /dev/dax0.0 $M -o fallback=no
measure "B mounted the famfs with a full log ($(kv log_entries $S) entries) in $(seconds_since $t0) s"
t "the daemon has every entry: $aentries entries, $afiles files, $adirs directories" sh -c ". /tests/lib.sh
	cat $S; [ \"\$(kv log_entries $S)\" = $aentries ] && [ \"\$(kv files $S)\" = $afiles ] &&
	[ \"\$(kv dirs $S)\" = $adirs ] && [ \"\$(kv log_damaged $S)\" = 0 ]"
t0=$(fvt now)
fvt names $M/full $(seq 0 31 | sed "s|^|$M/full/d|") | sort >/tmp/full.list
measure "B read $(wc -l </tmp/full.list) names under full/ (readdir) in $(seconds_since $t0) s"
t "readdir on B lists every name A made under full/ ($anames)" sh -c "
	[ \$(wc -l </tmp/full.list) -eq $anames ] &&
	md5sum </tmp/full.list | cut -d' ' -f1 | grep -qx '$alist'"
t0=$(fvt now)
t "famfs logplay: the log holds $aentries sound entries" famfs logplay -n $M
measure "B read and checked the full log (famfs logplay -n) in $(seconds_since $t0) s"
t0=$(fvt now)
t "famfs logplay: every logged file and directory looks up in B's mount" famfs logplay $M
measure "B looked up all $aentries logged names (famfs logplay) in $(seconds_since $t0) s"
t "A's checksums of the full log's files" hear fullsums
fvt msum $(grep '/f[0-9]*$' /tmp/full.list) >/tmp/full.sums
t "the files under full/ have A's bytes by mmap" same /tmp/full.sums "$HEARD"
t "unmount" umount $M
say replayed

# A's famfs over three shared NVDIMMs, which B's QEMU lists in the other
# order: A's dax1.0 is B's dax2.0 and the other way round.
t "A made a famfs over three devices" hear devices 300
adevs=$HEARD
reprobe_all() {
	local r
	for r in 1 2; do
		echo namespace$r.0 >/sys/bus/nd/drivers/nd_pmem/unbind
		echo namespace$r.0 >/sys/bus/nd/drivers/nd_pmem/bind 2>/dev/null
		wait_for /dev/dax$r.0 10 || return 1
	done
}
t "dax1.0 and dax2.0 from A's devdax info blocks" reprobe_all
t "mount.famfs: three devices, none missing" sh -c "
	. /tests/lib.sh
	mount.famfs /dev/dax0.0 $M -o fallback=no || exit 1
	cat $S; [ \"\$(kv devices $S)\" = 3 ] && [ \"\$(kv devices_missing $S)\" = 0 ]"
# A's list with dax1.0 and dax2.0 swapped is B's.
printf '%s\n' "$adevs" | sed 's|/dev/dax1.0|@|; s|/dev/dax2.0|/dev/dax1.0|; s|@|/dev/dax2.0|' >/tmp/want.devs
famfs daxdev $M | awk '$1 == 1 || $1 == 2 { print $1, $2, $NF }' >/tmp/devs
t "each device found by its uuid under B's other name" sh -c "
	cat /tmp/want.devs /tmp/devs; [ -s /tmp/devs ] && diff /tmp/want.devs /tmp/devs"
t "A's checksum of the striped file" hear s3sum
fvt msum $M/s3 >/tmp/s3.sum
t "the striped file has A's bytes by mmap" same /tmp/s3.sum "$HEARD"
t "the striped file reads back by read(2) (famfs verify)" famfs verify -S 61 $M/s3
t "unmount" umount $M
t "kernel log clean after the pair test" dmesg_clean
say devices-ok
