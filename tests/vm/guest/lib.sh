# Helpers for the VM test cases (sourced by /init, busybox sh).
# Results go to /dev/ttyS1 (the host's results file); the console
# (/dev/ttyS0) gets the commands' output for debugging.

T_N=0
T_FAIL=0
RES=/dev/ttyS1
[ -c "$RES" ] || RES=/dev/console

report() { echo "$*" >"$RES"; echo "famfs-vm: $*" >/dev/console; }
note() { report "# $*"; }

# t NAME CMD [ARG...]: one check; passes when CMD exits 0.
t() {
	local name=$1 rc
	shift
	T_N=$((T_N + 1))
	echo "famfs-vm: -- $T_N $name: $*" >/dev/console
	"$@" >/dev/console 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		report "ok $T_N - $name"
	else
		T_FAIL=$((T_FAIL + 1))
		report "not ok $T_N - $name (exit $rc)"
	fi
	return $rc
}

# wait_for PATH [SECONDS]: wait until PATH exists.
wait_for() {
	local i=0 n=${2:-10}
	while [ ! -e "$1" ]; do
		[ $i -ge $((n * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# dmesg_clean: no oops, BUG, WARNING or KASAN report in the kernel log.
dmesg_clean() {
	! dmesg | grep -E 'Oops|BUG:|WARNING:|KASAN|general protection|Call Trace'
}

finish() {
	report "# done $T_N"
	sync
	poweroff -f
}
