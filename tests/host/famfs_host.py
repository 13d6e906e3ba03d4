# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for the host tests: the tools, file-backed famfs devices, mounts
through mount.famfs, and a reader of the on-media log written from the
format description (not from our C code), so replies can be checked
against an independent decoding."""
import fcntl
import os
import re
import signal
import struct
import subprocess
import time
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"))

MKFS = os.path.join(BUILD, "daemon/tools/mkfs.famfs")
FAMFS = os.path.join(BUILD, "daemon/tools/famfs")
FUSED = os.path.join(BUILD, "daemon/fused/famfs-fused")
RAWREQ = os.path.join(BUILD, "daemon/fused/fused-rawreq")
MOUNT = os.path.join(BUILD, "daemon/mount/mount.famfs")
PCQ = os.path.join(BUILD, "daemon/tools/pcq")

MiB = 1 << 20
LOG_OFFSET = 2 * MiB
LOG_HDR = 48
LOG_NEXT_INDEX = LOG_OFFSET + 40  # the header's entry count
ENTRY = 544


def run(cmd, env=None, check=True, timeout=60, **kw):
    # Output may name paths that are not UTF-8: kept as os.fsdecode keeps
    # them, so they compare equal to the paths the tests hold.
    kw.setdefault("errors", "surrogateescape")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" %
                             (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p


def _unescape(field):
    """A mountinfo field as the kernel meant it: its octal escapes (\\040
    for a space, \\011, \\012, \\134) decoded, and bytes that are not
    UTF-8 kept as os.fsdecode keeps them, so the result compares equal to
    the str path Python gives for the same name."""
    raw = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m.group(1), 8)]),
                 field)
    return os.fsdecode(raw)


def mountinfo():
    """/proc/self/mountinfo, one dict per mount: id, parent, root, mnt
    (the mount point), opts (a set), fstype, source, super (the
    superblock's options, a set). Read as bytes: a mount point may hold
    any byte, and the text is not always UTF-8."""
    out = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f.read().splitlines():
            fields = line.split(b" ")
            sep = fields.index(b"-")
            out.append({
                "id": int(fields[0]), "parent": int(fields[1]),
                "root": _unescape(fields[3]), "mnt": _unescape(fields[4]),
                "opts": set(_unescape(fields[5]).split(",")),
                "fstype": _unescape(fields[sep + 1]),
                "source": _unescape(fields[sep + 2]),
                "super": set(_unescape(fields[sep + 3]).split(","))})
    return out


def mounts_at(path):
    """The mounts stacked on @path, oldest first."""
    return [m for m in mountinfo() if m["mnt"] == path]


def sweep(top):
    """Unmount (lazily) every mount at or below the directory @top and end
    its daemon: what a test leaves behind when it fails half way. Returns
    the mount points it found."""
    top = top.rstrip("/")
    found = []
    for m in reversed(mountinfo()):
        if m["mnt"] == top or m["mnt"].startswith(top + "/"):
            found.append(m["mnt"])
            pids = _fused_pids(m["mnt"])
            subprocess.run(["umount", "-l", m["mnt"]], capture_output=True)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    return found


def _fused_pids(mnt):
    """famfs-fused processes serving @mnt (found by their command line)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = [os.fsdecode(a) for a in f.read().split(b"\0")]
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == "famfs-fused" \
                and mnt in argv:
            pids.append(int(d))
    return pids


def losetup(img):
    """A loop device backed by @img (detach it with losetup -d). A kernel
    or container without loop devices makes the test impossible here, said
    the one way both tiers' rules know; any other failure fails."""
    import pytest
    if not os.path.exists("/dev/loop-control"):
        pytest.skip("impossible: this kernel or container has no loop "
                    "devices (/dev/loop-control)")
    p = run(["losetup", "-f", "--show", img], check=False)
    assert p.returncode == 0, "losetup: " + p.stderr
    return p.stdout.strip()


class Host:
    """One 'host': its own system UUID file (FAMFS_SYSTEM_UUID_FILE)."""

    def __init__(self, tmp, name):
        self.uuid_file = os.path.join(tmp, "uuid-" + name)
        self.env = dict(os.environ)
        self.env["FAMFS_SYSTEM_UUID_FILE"] = self.uuid_file
        self.env["FAMFS_FUSED"] = FUSED
        self.env["FAMFS_CONF"] = os.path.join(tmp, "famfs.conf")
        # where this host last found each device of a famfs (its own)
        self.env["FAMFS_DEVMAP"] = os.path.join(tmp, "devmap-" + name)
        self.env.pop("NOTIFY_SOCKET", None)

    def famfs(self, *args, check=True, timeout=60):
        return run([FAMFS] + list(args), env=self.env, check=check,
                   timeout=timeout)


def mkfs(host, path, size):
    # 0600, as an image must be (mount.famfs warns about any other mode)
    with open(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600),
              "wb") as f:
        f.truncate(size)
    run([MKFS, path], env=host.env)


def lock_file(dev):
    """Root's writers' lock of the image @dev: named by its identity."""
    st = os.stat(dev)
    os.makedirs("/run/famfs/lock", mode=0o700, exist_ok=True)
    return "/run/famfs/lock/f%d:%d-%d" % (os.major(st.st_dev),
                                          os.minor(st.st_dev), st.st_ino)


