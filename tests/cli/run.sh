#!/bin/bash
# The famfs CLI tier: every subcommand on sparse image files (device mode),
# and, when the daemon and mount.famfs are built and FUSE is usable, the
# same through a mount in fallback mode.
#
# Prints one line per case ("ok - NAME", "not ok - NAME", or
# "ok - NAME # SKIP reason") and exits non-zero if any case failed.
# BUILD_DIR (default: build) is the meson build directory.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
FAMFS=$BUILD_DIR/daemon/tools/famfs
MKFS=$BUILD_DIR/daemon/tools/mkfs.famfs
FUSED=$BUILD_DIR/daemon/fused/famfs-fused
MOUNT_HELPER=$BUILD_DIR/daemon/mount/mount.famfs
PY=/usr/bin/python3
CMD_TIMEOUT=${CMD_TIMEOUT:-60}	# seconds any one command may take

if [ ! -x "$FAMFS" ] || [ ! -x "$MKFS" ]; then
	echo "not ok - cli tier: $FAMFS or $MKFS is missing (build with: meson setup $BUILD_DIR && ninja -C $BUILD_DIR)"
	exit 1
fi

T=$(mktemp -d /tmp/famfs-cli.XXXXXX)
MNT=$T/mnt
MNT2=$T/mnt2
mounted=false
mounted2=false
cleanup() {
	if $mounted2; then
		umount "$MNT2" 2>/dev/null || umount -l "$MNT2" 2>/dev/null
	fi
	if $mounted; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	for m in "$T/mnt3" "$T/ro" "$T/c-fused"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		fi
	done
	rm -rf "$T"
}
trap cleanup EXIT

export FAMFS_SYSTEM_UUID_FILE=$T/master-uuid	# we are the master
CLIENT_UUID=$T/client-uuid			# another host
$PY -c 'import uuid; print(uuid.uuid4())' >"$CLIENT_UUID"

failed=0
# The plan: every check and mcase call in this file and in the conformance
# section it sources runs once, and so do the two ok/notok lines of the
# mount and the umount.
echo "1..$(($(cat "$0" "$ROOT/tests/cli/conformance.sh" |
	grep -Ec '^[[:space:]]*(check|mcase) "') + 2))"
OUT=$T/out
ERR=$T/err

ok() { echo "ok - $1"; }
skip() { echo "ok - $1 # SKIP $2"; }
notok() {
	echo "# --- stdout:"; sed 's/^/#   /' "$OUT" | head -20
	echo "# --- stderr:"; sed 's/^/#   /' "$ERR" | head -20
	echo "not ok - $1${2:+ ($2)}"
	failed=$((failed + 1))
}

# run EXPECTED_RC CMD...: run, keeping output in $OUT and $ERR
run() {
	local want=$1
	shift
	[ "$1" = F ] && set -- "$FAMFS" "${@:2}"
	# A hung daemon must fail a case, not hang the tier.
	timeout -k 5 "$CMD_TIMEOUT" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
		echo "# $*: no answer within $CMD_TIMEOUT s (killed)"
		return 1
	fi
	# a sanitizer build may exit with the very status we expect
	if grep -q "Sanitizer\|runtime error:" "$ERR"; then
		echo "# $*: sanitizer report"
		return 1
	fi
	[ "$RC" -eq "$want" ] && return 0
	echo "# $*: exit $RC, expected $want"
	return 1
}
has_err() { grep -qi -- "$1" "$ERR" || { echo "# stderr lacks '$1'"; return 1; }; }
has_out() { grep -qi -- "$1" "$OUT" || { echo "# stdout lacks '$1'"; return 1; }; }

