# An NVDIMM (QEMU -device nvdimm backed by a file) becomes /dev/dax0.0.
plan 5
t "nvdimm region present" sh -c '. /tests/lib.sh; wait_for /sys/bus/nd/devices/region0 10'
t "ndctl makes namespace0.0 devdax" sh -c '
	ndctl create-namespace -f -e namespace0.0 --mode=devdax --align=2M ||
	ndctl create-namespace -r region0 --mode=devdax --align=2M'
t "/dev/dax0.0 appears" sh -c '. /tests/lib.sh; wait_for /dev/dax0.0 10 && test -c /dev/dax0.0'
t "dax0.0 is at least 512 MiB with 2 MiB alignment" sh -c '
	s=$(cat /sys/bus/dax/devices/dax0.0/size) a=$(cat /sys/bus/dax/devices/dax0.0/align)
	echo "size $s align $a"; [ "$s" -ge 536870912 ] && [ "$a" -eq 2097152 ]'
t "kernel log clean after devdax setup" dmesg_clean
