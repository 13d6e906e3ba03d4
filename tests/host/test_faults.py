# SPDX-License-Identifier: GPL-2.0-or-later
"""Bad input and failures: corrupt log tail, full device, full log,
missing device, a killed daemon, unmount and stop signals."""
import errno
import os
import shutil
import signal
import tempfile
import time

import pytest

import famfs_host as fh


def _names(d):
    return sorted(n for n in os.listdir(d) if n != ".meta")


def _no_space(msg):
    return "space" in msg.lower() or "no free" in msg.lower()


def test_corrupt_log_tail(tmp_path, master, device, mounts):
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    for i in range(3):
        master.famfs("creat", "-s", "2m", "-r", "-S", str(i + 1),
                     os.path.join(m.mnt, "f%d" % i))
    m.unmount()
    # flip bytes inside the last entry's path: its CRC no longer matches
    last = fh.log_next_index(device) - 1
    with open(device, "r+b") as f:
        f.seek(fh.LOG_OFFSET + fh.LOG_HDR + last * fh.ENTRY + 40)
        b = f.read(4)
        f.seek(-4, 1)
        f.write(bytes(x ^ 0xff for x in b))
    m.mount()
    assert _names(m.mnt) == ["f0", "f1"]
    for i in range(2):
        master.famfs("verify", "-S", str(i + 1), "-f",
                     os.path.join(m.mnt, "f%d" % i))
    assert m.status()["log_damaged"] == "1"
    assert "damaged at entry %d" % last in m.log_text()
    # the master refuses to append after damage rather than guess
    p = master.famfs("creat", "-s", "2m", os.path.join(m.mnt, "g"),
                     check=False)
    assert p.returncode == 1 and "damaged" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(m.mnt, "g"))