# gone PID SECONDS: wait until PID has exited (a zombie counts as gone)
gone() {
	local i=0
	while [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; do
		[ "$i" -ge $(($2 * 10)) ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

# case NAME BODY: BODY is a function name; it returns 0 for a pass.
# CLI_ONLY=BODY runs that case alone (the others print as skipped, and
# the plan holds): a case makes the state it needs (need, need_m).
check() {
	local name=$1
	shift
	if [ -n "${CLI_ONLY:-}" ] && [ "$1" != "$CLI_ONLY" ]; then
		skip "$name" "not selected (CLI_ONLY=$CLI_ONLY)"
		return
	fi
	if "$@"; then ok "$name"; else notok "$name"; fi
}

# need NAME FAMFS-ARGS...: NAME is in the log of $IMG (a file or a
# directory), or is made by "famfs FAMFS-ARGS": the state a case uses
# that an earlier case makes in a whole run.
need() {
	local name=$1 rc
	shift
	"$FAMFS" getmap -D "$IMG" -q "$name" >/dev/null 2>&1
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 21 ] && return 0
	"$FAMFS" "$@" >/dev/null 2>&1 || { echo "# need: cannot make $name"; return 1; }
}
# need_m PATH FAMFS-ARGS...: the same for a path in the mount
need_m() {
	local path=$1
	shift
	[ -e "$path" ] || "$FAMFS" "$@" >/dev/null 2>&1 ||
		{ echo "# need_m: cannot make $path"; return 1; }
}
need_f42() { need f42 creat -D "$IMG" -s 4m -r -S 42 f42; }
need_m1() { need_m "$MNT/m1" creat -s 6m -r -S 101 "$MNT/m1"; }
need_d1() { need d1 mkdir -D "$IMG" d1; }

# shim NAME WANT ARGS...: run WANT F ARGS with the LD_PRELOAD shim
# tests/cli/NAME.c (built here: the C compiler is one of the build's
# dependencies); the shim's settings come from the environment.
shim() {
	local name=$1
	shift
	if [ ! -f "$T/$name.so" ]; then
		cc -Wall -Wextra -Werror -shared -fPIC -o "$T/$name.so" \
			"$ROOT/tests/cli/$name.c" -ldl ||
			{ echo "# cannot build the $name shim"; return 1; }
	fi
	# An ASan build wants its runtime first; the shim comes first here.
	LD_PRELOAD=$T/$name.so \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		run "$@"
}

# flip_pread OFFSET ARGS...: run 1 F ARGS with pread(2) inverting the
# byte at file OFFSET (tests/cli/flip_pread.c).
flip_pread() {
	local at=$1
	shift
	FLIP_AT=$at shim flip_pread 1 F "$@"
}

newimg() { # newimg FILE SIZE
	rm -f "$1"
	truncate -s "$2" "$1" && "$MKFS" "$1" >/dev/null
}

IMG=$T/dev.img
newimg "$IMG" 256M || { echo "not ok - mkfs.famfs of a test image"; exit 1; }
F() { "$FAMFS" "$@"; }

# ---- command line --------------------------------------------------------

t_help() {
	run 0 F --help && has_out "creat" || return 1
	for c in mount status fsck check mkdir creat cp verify flush logplay \
		getmap chkread mkmeta clone; do
		run 0 F "$c" --help || return 1
		grep -q "Exit status" "$OUT" || { echo "# $c --help has no exit status"; return 1; }
	done
	run 0 F help creat && has_out "Usage: famfs creat"
}
check "famfs --help and every COMMAND --help (with exit status)" t_help

t_usage() {
	run 1 F || return 1
	run 3 F no-such-command && has_err "not a famfs command" || return 1
	for c in mkdir creat cp verify flush logplay chkread mount status; do
		run 2 F "$c" --no-such-option || return 1
	done
	run 9 F getmap || return 1		# upstream: EBADF
	run 22 F check || return 1		# upstream: EINVAL
	run 16 F fsck --bogus || return 1
	run 2 F creat -D "$IMG" -S 5 -s 2m x && has_err "needs -r" || return 1
	run 2 F creat -D "$IMG" -s 12q x && has_err "suffix" || return 1
	run 2 F creat -D "$IMG" -m 999 -s 2m x && has_err "octal" || return 1
	run 2 F creat -D "$IMG" -B 4 -s 2m x && has_err "need -N" || return 1
	run 2 F verify -D "$IMG" -f a && has_err "no seed" || return 1
	run 2 F --dryrun creat -s 2m x && has_err "only to logplay" || return 1
	run 2 F --device "$IMG" fsck "$IMG" && has_err "does not apply" || return 1
	run 2 F logplay --shadowtest x && has_err "shadow" || return 1
	run 2 F mount -F "$IMG" "$T" && has_err "standalone" || return 1
	run 2 F mount -p "$IMG" "$T" && has_err "default_permissions"
}
check "usage errors give the documented exit codes" t_usage

# Numbers: one parser for every tool; nothing wraps, overflows or gives a
# message about another option; a usage error is one line and a pointer
# to --help, not the whole help.
t_numbers() {
	run 1 F creat -D "$IMG" -s 18446744073709551615 huge &&
		has_err "too large" || return 1
	run 2 F creat -D "$IMG" -s 18446744073709551616 huge &&
		has_err '-s: "18446744073709551616" is too large' || return 1
	run 2 F creat -D "$IMG" -r -S -5 -s 2m neg &&
		has_err '-S: "-5" is not a number' || return 1
	run 2 F creat -D "$IMG" -s -2m neg && has_err '"-2m" is not a size' || return 1
	run 2 F creat -D "$IMG" -N 0 -s 2m nstrips0 &&
		has_err '-N (strips): "0" is out of range (1 to 16)' || return 1
	run 2 F creat -D "$IMG" -t 4294967296 -s 2m many &&
		has_err '-t: "4294967296" is too large (at most 4294967295)' || return 1
	run 2 F verify -D "$IMG" -S -1 -f f42 && has_err '"-1" is not a number' || return 1
	run 2 F creat -D "$IMG" --bogus || return 1
	has_err "Try 'famfs creat --help'" || return 1
	grep -q "Usage:" "$ERR" && { echo "# the whole help after a usage error"; return 1; }
	[ "$(wc -l <"$ERR")" -le 2 ] || { echo "# more than two lines"; return 1; }
	run 2 F creat -D "$IMG" -N 0 -s 2m x || return 1
	grep -q "Usage:" "$ERR" && { echo "# the whole help after a bad -N"; return 1; }
	truncate -s 64m "$T/num.img" || return 1
	run 2 "$MKFS" -l 1 "$T/num.img" &&
		has_err "power of two of at least 8 MiB" &&
		has_err "Try 'mkfs.famfs --help'" || return 1
	run 2 "$MKFS" -l -8m "$T/num.img" || return 1
	run 2 "$MKFS" || return 1
	has_err "Try 'mkfs.famfs --help'" || return 1
	grep -q "Usage:" "$ERR" && { echo "# mkfs.famfs printed its whole help"; return 1; }
	return 0
}
check "numbers: overflow, negatives, -N 0 and usage errors say what is wrong in one line (exit 2)" t_numbers

t_uuid_dirs() {
	truncate -s 64m "$T/uuid.img" &&
		FAMFS_SYSTEM_UUID_FILE=$T/no/such/dirs/system_uuid run 0 "$MKFS" "$T/uuid.img" &&
		grep -Eqx '[0-9a-f-]{36}' "$T/no/such/dirs/system_uuid"
}
check "mkfs.famfs creates every missing directory of the system UUID file (a host without /opt)" t_uuid_dirs

# ---- device mode: creat, verify, mkdir -----------------------------------

t_creat_verify() {
	run 0 F creat -D "$IMG" -s 4m -r -S 42 f42 || return 1
	run 0 F verify -D "$IMG" -S 42 -f f42 && has_out "all 4194304 bytes match" || return 1
	run 1 F verify -D "$IMG" -S 43 -f f42 && has_err "mismatch at offset 0" || return 1
	run 0 F verify -D "$IMG" -S 42 -f /f42 -q || return 1
	[ ! -s "$OUT" ] || { echo "# -q printed something"; return 1; }
	# an odd size: the pattern's last word is partial
	run 0 F --device "$IMG" creat -s 1000003 -r -S 9 odd || return 1
	run 0 F verify -D "$IMG" -S 9 odd
}
check "creat -r -S / verify -S round trip on a device image" t_creat_verify

# The fill must be byte-identical to upstream's (xoroshiro128+, splitmix64
# seeding, low 32 bits per word) so files verify across tool families.
t_pattern_compat() {
	need_f42 || return 1
	run 0 F getmap -D "$IMG" f42 || return 1
	off=$(awk '/offset/ { sub("0x", "", $4); print $4; exit }' "$OUT")
	$PY - "$IMG" "$off" <<'EOF'
import struct, sys
M = (1 << 64) - 1
def splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & M
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return x, z ^ (z >> 31)
def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M
x, s0 = splitmix(42)
x, s1 = splitmix(x)
want = b""
for _ in range(1024):
    r = (s0 + s1) & M
    s1 ^= s0
    s0 = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M)
    s1 = rotl(s1, 36)
    want += struct.pack("<I", r & 0xffffffff)
with open(sys.argv[1], "rb") as f:
    f.seek(int(sys.argv[2], 16))
    got = f.read(len(want))
sys.exit(0 if got == want else 1)
EOF
}
check "creat -r writes upstream's pattern (checked by an independent implementation)" t_pattern_compat

t_creat_exists() {
	need_f42 || return 1
	run 0 F creat -D "$IMG" -s 4m f42 || return 1		# same size: no-op
	run 0 F creat -D "$IMG" f42 || return 1			# no size: no-op
	run 0 F verify -D "$IMG" -S 42 -f f42 || return 1	# untouched
	run 1 F creat -D "$IMG" -s 8m f42 && has_err "exists with size" || return 1
	run 1 F creat -D "$IMG" newfile && has_err "size > 0" || return 1
	run 1 F creat -D "$IMG" -s 2m nodir/file && has_err "does not exist" || return 1
	run 1 F creat -D "$IMG" -s 2m f42/under && has_err "not a directory"
}
check "creat: existing file of the same size is a no-op; other size, no size, no parent fail" t_creat_exists

# cp -r as root on a tree a user controls: a symlink to a file only root
# may read is skipped with a warning (famfs has no symbolic links), never
# followed; a symlink loop makes nothing; -L follows, and stops at a loop.
t_cp_symlinks() {
	local u=$T/utree
	rm -rf "$u" && mkdir -p "$u/sub" || return 1
	echo secret >"$T/secret" && chmod 600 "$T/secret" || return 1
	echo hello >"$u/a.txt" && echo deeper >"$u/sub/b.txt" || return 1
	ln -s "$T/secret" "$u/innocent.txt" && ln -s . "$u/loop" || return 1
	chown -R -h 65534:65534 "$u" || return 1
	run 0 F cp -r -D "$IMG" "$u" /symtree || return 1
	grep -qxF "famfs cp: warning: $u/innocent.txt is a symbolic link; skipped (famfs has no symbolic links; -L copies what it points to)" "$ERR" ||
		{ echo "# no warning for innocent.txt"; return 1; }
	has_err "$u/loop is a symbolic link; skipped" || return 1
	run 0 F getmap -D "$IMG" -q symtree/a.txt || return 1
	run 0 F getmap -D "$IMG" -q symtree/sub/b.txt || return 1
	run 2 F getmap -D "$IMG" -q symtree/innocent.txt || return 1
	run 2 F getmap -D "$IMG" -q symtree/loop || return 1
	# a symlink named on the command line with -r is not followed either
	run 0 F cp -r -D "$IMG" "$u/innocent.txt" /symtree2 &&
		has_err "is a symbolic link; skipped" || return 1
	run 2 F getmap -D "$IMG" -q symtree2/innocent.txt || return 1
	# -L follows symlinks, and stops at a directory loop
	run 1 F cp -r -L -D "$IMG" "$u" /symtreeL || return 1
	grep -qxF "famfs cp: $u/loop: a directory loop (it is $u, on the path being copied); not copied" "$ERR" ||
		{ echo "# no loop message"; return 1; }
	run 0 F getmap -D "$IMG" -q symtreeL/innocent.txt || return 1
	run 2 F getmap -D "$IMG" -q symtreeL/loop/a.txt || return 1
}
check "cp -r skips symlinks with a warning (never publishes their target), -L follows and stops at loops" t_cp_symlinks

# A source swapped for a symbolic link to a root-only file between cp's
# stat and its open (tests/cli/swap_open.c), inside a tree and named with
# -r: the open refuses to follow it (O_NOFOLLOW) and says so, the rest is
# copied; named without -r (followed): the swap is seen and refused.
t_cp_swapped_for_symlink() {
	local u=$T/swaptree
	rm -rf "$u" && mkdir -p "$u/sub" || return 1
	echo secret >"$T/secret" && chmod 600 "$T/secret" || return 1
	head -c 9000 /dev/urandom >"$u/sub/victim" && echo x >"$u/other" ||
		return 1
	head -c 9000 /dev/urandom >"$u/alone" || return 1
	SWAP_PATH=$u/sub/victim SWAP_TARGET=$T/secret \
		shim swap_open 1 F cp -r -D "$IMG" "$u" /swapped || return 1
	grep -qxF "famfs cp: cannot open $u/sub/victim: it became a symbolic link" "$ERR" ||
		{ echo "# no 'became a symbolic link' for the tree's file"; return 1; }
	[ -L "$u/sub/victim" ] || { echo "# the shim did not swap"; return 1; }
	run 0 F getmap -D "$IMG" -q swapped/other || return 1
	# named with -r, a file is opened as the tree's files are
	SWAP_PATH=$u/alone SWAP_TARGET=$T/secret \
		shim swap_open 1 F cp -r -D "$IMG" "$u/alone" /alone || return 1
	grep -qxF "famfs cp: cannot open $u/alone: it became a symbolic link" "$ERR" ||
		{ echo "# no 'became a symbolic link' for a file named with -r"; return 1; }
	[ -L "$u/alone" ] || { echo "# the shim did not swap"; return 1; }
	# without -r a named link is followed (as GNU cp): the file opened is
	# not the one cp looked at, and that is refused
	rm -f "$u/alone" && head -c 9000 /dev/urandom >"$u/alone" || return 1
	SWAP_PATH=$u/alone SWAP_TARGET=$T/secret \
		shim swap_open 1 F cp -D "$IMG" "$u/alone" /alone2 || return 1
	grep -qxF "famfs cp: $u/alone was replaced while being copied; not copied" "$ERR" ||
		{ echo "# no 'was replaced' for a file named without -r"; return 1; }
}
check "cp refuses a source swapped for a symbolic link between its stat and its open" t_cp_swapped_for_symlink

# One damaged entry in the middle of the log hides every later one; fsck
# --repair voids it and keeps every intact entry after it.
t_repair_middle() {
	local img=$T/repair.img
	newimg "$img" 64M || return 1
	run 0 F mkdir -D "$img" d || return 1
	run 0 F creat -D "$img" -s 2m -r -S 1 d/f1 || return 1	# entry 1
	run 0 F creat -D "$img" -s 2m -r -S 2 d/f2 || return 1	# entry 2
	run 0 F creat -D "$img" -s 2m -r -S 3 d/f3 || return 1	# entry 3
	# flip one byte of entry 1's path (log at 2 MiB, 48-byte header, 544-byte entries)
	$PY - "$img" $((2097152 + 48 + 544 + 20)) <<'EOF2' || return 1
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2]))
    f.write(bytes([b[0] ^ 0x01]))