def try_log_lock(dev):
    """The writers' lock of @dev taken as a writer takes it (an OFD write
    lock on the lock file): the fd, or None while another writer has it."""
    fd = os.open(lock_file(dev), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK,
                    struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
        return fd
    except OSError:
        os.close(fd)
        return None


def take_log_lock(dev, timeout=10.0):
    """try_log_lock() until it succeeds (a daemon keeps the lock a moment
    after its last file), for at most @timeout seconds."""
    end = time.monotonic() + timeout
    while True:
        fd = try_log_lock(dev)
        if fd is not None:
            return fd
        assert time.monotonic() < end, "the log lock of %s stayed held" % dev
        time.sleep(0.02)


def alive(pid):
    """Running, not just a zombie waiting for its (re)parent to reap it."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Mount:
    def __init__(self, host, dev, mnt, logfile, opts=""):
        self.host, self.dev, self.mnt, self.logfile = host, dev, mnt, logfile
        self.opts = opts
        self.pid = None

    def mount(self, check=True, extra=""):
        os.makedirs(self.mnt, exist_ok=True)
        o = "logfile=" + self.logfile
        for x in (self.opts, extra):
            if x:
                o += "," + x
        p = run([MOUNT, self.dev, self.mnt, "-o", o], env=self.host.env,
                check=check)
        if p.returncode == 0:
            self.pid = int(self.status()["pid"])
        return p

    def status(self):
        with open(os.path.join(self.mnt, ".meta/.status"), "rb") as f:
            lines = os.fsdecode(f.read()).splitlines()
        return dict(l.strip().split("=", 1) for l in lines if "=" in l)

    def mounted(self):
        return bool(mounts_at(self.mnt))

    def unmount(self):
        """Unmount and wait for the daemon; one that does not go is
        killed, so nothing outlives the test."""
        if self.mounted():
            if subprocess.run(["umount", self.mnt],
                              capture_output=True).returncode:
                subprocess.run(["umount", "-l", self.mnt],
                               capture_output=True)
        if not self.wait_daemon_exit():
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.wait_daemon_exit()

    def wait_daemon_exit(self, timeout=5.0):
        if not self.pid:
            return True
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if not alive(self.pid):
                self.pid = None
                return True
            time.sleep(0.02)
        return False

    def log_text(self):
        try:
            with open(self.logfile) as f:
                return f.read()
        except FileNotFoundError:
            return ""


# ---- the on-media log, decoded from the format description -------------

def read_entry(dev, index):
    with open(dev, "rb") as f:
        f.seek(LOG_OFFSET + LOG_HDR + index * ENTRY)
        return f.read(ENTRY)


def write_entry(dev, index, e, count=None):
    """Put entry @e at @index as a writer would (its number and CRC
    redone); with @count, set the log's entry count too."""
    e = bytearray(e)
    struct.pack_into("<Q", e, 0, index)
    struct.pack_into("<Q", e, 536, zlib.crc32(bytes(e[:536])))
    with open(dev, "r+b") as f:
        f.seek(LOG_OFFSET + LOG_HDR + index * ENTRY)
        f.write(e)
        if count is not None:
            f.seek(LOG_NEXT_INDEX)
            f.write(struct.pack("<Q", count))


def log_next_index(dev):
    with open(dev, "rb") as f:
        f.seek(LOG_NEXT_INDEX)
        return struct.unpack("<Q", f.read(8))[0]


def wait_for(cond, timeout=5.0):
    """@cond() true within @timeout seconds? (what it is at the end)"""
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


def wait_entries(dev, n, timeout=5.0):
    """The log holds @n entries. The kernel sends RELEASE after close(2)
    has returned, so the entry of a file closed a moment ago is awaited."""
    wait_for(lambda: log_next_index(dev) >= n, timeout)
    return log_next_index(dev) == n


def file_entry(dev, ino):
    """(size, fmap) of the file logged at index ino - 2."""
    e = read_entry(dev, ino - 2)
    seq, etype = struct.unpack_from("<QI", e, 0)
    assert etype == 0, "entry %d is not a file" % (ino - 2)
    size = struct.unpack_from("<Q", e, 16)[0]
    fm = 16 + 104
    ext_type = struct.unpack_from("<I", e, fm)[0]
    if ext_type == 0:
        n = struct.unpack_from("<I", e, fm + 8)[0]
        exts = [struct.unpack_from("<QQQ", e, fm + 16 + 24 * i)
                for i in range(n)]
        return size, ("simple", exts)
    niext = struct.unpack_from("<I", e, fm + 8)[0]
    assert niext == 1
    nstrips, chunk = struct.unpack_from("<QQ", e, fm + 16)
    strips = [struct.unpack_from("<QQQ", e, fm + 32 + 24 * i)
              for i in range(nstrips)]
    return size, ("interleave", chunk, strips)


def mkdir_entry(dev, index):
    """(mode, uid, gid, relpath) of the MKDIR entry at @index."""
    e = read_entry(dev, index)
    etype = struct.unpack_from("<I", e, 8)[0]
    assert etype == 1, "entry %d is not a mkdir" % index
    uid, gid, mode = struct.unpack_from("<III", e, 16)
    rel = e[28:28 + 80].split(b"\0")[0].decode()
    return mode, uid, gid, rel


def dev_offset(fmap, off):
    """Device offset of file offset off, per DESIGN §3."""
    if fmap[0] == "simple":
        for _, o, ln in fmap[1]:
            if off < ln:
                return o + off
            off -= ln
        raise ValueError("offset past the map")
    _, chunk, strips = fmap
    c = off // chunk
    strip = strips[c % len(strips)]
    return strip[1] + (c // len(strips)) * chunk + off % chunk


def read_via_fmap(dev, fmap, size):
    out = bytearray()
    with open(dev, "rb") as f:
        off = 0
        while off < size:
            d = dev_offset(fmap, off)
            step = min(size - off, 4096 - (off % 4096))
            f.seek(d)
            out += f.read(step)
            off += step
    return bytes(out)
