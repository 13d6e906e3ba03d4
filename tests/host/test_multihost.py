# SPDX-License-Identifier: GPL-2.0-or-later
"""Master and client daemons on one backing file at two mount points."""
import errno
import mmap
import os
import time

import pytest

import famfs_host as fh


@pytest.fixture
def pair(tmp_path, master, client, device, mounts, mnt):
    c = fh.Mount(client, device, str(tmp_path / "client"),
                 str(tmp_path / "fused-client.log"), opts="poll_ms=200")
    mounts.append(c)
    c.mount()
    return mnt, c


def _wait(pred, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return time.monotonic() - t0
        time.sleep(0.005)
    return None


def test_client_role_and_readonly(pair):
    m, c = pair
    st = c.status()
    assert st["role"] == "client" and st["readonly"] == "1"
    assert m.status()["role"] == "master"


def test_client_sees_master_files(pair, master, client, mounts, tmp_path,
                                  capsys):
    m, c = pair
    # Poll only: the client's own timer catches the entry (no lookup).
    # Any bound is about a busy machine, not famfs: it is generous, and
    # the delay is printed (make bench measures latency).
    master.famfs("creat", "-s", "4m", "-r", "-S", "11",
                 os.path.join(m.mnt, "polled"))
    n = fh.log_next_index(m.dev)
    poll = _wait(lambda: int(c.status()["log_entries"]) == n, 60.0)
    assert poll is not None, "client's poll did not catch up within 60 s"
    # Lookup: a miss re-reads the log tail, so a path is visible at once,
    # on the first look, even to a client that never polls.
    q = fh.Mount(client, m.dev, str(tmp_path / "nopoll"),
                 str(tmp_path / "fused-nopoll.log"), opts="poll_ms=0")
    mounts.append(q)
    q.mount()
    master.famfs("creat", "-s", "2m", os.path.join(m.mnt, "looked-up"))
    t0 = time.monotonic()
    assert os.path.exists(os.path.join(q.mnt, "looked-up"))
    seen = time.monotonic() - t0
    assert int(q.status()["log_entries"]) == fh.log_next_index(m.dev)
    with capsys.disabled():
        print("\n# client visibility: poll %.0f ms (poll_ms=200), "
              "lookup %.1f ms" % (poll * 1000, seen * 1000))
    # and the data the master wrote reads the same on the client
    with open(os.path.join(m.mnt, "polled"), "rb") as f, \
            open(os.path.join(c.mnt, "polled"), "rb") as g:
        assert f.read() == g.read()
    master.famfs("verify", "-S", "11", "-f", os.path.join(c.mnt, "polled"))


def _open(path, flags):
    os.close(os.open(path, flags, 0o644))


def test_client_rejects_writes(pair, master, client):
    m, c = pair
    master.famfs("creat", "-s", "2m", os.path.join(m.mnt, "f"))
    before = fh.log_next_index(m.dev)
    p = client.famfs("creat", "-s", "2m", os.path.join(c.mnt, "nope"),
                     check=False)
    assert p.returncode == 1 and "this host is a client" in p.stderr, \
        p.stderr
    p = client.famfs("mkdir", os.path.join(c.mnt, "nodir"), check=False)
    assert p.returncode == 1 and "this host is a client" in p.stderr, \
        p.stderr
    for fn, err in (
            (lambda: _open(os.path.join(c.mnt, "f"), os.O_RDWR),
             errno.EROFS),
            (lambda: _open(os.path.join(c.mnt, "new"),
                           os.O_WRONLY | os.O_CREAT), errno.EROFS),
            (lambda: _open(os.path.join(c.mnt, ".meta/.log"), os.O_RDWR),
             errno.EROFS),
            (lambda: os.unlink(os.path.join(c.mnt, "f")), errno.EROFS)):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == err
    assert fh.log_next_index(m.dev) == before
    master.famfs("fsck", m.mnt)  # a mounted device is refused


def test_client_rw_writes_file_data_never_the_log(tmp_path, master, client,
                                                 device, mounts, mnt):
    """-o client_rw: a client writes file data (what upstream's clients do
    when a file's mode lets them), straight to the device; the log, the
    namespace and the modes stay the master's."""
    c = fh.Mount(client, device, str(tmp_path / "crw"),
                 str(tmp_path / "fused-crw.log"), opts="client_rw")
    mounts.append(c)
    c.mount()
    st = c.status()
    assert (st["role"], st["readonly"], st["data_readonly"]) == \
        ("client", "1", "0")
    assert mnt.status()["data_readonly"] == "0"
    master.famfs("creat", "-s", "2m", os.path.join(mnt.mnt, "f"))
    before = fh.log_next_index(device)
    data = bytes(range(256)) * 16
    fd = os.open(os.path.join(c.mnt, "f"), os.O_RDWR)
    try:
        assert os.pwrite(fd, data, 8192) == len(data)
        os.fsync(fd)
    finally:
        os.close(fd)
    size, fmap = fh.file_entry(device, os.stat(os.path.join(mnt.mnt,
                                                            "f")).st_ino)
    assert fh.read_via_fmap(device, fmap, size)[8192:8192 + 4096] == data
    for fn, err in (
            (lambda: _open(os.path.join(c.mnt, ".meta/.log"), os.O_RDWR),
             errno.EROFS),
            (lambda: _open(os.path.join(c.mnt, "new"),
                           os.O_WRONLY | os.O_CREAT), errno.EROFS),
            (lambda: os.chmod(os.path.join(c.mnt, "f"), 0o600), errno.EPERM),
            (lambda: os.truncate(os.path.join(c.mnt, "f"), 4096),
             errno.EPERM),
            (lambda: os.unlink(os.path.join(c.mnt, "f")), errno.EROFS)):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == err
    assert fh.log_next_index(device) == before
    p = client.famfs("creat", "-s", "2m", os.path.join(c.mnt, "nope"),
                     check=False)
    assert p.returncode == 1 and "this host is a client" in p.stderr
    # ro wins over client_rw.
    r = fh.Mount(client, device, str(tmp_path / "cro"),
                 str(tmp_path / "fused-cro.log"), opts="client_rw,ro")
    mounts.append(r)
    r.mount()
    assert r.status()["data_readonly"] == "1"
    with pytest.raises(OSError) as e:
        _open(os.path.join(r.mnt, "f"), os.O_RDWR)
    assert e.value.errno == errno.EROFS


def test_client_reads_current_bytes(pair, master):
    """What the master writes in place reaches the client: on a kernel
    with FUSE_DIRECT_IO_ALLOW_MMAP (6.6+) even through a descriptor opened
    before the write, otherwise at the next open; a shared mapping on the
    client works either way."""
    m, c = pair
    master.famfs("creat", "-s", "2m", "-r", "-S", "5",
                 os.path.join(m.mnt, "inplace"))
    path = os.path.join(c.mnt, "inplace")
    # Unbuffered: Python's buffer (st_blksize, 512 KiB) would answer the
    # second read itself, whatever the kernel does.
    with open(path, "rb", buffering=0) as f:
        old = f.read(8192)
        new = bytes(b ^ 0xA5 for b in old)
        fd = os.open(os.path.join(m.mnt, "inplace"), os.O_WRONLY)
        try:
            assert os.pwrite(fd, new, 0) == len(new)
        finally:
            os.close(fd)
        f.seek(0)
        again = f.read(8192)
        if c.status()["direct_reads"] == "1":
            assert again == new
        else:
            assert again == old  # the page cache of this open
    with open(path, "rb") as f:
        assert f.read(8192) == new
        mm = mmap.mmap(f.fileno(), 0, mmap.MAP_SHARED, mmap.PROT_READ)
        try:
            assert mm[:8192] == new
        finally:
            mm.close()


def test_cross_linked_file_is_refused(pair, master, client):
    """A log entry whose memory another file owns (famfs clone makes one)
    is refused on every host, the first owner keeps working, and fsck and
    status report it."""
    m, c = pair
    orig, copy = (os.path.join(m.mnt, n) for n in ("orig", "copy"))
    master.famfs("creat", "-s", "4m", "-r", "-S", "21", orig)
    p = master.famfs("clone", orig, copy)
    assert "cross-linked" in p.stderr
    idx = fh.log_next_index(m.dev) - 1
    for mount, host in ((m, master), (c, client)):
        path = os.path.join(mount.mnt, "copy")
        assert _wait(lambda: os.path.exists(path), 5.0) is not None
        assert os.stat(path).st_size == 4 * fh.MiB  # listed, not served
        with pytest.raises(OSError) as e:
            _open(path, os.O_RDONLY)
        assert e.value.errno == errno.EUCLEAN
        host.famfs("verify", "-S", "21", "-f",
                   os.path.join(mount.mnt, "orig"))
        assert mount.status()["overlapping_files"] == "1"
        assert ('log entry %d (file "copy") uses memory of an earlier file'
                % idx) in mount.log_text()
        st = host.famfs("status", mount.mnt, check=False)
        assert st.returncode == 1
        assert "NOT HEALTHY" in st.stdout
        assert "refuses 1 file(s)" in st.stdout
    f = master.famfs("fsck", m.mnt, check=False)
    assert f.returncode == 1
    assert 'log entry %d (file "copy")' % idx in f.stdout
    # the writer still allocates around both: a new file is served
    master.famfs("creat", "-s", "2m", "-r", "-S", "22",
                 os.path.join(m.mnt, "after"))
    master.famfs("verify", "-S", "22", "-f", os.path.join(m.mnt, "after"))
    assert m.status()["overlapping_files"] == "1"