EOF2
	run 1 F fsck "$img" && has_out "log entry 1: CRC mismatch" || return 1
	run 1 F fsck --repair "$img" || return 1
	grep -qxF "famfs fsck: repaired: voided 1 damaged entry (index 1) before intact ones; dropped 0 at the end of the log" "$ERR" ||
		{ echo "# repair message"; return 1; }
	run 0 F fsck "$img" && has_out "1 damaged entry voided by fsck --repair" &&
		has_out "result:      clean" || return 1
	run 0 F verify -D "$img" -S 2 -f d/f2 || return 1
	run 0 F verify -D "$img" -S 3 -f d/f3 || return 1
	run 2 F getmap -D "$img" -q d/f1 || return 1
	run 0 F logplay -D "$img" -v "$img" && has_out "void" || return 1
	# the log takes appends again, after the intact entries
	run 0 F creat -D "$img" -s 2m -r -S 4 d/f4 || return 1
	run 0 F verify -D "$img" -S 3 -f d/f3 && run 0 F fsck "$img"
}
check "fsck --repair voids a damaged entry in the middle of the log; the intact ones after it stay" t_repair_middle

# Control characters in names: the CLI refuses them; a log that holds one
# (forged here) is flagged by fsck and every tool prints the name escaped,
# so no name can move the cursor or fake a "result: clean" line.
t_control_chars() {
	local img=$T/ctl.img esc=$'\e' bad=$'bad\e[31mname' fake=$'x\n  result:      clean'
	newimg "$img" 64M || return 1
	run 1 F creat -D "$img" -s 2m "$bad" || return 1
	grep -qxF "famfs creat: $img:/bad\\x1b[31mname: a name may not contain control characters" "$ERR" ||
		{ echo "# creat message"; return 1; }
	run 1 F mkdir -D "$img" "$fake" &&
		has_err "a name may not contain control characters" || return 1
	grep -q "$esc" "$ERR" && { echo "# raw escape in a message"; return 1; }
	mkdir -p "$T/ctlsrc" && echo hi >"$T/ctlsrc/$bad" || return 1
	run 1 F cp -r -D "$img" "$T/ctlsrc" /ctl &&
		has_err "a name may not contain control characters" || return 1
	grep -q "$esc" "$ERR" && { echo "# raw escape in a cp message"; return 1; }
	run 0 F creat -D "$img" -s 2m goodname || return 1
	run 1 F clone -D "$img" goodname "$bad" &&
		has_err "a name may not contain control characters" || return 1
	# forge entry 0's name into one with an escape sequence and a newline
	$PY - "$img" <<'EOF2' || return 1
import struct, sys, zlib
off = 2097152 + 48 + 544  # entry 1 (entry 0 is the directory cp made)
with open(sys.argv[1], "r+b") as f:
    f.seek(off); e = bytearray(f.read(544))
    assert e[40:48] == b"goodname"
    name = b"g\x1b[31m\n  result:      clean"
    e[40:40 + 80] = name + bytes(80 - len(name))
    struct.pack_into("<Q", e, 536, zlib.crc32(bytes(e[:536])))
    f.seek(off); f.write(e)
EOF2
	run 0 F fsck "$img" || return 1
	has_out 'warning:     1 name contains control characters, first in log entry 1: "g\\x1b\[31m\\n  result:      clean"' || return 1
	[ "$(grep -c 'result:' "$OUT")" -eq 2 ] && [ "$(grep -c '^  result:' "$OUT")" -eq 1 ] ||
		{ echo "# a faked result line"; return 1; }
	grep -q "$esc" "$OUT" && { echo "# raw escape from fsck"; return 1; }
	run 0 F fsck -v "$img" && ! grep -q "$esc" "$OUT" || return 1
	[ "$(grep -c '^  result:' "$OUT")" -eq 1 ] || return 1
	run 0 F fsck --json "$img" && has_out '"names_with_control_characters":1' || return 1
	run 0 F logplay -D "$img" -v "$img" && has_out 'g\\x1b\[31m\\n' || return 1
	grep -q "$esc" "$OUT" && { echo "# raw escape from logplay"; return 1; }
	run 0 F getmap -D "$img" $'g\e[31m\n  result:      clean' && has_out 'g\\x1b\[31m\\n' || return 1
	grep -q "$esc" "$OUT" && { echo "# raw escape from getmap"; return 1; }
	return 0
}
check "control characters in names: refused by creat/mkdir/cp/clone, flagged by fsck, escaped on output" t_control_chars

