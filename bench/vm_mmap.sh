#!/bin/sh
# famfs mmap vs raw /dev/dax mmap, in one QEMU guest (see tests/vm):
# a 1 GiB famfs file and the same device memory mapped through
# /dev/dax0.0 are read in alternating passes (A B, then B A), each pass a
# sequential read of the whole range and 2^20 random 64-byte reads; the
# median ratio (raw time / famfs time: 1.0 means famfs is as fast) and
# its range are printed, with the page faults and daemon requests per GiB
# of a first touch of every page.
#
#   bench/vm_mmap.sh        (20 passes of each kind over 1 GiB; the
#                           guest part is bench/vm/90-bench.sh)
#
# Under TCG absolute times mean little; the ratios and counts are the
# result. Needs what tests/vm/run.sh needs (root for the chroot build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
VM_TIMEOUT=${VM_TIMEOUT:-900} VM_EXTRA_CASES="$top/bench/vm" \
	"$top/tests/vm/run.sh" 20-devdax,90-bench >"$out" 2>&1 || {
	cat "$out"
	echo "bench: the guest run failed" >&2
	exit 1
}
sed -n 's/^# bench: //p' "$out"
