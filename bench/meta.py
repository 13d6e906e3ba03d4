#!/usr/bin/python3
"""Metadata benchmarks on this host: famfs on an image file in /dev/shm,
mounted through this host's /dev/fuse (FUSE fallback mode; metadata work
is the same user-space code in famfs mode). Prints RESULT lines for
bench/report.py:

  meta_creat   files created per second by `famfs creat -s 2m` (one
               process per file, on the master, through its mount), on a
               famfs with an empty log and on one whose log is nearly
               full, against `fallocate -l 2m` of a file in tmpfs (also one
               process per file), in interleaved rounds; ratios per round.
  meta_batch   files per second of one `famfs creat -M ...` making
               BATCH files (one log replay, then an append per file).
  meta_replay  libfamfs replaying a full default log (8 MiB, every slot
               used), by famfs-bench-replay.
  meta_tar     files per second of `tar -x` of TAR_FILES small files into
               the master's mount (each logged at its close by the
               daemon) against the same into tmpfs, and into
               famfs-bench-fuse-null (a FUSE server that accepts every
               request at once: FUSE's own ceiling), mounted once as is
               and once with default_permissions (as famfs-fused is), in
               interleaved rounds.
  meta_rsync   files per second of `rsync -a` of the same TAR_FILES files
               into a mount with commit_delay=1000 (rsync renames each
               file after its close) against the same into tmpfs
               (interleaved).
  meta_cp      MiB/s of `cp` of a CP_MIB MiB file into the mount against
               the same into tmpfs (interleaved; the tmpfs copy is
               removed after each round, the famfs one cannot be).
  devcopy      how the daemon writes a file's bytes into device memory:
               non-temporal stores (famfs_cache_copy) against memcpy and
               a flush of the range, 256 MiB in 1 MiB writes into a file
               in /dev/shm (this host's memory and CPU), by
               famfs-bench-copy.
  meta_mount   mount.famfs of a famfs with a full log against one with a
               one-entry log, until a stat of the last logged file
               succeeds, as a client host would (interleaved).

  bench/meta.py            (needs root; run after ninja -C build)

Environment: BUILD_DIR (default build), BENCH_ROUNDS (default 10).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, os.environ.get("BUILD_DIR", "build"))
FAMFS = os.path.join(BUILD, "daemon/tools/famfs")
MKFS = os.path.join(BUILD, "daemon/tools/mkfs.famfs")
MOUNT = os.path.join(BUILD, "daemon/mount/mount.famfs")
REPLAY = os.path.join(BUILD, "bench/famfs-bench-replay")
NULL_FUSE = os.path.join(BUILD, "bench/famfs-bench-fuse-null")
COPY = os.path.join(BUILD, "bench/famfs-bench-copy")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "10"))
PER_ROUND = 10          # files per side per round
BATCH = 1000            # files per batch creat
BATCH_PASSES = 5
TAR_FILES = 200         # small files per tar -x
CP_MIB = 256            # the file cp copies
CP_ROUNDS = 5
LOG_SLOTS = 15420       # a default (8 MiB) log
DIRS = 128              # the full log: 128 directories, files in them
MiB = 1 << 20


def run(*args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.DEVNULL, **kw)


def timed(*args):
    t = time.perf_counter()
    run(*args)
    return time.perf_counter() - t


def spread(values):
    v = sorted(values)
    return statistics.median(v), v[0], v[-1]


def result(name, **kv):
    print("RESULT %s %s" % (name, " ".join(
        "%s=%s" % (k, ("%.4g" % v) if isinstance(v, float) else v)
        for k, v in kv.items())), flush=True)


def mkfs(path, size):
    with open(path, "wb") as f:
        f.truncate(size)           # sparse: only the log is ever written
    run(MKFS, path)


def fill(img, entries):
    """Log DIRS directories, then 2 MiB files in them, up to @entries."""
    dirs = ["d%03d" % i for i in range(DIRS)]
    run(FAMFS, "mkdir", "-D", img, *dirs)
    files = ["--multi=d%03d/f%05d,2m" % (i % DIRS, i)
             for i in range(entries - DIRS)]
    for i in range(0, len(files), 2000):
        run(FAMFS, "creat", "-D", img, *files[i:i + 2000])


class Mount:
    def __init__(self, work, img, name, opts=""):
        self.img, self.mnt = img, os.path.join(work, name)
        self.opts = "logfile=%s.log%s" % (self.mnt, opts)
        os.makedirs(self.mnt, exist_ok=True)

    def mount(self):
        run(MOUNT, self.img, self.mnt, "-o", self.opts)

    def umount(self):
        run("umount", self.mnt)


def bench_creat(empty, full, raw):
    """Interleaved rounds: famfs creat (empty log, nearly full log) and
    fallocate in tmpfs, PER_ROUND files each, one process per file."""
    def famfs_side(m):
        return lambda i: timed(FAMFS, "creat", "-s", "2m",
                               os.path.join(m.mnt, "c%04d" % i))
    sides = {"empty": famfs_side(empty), "full": famfs_side(full),
             "raw": lambda i: timed("fallocate", "-l", "2m",
                                    os.path.join(raw, "c%04d" % i))}
    names = list(sides)
    rate = {n: [] for n in names}
    n = 0
    for r in range(ROUNDS):
        order = names[r % 3:] + names[:r % 3]
        for name in order:
            t = sum(sides[name](n + i) for i in range(PER_ROUND))
            rate[name].append(PER_ROUND / t)
        n += PER_ROUND
    vs_raw = spread(e / w for e, w in zip(rate["empty"], rate["raw"]))
    full_vs_empty = spread(f / e for f, e in zip(rate["full"], rate["empty"]))
    result("meta_creat", files=ROUNDS * PER_ROUND, rounds=ROUNDS,
           empty_files_per_s=statistics.median(rate["empty"]),
           full_files_per_s=statistics.median(rate["full"]),
           raw_files_per_s=statistics.median(rate["raw"]),
           ratio=vs_raw[0], ratio_min=vs_raw[1], ratio_max=vs_raw[2],
           full_ratio=full_vs_empty[0], full_ratio_min=full_vs_empty[1],
           full_ratio_max=full_vs_empty[2])


def alternate(rounds, sides):
    """@rounds rounds of every side of @sides (name -> fn(round) giving
    seconds), in turn (A B, then B A); seconds per side and round."""
    names = list(sides)
    t = {n: [] for n in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            t[name].append(sides[name](r))
    return t


def small_files(work):
    """TAR_FILES files of 1 to 16 KiB in two directories; their top."""
    src = os.path.join(work, "tarsrc")
    if os.path.isdir(src):
        return src
    os.makedirs(os.path.join(src, "t/sub"))
    for i in range(TAR_FILES):
        with open(os.path.join(src, "t/sub" if i % 2 else "t",
                               "f%03d" % i), "wb") as f:
            f.write(os.urandom(1024 * (1 + i % 16)))
    return src


def bench_tar(work, m, raw):
    """tar -x of TAR_FILES files of 1 to 16 KiB into the mount and tmpfs."""
    src = small_files(work)
    tarball = os.path.join(work, "t.tar")
    run("tar", "-C", src, "-cf", tarball, "t")

    def side(root):
        def one(r):
            d = os.path.join(root, "tar%d" % r)
            os.mkdir(d)
            return timed("tar", "-x", "-f", tarball, "-C", d,
                         "--no-same-owner", "--no-same-permissions")
        return one
    # FUSE's own ceiling: a server that accepts every request at once,
    # once as it comes and once checking permissions in the kernel as
    # famfs-fused has it do (default_permissions)
    servers = []
    try:
        sides = {"famfs": side(m.mnt), "raw": side(raw)}
        for name, opts in (("null", []), ("null_perm", ["default_permissions"])):
            d = os.path.join(work, name)
            os.mkdir(d)
            servers.append((d, subprocess.Popen(
                [NULL_FUSE, d, "16", "1024", "1"] + opts)))
            for _ in range(100):
                if os.path.ismount(d):
                    break
                time.sleep(0.05)
            else:
                sys.exit("bench/meta.py: %s did not mount" % NULL_FUSE)
            sides[name] = side(d)
        t = alternate(ROUNDS, sides)
    finally:
        for d, srv in servers:
            subprocess.run(["umount", d])
            srv.wait()
    ratio = spread(r / f for f, r in zip(t["famfs"], t["raw"]))
    ceiling = spread(r / n for n, r in zip(t["null"], t["raw"]))
    perm = spread(r / n for n, r in zip(t["null_perm"], t["raw"]))
    of_null = spread(n / f for f, n in zip(t["famfs"], t["null_perm"]))
    result("meta_tar", files=TAR_FILES, rounds=ROUNDS,
           famfs_files_per_s=TAR_FILES / statistics.median(t["famfs"]),
           raw_files_per_s=TAR_FILES / statistics.median(t["raw"]),
           ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2],
           null_files_per_s=TAR_FILES / statistics.median(t["null"]),
           null_ratio=ceiling[0], null_ratio_min=ceiling[1],
           null_ratio_max=ceiling[2],
           null_perm_files_per_s=TAR_FILES / statistics.median(
               t["null_perm"]),
           null_perm_ratio=perm[0], null_perm_ratio_min=perm[1],
           null_perm_ratio_max=perm[2], of_null=of_null[0],
           of_null_min=of_null[1], of_null_max=of_null[2])


def bench_rsync(work, m, raw):
    """rsync -a of the small files into the mount (commit_delay=) and
    tmpfs."""
    src = os.path.join(small_files(work), "t") + "/"

    def side(root):
        def one(r):
            return timed("rsync", "-a", src,
                         os.path.join(root, "rsync%d" % r) + "/")
        return one
    t = alternate(ROUNDS, {"famfs": side(m.mnt), "raw": side(raw)})
    ratio = spread(r / f for f, r in zip(t["famfs"], t["raw"]))
    result("meta_rsync", files=TAR_FILES, rounds=ROUNDS,
           famfs_files_per_s=TAR_FILES / statistics.median(t["famfs"]),
           raw_files_per_s=TAR_FILES / statistics.median(t["raw"]),
           ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2])


def bench_cp(work, raw):
    """cp of a CP_MIB MiB file into the mount and into tmpfs. The famfs
    side gets an image of its own, written through once: a device's memory
    is there before a file uses it, where a sparse image's pages would be
    allocated by the copy's first touch (tmpfs allocates its own pages in
    the kernel as it copies)."""
    src = os.path.join(work, "cpsrc")
    with open(src, "wb") as f:
        for _ in range(CP_MIB):
            f.write(os.urandom(MiB))
    img = os.path.join(work, "cp.img")
    with open(img, "wb") as f:
        for _ in range(CP_MIB * CP_ROUNDS + 64):
            f.write(bytes(MiB))
    run(MKFS, "-f", img)
    m = Mount(work, img, "cp")
    m.mount()

    def famfs_side(r):
        return timed("cp", src, os.path.join(m.mnt, "cp%d" % r))

    def raw_side(r):
        dst = os.path.join(raw, "cp%d" % r)
        t = timed("cp", src, dst)
        os.unlink(dst)
        return t
    t = alternate(CP_ROUNDS, {"famfs": famfs_side, "raw": raw_side})
    m.umount()
    ratio = spread(r / f for f, r in zip(t["famfs"], t["raw"]))
    result("meta_cp", mib=CP_MIB, rounds=CP_ROUNDS,
           famfs_mibs=CP_MIB / statistics.median(t["famfs"]),
           raw_mibs=CP_MIB / statistics.median(t["raw"]),
           ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2])


def bench_devcopy(work):
    path = os.path.join(work, "copy.img")
    with open(path, "wb") as f:
        f.truncate(256 * MiB)
    out = subprocess.run([COPY, path, "256", str(ROUNDS)], check=True,
                         capture_output=True, text=True).stdout
    print(out, end="", flush=True)
    os.unlink(path)


def bench_batch(m):
    rates = []
    for p in range(BATCH_PASSES):
        d = "b%d" % p
        run(FAMFS, "mkdir", os.path.join(m.mnt, d))
        args = ["--multi=%s/f%04d,2m" % (os.path.join(m.mnt, d), i)
                for i in range(BATCH)]
        rates.append(BATCH / timed(FAMFS, "creat", *args))
    med, lo, hi = spread(rates)
    result("meta_batch", files=BATCH, passes=BATCH_PASSES,
           files_per_s=med, files_per_s_min=lo, files_per_s_max=hi)


def bench_mount(work, full_img, last, small_img):
    """mount.famfs + stat of the last logged file, full log vs one entry."""
    sides = {"full": (Mount(work, full_img, "mf", ",role=client"), last),
             "small": (Mount(work, small_img, "ms", ",role=client"), "one")}
    t = {n: [] for n in sides}
    for r in range(ROUNDS):
        for name in (("full", "small") if r % 2 == 0 else ("small", "full")):
            m, path = sides[name]
            t0 = time.perf_counter()
            m.mount()
            os.stat(os.path.join(m.mnt, path))
            t[name].append(time.perf_counter() - t0)
            m.umount()
    ratio = spread(f / s for f, s in zip(t["full"], t["small"]))
    result("meta_mount", entries=LOG_SLOTS, rounds=ROUNDS,
           full_ms=statistics.median(t["full"]) * 1e3,
           small_ms=statistics.median(t["small"]) * 1e3,
           ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2])


def main():
    if os.getuid() != 0:
        sys.exit("bench/meta.py: needs root (FUSE mounts)")
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    work = tempfile.mkdtemp(prefix="famfs-bench-meta.", dir=base)
    os.environ.update(FAMFS_SYSTEM_UUID_FILE=os.path.join(work, "uuid"),
                      FAMFS_CONF="/dev/null",
                      FAMFS_FUSED=os.path.join(BUILD,
                                               "daemon/fused/famfs-fused"))
    try:
        empty_img, full_img, small_img, rsync_img = (
            os.path.join(work, n) for n in
            ("empty.img", "full.img", "small.img", "rsync.img"))
        mkfs(empty_img, 16 << 30)
        mkfs(rsync_img, 16 << 30)
        # The creat rounds fill the nearly full log's last slots.
        mkfs(full_img, (LOG_SLOTS * 2 + 64) * MiB)
        fill(full_img, LOG_SLOTS - ROUNDS * PER_ROUND)
        mkfs(small_img, 64 * MiB)
        run(FAMFS, "creat", "-D", small_img, "-s", "2m", "one")
        raw = os.path.join(work, "raw")
        os.mkdir(raw)

        empty, full = Mount(work, empty_img, "e"), Mount(work, full_img, "f")
        delayed = Mount(work, rsync_img, "r", ",commit_delay=1000")
        for m in (empty, full, delayed):
            m.mount()
        bench_creat(empty, full, raw)
        bench_batch(empty)
        bench_tar(work, empty, raw)
        bench_rsync(work, delayed, raw)
        bench_cp(work, raw)
        bench_devcopy(work)
        for m in (empty, full, delayed):
            m.umount()

        replay = subprocess.run([REPLAY, full_img, "20"], check=True,
                                capture_output=True, text=True).stdout
        if " entries=%d " % LOG_SLOTS not in replay:
            sys.exit("bench/meta.py: the log is not full: " + replay)
        print(replay, end="", flush=True)
        bench_mount(work, full_img, "c%04d" % (ROUNDS * PER_ROUND - 1),
                    small_img)
    finally:
        for d in os.listdir(work):
            if os.path.ismount(os.path.join(work, d)):
                subprocess.run(["umount", "-l", os.path.join(work, d)])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