t_mkdir() {
	need_f42 || return 1
	run 0 F mkdir -D "$IMG" d1 || return 1
	run 1 F mkdir -D "$IMG" d1 && has_err "exists" || return 1
	run 0 F mkdir -D "$IMG" -p d1 || return 1
	run 1 F mkdir -D "$IMG" a/b/c && has_err "does not exist" || return 1
	run 0 F mkdir -D "$IMG" -p -m 0700 -u 1234 -g 99 a/b/c -v || return 1
	has_out "created.*a/b/c" || return 1
	run 1 F mkdir -D "$IMG" -p f42/x && has_err "not a directory" || return 1
	run 1 F mkdir -D "$IMG" ../x && has_err '"\.\."' || return 1
	run 1 F mkdir -D "$IMG" .meta && has_err "metadata" || return 1
	run 0 F logplay -D "$IMG" -v || return 1
	grep -Eq "mkdir +a/b/c +0700 1234:99" "$OUT" || { echo "# mode/owner not logged"; return 1; }
}
check "mkdir and mkdir -p (mode, owner), errors for exists, no parent, file in path" t_mkdir

t_interleave() {
	run 0 F creat -D "$IMG" -s 10m -N 3 -B 6 -C 2m -r -S 77 il3 || return 1
	run 0 F getmap -D "$IMG" il3 && has_out "3 strips, chunk size 2097152" || return 1
	run 0 F verify -D "$IMG" -S 77 -f il3 || return 1
	run 0 F creat -D "$IMG" -s 8m -N 2 -C 4m -r -S 78 il2 || return 1
	run 0 F verify -D "$IMG" -S 78 il2 || return 1
	run 1 F creat -D "$IMG" -s 8m -N 2 -C 3m bad1 && has_err "power of two" || return 1
	run 1 F creat -D "$IMG" -s 8m -N 4 -B 2 bad2 && has_err "buckets" || return 1
	run 2 F creat -D "$IMG" -s 8m -N 17 bad3 && has_err "strips"
}
check "interleaved creat (-N -B -C): map, pattern round trip, bad layouts refused" t_interleave

t_multi() {
	run 0 F creat -D "$IMG" -M m1,2m,11 -M m2,3m -M m3,1m,13 -t 2 || return 1
	has_out "3 of 3" || return 1
	run 0 F verify -D "$IMG" -m m1,11 -m m3,13 -t 2 && has_out "2 of 2" || return 1
	run 1 F verify -D "$IMG" -m m1,11 -m m3,14 &&
		has_err "m3: mismatch at offset 0" && has_out "1 of 2 files match"
}
check "creat -M / verify -m (several files, threads)" t_multi

# ---- device mode: cp ------------------------------------------------------

SRC=$T/src
mk_tree() {
	mkdir -p "$SRC/sub/deeper" "$SRC/empty-dir"
	head -c 3000001 /dev/urandom >"$SRC/big"
	head -c 17 /dev/urandom >"$SRC/tiny"
	head -c 2097152 /dev/urandom >"$SRC/sub/exact2m"
	head -c 12345 /dev/urandom >"$SRC/sub/deeper/leaf"
	chmod 0600 "$SRC/sub/deeper/leaf"
}
mk_tree

t_cp_file() {
	need_d1 || return 1
	run 0 F cp -D "$IMG" "$SRC/big" big.copy || return 1
	run 0 F cp -D "$IMG" -c "$SRC/big" big.copy || return 1
	run 0 F cp -D "$IMG" "$SRC/big" "$SRC/tiny" d1 || return 1	# into a dir
	run 0 F cp -D "$IMG" -c "$SRC/tiny" d1/tiny || return 1
	run 0 F cp -D "$IMG" "$SRC/big" big.copy || return 1		# restart: same size
	run 1 F cp -D "$IMG" "$SRC/tiny" big.copy && has_err "exists with size" || return 1
	# one byte changed (to X, or to Y where the random byte is an X)
	local c=X
	[ "$(dd if="$SRC/big" bs=1 skip=2999999 count=1 2>/dev/null)" = X ] && c=Y
	cp "$SRC/big" "$T/changed" && printf '%s' "$c" | dd of="$T/changed" bs=1 seek=2999999 conv=notrunc 2>/dev/null
	run 1 F cp -D "$IMG" -c "$T/changed" big.copy && has_err "differs" || return 1
	run 1 F cp -D "$IMG" "$SRC/big" "$SRC/tiny" nodir && has_err "existing directory"
}
check "cp a file, into a directory, rerun over a same-size copy, cp -c compares" t_cp_file

t_cp_r() {
	need_f42 || return 1
	run 0 F cp -D "$IMG" -r "$SRC" tree -v || return 1
	run 0 F cp -D "$IMG" -c -r "$SRC" tree || return 1
	run 0 F logplay -D "$IMG" -v || return 1
	grep -Eq "file +tree/sub/deeper/leaf .* 0600" "$OUT" || { echo "# mode of leaf not kept"; return 1; }
	grep -Eq "mkdir +tree/empty-dir" "$OUT" || return 1
	# upstream's -r: sources' contents go into DEST, also when it exists
	run 0 F cp -D "$IMG" -r "$SRC/sub" tree || return 1
	run 0 F cp -D "$IMG" -c "$SRC/sub/exact2m" tree/exact2m || return 1
	run 1 F cp -D "$IMG" "$SRC" notree && has_err "without -r" || return 1
	run 1 F cp -D "$IMG" -r "$SRC" f42 && has_err "not a directory"
}
check "cp -r of a directory tree (modes kept, contents compared)" t_cp_r

t_owner_opts() ( # a subshell: the umask stays here
	# -m is reduced by the umask, as upstream's creat and cp do
	umask 022
	run 0 F creat -D "$IMG" -s 2m -m 0660 -u 1234 -g 99 owned.c || return 1
	run 0 F cp -D "$IMG" --mode=0604 --uid=7 --gid=8 "$SRC/tiny" owned.cp ||
		return 1
	run 2 F cp -D "$IMG" -u nobody "$SRC/tiny" owned.bad && has_err "-u" ||
		return 1
	run 0 F logplay -D "$IMG" -v || return 1
	grep -Eq "file +owned.c .* 0640 1234:99" "$OUT" &&
		grep -Eq "file +owned.cp .* 0604 7:8" "$OUT" ||
		{ echo "# creat/cp mode or owner not logged"; return 1; }
)
check "creat and cp -m/-u/-g: mode (less the umask) and owner logged" t_owner_opts

t_cp_interleaved() {
	run 0 F cp -D "$IMG" -N 2 -B 4 "$SRC/big" big.il || return 1
	run 0 F getmap -D "$IMG" big.il && has_out "2 strips" || return 1
	run 0 F cp -D "$IMG" -c "$SRC/big" big.il
}
check "cp with an interleaved layout" t_cp_interleaved

t_cp_empty() {
	: >"$T/empty"
	run 1 F cp -D "$IMG" "$T/empty" empty && has_err "empty file"
}
check "cp of an empty file fails (famfs files have a size)" t_cp_empty

# ---- device mode: getmap, flush, chkread, fsck ------------------------------

t_getmap() {
	need_f42 && need_d1 || return 1
	run 0 F getmap -D "$IMG" f42 && has_out "extents: 1" || return 1
	run 0 F getmap -D "$IMG" -q f42 || return 1
	[ ! -s "$OUT" ] || return 1
	run 2 F getmap -D "$IMG" nosuch || return 1
	run 21 F getmap -D "$IMG" d1 || return 1
	run 1 F getmap /etc/hostname && has_err "not in a mounted famfs" || return 1
	run 2 F getmap "$T/nosuchfile" || return 1
	run 21 F getmap /etc || return 1
	run 2 F getmap -c -D "$IMG" nosuch f42
}
check "getmap: map, -q, upstream's exit codes (0 1 2 21)" t_getmap

