#!/bin/sh
# The kernel data path, measured in one QEMU guest on one kernel line (the
# tests/vm harness, with bench/vm/90-bench.sh as its case and
# bench/vm/fbench.c as its helper): a 1 GiB famfs file in famfs mode read
# by mmap and read(2) against a stock devdax mapping and, on 6.12, the
# same device memory through a raw /dev/dax0.0 mapping, in interleaved
# passes; page faults and daemon requests per GiB. A second guest
# (bench/vm/91-stripe.sh) reads a file striped over three NVDIMMs against
# one on a single device. Prints the guest's
# "RESULT ..." lines (bench/report.py reads them): groups vm_* on 6.12,
# vm73_* on 7.3, each line with kernel=LINE added.
#
#   bench/vm.sh [6.12|7.3]       default 6.12 (trixie's kernel); 7.3 is
#                                trixie-backports' (FAMFS_KLINE=7.3 of
#                                tests/vm/run.sh, cache FAMFS_CACHE_7_3)
#
# Environment: BENCH_PASSES (default 10), BENCH_OUT (default build-bench),
# BENCH_QUICK=1 for a short smoke run (3 passes, less data per pass).
# Under TCG absolute times mean little; the ratios and counts are the
# result. Needs what tests/vm/run.sh needs (root for the chroot build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${BENCH_OUT:-$top/build-bench}
line=${1:-6.12}
case $line in
6.12) group=vm_ sfx= ;;
7.3) group=vm73_ sfx=-7.3 ;;
*)
	echo "bench/vm.sh: no kernel line '$line' (6.12, 7.3)" >&2
	exit 2
	;;
esac
passes=${BENCH_PASSES:-10}
# Per side and pass: the sequential read covers seq_mib of the file; each
# random access size is read sweep_count times, but at most sweep_mib.
seq_mib=1024 sweep_count=262144 sweep_mib=128
if [ -n "${BENCH_QUICK:-}" ]; then
	passes=3 seq_mib=256 sweep_count=16384 sweep_mib=32
fi

# fbench SPECs: the sequential read in 1 MiB accesses, then random reads
# of 64 B .. 2 MiB (the plot; a64 is also the table's random 64 B read).
specs=$(awk -v seq="$seq_mib" -v cnt="$sweep_count" -v cap="$sweep_mib" 'BEGIN {
	printf "seq:seq:1m:%dm", seq
	for (a = 64; a <= 2097152; a *= 4) {
		b = a * cnt; if (b > cap * 1048576) b = cap * 1048576
		printf " a%d:rand:%d:%d", a, a, b
	}
	b = 2097152 * cnt; if (b > cap * 1048576) b = cap * 1048576
	printf " a2097152:rand:2097152:%d\n", b
}')

bin=$out/vm-bin$sfx cases=$out/vm-cases$sfx
mkdir -p "$bin" "$cases"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$bin/fbench" \
	"$top/bench/vm/fbench.c"
# FUSE's own ceiling in the guest: the server that does nothing, built in
# the trixie chroot against the guest's libfuse3, as the daemon is.
(cd "$top" && FAMFS_CHROOT_USERSPACE=1 scripts/trixie-chroot.sh sh -c '
	{ [ -f build-trixie/build.ninja ] ||
		meson setup build-trixie -Dtests=false -Dfuzz=false; } &&
	ninja -C build-trixie bench/famfs-bench-fuse-null') >"$out/null$sfx.log" 2>&1 || {
	cat "$out/null$sfx.log" >&2
	echo "bench/vm.sh: building famfs-bench-fuse-null for the guest failed" >&2
	exit 1
}
cp "$top/build-trixie/bench/famfs-bench-fuse-null" "$bin/"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -I"$top/daemon/cache" \
	-o "$bin/fcopy" "$top/bench/copy.c" "$top/daemon/cache/cache.c"
# The guest case with its settings in front.
{
	echo "KLINE=$line PASSES=$passes SPECS='$specs' READ_SIZE=$((seq_mib << 20))"
	cat "$top/bench/vm/90-bench.sh"
} >"$cases/90-bench.sh"

# Every NVDIMM's backing file is allocated before the guest boots: a
# device's memory exists before a file uses it. With sparse files the host
# allocates each page at the guest's first touch, which the famfs side
# pays for every new file (bench/README.md).
export VM_PMEM_PREALLOC=1
# A second NVDIMM for the stock device_dax baseline.
nv=$out/stock-pmem$sfx.img
rm -f "$nv"
truncate -s 1152M "$nv"
log=$out/vm$sfx.log
if ! FAMFS_KLINE=$line VM_TIMEOUT=${VM_TIMEOUT:-900} \
	VM_EXTRA_CASES="$cases" VM_EXTRA_BIN="$bin" VM_QEMU_ARGS="-object \
memory-backend-file,id=pmem1,share=on,mem-path=$nv,size=1152M,align=2M,prealloc=on \
-device nvdimm,memdev=pmem1,id=nvdimm1" \
	"$top/tests/vm/run.sh" 20-devdax,90-bench >"$log" 2>&1; then
	rm -f "$nv"
	cat "$log" >&2
	echo "bench/vm.sh: the guest run failed (log: $log)" >&2
	exit 1
fi
rm -f "$nv"
# The striping row: the single guest's own three NVDIMMs, no stock one.
{
	echo "KLINE=$line PASSES=$passes STRIPE_MIB=$((seq_mib * 3 / 4))"
	cat "$top/bench/vm/91-stripe.sh"
} >"$cases/91-stripe.sh"
if ! FAMFS_KLINE=$line VM_TIMEOUT=${VM_TIMEOUT:-900} \
	VM_EXTRA_CASES="$cases" VM_EXTRA_BIN="$bin" \
	"$top/tests/vm/run.sh" 20-devdax,91-stripe >>"$log" 2>&1; then
	cat "$log" >&2
	echo "bench/vm.sh: the striping guest run failed (log: $log)" >&2
	exit 1
fi
sed -n 's/^# bench: //p' "$log" | awk -v g="$group" -v k="$line" '
	$1 == "RESULT" { sub(/^vm_/, g, $2); print $0 " kernel=" k; next }
	{ print }'
