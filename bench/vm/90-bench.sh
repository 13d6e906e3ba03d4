# Guest part of bench/vm_mmap.sh (run by tests/vm/run.sh with
# VM_EXTRA_CASES=bench/vm): famfs mmap vs raw /dev/dax0.0 mmap of the
# same memory, interleaved passes; faults and daemon requests per GiB.
M=/mnt/famfs
S=$M/.meta/.status
export FAMFS_FUSED=/usr/bin/famfs-fused
B=1g
mkdir -p $M /opt/famfs
bench() { report "# bench: $*"; }

t "bench: famfs_fuse loaded, dax0.0 on famfs_dax" famfs_load
t "bench: mkfs + mount.famfs" sh -c "mkfs.famfs -f /dev/dax0.0 && mount.famfs /dev/dax0.0 $M -o fallback=no"
t "bench: famfs creat $B (one extent)" sh -c "famfs creat -s $B $M/bench && famfs getmap $M/bench"
off=$(famfs getmap $M/bench | awk '/offset/ {for (i=1;i<=NF;i++) if ($i=="offset") {print $(i+1); exit}}')
t "bench: faults and daemon requests while touching every page" sh -c "fvt touch $M/bench $S >/tmp/touch"
bench "$(cat /tmp/touch)"
t "bench: famfs vs raw, 20 A/B passes" sh -c "
	fvt bench $M/bench /dev/dax0.0 $off $B 20 >/tmp/bench"
while read -r l; do bench "$l"; done </tmp/bench
t "bench: unmount" umount $M