t_flush_chkread() {
	need_f42 && need big.copy cp -D "$IMG" "$SRC/big" big.copy || return 1
	run 0 F flush -D "$IMG" -v f42 big.copy && has_out "flushed" || return 1
	run 1 F flush -D "$IMG" nosuch && has_err "nosuch: no such file in the log" ||
		return 1
	run 0 F chkread "$SRC/big" && has_out "agree" || return 1
	run 1 F chkread "$T/nosuchfile" && has_err "nosuchfile: No such file" ||
		return 1
	# read(2) and mmap disagreeing: the shim inverts one byte of what
	# pread returns; chkread must fail (1) and name that byte.
	flip_pread 2999999 chkread "$SRC/big" &&
		has_err "big: read and mmap differ at byte 2999999" || return 1
	! grep -qi agree "$OUT" || { echo "# chkread said agree"; return 1; }
}
check "flush on a device; chkread on a file, and on one whose read(2) and mmap differ (exit 1)" t_flush_chkread

t_fsck_after() {
	run 0 F fsck "$IMG" && has_out "clean"
}
check "fsck is clean after all of the above" t_fsck_after

# ---- mkfs.famfs and fsck: every documented exit ------------------------------

t_mkfs_exits() {
	local d=$T/mkfs
	mkdir -p "$d" || return 1
	run 1 "$MKFS" "$d/missing.img" && has_err "No such file" || return 1
	run 1 "$MKFS" "$d" && has_err "is a directory" || return 1
	truncate -s 8M "$d/small.img"
	run 1 "$MKFS" "$d/small.img" && has_err "too small" || return 1
	truncate -s 65M "$d/odd.img"
	run 1 "$MKFS" "$d/odd.img" && has_err "not a multiple of the 2 MiB" || return 1
	truncate -s 64M "$d/a.img"
	run 0 "$MKFS" "$d/a.img" || return 1
	run 1 "$MKFS" "$d/a.img" && has_err "holds a famfs; use -f to overwrite it" || return 1
	run 2 "$MKFS" --no-such-option "$d/a.img" || return 1
	run 2 "$MKFS" || return 1
	# -l: a power of two of at least 8 MiB
	run 2 "$MKFS" -f -l 3m "$d/a.img" && has_err "power of two" || return 1
	run 2 "$MKFS" -f -l 4m "$d/a.img" && has_err "at least 8 MiB" || return 1
	run 0 "$MKFS" -f -l 16m "$d/a.img" && has_out "log: *16 MiB, room for 30840 entries" ||
		return 1
	run 0 F fsck --json "$d/a.img" || return 1
	$PY -c 'import json,sys; l=json.load(open(sys.argv[1]))["log"]; sys.exit(not (l["bytes"] == 16 << 20 and l["slots"] == 30840))' "$OUT" ||
		{ echo "# fsck does not see the 16 MiB log"; return 1; }
	run 1 "$MKFS" -l 16m -f "$d/small.img" && has_err "too small" || return 1
	# -k: needs -f; then nothing takes the device for a famfs
	run 2 "$MKFS" -k "$d/a.img" && has_err "add -f" || return 1
	run 0 F fsck "$d/a.img" || return 1	# -k without -f changed nothing
	run 0 "$MKFS" -f -k "$d/a.img" && has_out "invalidated" || return 1
	run 2 F fsck "$d/a.img" && has_out "NOT A VALID FAMFS" || return 1
	run 1 F logplay -D "$d/a.img" && has_err "no famfs on this device" || return 1
	run 0 "$MKFS" "$d/a.img"	# an invalidated superblock is no famfs
}
check "mkfs.famfs: missing, directory, too small, odd size, existing famfs (1), usage and -k without -f (2), -l, -k" t_mkfs_exits

# corrupt IMG ENTRY: flip bytes in the path of log entry ENTRY
corrupt() {
	printf '\377\377\377\377' | dd of="$1" bs=1 conv=notrunc \
		seek=$((2 * 1048576 + 48 + $2 * 544 + 40)) 2>/dev/null
}

t_fsck_exits() {
	local d=$T/fsck
	mkdir -p "$d" && newimg "$d/t.img" 64M || return 1
	run 0 F mkdir -D "$d/t.img" d0 d1 d2 || return 1
	cp "$d/t.img" "$d/m.img" || return 1
	# 2: no famfs; 8: could not check; 16: usage
	truncate -s 64M "$d/zero.img"
	run 2 F fsck "$d/zero.img" && has_out "no famfs superblock" || return 1
	run 2 F fsck --json "$d/zero.img" || return 1
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["exit_code"] != 2)' "$OUT" || return 1
	run 8 F fsck "$d/missing.img" && has_err "No such file" || return 1
	run 8 F fsck /dev/null && has_err "not a dax device" || return 1
	run 16 F fsck || return 1
	# 1: a torn tail (the last entry damaged) ...
	corrupt "$d/t.img" 2
	run 1 F fsck "$d/t.img" && has_out "log entry 2: CRC mismatch" && has_out "ERRORS FOUND" ||
		return 1
	# ... a client may not repair it ...
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" fsck --repair "$d/t.img" &&
		has_err "only the master host may repair" || return 1
	run 1 F fsck "$d/t.img" && has_out "3 of 15420 entries" || return 1
	# ... the master drops it (1: found and corrected), then fsck is clean
	run 1 F fsck --repair "$d/t.img" && has_err "dropped 1 damaged entry" &&
		has_out "result: *clean" || return 1
	run 0 F fsck "$d/t.img" && has_out "2 of 15420 entries" || return 1
	run 0 F mkdir -D "$d/t.img" again || return 1	# appends again
	run 0 F fsck "$d/t.img" && has_out "3 directories" || return 1
	# Damage followed by a valid entry is no torn append: --repair voids
	# it in place (1: found and corrected) and keeps the entries after it.
	corrupt "$d/m.img" 1
	run 1 F fsck "$d/m.img" && has_out "log entry 1" || return 1
	run 1 F fsck --repair "$d/m.img" && has_err "voided 1 damaged entry (index 1)" || return 1
	run 0 F fsck "$d/m.img" && has_out "3 of 15420 entries" && has_out "result: *clean"
}
check "fsck exits 0, 1, 2, 8 and 16; --repair drops a torn tail (master only), voids damage in the middle" t_fsck_exits

# Values that parse as numbers but mean nothing sensible are refused: a
# bucket count that would allocate 192 GiB, a timeout of nan or inf.
t_absurd_numbers() {
	local img=$T/absurd.img mp=$T/absurd-mnt t
	newimg "$img" 64M && mkdir -p "$mp" || return 1
	run 16 F fsck -B 4294967295 "$img" &&
		has_err "the device has only 32 allocation units" || return 1
	grep -qi "out of memory" "$ERR" && { echo "# out of memory"; return 1; }
	run 0 F fsck -B 32 "$img" && has_out "Bitmap range 31" || return 1
	[ -x "$FUSED" ] || { echo "# $FUSED not built"; return 1; }
	for t in nan -nan inf INFINITY 1e999 -1; do
		if ! run 1 "$FUSED" -o daxdev="$img",timeout=$t "$mp" ||
			! has_err "bad timeout=$t"; then
			mountpoint -q "$mp" && umount "$mp"
			return 1
		fi
	done
	run 1 "$FUSED" -o daxdev="$img",timeout=0x1p3000 "$mp" || return 1
	! mountpoint -q "$mp"
}
check "fsck -B more buckets than allocation units is a usage error (16); famfs-fused refuses timeout=nan, inf, -1" t_absurd_numbers

t_logplay_device() {
	local d=$T/logplay
	mkdir -p "$d" && newimg "$d/l.img" 64M || return 1
	run 0 F mkdir -D "$d/l.img" x y || return 1
	run 0 F logplay -D "$d/l.img" -v && has_out "mkdir *x" && has_out "mkdir *y" &&
		has_out "2 entries" || return 1
	corrupt "$d/l.img" 0
	run 1 F logplay -D "$d/l.img" && has_err "damaged at entry 0" && has_err "fsck"
}
check "logplay -D lists the log; a damaged log exits 1 and names the entry" t_logplay_device

