# Guest A of the two-guest test, the master: makes the devdax namespace
# and the famfs on the memory it shares with guest B and writes to it; B
# checks what it sees (pair-b.sh; the steps match message by message).
plan 56	# 51 checks, and one for each of the five files B watches
. /tests/pair.sh
pair_init a

t "own system UUID" set_uuid aaaaaaaa-0000-4000-8000-00000000000a
# The struct pages of the namespace must live in each guest's own RAM
# (map=mem): with map=dev (ndctl's default) they live in the device, so
# both kernels would keep their page state in the same shared bytes.
t "nvdimm region present" wait_for /sys/bus/nd/devices/region0 10
t "namespace0.0 devdax, struct pages in guest RAM (map=mem)" \
	ndctl create-namespace -f -e namespace0.0 --mode=devdax --align=2M --map=mem
t "/dev/dax0.0 appears" wait_for /dev/dax0.0 10
t "famfs_fuse loaded (dax0.0 on famfs_dax on 6.12)" famfs_load
t "pattern written into dax0.0 for B" fvt mwrite /dev/dax0.0 0x10000000 2m 7
say devdax "$(cat /sys/bus/dax/devices/dax0.0/size)"
t "B saw the pattern" hear devdax-ok
t "B's pattern shows in A's dax0.0 (one shared memory)" \
	fvt devcheck /dev/dax0.0 0x10200000 2m 8 0x10200000

