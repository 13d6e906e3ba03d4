# Guest part of bench/vm.sh (run by tests/vm/run.sh with VM_EXTRA_CASES;
# bench/vm.sh puts the settings KLINE, PASSES, SPECS and READ_SIZE in
# front of this file). A 1 GiB famfs file in famfs mode, read by mmap and
# read(2), against a stock devdax mapping and, on 6.12, the same memory
# through a raw /dev/dax0.0 mapping (fbench); page faults and daemon
# requests per GiB. Every figure is one "# bench: RESULT ..." line for
# bench/report.py.
#
# 6.12: dax0.0 is bound to our famfs_dax, which also serves its node.
# 7.3: there is no famfs_dax; mkfs.famfs writes dax0.0 on device_dax and
# the daemon moves it to the kernel's fsdev_dax, whose node has no mmap:
# no raw node side there.
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused
B=1g
mkdir -p $M /opt/famfs
plan 10
bench() { report "# bench: $*"; }
requests() { sed -n 's/^requests=//p' $S; }

# The second NVDIMM (bench/vm.sh adds it) becomes dax1.0 on the stock
# device_dax driver: the baseline devdax users know (2 MiB faults).
t "bench: second NVDIMM is dax1.0 on device_dax" sh -c '
	ndctl create-namespace -f -e namespace1.0 --mode=devdax --align=2M &&
	. /tests/lib.sh && wait_for /dev/dax1.0 10 &&
	[ "$(basename "$(readlink /sys/bus/dax/devices/dax1.0/driver)")" = device_dax ] &&
	[ "$(cat /sys/bus/dax/devices/dax1.0/size)" -ge 1073741824 ]'
drv() { basename "$(readlink /sys/bus/dax/devices/dax0.0/driver)" 2>/dev/null; }
if [ "$KLINE" = 6.12 ]; then
	t "bench: famfs_fuse loaded, dax0.0 on famfs_dax" famfs_load
	fsdrv=famfs_dax
else
	t "bench: famfs_fuse loaded, dax0.0 on device_dax" sh -c "
		insmod /lib/modules/famfs_fuse.ko && [ \"\$(basename \$(readlink /sys/bus/dax/devices/dax0.0/driver))\" = device_dax ]"
	fsdrv=fsdev_dax
fi
t "bench: mkfs + mount.famfs (famfs mode, dax0.0 on $fsdrv)" sh -c "mkfs.famfs -f /dev/dax0.0 && mount.famfs /dev/dax0.0 $M -o fallback=no && grep -q '^mode=famfs' $S"
t "bench: dax0.0 is on $fsdrv" test "$(drv)" = "$fsdrv"
t "bench: famfs creat $B (one extent)" sh -c "famfs creat -s $B $M/bench && famfs getmap $M/bench"
off=$(fmap_spec $M/bench | sed -n 's/^s:\([^:,]*\):[^,]*$/\1/p')
t "bench: the file is one extent" test -n "$off"

# Faults and daemon requests of a first touch of every page by mmap
# (fvt subtracts what reading .status costs).
t "bench: faults and daemon requests of a first mmap touch" sh -c "fvt touch $M/bench $S >/tmp/touch"
bench "RESULT vm_mmap_touch $(sed 's/^touch //; s/ x=[0-9]*//' /tmp/touch) requests_per_gib=$(sed -n 's/.*upcalls=\([0-9-]*\).*/\1/p' /tmp/touch)"
# Daemon requests of reading READ_SIZE with read(2), 1 MiB at a time,
# net of what reading .status costs; open and close are included.
a=$(requests); b=$(requests)
t "bench: read(2) of $READ_SIZE by dd" dd if=$M/bench of=/dev/null bs=1M count=$((READ_SIZE >> 20))
c=$(requests)
bench "RESULT vm_read_requests bytes=$READ_SIZE requests=$((c - b - (b - a))) requests_per_gib=$(((c - b - (b - a)) * (1 << 30) / READ_SIZE))"

# The raw node side only where dax0.0's node maps (famfs_dax, 6.12).
raw=-
[ "$fsdrv" != famfs_dax ] || raw=/dev/dax0.0
# shellcheck disable=SC2086
t "bench: fbench, $PASSES passes" sh -c "fbench -d /dev/dax1.0 $M/bench $raw $off $B $PASSES $SPECS >/tmp/fbench"
while read -r l; do bench "$l"; done </tmp/fbench
t "bench: unmount" umount $M
