#!/bin/sh
# The blackout of a daemon restart that keeps the mount, in fallback mode
# on this host's /dev/fuse: a famfs on an image file, famfs-fused started
# by tests/vm/guest-src/fdsd.c (the harness of the VM case 68-takeover,
# built here for the host), which plays systemd's part (notify socket, fd
# store, LISTEN_FDS). The daemon is handed over RESTARTS times (SIGUSR1,
# what a restart does) and SIGKILLed KILLS times in between, while a
# reader keeps a file open and mapped and stats, opens and reads the files
# the master keeps creating. The blackout of one restart is the longest
# operation that overlapped it (from the signal to the new daemon's
# READY=1); the figures are its median and maximum over the restarts.
# Every daemon must take the connection over and no operation may fail,
# else the step fails (no figure from a broken run). The last line,
# "RESULT restart key=value ...", is for bench/report.py (make bench).
#
#   bench/restart.sh    (root; after ninja -C ${BUILD_DIR:-build})
#
# Environment: RESTARTS (default 20), KILLS (default 3), BENCH_OUT
# (default build-bench: fdsd is built there).
set -eu
cd "$(dirname "$0")/.."
top=$PWD
B=${BUILD_DIR:-build}
RESTARTS=${RESTARTS:-20}
KILLS=${KILLS:-3}
out=${BENCH_OUT:-$top/build-bench}

[ "$(id -u)" -eq 0 ] || { echo "restart: needs root" >&2; exit 1; }
mkdir -p "$out"
fdsd=$out/fdsd
${CC:-cc} -O2 -Wall -Wextra -Werror -o "$fdsd" "$top/tests/vm/guest-src/fdsd.c"

W=$(mktemp -d /tmp/famfs-bench-restart.XXXXXX)
cleanup() {
	umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
export FAMFS_SYSTEM_UUID_FILE="$W/uuid" FAMFS_CONF=/dev/null
# fdsd's creator runs "famfs creat" from PATH.
export PATH="$top/$B/daemon/tools:$PATH"

truncate -s 512M "$W/dev"
"$B/daemon/tools/mkfs.famfs" "$W/dev" >/dev/null
mkdir "$W/mnt"
n=$((RESTARTS + KILLS))
rc=0
FDSD_SOCK=$W/notify "$fdsd" "$W/mnt" "$W/mnt/held" "$n" "$KILLS" -- \
	"$top/$B/daemon/fused/famfs-fused" -f -o "logfile=$W/fused.log" \
	"$W/dev" "$W/mnt" >"$W/fdsd.out" || rc=$?
cat "$W/fdsd.out"
took=$(grep -c 'took over the FUSE connection' "$W/fused.log" || true)
fallback=$(grep -c 'mounted on .* in fallback mode' "$W/fused.log" || true)
echo "restart: $took takeovers logged; $fallback daemons in fallback mode"
if [ "$rc" -ne 0 ] || [ "$took" -ne "$n" ] || [ "$fallback" -ne $((n + 1)) ]; then
	tail -n 30 "$W/fused.log" >&2
	echo "restart: the run failed (fdsd exit $rc): no figures" >&2
	exit 1
fi
# One machine-readable line last (keys: add, never rename).
kv() { tr ' ' '\n' <"$W/fdsd.out" | sed -n "s/^$1=//p" | head -n 1; }
echo "RESULT restart mode=fallback restarts=$(kv restarts) kills=$(kv kills)" \
	"ops=$(kv ops) failures=$(kv failures) same_mount=$(kv same_mount)" \
	"blackout_median_ms=$(kv blackout_median_ms)" \
	"blackout_max_ms=$(kv blackout_max_ms) longest_op_ms=$(kv longest_op_ms)"
