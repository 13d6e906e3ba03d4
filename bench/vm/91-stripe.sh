# Guest part of bench/vm.sh's striping row (issue 31): a famfs over the
# single guest's three NVDIMMs (dax0.0 and the two of 1 GiB), a file
# striped over the three (one strip each) against a file of the same size
# on dax0.0 alone, both read sequentially by mmap in interleaved passes
# (fvt bench). TCG shows no memory-bandwidth gain, so the row shows only
# that striping costs nothing. bench/vm.sh puts KLINE, PASSES and
# STRIPE_MIB in front of this file.
M=/mnt/famfs
export FAMFS_FUSED=/usr/bin/famfs-fused
mkdir -p $M /opt/famfs
plan 6
bench() { report "# bench: $*"; }

devdax() {
	wait_for /sys/bus/nd/devices/region$1 10 || return 1
	[ -c /dev/dax$1.0 ] ||
		ndctl create-namespace -f -e namespace$1.0 --mode=devdax --align=2M ||
		return 1
	wait_for /dev/dax$1.0 10 && famfs_bind dax$1.0 device_dax
}
three() { devdax 1 && devdax 2 && famfs_load; }
t "stripe: three devdax devices, famfs_fuse loaded" three
t "stripe: mkfs.famfs over the three, mounted in famfs mode" sh -c "
	mkfs.famfs -f /dev/dax0.0 /dev/dax1.0 /dev/dax2.0 &&
	mount.famfs /dev/dax0.0 $M -o fallback=no && grep -q '^devices=3' $M/.meta/.status"
t "stripe: a ${STRIPE_MIB} MiB file striped over the three" sh -c "
	famfs creat -N 3 -C 2m -s ${STRIPE_MIB}m $M/striped &&
	famfs getmap $M/striped >/tmp/m; cat /tmp/m
	for d in 0 1 2; do grep -q \"dev \$d\" /tmp/m || exit 1; done"
t "stripe: the same size on dax0.0 alone" sh -c "
	famfs creat -s ${STRIPE_MIB}m $M/one && famfs getmap $M/one >/tmp/m1; cat /tmp/m1
	! grep -q 'dev [12]' /tmp/m1"
t "stripe: fvt bench, $PASSES passes" sh -c "
	fvt bench $M/striped $M/one 0 $((STRIPE_MIB << 20)) $PASSES >/tmp/sb; rc=\$?; cat /tmp/sb; exit \$rc"
r=$(sed -n 's/^seq-read ratio famfs\/raw median=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\) famfs-median-s=\([0-9.]*\) raw-median-s=\([0-9.]*\).*/ratio=\1 ratio_min=\2 ratio_max=\3 striped_s=\4 one_s=\5/p' /tmp/sb)
bench "RESULT vm_stripe3 mib=$STRIPE_MIB passes=$PASSES $r"
t "stripe: umount" umount $M
