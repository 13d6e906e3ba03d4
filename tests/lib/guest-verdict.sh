# Verdicts on a QEMU guest's run, shared by tests/vm/run.sh and
# tests/e2e/run.sh (sourced; POSIX sh) and tested on their own by
# tests/host/test_guest_verdict.py. tests/vm/run.sh also ships it into
# its guests (/tests/guest-verdict.sh) for their dmesg_clean.

# What a kernel prints when something went wrong in it: an oops, a BUG()
# (also "kernel BUG at"), a WARN(), a panic, a KASAN or UBSAN report, a
# general protection fault, and the stack any other report comes with.
# The one list: the hosts check consoles with it, and the VM guests'
# dmesg_clean (tests/vm/guest/lib.sh) their kernel log, from this file.
KERNEL_TROUBLE='Oops|BUG:|kernel BUG at|WARNING:|Kernel panic|KASAN|UBSAN:|general protection|Call Trace'

# kernel_trouble CONSOLE OUT [EXTRA]: the lines of CONSOLE that report
# kernel trouble (KERNEL_TROUBLE, or-ed with the ERE EXTRA) into OUT; true
# when there is any. A missing CONSOLE is no trouble (a guest that never
# booted fails its other checks).
kernel_trouble() {
	grep -E "$KERNEL_TROUBLE${3:+|$3}" "$1" >"$2" 2>/dev/null
}

# stage_finished STAGE LOG RCFILE: true when the stage runner wrote exit
# status 0 to RCFILE and LOG holds the stage's own last line, exactly
# "# stage STAGE done". A stage that stopped half way fails here even if
# every check it reached passed. Otherwise says why on stdout.
stage_finished() {
	_rc=$(cat "$3" 2>/dev/null)
	_done=$(grep -cx "# stage $1 done" "$2" 2>/dev/null)
	[ "$_rc" = 0 ] && [ "${_done:-0}" -eq 1 ] && return 0
	echo "stage exit ${_rc:-none}, ${_done:-0} done line"
	return 1
}