# ---- roles and limits ------------------------------------------------------

t_client() {
	need_f42 && need big.copy cp -D "$IMG" "$SRC/big" big.copy || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" creat -D "$IMG" -s 2m c1 || return 1
	has_err "client" || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" mkdir -D "$IMG" c2 && has_err "client" || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" cp -D "$IMG" "$SRC/tiny" c3 && has_err "client" || return 1
	# reading is fine on a client
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 0 "$FAMFS" verify -D "$IMG" -S 42 f42 || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 0 "$FAMFS" getmap -D "$IMG" f42 || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 0 "$FAMFS" cp -D "$IMG" -c "$SRC/big" big.copy
}
check "a client host cannot creat, mkdir or cp, but can verify, getmap, cp -c" t_client

t_clone() {
	local img=$T/clone.img
	newimg "$img" 64M || return 1
	run 0 F creat -D "$img" -s 4m -m 0600 -u 5 -g 6 src || return 1
	run 0 F mkdir -D "$img" dir || return 1
	run 0 F clone -D "$img" src dir/copy && has_err "cross-linked" || return 1
	run 0 F logplay -D "$img" -v || return 1
	grep -Eq "file +dir/copy .* 4 MiB +0600 5:6" "$OUT" ||
		{ echo "# the clone's size, mode or owner differ"; return 1; }
	run 1 F fsck "$img" && has_out '"dir/copy").*overlaps' || return 1
	run 1 F clone -D "$img" dir again && has_err "directory" || return 1
	run 1 F clone -D "$img" missing again && has_err "does not exist" || return 1
	run 1 F clone -D "$img" src dir/copy && has_err "exists" || return 1
	run 2 F clone -D "$img" src || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" clone -D "$img" src c &&
		has_err "client"
}
check "clone: a second file over a file's memory; fsck reports it; bad sources refused" t_clone

t_enospc() {
	local img=$T/small.img
	newimg "$img" 64M || return 1
	run 1 F creat -D "$img" -s 100m toobig && has_err "no.*space\|not.*fit\|free run" || return 1
	run 0 F creat -D "$img" -s 40m fits || return 1
	run 0 F creat -D "$img" -s 12m fits2 || return 1
	# 2 MiB are left: a 3 MB file needs 4
	run 1 F cp -D "$img" "$SRC/big" big && has_err "space\|fit\|free" || return 1
	run 0 F cp -D "$img" "$SRC/tiny" tiny || return 1
	run 0 F fsck "$img"
}
check "ENOSPC: creat larger than the free space fails cleanly, fsck stays clean" t_enospc

t_logfull() {
	local img=$T/logfull.img n
	newimg "$img" 64M || return 1
	n=$("$FAMFS" fsck --json "$img" | $PY -c 'import json,sys; print(json.load(sys.stdin)["log"]["slots"])')
	[ "$n" -gt 0 ] || return 1
	# one mkdir run fills the log: one replay, n appends
	seq -f "d%g" 1 "$n" | xargs "$FAMFS" mkdir -D "$img" >"$OUT" 2>"$ERR" || {
		echo "# filling the log with $n directories failed"; return 1; }
	run 1 F mkdir -D "$img" one-more && has_err "full" || return 1
	run 1 F creat -D "$img" -s 2m f && has_err "full" || return 1
	run 0 F fsck "$img" && has_out "$n of $n entries"
}
check "a full log: every slot used, the next mkdir/creat fails with 'full'" t_logfull

# ---- status without mounts ---------------------------------------------------

t_status_none() {
	FAMFS_MOUNTS=/dev/null run 0 "$FAMFS" status --json || return 1
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["mounts"] == [] and d["healthy"] is True))' "$OUT" || return 1
	FAMFS_MOUNTS=/dev/null run 0 "$FAMFS" status && has_out "no famfs" || return 1
	FAMFS_MOUNTS=/dev/null run 1 "$FAMFS" status /tmp && has_err "not a mounted famfs"
}
check "status --json with no mounts" t_status_none

# A directory with the .meta files a daemon would serve, listed in a fake
# mount table: status parses the table, .status and the metadata.
t_status_fake() {
	local fake=$T/fake-mnt tab=$T/mounts
	need_f42 || return 1	# a log with a file in it
	mkdir -p "$fake/.meta" || return 1
	dd if="$IMG" of="$fake/.meta/.superblock" bs=2M count=1 2>/dev/null
	dd if="$IMG" of="$fake/.meta/.log" bs=2M skip=1 count=4 2>/dev/null
	printf 'mode=fallback\ndevice=%s\nrole=master\npid=1\nrequests=5\npoll_ms=1000\ndevice_health=ok\n' "$IMG" >"$fake/.meta/.status"
	printf '%s %s fuse.famfs rw,nosuid,user_id=0,group_id=0 0 0\n' "$IMG" "${fake// /\\040}" >"$tab"
	echo "/dev/sda1 / ext4 rw 0 0" >>"$tab"
	FAMFS_MOUNTS=$tab run 0 "$FAMFS" status --json || return 1
	$PY - "$OUT" "$fake" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
m = d["mounts"]
assert len(m) == 1 and m[0]["mountpoint"] == sys.argv[2], m
m = m[0]
assert m["healthy"] and d["healthy"]
assert m["mode"] == "fallback" and m["status"]["requests"] == 5
assert m["log"]["used"] > 0 and m["space"]["free"] > 0 and m["files"] > 0
EOF
	FAMFS_MOUNTS=$tab run 0 "$FAMFS" status && has_out "mode: *fallback" || return 1
	has_out "memory: *ok" || return 1
	# The kernel failed the device (famfs_health): not healthy, exit 1.
	printf 'mode=famfs\ndevice=%s\nrole=master\npid=1\ndevice_health=failed pfn=0x12345\n' "$IMG" >"$fake/.meta/.status"
	FAMFS_MOUNTS=$tab run 1 "$FAMFS" status && has_out "NOT HEALTHY" || return 1
	has_out "memory: *failed pfn=0x12345" && has_out "problem: .*memory error" || return 1
	FAMFS_MOUNTS=$tab run 1 "$FAMFS" status --json || return 1
	$PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["mounts"][0]; sys.exit(not (m["healthy"] is False and m["status"]["device_health"] == "failed pfn=0x12345" and any("memory error" in p for p in m["problems"])))' "$OUT" || return 1
	rm "$fake/.meta/.status"
	FAMFS_MOUNTS=$tab run 1 "$FAMFS" status --json || return 1
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["healthy"])' "$OUT"
}
check "status parses the mount table, .meta/.status and the log (fake mount)" t_status_fake

# Every --json output parses as one JSON object with exactly the keys and
# value types famfs(8) documents (tests/cli/json_keys.py), also when its
# strings hold quotes, backslashes, slashes and control characters.
t_json_keys() {
	local odd=$T/'j"s\on	dir' tab=$T/jmounts keys=$ROOT/tests/cli/json_keys.py m
	mkdir -p "$odd/full/.meta" "$odd/bare/.meta" || return 1
	cp "$IMG" "$odd/dev.img" || return 1
	run 0 F fsck --json "$odd/dev.img" && $PY "$keys" fsck "$OUT" || return 1
	head -c 64M /dev/zero >"$odd/zero.img"
	run 2 F fsck --json "$odd/zero.img" && $PY "$keys" fsck-nofs "$OUT" || return 1
	$PY -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["device"] != sys.argv[2])' "$OUT" "$odd/zero.img" || return 1
	dd if="$IMG" of="$odd/full/.meta/.superblock" bs=2M count=1 2>/dev/null
	dd if="$IMG" of="$odd/full/.meta/.log" bs=2M skip=1 count=4 2>/dev/null
	printf 'mode=fallback\ndevice=a"b\\c\td/e\001\nrole=master\npid=7\n' >"$odd/full/.meta/.status"
	printf 'mode=fallback\n' >"$odd/bare/.meta/.status"
	: >"$tab"
	for m in full bare; do
		printf '%s %s fuse.famfs rw,nosuid,user_id=0,group_id=0 0 0\n' "$IMG" \
			"$(printf %s "$odd/$m" | sed 's/\\/\\134/g; s/\t/\\011/g')" >>"$tab"
	done
	FAMFS_MOUNTS=$tab run 1 "$FAMFS" status --json || return 1
	$PY "$keys" status "$OUT" full bare || return 1
	$PY - "$OUT" "$odd" <<'EOF' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
