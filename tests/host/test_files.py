# SPDX-License-Identifier: GPL-2.0-or-later
"""Files made with the CLI are visible at once and read back byte for byte
through read(2), mmap, and the device itself (decoded independently)."""
import mmap
import os
import subprocess

import pytest

import famfs_host as fh


def test_status_keys(mnt):
    st = mnt.status()
    for key in ("mode", "device", "role", "pid", "mountpoint", "requests",
                "log_entries", "files", "dirs", "poll_ms"):
        assert key in st, key
    assert st["mode"] == "fallback"
    assert st["role"] == "master"
    assert st["device"] == mnt.dev
    assert st["mountpoint"] == mnt.mnt
    assert int(st["requests"]) > 0


def test_cli_files_visible(mnt, master):
    m = mnt.mnt
    master.famfs("mkdir", "-p", os.path.join(m, "a/b"))
    master.famfs("creat", "-s", "3m", "-r", "-S", "7", os.path.join(m, "a/b/f"))
    # visible as soon as the command returned: no logplay, no waiting
    assert os.listdir(os.path.join(m, "a")) == ["b"]
    assert os.stat(os.path.join(m, "a/b/f")).st_size == 3 << 20
    master.famfs("verify", "-S", "7", "-f", os.path.join(m, "a/b/f"))
    src = os.path.join(os.path.dirname(fh.__file__), "famfs_host.py")
    master.famfs("cp", src, os.path.join(m, "a/"))
    with open(src, "rb") as f, open(os.path.join(m, "a/famfs_host.py"),
                                    "rb") as g:
        assert f.read() == g.read()
    st = mnt.status()
    assert st["files"] == "2" and st["dirs"] == "2"


def test_directory_tree_copy(mnt, master, tmp_path):
    src = tmp_path / "tree"
    for d in ("x", "x/y", "z"):
        (src / d).mkdir(parents=True)
    for i, p in enumerate(("x/1", "x/y/2", "z/3", "4")):
        (src / p).write_bytes(os.urandom(1000 + i * 70000))
    master.famfs("cp", "-r", str(src), os.path.join(mnt.mnt, "tree"))
    for p in ("x/1", "x/y/2", "z/3", "4"):
        assert (src / p).read_bytes() == \
            open(os.path.join(mnt.mnt, "tree", p), "rb").read()
    assert sorted(os.listdir(os.path.join(mnt.mnt, "tree"))) == \
        ["4", "x", "z"]


def _check_file(mnt, path, data):
    ino = os.stat(path).st_ino
    size, fmap = fh.file_entry(mnt.dev, ino)
    assert size == len(data)
    with open(path, "rb") as f:
        assert f.read() == data
    fd = os.open(path, os.O_RDONLY)
    try:
        with mmap.mmap(fd, len(data), mmap.MAP_SHARED, mmap.PROT_READ) as mm:
            assert mm[:] == data
    finally:
        os.close(fd)
    # the bytes are where the log says they are
    assert fh.read_via_fmap(mnt.dev, fmap, size) == data
    return fmap


def _roundtrip(mnt, master, name, size, *creat_opts):
    path = os.path.join(mnt.mnt, name)
    master.famfs("creat", "-s", str(size), *creat_opts, path)
    data = os.urandom(size)
    with open(path, "r+b") as f:
        f.write(data)
    return _check_file(mnt, path, data)


def test_readback_simple(mnt, master):
    fmap = _roundtrip(mnt, master, "simple", 5 * fh.MiB + 12345)
    assert fmap[0] == "simple"


def test_readback_interleaved(mnt, master):
    fmap = _roundtrip(mnt, master, "striped", 37 * fh.MiB + 999,
                      "-N", "4", "-B", "8", "-C", "2m")
    assert fmap[0] == "interleave" and len(fmap[2]) == 4


def test_mmap_write_reaches_device(mnt, master):
    path = os.path.join(mnt.mnt, "mm")
    size = 4 * fh.MiB
    master.famfs("creat", "-s", str(size), "-N", "2", "-C", "2m", path)
    data = os.urandom(size)
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, size, mmap.MAP_SHARED) as mm:
            mm[:] = data
            mm.flush()
    finally:
        os.close(fd)
    _check_file(mnt, path, data)


def test_chkread_cli(mnt, master):
    path = os.path.join(mnt.mnt, "ck")
    master.famfs("creat", "-s", "6m", "-r", "-S", "3", "-N", "3", "-B", "3",
                 "-C", "2m", path)
    master.famfs("chkread", path)
    master.famfs("verify", "-S", "3", "-f", path)


def test_statfs_from_free_map(mnt, master):
    before = os.statvfs(mnt.mnt)
    master.famfs("creat", "-s", "10m", os.path.join(mnt.mnt, "s"))
    after = os.statvfs(mnt.mnt)
    assert before.f_frsize == 2 * fh.MiB
    assert before.f_blocks * before.f_frsize == 1 << 30
    assert before.f_bfree - after.f_bfree == 5
    assert before.f_ffree - after.f_ffree == 1
    out = subprocess.run(["df", "-B1", mnt.mnt], capture_output=True,
                         text=True).stdout
    assert mnt.mnt in out


@pytest.fixture
def loopdev(tmp_path, master):
    """A famfs on a loop block device (as on a pmem namespace in fsdax
    mode), detached afterwards."""
    img = str(tmp_path / "blk.img")
    with open(img, "wb") as f:
        f.truncate(256 << 20)
    dev = fh.losetup(img)
    try:
        fh.run([fh.MKFS, dev], env=master.env)
        yield dev
    finally:
        fh.run(["losetup", "-d", dev], check=False)


def test_block_device(loopdev, master, mounts, tmp_path):
    """A block device is served like an image file; nothing mistakes its
    zero st_size for a device that shrank."""
    m = fh.Mount(master, loopdev, str(tmp_path / "blk"),
                 str(tmp_path / "fused-blk.log"))
    mounts.append(m)
    m.mount()
    path = os.path.join(m.mnt, "f")
    master.famfs("creat", "-s", "8m", "-r", "-S", "21", path)
    master.famfs("verify", "-S", "21", "-f", path)
    with open(path, "rb") as f:
        assert f.read(4096) == fh.read_via_fmap(
            loopdev, fh.file_entry(loopdev, os.stat(path).st_ino)[1], 4096)
    assert m.status()["device_health"] != "lost"
    m.unmount()
