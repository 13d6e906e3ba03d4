#!/bin/sh
# Fallback-mode sequential read: a 1 GiB famfs file read through famfs-fused
# (this host's /dev/fuse) vs the same bytes read straight from the backing
# file, interleaved (A B C A B C ...), PASSES each (default 10). Prints the
# median throughput ratio famfs/direct (1.0 = as fast as the backing file)
# with its spread, for two famfs sides:
#   client: a read-only mount drops the file's page cache at every open, so
#           every pass is served by the daemon (FUSE READs of 1 MiB);
#   master: the master keeps the page cache between opens (all writes go
#           through its mount), so after the first pass reads hit the cache;
#   client on one CPU: the client again, with dd and the client's daemon
#           pinned to the same CPU. Not a way to run famfs: it measures
#           what the cross-CPU wakeups of each request cost on this host.
# The backing file is page-cache hot on every side. The last line,
# "RESULT fallback key=value ...", is for bench/report.py (make bench).
# Builds nothing: run after 'ninja -C ${BUILD_DIR:-build}'. Needs root.
set -eu
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
PASSES=${PASSES:-10}
SIZE_MIB=${SIZE_MIB:-1024}
BS=${BS:-1M}

[ "$(id -u)" -eq 0 ] || { echo "fallback_read: needs root" >&2; exit 1; }
W=$(mktemp -d /tmp/famfs-bench.XXXXXX)
cleanup() {
	umount "$W/cli" 2>/dev/null || umount -l "$W/cli" 2>/dev/null || true
	umount "$W/mnt" 2>/dev/null || umount -l "$W/mnt" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
export FAMFS_SYSTEM_UUID_FILE="$W/uuid" FAMFS_FUSED="$PWD/$B/daemon/fused/famfs-fused"
export FAMFS_CONF=/dev/null

truncate -s $((SIZE_MIB + 64))M "$W/dev"
"$B/daemon/tools/mkfs.famfs" "$W/dev" >/dev/null
mkdir "$W/mnt"
"$B/daemon/mount/mount.famfs" "$W/dev" "$W/mnt" -o "logfile=$W/fused.log"
mkdir "$W/cli"
"$B/daemon/tools/famfs" creat -s "${SIZE_MIB}m" "$W/mnt/big" >/dev/null

# One contiguous extent: fill it in the backing file directly (fast), and
# read the same device range on the direct side.
off=$(/usr/bin/python3 - "$W/dev" "$(stat -c %i "$W/mnt/big")" <<'PY'
import struct, sys
dev, ino = sys.argv[1], int(sys.argv[2])
with open(dev, "rb") as f:
    f.seek(2 * 2**20 + 48 + (ino - 2) * 544 + 16 + 104)
    ext_type, _, n = struct.unpack("<IIi", f.read(12))
    f.seek(4, 1)
    _, off, ln = struct.unpack("<QQQ", f.read(24))
assert ext_type == 0 and n == 1, "expected one simple extent"
print(off)
PY
)
dd if=/dev/urandom of="$W/dev" bs=1M seek=$((off / 1048576)) \
	count="$SIZE_MIB" conv=notrunc status=none
"$B/daemon/mount/mount.famfs" "$W/dev" "$W/cli" \
	-o "role=client,logfile=$W/fused-client.log"
# Check the bytes agree once, untimed.
if ! dd if="$W/dev" bs=1M skip=$((off / 1048576)) count="$SIZE_MIB" \
	status=none | cmp -s - "$W/cli/big"; then
	echo "fallback_read: famfs file and device range differ" >&2
	exit 1
fi

now() { date +%s%N; }
cpid=$(sed -n 's/^pid=//p' "$W/cli/.meta/.status")
cmask=$(taskset -p "$cpid" | sed 's/.*: //')
cpu=$(taskset -cp $$ | sed 's/.*: //; s/[-,].*//') # the first CPU we may use
pass() { # $1: master|client|client1|direct -> nanoseconds
	[ "$1" = client1 ] && taskset -pc "$cpu" "$cpid" >/dev/null
	t0=$(now)
	case $1 in
	master) dd if="$W/mnt/big" of=/dev/null bs="$BS" status=none ;;
	client) dd if="$W/cli/big" of=/dev/null bs="$BS" status=none ;;
	client1) taskset -c "$cpu" dd if="$W/cli/big" of=/dev/null bs="$BS" \
		status=none ;;
	direct) dd if="$W/dev" of=/dev/null bs=1M skip=$((off / 1048576)) \
		count="$SIZE_MIB" status=none ;;
	esac
	t1=$(now)
	[ "$1" = client1 ] && taskset -p "$cmask" "$cpid" >/dev/null
	echo $((t1 - t0))
}
pass direct >/dev/null # warm the backing file's page cache
req0=$(sed -n 's/^requests=//p' "$W/cli/.meta/.status")
: >"$W/ratios"
i=0
while [ "$i" -lt "$PASSES" ]; do
	echo "$(pass master) $(pass client) $(pass direct) $(pass client1)" \
		>>"$W/ratios"
	i=$((i + 1))
done
req1=$(sed -n 's/^requests=//p' "$W/cli/.meta/.status")

/usr/bin/python3 - "$W/ratios" "$SIZE_MIB" "$PASSES" "$req0" "$req1" <<'PY'
import statistics, sys
path, mib, passes, r0, r1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
rows = [tuple(map(int, l.split())) for l in open(path)]


def show(name, col):
    # famfs / direct speed; direct (col 2) was read between the two clients
    r = sorted(row[2] / row[col] for row in rows)
    mibs = statistics.median(mib / (row[col] / 1e9) for row in rows)
    print("ratio %s/direct: median %.3f (min %.3f, max %.3f); %s %.0f MiB/s"
          % (name, statistics.median(r), r[0], r[-1], name, mibs))
    return "%s_mibs=%.0f %s_ratio=%.3f %s_ratio_min=%.3f %s_ratio_max=%.3f" \
        % (name, mibs, name, statistics.median(r), name, r[0], name, r[-1])


print("fallback_read: %d MiB, %d passes each (master client direct client-on-one-CPU ...)"
      % (mib, passes))
per_pass = (r1 - r0) / passes / 2  # both client sides read the file
print("  direct median %.0f MiB/s; client: %.0f FUSE requests per pass"
      % (statistics.median(mib / (row[2] / 1e9) for row in rows), per_pass))
client = show("client", 1)
master = show("master", 0)
onecpu = show("client_onecpu", 3)
# One machine-readable line last, for bench/report.py (keys: add, never rename).
print("RESULT fallback size_mib=%d passes=%d direct_mibs=%.0f "
      "client_requests_per_pass=%.0f %s %s %s"
      % (mib, passes, statistics.median(mib / (row[2] / 1e9) for row in rows),
         per_pass, client, master, onecpu))
PY