m = d["mounts"]
assert [x["mountpoint"] for x in m] == [sys.argv[2] + "/full", sys.argv[2] + "/bare"], m
assert m[0]["status"] == {"mode": "fallback", "device": 'a"b\\c\td/e\x01', "role": "master", "pid": 7}, m[0]
EOF
	FAMFS_MOUNTS=/dev/null run 0 "$FAMFS" status --json && $PY "$keys" status "$OUT"
}
check "--json: fsck and status print one JSON line with exactly the documented keys and types" t_json_keys

t_mount_nohelper() {
	FAMFS_MOUNT_HELPER=$T/none run 1 "$FAMFS" mount "$IMG" "$T" && has_err "mount.famfs not found" || return 1
	# -D (dummy): show how upstream's options become mount options
	FAMFS_MOUNT_HELPER=/bin/true run 0 "$FAMFS" mount -D -f -d -t 5 -o poll_ms=100 "$IMG" "$T" || return 1
	has_out "^/bin/true $IMG $T -o debug,poll_ms=100\$" && has_err "note: -t 5" || return 1
	run 2 F mount -R "$IMG" "$T" && has_err "remount" || return 1
	run 2 F mount -L "$IMG" "$T" && has_err "kernel modules"
}
check "famfs mount: no mount.famfs, -D shows the translated options, refused options" t_mount_nohelper

# ---- through a mount (fallback mode) ------------------------------------------

why_no_mount=""
if [ ! -x "$FUSED" ] || [ ! -x "$MOUNT_HELPER" ]; then
	why_no_mount="famfs-fused or mount.famfs not built"
elif [ "$(id -u)" -ne 0 ]; then
	why_no_mount="needs root for a FUSE mount"
elif [ ! -c /dev/fuse ]; then
	why_no_mount="no /dev/fuse"
fi

MIMG=$T/mnt.img
if [ -n "$why_no_mount" ]; then
	skip "famfs mount (mount.famfs, fallback mode)" "$why_no_mount"
else
	mkdir -p "$MNT"
	newimg "$MIMG" 256M
	if FAMFS_MOUNT_HELPER=$MOUNT_HELPER FAMFS_FUSED=$FUSED \
		timeout 30 "$FAMFS" mount -o fallback=yes "$MIMG" "$MNT" >"$OUT" 2>"$ERR"; then
		mounted=true
		ok "famfs mount (mount.famfs, fallback mode)"
	else
		notok "famfs mount (mount.famfs, fallback mode)"
		why_no_mount="the mount failed"
	fi
fi

mcase() { # mcase NAME FUNC
	if [ -n "$why_no_mount" ]; then skip "$1" "$why_no_mount"; else check "$@"; fi
}

t_m_creat() {
	run 0 F creat -s 6m -r -S 101 "$MNT/m1" || return 1
	[ "$(stat -c %s "$MNT/m1")" = 6291456 ] || { echo "# m1 not visible with its size"; return 1; }
	run 0 F verify -S 101 -f "$MNT/m1" || return 1		# mmap
	run 0 F verify -r -S 101 -f "$MNT/m1" || return 1	# read(2)
	run 1 F verify -S 102 -f "$MNT/m1" || return 1
	(cd "$MNT" && "$FAMFS" creat -s 2m rel1) >"$OUT" 2>"$ERR" || return 1
	[ -f "$MNT/rel1" ] || return 1
	run 0 F creat -s 8m -N 2 -B 4 -r -S 103 "$MNT/m2" || return 1
	run 0 F verify -S 103 -f "$MNT/m2" || return 1
	run 0 F verify -D "$MIMG" -S 101 -f m1		# the device has the bytes
}
mcase "mounted: creat visible at once; verify by mmap and by read(2)" t_m_creat

t_m_cp() {
	run 0 F mkdir -p "$MNT/x/y" || return 1
	[ -d "$MNT/x/y" ] || return 1
	run 0 F cp "$SRC/big" "$MNT/x/y/big" || return 1
	cmp "$SRC/big" "$MNT/x/y/big" || return 1
	run 0 F cp -r "$SRC" "$MNT/tree" || return 1
	diff -r "$SRC" "$MNT/tree" >"$OUT" 2>&1 || return 1
	[ "$(stat -c %a "$MNT/tree/sub/deeper/leaf")" = 600 ] || return 1
	run 0 F cp -c -r "$SRC" "$MNT/tree" || return 1
	run 0 F cp "$SRC/tiny" "$SRC/sub/exact2m" "$MNT" || return 1	# into the root
	cmp "$SRC/sub/exact2m" "$MNT/exact2m"
}
mcase "mounted: cp and cp -r visible at once, byte-exact (cmp, diff -r)" t_m_cp

t_m_tools() {
	need_m1 &&
		need_m "$MNT/x" mkdir "$MNT/x" || return 1
	run 0 F getmap "$MNT/m1" && has_out "size: *6291456" || return 1
	run 1 F getmap /etc/hostname && has_err "not in a mounted famfs" || return 1
	run 21 F getmap "$MNT/x" || return 1
	run 2 F getmap "$MNT/.meta/.log" || return 1	# served, not logged
	run 0 F chkread "$MNT/m1" || return 1
	flip_pread 4096 chkread "$MNT/m1" &&
		has_err "m1: read and mmap differ at byte 4096" || return 1
	run 0 F chkread -l "$MNT/.meta/.log" && has_out "crc good" || return 1
	run 0 F flush "$MNT/m1" || return 1
	run 0 F check "$MNT" || return 1
	run 0 F logplay "$MNT" && has_out "shows every entry" || return 1
	run 0 F logplay -n "$MNT" && has_out "dry run" || return 1
	run 0 F mkmeta "$MNT" || return 1
	run 0 F fsck "$MNT"
}
mcase "mounted: getmap, chkread, flush, check, logplay, fsck through the mount" t_m_tools

t_m_status() {
	# two files in the log at least
	need_m1 &&
		need_m "$MNT/rel1" creat -s 2m "$MNT/rel1" || return 1
	run 0 F status --json "$MNT" || return 1
	$PY - "$OUT" "$MNT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["healthy"], d
m = [m for m in d["mounts"] if m["mountpoint"] == sys.argv[2]]
assert len(m) == 1, d
m = m[0]
assert m["mode"] == "fallback", m
assert m["role"] == "master" and m["files"] >= 2 and m["log"]["used"] > 0, m
# an image file has no famfs_health in sysfs
assert m["status"]["device_health"] == "unknown", m
EOF
	[ $? -eq 0 ] || return 1
	run 0 F status "$MNT" && has_out "mode: *fallback"
}
mcase "mounted: status shows mode=fallback, role, log and space" t_m_status

t_m_client() {
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" creat -s 2m "$MNT/cl" || return 1
	has_err "client" || return 1
	FAMFS_SYSTEM_UUID_FILE=$CLIENT_UUID run 1 "$FAMFS" mkdir "$MNT/cld" && has_err "client" || return 1
	[ ! -e "$MNT/cl" ]
}
mcase "mounted: creat/mkdir as a client host fail with 'client'" t_m_client

t_m_errors() {
	run 1 F creat -s 2m "$MNT/nodir/f" && has_err "does not exist" || return 1
	run 1 F creat -s 2m /tmp/not-famfs-file && has_err "not in a mounted famfs" || return 1
	run 1 F creat -s 2m "$MNT/.meta/x" && has_err ".meta" || return 1
	run 1 F creat -s 4g "$MNT/huge" && has_err "huge" &&
		has_err "space\|fit\|free" || return 1
	[ ! -e "$MNT/huge" ] || { echo "# huge was created"; return 1; }
}
mcase "mounted: errors name the path and the reason" t_m_errors