def test_full_device_enospc(tmp_path, master, mounts):
    dev = str(tmp_path / "small.img")
    fh.mkfs(master, dev, 64 * fh.MiB)
    m = fh.Mount(master, dev, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    free = os.statvfs(m.mnt)
    room = free.f_bfree * free.f_frsize
    p = master.famfs("creat", "-s", str(room + 2 * fh.MiB),
                     os.path.join(m.mnt, "big"), check=False)
    assert p.returncode == 1
    assert _no_space(p.stderr), p.stderr
    assert not os.path.exists(os.path.join(m.mnt, "big"))
    master.famfs("creat", "-s", str(room), os.path.join(m.mnt, "fits"))
    p = master.famfs("creat", "-s", "2m", os.path.join(m.mnt, "more"),
                     check=False)
    assert p.returncode == 1 and _no_space(p.stderr), p.stderr
    assert os.statvfs(m.mnt).f_bfree == 0
    master.famfs("fsck", m.mnt)


def test_mount_errors(tmp_path, master, device, mnt):
    target = str(tmp_path / "other")
    os.makedirs(target)
    env = master.env

    # mount.famfs(8): 32 when the mount failed, with the reason.
    def mount(dev, tgt, *opts):
        cmd = [fh.MOUNT, dev, tgt] + (["-o", ",".join(opts)] if opts else [])
        return fh.run(cmd, env=env, check=False)

    p = mount(str(tmp_path / "missing.img"), target)
    assert p.returncode == 32 and "no such device" in p.stderr
    junk = str(tmp_path / "junk.img")
    with open(junk, "wb") as f:
        f.truncate(64 * fh.MiB)
    p = mount(junk, target)
    assert p.returncode == 32 and "not a famfs" in p.stderr
    p = mount(device, mnt.mnt)
    assert p.returncode == 32 and "already mounted" in p.stderr
    p = mount(device, target)  # a second master mount of the same device
    assert p.returncode == 32 and "already mounted" in p.stderr
    # fallback=no never falls back: without the famfs module because it
    # is missing; with it (/dev/famfs-fuse) because an image file is no
    # devdax device, which only fallback mode serves. One of the two
    # holds on any machine, and either refusal is checked.
    p = mount(device, target, "fallback=no")
    assert p.returncode == 32, p.stderr
    if os.path.exists("/dev/famfs-fuse"):
        print("\n# fallback=no: the famfs module is loaded here; checked "
              "with an image file, which it cannot serve")
        assert "is not a devdax device, so only fallback mode can serve " \
            "it, and fallback is disabled" in p.stderr, p.stderr
    else:
        assert "famfs kernel module not loaded and fallback disabled" \
            in p.stderr, p.stderr
    assert not fh.mounts_at(target)
    p = mount(device, target, "bogus=1")
    assert p.returncode == 32 and "unknown mount option" in p.stderr
    p = mount(str(tmp_path / "famfs.img"), str(tmp_path / "nodir"))
    assert p.returncode == 32 and "does not exist" in p.stderr


def _conf_mount(conf, tmp_path, master, device, mounts):
    """An unmounted Mount whose famfs.conf holds @conf."""
    with open(master.env["FAMFS_CONF"], "w") as f:
        f.write(conf)
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    return m


def test_conf_defaults(tmp_path, master, device, mounts):
    m = _conf_mount("# test defaults\npoll_ms = 250  # faster\n"
                    "fallback = auto\n", tmp_path, master, device, mounts)
    p = m.mount(extra="shadow=/tmp/x")
    assert "shadow" in p.stderr  # accepted with a note
    assert m.status()["poll_ms"] == "250"
    m.unmount()
    m.mount(extra="poll_ms=300")  # -o wins over the file
    assert m.status()["poll_ms"] == "300"


def _readahead_kb(mnt):
    st = os.stat(mnt)
    bdi = "/sys/class/bdi/%d:%d/read_ahead_kb" % (os.major(st.st_dev),
                                                   os.minor(st.st_dev))
    for _ in range(100):  # the daemon sets it just after INIT
        with open(bdi) as f:
            kb = int(f.read())
        if kb != 128:
            return kb
        time.sleep(0.02)
    return kb


def test_readahead_kb_option(tmp_path, master, device, mounts):
    m = _conf_mount("readahead_kb = 512\n", tmp_path, master, device,
                    mounts)
    m.mount()
    assert _readahead_kb(m.mnt) == 512
    m.unmount()
    m.mount(extra="readahead_kb=2048")
    assert _readahead_kb(m.mnt) == 2048
    m.unmount()
    p = m.mount(check=False, extra="readahead_kb=lots")
    assert p.returncode == 32 and "bad value for readahead_kb" in p.stderr


def test_umount_stops_daemon(mnt):
    pid = mnt.pid
    assert fh.run(["umount", mnt.mnt], check=False).returncode == 0
    assert mnt.wait_daemon_exit(), "daemon %d still running" % pid
    assert "unmounted" in mnt.log_text()


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_signal_unmounts(mnt, sig):
    os.kill(mnt.pid, getattr(signal, sig))
    assert mnt.wait_daemon_exit()
    assert not mnt.mounted()


def test_sigkill_enotconn_remount(mnt, master):
    for i in range(3):
        master.famfs("creat", "-s", "2m", "-r", "-S", str(10 + i),
                     os.path.join(mnt.mnt, "k%d" % i))
    os.kill(mnt.pid, signal.SIGKILL)
    assert mnt.wait_daemon_exit()
    with pytest.raises(OSError) as e:
        os.listdir(mnt.mnt)
    assert e.value.errno == errno.ENOTCONN
    assert fh.run(["umount", mnt.mnt], check=False).returncode == 0
    assert not mnt.mounted()
    mnt.mount()
    assert _names(mnt.mnt) == ["k0", "k1", "k2"]
    for i in range(3):
        master.famfs("verify", "-S", str(10 + i), "-f",
                     os.path.join(mnt.mnt, "k%d" % i))


def test_device_shrunk_under_mount(mnt, master, tmp_path):
    """The image file loses its data while mounted (as a device removed
    would): the daemon stays up, says why once, fails what needs the
    device with EIO, famfs status reports it, and umount works."""
    master.famfs("creat", "-s", "8m", "-r", "-S", "4",
                 os.path.join(mnt.mnt, "kept"))
    before = os.listdir(mnt.mnt)
    os.truncate(mnt.dev, 1 << 20)
    for fn in (lambda: open(os.path.join(mnt.mnt, "kept"), "rb").read(),
               lambda: os.stat(os.path.join(mnt.mnt, "never-made")),
               lambda: os.statvfs(mnt.mnt),
               lambda: open(os.path.join(mnt.mnt, ".meta/.log"),
                            "rb").read(64)):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == errno.EIO
    assert fh.alive(mnt.pid), "the daemon died of its device going away"
    assert os.listdir(mnt.mnt) == before  # the namespace, from memory
    assert mnt.status()["device_health"] == "lost"
    p = master.famfs("status", mnt.mnt, check=False)
    assert p.returncode == 1
    assert "NOT HEALTHY" in p.stdout and "went away" in p.stdout
    log = mnt.log_text()
    assert log.count("is gone: the image file is now smaller") == 1, log
    assert fh.run(["umount", mnt.mnt], check=False).returncode == 0
    assert mnt.wait_daemon_exit()


def test_device_shrunk_under_a_write(mnt, tmp_path):
    """The image shrinks while a file is being written through the mount:
    the next write fails with EIO, the image is not grown back by it (the
    daemon writes an image with pwrite, which would extend a short file)
    and the file is not logged."""
    path = os.path.join(mnt.mnt, "growing")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        assert os.write(fd, b"a" * (1 << 20)) == 1 << 20
        os.truncate(mnt.dev, 1 << 20)
        with pytest.raises(OSError) as e:
            os.write(fd, b"b" * (1 << 20))
        assert e.value.errno == errno.EIO
        assert os.stat(mnt.dev).st_size == 1 << 20
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    assert os.stat(mnt.dev).st_size == 1 << 20
    assert fh.alive(mnt.pid)
    # The kernel sends the last close just after close(2) returns.
    end = time.monotonic() + 5
    while "growing: discarded" not in mnt.log_text() and \
            time.monotonic() < end:
        time.sleep(0.01)
    log = mnt.log_text()
    assert "growing: discarded, not logged: a write failed" in log, log
    assert fh.run(["umount", mnt.mnt], check=False).returncode == 0
    assert mnt.wait_daemon_exit()
    # nothing was logged through the mount, to its last line
    assert "logged through the mount" not in mnt.log_text()


def test_daemon_refuses_unprivileged(device):
    """An unprivileged user who can reach the device and the mount point
    is refused for lack of privilege (pytest's own temp directory is 0700:
    the daemon would fail before the privilege check)."""
    d = tempfile.mkdtemp(prefix="famfs-unpriv-")
    try:
        os.chmod(d, 0o755)
        dev = os.path.join(d, "famfs.img")
        shutil.copyfile(device, dev)
        os.chmod(dev, 0o644)
        mnt = os.path.join(d, "mnt")
        os.makedirs(mnt)
        os.chmod(mnt, 0o777)
        p = fh.run(["setpriv", "--reuid=65534", "--regid=65534",
                    "--clear-groups", "--inh-caps=-all", fh.FUSED, "-f", dev,
                    mnt], check=False)
        assert p.returncode == 1, p.stderr
        assert "famfs mounts are privileged" in p.stderr, p.stderr
        assert not os.path.ismount(mnt)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_full_log(tmp_path, master, mounts):
    # tmpfs when there is one: every append msyncs the image twice
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else str(tmp_path)
    work = tempfile.mkdtemp(prefix="famfs-host-", dir=base)
    try:
        dev = os.path.join(work, "log.img")
        fh.mkfs(master, dev, 64 * fh.MiB)
        m = fh.Mount(master, dev, str(tmp_path / "mnt"),
                     str(tmp_path / "fused.log"))
        mounts.append(m)
        m.mount()
        slots = int(m.status()["log_slots"])
        src = tmp_path / "many"
        for i in range(slots + 10):
            (src / ("d%05d" % i)).mkdir(parents=True)
        p = master.famfs("cp", "-r", str(src), os.path.join(m.mnt, "t"),
                         check=False)
        assert "log is full" in p.stderr, p.stderr
        p = master.famfs("mkdir", os.path.join(m.mnt, "one-more"),
                         check=False)
        assert p.returncode == 1 and "log is full" in p.stderr
        p = master.famfs("creat", "-s", "2m", os.path.join(m.mnt, "f"),
                         check=False)
        assert p.returncode == 1 and "log is full" in p.stderr
        assert os.statvfs(m.mnt).f_ffree == 0
        assert len(os.listdir(os.path.join(m.mnt, "t"))) == slots - 1
        # a directory's mode change needs an entry too: refused, unchanged
        t = os.path.join(m.mnt, "t")
        mode = os.stat(t).st_mode & 0o7777
        with pytest.raises(OSError) as e:
            os.chmod(t, mode ^ 0o070)
        assert e.value.errno == errno.ENOSPC
        assert os.stat(t).st_mode & 0o7777 == mode
        assert m.status()["log_entries"] == str(slots)
        master.famfs("fsck", m.mnt)
        m.unmount()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_restart_replaces_dead_mount(mnt, master):
    """What systemd's Restart=on-failure relies on: a new daemon started on
    the mount point of one that died takes the dead mount's place."""
    master.famfs("creat", "-s", "2m", "-r", "-S", "5",
                 os.path.join(mnt.mnt, "r0"))
    os.kill(mnt.pid, signal.SIGKILL)
    assert mnt.wait_daemon_exit()
    with pytest.raises(OSError) as e:
        os.listdir(mnt.mnt)
    assert e.value.errno == errno.ENOTCONN
    assert mnt.mounted()
    p = fh.run([fh.FUSED, "-o", "logfile=" + mnt.logfile, mnt.dev, mnt.mnt],
               env=master.env)
    mnt.pid = int(mnt.status()["pid"])
    assert "replacing a famfs mount whose daemon is gone" in mnt.log_text()
    assert len(fh.mounts_at(mnt.mnt)) == 1, \
        "the dead mount is still stacked under the new one"
    master.famfs("verify", "-S", "5", "-f", os.path.join(mnt.mnt, "r0"))
    master.famfs("creat", "-s", "2m", os.path.join(mnt.mnt, "r1"))
    assert p.returncode == 0


def test_live_mount_is_not_replaced(mnt, master):
    """Only a dead mount is replaced: a second daemon on a live one fails."""
    p = fh.run([fh.FUSED, mnt.dev, mnt.mnt], env=master.env, check=False)
    assert p.returncode == 1
    assert "already a famfs mount point" in p.stderr, p.stderr
    assert fh.alive(mnt.pid)
    assert mnt.status()["pid"] == str(mnt.pid)


def test_client_cannot_be_master(tmp_path, client, device, mounts):
    """A host whose UUID is not the superblock's cannot act as master."""
    m = fh.Mount(client, device, str(tmp_path / "cm"),
                 str(tmp_path / "fused-cm.log"))
    mounts.append(m)
    p = m.mount(check=False, extra="role=master")
    # mount.famfs(8) promises 32 for a failed mount, whatever status
    # famfs-fused, which refuses here, exits with.
    assert p.returncode == 32, p.returncode
    assert "role=master asked, but this host is a client" in p.stderr, \
        p.stderr
    assert not m.mounted()
    m.mount()
    assert m.status()["role"] == "client"
    p = client.famfs("creat", "-s", "2m", os.path.join(m.mnt, "x"),
                     check=False)
    assert p.returncode == 1 and "this host is a client" in p.stderr, \
        p.stderr


def test_other_filesystem_is_not_a_famfs(tmp_path, master):
    """A device holding another file system: named, and left untouched."""
    img = str(tmp_path / "ext4.img")
    with open(img, "wb") as f:
        f.truncate(64 * fh.MiB)
    fh.run(["mkfs.ext4", "-q", "-F", img])
    with open(img, "rb") as f:
        before = f.read()
    target = str(tmp_path / "t")
    os.makedirs(target)
    p = fh.run([fh.MOUNT, img, target], env=master.env, check=False)
    assert p.returncode == 32 and "not a famfs" in p.stderr, p.stderr
    p = master.famfs("fsck", img, check=False)
    # famfs(8): fsck exits 2 when there is no valid famfs
    assert p.returncode == 2, p.returncode
    assert "no famfs superblock" in p.stdout and \
        "NOT A VALID FAMFS" in p.stdout, p.stdout
    with open(img, "rb") as f:
        assert f.read() == before


def test_odd_mount_point_is_found(tmp_path, master, device, mounts):
    """A mount point whose name holds a space, a backslash and a byte that
    is not UTF-8: the tests find it in /proc/self/mountinfo (escaped
    there), and unmount it afterwards."""
    mnt = os.path.join(str(tmp_path), os.fsdecode(b"odd \\ \xff dir"))
    m = fh.Mount(master, device, mnt, str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    assert m.mounted()
    at = fh.mounts_at(mnt)
    assert len(at) == 1 and {"nosuid", "nodev"} <= at[0]["opts"], at
    assert at[0]["fstype"] == "fuse.famfs", at
    m.unmount()
    assert not m.mounted() and not fh.mounts_at(mnt)


def test_log_writes_stay_in_the_log(mnt, master):
    """Root may write .meta/.log, but only inside it: a write running past
    its end stops at the end (the kernel sends it a page at a time, and
    the page past the end fails), one starting at or past the end fails
    with EFBIG, and the data after the log is never touched."""
    master.famfs("creat", "-s", "2m", "-r", "-S", "3",
                 os.path.join(mnt.mnt, "first"))
    log = os.path.join(mnt.mnt, ".meta/.log")
    log_len = os.stat(log).st_size
    assert log_len >= 8 * fh.MiB

    def around_end():
        with open(mnt.dev, "rb") as f:
            f.seek(fh.LOG_OFFSET + log_len - 4096)
            return f.read(4096), f.read(4096)

    tail, after = around_end()
    fd = os.open(log, os.O_RDWR)
    try:
        for off, n in ((log_len - 10, 20), (log_len - 1, 4097)):
            assert os.pwrite(fd, b"\xee" * n, off) == log_len - off
            assert around_end()[1] == after, (off, n)
        for off, n in ((log_len, 1), (log_len + 4096, 4096)):
            with pytest.raises(OSError) as e:
                os.pwrite(fd, b"\xee" * n, off)
            assert e.value.errno == errno.EFBIG, (off, n)
        assert around_end()[1] == after
        assert os.pwrite(fd, tail, log_len - 4096) == 4096
    finally:
        os.close(fd)
    assert around_end() == (tail, after)
    master.famfs("verify", "-S", "3", "-f", os.path.join(mnt.mnt, "first"))


def test_a_stop_after_a_lazy_umount_leaves_the_next_mount_alone(mnt, master):
    """umount -l while a file is being written leaves the file system to
    its open files; a stop signal then waits for the file and takes down
    the daemon's own mount only: whatever was mounted on the path since
    (here a tmpfs) stays, and the file is logged."""
    from test_restart import _writer
    path = mnt.mnt
    w = _writer(os.path.join(path, "late"), [])
    try:
        fh.run(["umount", "-l", path])
        fh.run(["mount", "-t", "tmpfs", "famfs-test-next", path])
        os.kill(mnt.pid, signal.SIGTERM)
        time.sleep(0.3)
        assert fh.alive(mnt.pid), "the stop left a file being written"
        w.stdin.close()
        assert w.stdout.readline().strip() == "close ok"
        assert mnt.wait_daemon_exit(timeout=20)
        top = fh.mounts_at(path)
        assert top and top[-1]["fstype"] == "tmpfs", top
    finally:
        if w.poll() is None:
            w.kill()
        w.wait()
        while any(m["fstype"] == "tmpfs" for m in fh.mounts_at(path)):
            fh.run(["umount", path])
    mnt.mount()
    with open(os.path.join(path, "late"), "rb") as f:
        assert f.read() == b"x" * (3 << 20)
