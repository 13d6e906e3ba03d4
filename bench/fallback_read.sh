#!/bin/sh
# Fallback-mode sequential reads: a 1 GiB famfs file read through
# famfs-fused (this host's /dev/fuse) vs the same bytes read straight from
# the backing file, interleaved (each pass runs every side once, the order
# rotating from pass to pass), PASSES each (default 10). Prints the median
# throughput ratio famfs/direct (1.0 = as fast as the backing file) with
# its spread, for these famfs sides:
#   client: a read-only mount drops the file's page cache at every open, so
#           every pass is served by the daemon (FUSE READs), by its default
#           path: a READ reply spliced from the image file where a pipe
#           holds it, else copied from the daemon's mapping (famfs-fused(8));
#   client_copy: the same from a client mounted with splice=no: every
#           reply copied from the daemon's mapping;
#   client_512k, client_copy_512k: both with dd bs=512K, READs a pipe
#           without CAP_SYS_RESOURCE holds (direct_512k: the file, the same);
#   master: the master keeps the page cache between opens (all writes go
#           through its mount), so after the first pass reads hit the cache;
#   client on one CPU: the client again, with dd and the client's daemon
#           pinned to the same CPU. Not a way to run famfs: it measures
#           what the cross-CPU wakeups of each request cost on this host;
#   client_rN (N = 2, 4): N dd's reading the file at once, against N dd's
#           reading the backing file at once (direct_rN): the ratio of the
#           total throughput;
#   null, null_rN: the same reads from famfs-bench-fuse-null, a FUSE server
#           that answers each READ from its memory at once (direct I/O,
#           the client's request size, one thread): FUSE's own ceiling on
#           this host, what no change in the daemon can pass;
#   null_mt_rN: that server on libfuse's multi-threaded loop (clone_fd,
#           up to 4 threads): what threads would buy famfs-fused.
# For each client side: FUSE requests and the daemon's CPU time (user +
# system, from /proc) per GiB read.
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
	for m in cli clc mnt nul nmt; do
		umount "$W/$m" 2>/dev/null || umount -l "$W/$m" 2>/dev/null ||
			true
	done
	rm -rf "$W"
}
trap cleanup EXIT INT TERM
export FAMFS_SYSTEM_UUID_FILE="$W/uuid" FAMFS_FUSED="$PWD/$B/daemon/fused/famfs-fused"
export FAMFS_CONF=/dev/null

truncate -s $((SIZE_MIB + 64))M "$W/dev"
chmod 600 "$W/dev"
"$B/daemon/tools/mkfs.famfs" "$W/dev" >/dev/null
mkdir "$W/mnt" "$W/cli" "$W/clc" "$W/nul" "$W/nmt"
"$B/daemon/mount/mount.famfs" "$W/dev" "$W/mnt" -o "logfile=$W/fused.log"
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
"$B/daemon/mount/mount.famfs" "$W/dev" "$W/clc" \
	-o "role=client,splice=no,logfile=$W/fused-client-copy.log"
# Check the bytes agree once, untimed, on both paths.
for m in cli clc; do
	if ! dd if="$W/dev" bs=1M skip=$((off / 1048576)) count="$SIZE_MIB" \
		status=none | cmp -s - "$W/$m/big"; then
		echo "fallback_read: famfs file ($m) and device range differ" >&2
		exit 1
	fi
done
grep -h "reads spliced" "$W/fused-client.log" | sed 's/^[^:]*: /  /' || true
# The null servers, with the READ size the client's daemon asked for.
kib=$(sed -n 's/.*requests of up to \([0-9]*\) KiB.*/\1/p' "$W/fused-client.log" |
	tail -n 1)
"$B/bench/famfs-bench-fuse-null" "$W/nul" "$SIZE_MIB" "${kib:-1024}" 1 &
"$B/bench/famfs-bench-fuse-null" "$W/nmt" "$SIZE_MIB" "${kib:-1024}" 4 &
for m in nul nmt; do
	i=0
	until [ -e "$W/$m/big" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "fallback_read: $m did not mount" >&2; exit 1; }
		sleep 0.1
	done
done

/usr/bin/python3 - "$W" "$off" "$SIZE_MIB" "$PASSES" "$BS" <<'PY'
import os, statistics, subprocess, sys, time

W, off, mib, passes, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5]
tick = os.sysconf("SC_CLK_TCK")


def status(m):
    return dict(l.split("=", 1) for l in
                open("%s/%s/.meta/.status" % (W, m)).read().splitlines()
                if "=" in l)


pids = {m: int(status(m)["pid"]) for m in ("cli", "clc")}
cpu0 = os.sched_getaffinity(0)
one = min(cpu0)


def cpu(m):  # the daemon's user + system time, seconds
    f = open("/proc/%d/stat" % pids[m]).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick


def dd(src, b, direct, pin=False):
    a = ["dd", "if=" + src, "of=/dev/null", "bs=" + b, "status=none"]
    if direct:
        a = ["dd", "if=%s/dev" % W, "of=/dev/null", "bs=" + b,
             "iflag=skip_bytes,count_bytes", "skip=%d" % off,
             "count=%d" % (mib << 20), "status=none"]
    return subprocess.Popen(a, preexec_fn=(lambda: os.sched_setaffinity(
        0, {one})) if pin else None)


# side: (mount or None for the backing file, dd bs, readers, pinned)
sides = {
    "master": ("mnt", bs, 1, False),
    "client": ("cli", bs, 1, False),
    "client_copy": ("clc", bs, 1, False),
    "direct": (None, bs, 1, False),
    "client_onecpu": ("cli", bs, 1, True),
    "client_512k": ("cli", "512K", 1, False),
    "client_copy_512k": ("clc", "512K", 1, False),
    "direct_512k": (None, "512K", 1, False),
}
sides["null"] = ("nul", bs, 1, False)
for n in (2, 4):
    sides["client_r%d" % n] = ("cli", bs, n, False)
    sides["direct_r%d" % n] = (None, bs, n, False)
    sides["null_r%d" % n] = ("nul", bs, n, False)
    sides["null_mt_r%d" % n] = ("nmt", bs, n, False)
names = list(sides)
t = {s: [] for s in names}
use = {s: [0.0, 0] for s in names}  # daemon CPU seconds, requests


def run(s):
    m, b, n, pin = sides[s]
    if pin:
        os.sched_setaffinity(pids["cli"], {one})
    if m in pids:
        c0, r0 = cpu(m), int(status(m)["requests"])
    t0 = time.perf_counter_ns()
    ps = [dd("%s/%s/big" % (W, m), b, m is None, pin) for _ in range(n)]
    for p in ps:
        if p.wait():
            sys.exit("fallback_read: dd failed on side %s" % s)
    t[s].append(time.perf_counter_ns() - t0)
    if m in pids:
        use[s][0] += cpu(m) - c0
        use[s][1] += int(status(m)["requests"]) - r0
    if pin:
        os.sched_setaffinity(pids["cli"], cpu0)


run("direct")  # warm the backing file's page cache
t["direct"] = []
for i in range(passes):
    k = i % len(names)
    for s in names[k:] + names[:k]:
        run(s)

base = {"": "direct", "_512k": "direct_512k", "_r2": "direct_r2",
        "_r4": "direct_r4"}
out = ["size_mib=%d" % mib, "passes=%d" % passes]


def mibs(s):
    n = sides[s][2]
    return statistics.median(n * mib / (x / 1e9) for x in t[s])


for d in base.values():
    out.append("%s_mibs=%.0f" % (d, mibs(d)))
print("fallback_read: %d MiB, %d passes each, sides in rotating order; "
      "load %s" % (mib, passes, open("/proc/loadavg").read().split()[0]))
for s in names:
    if s.startswith("direct"):
        continue
    d = base[next(k for k in ("_512k", "_r2", "_r4") if s.endswith(k))
             if any(s.endswith(k) for k in ("_512k", "_r2", "_r4")) else ""]
    r = sorted(a / b for a, b in zip(t[d], t[s]))
    gib = passes * sides[s][2] * mib / 1024
    line = "%s_mibs=%.0f %s_ratio=%.3f %s_ratio_min=%.3f %s_ratio_max=%.3f" \
        % (s, mibs(s), s, statistics.median(r), s, r[0], s, r[-1])
    extra = ""
    if sides[s][0] in pids:
        line += " %s_requests_per_gib=%.0f %s_cpu_ms_per_gib=%.0f" % (
            s, use[s][1] / gib, s, use[s][0] * 1000 / gib)
        extra = "; %.0f requests/GiB, daemon CPU %.0f ms/GiB" % (
            use[s][1] / gib, use[s][0] * 1000 / gib)
    print("  %-17s / %-11s median %.3f (min %.3f, max %.3f); %.0f vs %.0f "
          "MiB/s%s" % (s, d, statistics.median(r), r[0], r[-1], mibs(s),
                       mibs(d), extra))
    out.append(line)
# The client against FUSE's ceiling, pass by pass: 1.0 = the daemon adds
# nothing to what any FUSE server costs.
for s, n in (("client", "null"), ("client_r2", "null_r2"),
             ("client_r4", "null_r4")):
    r = sorted(a / b for a, b in zip(t[n], t[s]))
    print("  %-17s / %-11s median %.3f (min %.3f, max %.3f)" % (
        s, n, statistics.median(r), r[0], r[-1]))
    out.append("%s_of_%s=%.3f %s_of_%s_min=%.3f %s_of_%s_max=%.3f" % (
        s, n, statistics.median(r), s, n, r[0], s, n, r[-1]))
# Older keys, kept: requests per pass of the client side.
out.append("client_requests_per_pass=%.0f" % (use["client"][1] / passes))
# One machine-readable line last, for bench/report.py (keys: add, never rename).
print("RESULT fallback " + " ".join(out))
PY