# A mount of its own, whose image the case damages and restores: famfs
# check's exit bits (2 superblock, 4 log), mkfs.famfs of a mounted device,
# logplay's upstream options.
t_m_check_exits() {
	local img=$T/chk.img m=$T/mnt3 rc=0
	newimg "$img" 64M && mkdir -p "$m" || return 1
	FAMFS_MOUNT_HELPER=$MOUNT_HELPER FAMFS_FUSED=$FUSED \
		timeout 30 "$FAMFS" mount -o fallback=yes "$img" "$m" >"$OUT" 2>"$ERR" || return 1
	t_m_check_body "$img" "$m" || rc=1
	umount "$m" || umount -l "$m"
	return $rc
}
t_m_check_body() {
	local img=$1 m=$2
	run 0 F creat -s 2m -r -S 5 "$m/f1" || return 1
	run 0 F check "$m" && has_out "0 problems" || return 1
	run 1 "$MKFS" -f "$img" && has_err "is mounted on" || return 1
	# logplay: -m, -r and -c are accepted with a note (upstream's scripts
	# pass them)
	run 0 F logplay -m "$m" && has_err "note: -m has no effect" || return 1
	run 0 F logplay -r "$m" && has_err "note: -r has no effect" || return 1
	run 0 F logplay -c "$m" && has_err "note: -c has no effect" || return 1
	# the shadow options need --shadow (the conformance section tests
	# the shadow tree itself)
	run 2 F logplay -s "$m" && has_err "shadow" || return 1
	run 2 F logplay -d "$img" "$m" && has_err "shadow" || return 1
	run 2 F logplay -M "$m" && has_err "daxdev" || return 1
	cp "$img" "$T/chk.bak" || return 1
	# the superblock's version field zeroed: bit 2
	dd if=/dev/zero of="$img" bs=1 seek=8 count=8 conv=notrunc 2>/dev/null
	F check "$m" >"$OUT" 2>"$ERR"; RC=$?
	[ $((RC & 2)) -eq 2 ] && has_err "superblock" ||
		{ echo "# check exit $RC with a bad superblock"; return 1; }
	dd if="$T/chk.bak" of="$img" bs=4096 count=1 conv=notrunc 2>/dev/null
	run 0 F check "$m" || return 1
	# the log header's magic zeroed: bit 4, not bit 2
	dd if=/dev/zero of="$img" bs=1 seek=$((2 * 1048576)) count=16 conv=notrunc 2>/dev/null
	F check "$m" >"$OUT" 2>"$ERR"; RC=$?
	[ $((RC & 4)) -eq 4 ] && [ $((RC & 2)) -eq 0 ] && has_err "log header.*bad magic" ||
		{ echo "# check exit $RC with a bad log header"; return 1; }
	dd if="$T/chk.bak" of="$img" bs=1 skip=$((2 * 1048576)) seek=$((2 * 1048576)) \
		count=48 conv=notrunc 2>/dev/null
	run 0 F check "$m" && run 22 F check || return 1
	# a cross-linked clone has no valid map: bit 1, naming the clone only
	run 0 F clone "$m/f1" "$m/f1c" || return 1
	run 1 F check "$m" && has_err "f1c: its memory belongs to an earlier file" &&
		has_out "2 files, 0 directories checked; 1 problems" || return 1
	! grep -q "/f1:" "$ERR" || { echo "# check blamed the owner"; return 1; }
}
mcase "mounted: check exits 0, 1 (a cross-linked clone), 2 (superblock), 4 (log), 22; mkfs refuses a mounted image; logplay -m -r -c -S -s -d -M" t_m_check_exits

# A device this host cannot write (a read-only file system): mkfs.famfs,
# creat and mkdir refuse it, fsck reads it, fsck --repair cannot (8).
t_m_readonly() {
	local r=$T/ro rc=0
	mkdir -p "$r" && mount -t tmpfs -o size=200m famfs-cli-ro "$r" || return 1
	truncate -s 64M "$r/a.img" "$r/b.img" && "$MKFS" "$r/a.img" >/dev/null &&
		mount -o remount,ro "$r" || rc=1
	[ $rc = 0 ] && {
		run 1 "$MKFS" "$r/b.img" && has_err "read-only" &&
		run 1 F creat -D "$r/a.img" -s 2m x && has_err "read-only" &&
		run 1 F mkdir -D "$r/a.img" d && has_err "read-only" &&
		run 0 F fsck "$r/a.img" && has_out "clean" &&
		run 8 F fsck --repair "$r/a.img" && has_err "read-only"
	} || rc=1
	umount "$r" || umount -l "$r"
	return $rc
}
mcase "read-only device: mkfs.famfs, creat and mkdir refuse it (1), fsck reads it, fsck --repair exits 8" t_m_readonly

# A second mount of the same image as a client: what another host sees.
t_m_client_mount() {
	need_m1 && need_m "$MNT/x/y" mkdir -p "$MNT/x/y" &&
		need_m "$MNT/x/y/big" cp "$SRC/big" "$MNT/x/y/big" || return 1
	mkdir -p "$MNT2"
	FAMFS_MOUNT_HELPER=$MOUNT_HELPER FAMFS_FUSED=$FUSED \
		timeout 30 "$FAMFS" mount -o fallback=yes,role=client "$MIMG" "$MNT2" \
		>"$OUT" 2>"$ERR" || return 1
	mounted2=true
	run 0 F verify -S 101 -f "$MNT2/m1" || return 1
	cmp "$SRC/big" "$MNT2/x/y/big" || return 1
	run 1 F creat -s 2m "$MNT2/from-client" && has_err "client" || return 1
	run 0 F status --json "$MNT2" || return 1
	$PY -c 'import json,sys; m=json.load(open(sys.argv[1]))["mounts"][0]; sys.exit(m["role"] != "client")' "$OUT" || return 1
	# created on the master after the client mounted: visible there too
	run 0 F creat -s 2m -r -S 104 "$MNT/late" || return 1
	run 0 F verify -S 104 -f "$MNT2/late" || return 1
	run 0 F logplay "$MNT2" && has_out "shows every entry" || return 1
	umount "$MNT2" && mounted2=false
}
mcase "mounted: a role=client mount of the same image sees the master's files; creat there fails" t_m_client_mount

# A daemon killed under its mount: status must say so and exit 1.
t_m_dead_daemon() {
	local pid
	mkdir -p "$MNT2"
	FAMFS_MOUNT_HELPER=$MOUNT_HELPER FAMFS_FUSED=$FUSED \
		timeout 30 "$FAMFS" mount -o fallback=yes,role=client "$MIMG" "$MNT2" \
		>"$OUT" 2>"$ERR" || return 1
	mounted2=true
	pid=$(sed -n 's/^pid=//p' "$MNT2/.meta/.status")
	[ -n "$pid" ] && kill -9 "$pid" || return 1
	gone "$pid" 30 || { echo "# daemon $pid still there after 30 s"; return 1; }
	run 1 F status "$MNT2" && has_out "NOT HEALTHY" && has_out "not connected" || return 1
	run 1 F status --json "$MNT2" || return 1
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["healthy"] or d["mounts"][0]["healthy"])' "$OUT" || return 1
	umount "$MNT2" && mounted2=false
}
mcase "mounted: status reports a mount whose daemon was killed (exit 1)" t_m_dead_daemon

# ---- conformance with upstream's command line -------------------------------

. "$ROOT/tests/cli/conformance.sh"

if ! $mounted; then
	skip "umount" "${why_no_mount:-not mounted}"
elif umount "$MNT"; then
	ok "umount"
	mounted=false
else
	notok "umount"
fi
mcase "fsck of the image after umount" run 0 F fsck "$MIMG"

[ "$failed" -eq 0 ]