# The famfs, with A as the master.
t "mkfs.famfs /dev/dax0.0" mkfs.famfs -f /dev/dax0.0
t "mount.famfs in famfs mode" mount.famfs /dev/dax0.0 $M -o fallback=no
t "mount is famfs mode, role master" sh -c ". /tests/lib.sh
	[ \"\$(kv mode $S)\" = famfs ] && [ \"\$(kv role $S)\" = master ]"
say mounted
t "B mounted as a client" hear mounted

# Visibility: B watches, A creates; B measures.
for i in 1 2 3 4 5; do
	hear watch$i	# a peer out of step fails here at once (guest/pair.sh)
	t "famfs creat v$i while B watches" famfs creat -s 2m -r -S $i $M/v$i
	say made$i
done
t "B measured the visibility of 5 new files" hear measured

# A tree of directories and files, simple and interleaved.
mktree() {
	famfs mkdir -p $M/tree/sub/deep &&
	famfs creat -s 7m -r -S 11 $M/tree/simple &&
	famfs creat -N 4 -B 8 -C 2m -s 37m -r -S 12 $M/tree/il4 &&
	famfs creat -N 2 -B 4 -C 4m -s 20m -r -S 13 $M/tree/sub/il2 &&
	famfs cp /usr/bin/famfs $M/tree/sub/deep/famfs.copy &&
	famfs creat -M $M/tree/sub/m1,3m,21 -M $M/tree/sub/m2,1m,22 \
		-M $M/tree/sub/m3,5000,23 -M $M/tree/m4,9m,24
}
t "famfs mkdir/creat/cp: a tree with simple and interleaved files" mktree
find $M/tree | sort >/tmp/tree.names
fvt msum $(find $M/tree -type f | sort) >/tmp/tree.sums
say tree "$(cat /tmp/tree.names)"
say sums "$(cat /tmp/tree.sums)"
ls $M >/dev/null
entries=$(kv log_entries $S)
t "B checked the tree" hear tree-checked

# B tries to write: nothing of it may reach the log.
t "B tried to create and append" hear refused
ls $M >/dev/null
t "the log is unchanged by B's attempts" sh -c ". /tests/lib.sh
	[ \"\$(kv log_entries $S)\" = $entries ]"

# A writes a file that B has mapped.
t "famfs creat shared 8 MiB" famfs creat -s 8m $M/shared
t "pattern 41 into shared by write(2)" fvt pwrite $M/shared 0 8m 41
say shared
t "B has shared mapped" hear mapped
t "pattern 42 into shared through A's mapping" fvt mwrite $M/shared 0 8m 42
say rewritten
t "B saw pattern 42" hear rewritten-seen

# A copies a large file into its mount (the POSIX path: the daemon serves
# it while it is written and logs it at its close) while B looks for it:
# B must find nothing, then all of it, never a part.
t "a 64 MiB source file" sh -c "head -c 67108864 /dev/urandom >/tmp/big"
say copying "$(md5sum </tmp/big | cut -d' ' -f1) $(stat -c %s /tmp/big)"
t "B is looking for big" hear looking
t0=$(fvt now)
t "cp of 64 MiB into the mount" cp /tmp/big $M/big
measure "A's cp of 64 MiB into the mount took $(seconds_since $t0) s"
say copied
t "B never saw big in part" hear big-checked 300
rm -f /tmp/big

# A extends the log while B holds files open and mapped.
t "B holds tree files mapped" hear holding
more() {
	famfs mkdir -p $M/more/a/b &&
	famfs creat -N 3 -B 6 -C 2m -s 30m -r -S 31 $M/more/il3 &&
	famfs creat -M $M/more/a/x1,2m,32 -M $M/more/a/x2,6m,33 \
		-M $M/more/a/b/x3,100k,34 -M $M/more/x4,11m,35 &&
	famfs creat -s 16m -r -S 36 $M/more/a/b/big
}
t "famfs mkdir/creat: more files while B holds its own" more
fvt msum $(find $M/more -type f | sort) >/tmp/more.sums
say more "$(cat /tmp/more.sums)"
t "B checked its held files and the new ones" hear more-checked

# pcq, how famfs users check two hosts' view of shared memory: A
# produces, B (a client mounted with client_rw) consumes, through one
# queue whose indexes and buckets each host flushes and invalidates.
t "pcq --create: a queue of 1024 buckets of 1 KiB" pcq --create -b 1k -n 1k $M/q
say queue
t "B is consuming" hear consuming
t "pcq producer: 20000 seeded messages to B" sh -c "
	timeout 600 pcq -p -S 42 -N 20000 -f /tmp/pst $M/q >/tmp/pcq.out 2>&1; rc=\$?
	cat /tmp/pcq.out; [ \$rc -eq 0 ] && grep -q 'nsent=20000 nerrors=0' /tmp/pcq.out &&
	[ \"\$(cat /tmp/pst)\" = 20000 ]"
t "B received them all" hear consumed
t "pcq producer: 100 more, for B to drain" pcq -p -S 42 -N 100 $M/q
say queued
t "B drained them" hear drained
t "pcq --info on A: empty, 20100 put and 20100 taken" sh -c "
	pcq --info $M/q >/tmp/info; cat /tmp/info
	grep -q 'contains 0 messages p next_seq 20100 c next_seq 20100' /tmp/info"
# The same without cache maintenance (--dontflush), printed, not checked:
# whether these guests can show a stale read at all. Both guests' memory
# is the host's, which the host's CPU keeps coherent, and TCG runs the
# flush instructions as no-ops, so the exchange is expected to come out
# the same as with them (the README says so).
say nf-ready
hear nf-consuming
timeout 120 pcq -p -D -S 43 -N 20000 $M/q >/tmp/nf.out 2>&1
measure "pcq --dontflush, A: $(grep '^pcq producer' /tmp/nf.out)"
hear nf-done

# A fills the log to its last slot while B is unmounted; B then mounts
# and replays it. The bulk of it goes straight to the unmounted device
# (--device: the CLI flushes CPU caches itself there, where through the
# mount it msyncs each entry), then A mounts again.
t "B unmounted" hear unmounted
ls $M >/dev/null
n0=$(kv log_entries $S) slots=$(kv log_slots $S)
t "unmount for the bulk appends" umount $M
fill() {
	local left=$((slots - n0 - 32 - 1)) t0 i
	echo "log: $n0 of $slots entries used; adding 32 files and $((left + 1)) directories"
	t0=$(fvt now)
	famfs mkdir -D /dev/dax0.0 full || return 1
	# 32 directories with about $left / 32 subdirectories each
	awk -v n="$left" 'BEGIN {
		for (i = 0; i < 32; i++) print "full/d" i
		for (j = 0; j < n - 32; j++) print "full/d" (j % 32) "/e" j }' |
		xargs -n 2000 famfs mkdir -D /dev/dax0.0 || return 1
	set --
	for i in $(seq 0 31); do
		set -- "$@" -M full/d$i/f$i,$((i % 3 + 1))m,$((100 + i))
	done
	famfs creat -D /dev/dax0.0 "$@" || return 1
	measure "A appended $((slots - n0)) log entries (--device) in $(seconds_since $t0) s"
}
t "famfs mkdir/creat --device fill the log to its last slot" fill
t0=$(fvt now)
t "mount.famfs again (a full log)" mount.famfs /dev/dax0.0 $M -o fallback=no
measure "A mounted the famfs with a full log ($(kv log_entries $S) entries) in $(seconds_since $t0) s"
t "the mount has every entry ($slots)" sh -c ". /tests/lib.sh
	[ \"\$(kv log_entries $S)\" = $slots ]"
t "one entry more: log full (exit 1, says so)" sh -c "
	famfs mkdir $M/one.more 2>/tmp/err; rc=\$?; cat /tmp/err
	[ \$rc -eq 1 ] && grep -qi 'full' /tmp/err"
fvt names $M/full $(seq 0 31 | sed "s|^|$M/full/d|") | sort >/tmp/full.list
fvt msum $(grep '/f[0-9]*$' /tmp/full.list) >/tmp/full.sums
say full "$(kv log_entries $S) $(kv files $S) $(kv dirs $S) $(wc -l </tmp/full.list)" \
	"$(md5sum </tmp/full.list | cut -d' ' -f1)"
say fullsums "$(cat /tmp/full.sums)"
t "B replayed the full log" hear replayed 300
t "unmount" umount $M

# Several devices: two more shared NVDIMMs, which B's QEMU lists in the
# other order (B's dax1.0 is A's dax2.0): each host finds a device by the
# uuid on it, whatever its name there.
moredax() {
	local r
	for r in 1 2; do
		wait_for /sys/bus/nd/devices/region$r 10 &&
			ndctl create-namespace -f -e namespace$r.0 --mode=devdax \
				--align=2M --map=mem &&
			wait_for /dev/dax$r.0 10 || return 1
	done
}
t "two more shared NVDIMMs: dax1.0 and dax2.0" moredax
t "mkfs.famfs over dax0.0 and dax1.0" mkfs.famfs -f /dev/dax0.0 /dev/dax1.0
t "mount.famfs, then famfs devadd dax2.0" sh -c "
	mount.famfs /dev/dax0.0 $M -o fallback=no && famfs devadd $M /dev/dax2.0"
t "a file striped over the three devices" \
	famfs creat -N 3 -C 2m -s 30m -r -S 61 $M/s3
famfs daxdev $M | awk '$1 == 1 || $1 == 2 { print $1, $2, $NF }' >/tmp/devs
fvt msum $M/s3 >/tmp/s3.sum
say devices "$(cat /tmp/devs)"
say s3sum "$(cat /tmp/s3.sum)"
t "B found the devices under its own names and read the file" hear devices-ok 300
t "unmount" umount $M
t "kernel log clean after the pair test" dmesg_clean
