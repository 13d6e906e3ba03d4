# SPDX-License-Identifier: GPL-2.0-or-later
"""Edges of creation through the master's mount (daemon/fused/create.c and
how daemon/fused/ops.c routes to it) that test_posix_create.py leaves
open: a file's size, mode and owner as the log gets them after writes,
fallocate, truncate, chmod and chown before its last close; who may open
a file still being written; the group a set-group-ID directory hands
down; the bounds of a name; and the log slots pending files keep."""
import ctypes
import errno
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

import famfs_host as fh

FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2
_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                            ctypes.c_int64]


def _fallocate(fd, mode, off, length):
    """fallocate(2) itself: os.posix_fallocate knows no mode, and glibc's
    posix_fallocate writes zeros where the file system says EOPNOTSUPP."""
    if _libc.fallocate(fd, mode, off, length):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def _file_owner_mode(dev, ino):
    """(mode, uid, gid) of the FILE entry of inode @ino, from the log."""
    e = fh.read_entry(dev, ino - 2)
    assert struct.unpack_from("<I", e, 8)[0] == 0, "not a file entry"
    uid, gid, mode = struct.unpack_from("<III", e, 28)
    return mode, uid, gid


def _unit(mnt):
    return os.statvfs(mnt.mnt).f_frsize


def _fsck_clean(master, path):
    p = master.famfs("fsck", path, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_write_inside_a_pending_file_keeps_its_size(mnt, master):
    """A write that ends before the end of a file being written changes
    its bytes, not its size: the log gets the size of the furthest byte
    written, not of the last write."""
    path = os.path.join(mnt.mnt, "rewritten")
    before = fh.log_next_index(mnt.dev)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        assert os.write(fd, b"a" * 100) == 100
        assert os.pwrite(fd, b"B" * 5, 10) == 5
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    want = b"a" * 10 + b"B" * 5 + b"a" * 85
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    assert size == 100
    assert fh.read_via_fmap(mnt.dev, fmap, size) == want
    with open(path, "rb") as f:
        assert f.read() == want


def test_fallocate_inside_a_pending_file_never_shrinks_it(mnt, master):
    """posix_fallocate of a range a file being written already covers
    changes nothing: its size stays that of its bytes."""
    path = os.path.join(mnt.mnt, "prealloc-short")
    before = fh.log_next_index(mnt.dev)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"x" * 5000)
        os.posix_fallocate(fd, 0, 10)
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    assert fh.file_entry(mnt.dev, os.stat(path).st_ino)[0] == 5000
    with open(path, "rb") as f:
        assert f.read() == b"x" * 5000


def test_fallocate_keep_size_reserves_memory_but_not_size(mnt, master):
    """fallocate(FALLOC_FL_KEEP_SIZE) of a file being written reserves its
    memory (st_blocks and df show it) and leaves its size alone; at its
    close the file keeps only the memory its size needs."""
    unit = _unit(mnt)
    path = os.path.join(mnt.mnt, "keep")
    before = fh.log_next_index(mnt.dev)
    free = os.statvfs(mnt.mnt).f_bfree
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        _fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 2 * unit)
        assert os.statvfs(mnt.mnt).f_bfree == free - 2
        st = os.stat(path)
        assert st.st_size == 0
        assert st.st_blocks * 512 == 2 * unit
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    assert size == 0
    # an empty file still has one unit, and only that
    assert [ln for _, _, ln in fmap[1]] == [unit]
    assert os.statvfs(mnt.mnt).f_bfree == free - 1
    _fsck_clean(master, mnt.mnt)


def test_st_blocks_of_a_pending_file_counts_its_memory(mnt):
    """A file being written shows the memory reserved for it in st_blocks
    (what du adds up), a whole allocation unit for its first byte."""
    path = os.path.join(mnt.mnt, "blocks")
    with open(path, "wb") as f:
        f.write(b"1")
        f.flush()
        assert os.stat(path).st_blocks * 512 == _unit(mnt)


def test_punching_a_hole_in_a_pending_file_is_not_supported(mnt):
    """famfs has no holes to punch: fallocate(PUNCH_HOLE) of a file being
    written fails with EOPNOTSUPP and leaves its bytes as they were."""
    path = os.path.join(mnt.mnt, "punched")
    before = fh.log_next_index(mnt.dev)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.write(fd, b"p" * 8192)
        with pytest.raises(OSError) as e:
            _fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                       4096)
        assert e.value.errno == errno.EOPNOTSUPP
        assert os.pread(fd, 8192, 0) == b"p" * 8192
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"p" * 8192


def test_fallocate_of_a_logged_file_only_inside_it(mnt, master):
    """A logged file has all its memory: posix_fallocate over exactly its
    size succeeds, one byte more fails with EFBIG and changes nothing."""
    path = os.path.join(mnt.mnt, "fixed")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(b"f" * 10000)
    assert fh.wait_entries(mnt.dev, before + 1)
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, 10000)
        with pytest.raises(OSError) as e:
            os.posix_fallocate(fd, 0, 10001)
        assert e.value.errno == errno.EFBIG
        assert os.fstat(fd).st_size == 10000
    finally:
        os.close(fd)
    assert fh.log_next_index(mnt.dev) == before + 1
    assert os.stat(path).st_size == 10000


def test_truncating_a_logged_file_to_its_own_size_succeeds(mnt, master):
    """Only a size change is refused: a truncate to the size a logged file
    has (truncate -s, or O_TRUNC of an empty file) succeeds and logs
    nothing."""
    path = os.path.join(mnt.mnt, "same")
    empty = os.path.join(mnt.mnt, "empty")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(b"s" * 3000)
    open(empty, "wb").close()
    assert fh.wait_entries(mnt.dev, before + 2)
    os.truncate(path, 3000)
    with open(empty, "wb"):
        pass
    assert fh.log_next_index(mnt.dev) == before + 2
    with open(path, "rb") as f:
        assert f.read() == b"s" * 3000
    assert os.stat(empty).st_size == 0


def test_a_truncating_open_of_a_file_being_written_is_refused(mnt):
    """O_TRUNC, even with O_RDONLY, of a file still being written would
    cut its writer's bytes: ETXTBSY, and the file is logged whole."""
    path = os.path.join(mnt.mnt, "busy-trunc")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(b"w" * 100)
        f.flush()
        with pytest.raises(OSError) as e:
            os.close(os.open(path, os.O_RDONLY | os.O_TRUNC))
        assert e.value.errno == errno.ETXTBSY
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"w" * 100


def _read_after_its_writer(path, data):
    """Create @path with @data, open it for reading, then close its
    writer: the file stays pending; the reader's fd."""
    w = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(w, data)
        return os.open(path, os.O_RDONLY)
    finally:
        os.close(w)


def test_a_file_is_logged_at_its_last_close_not_its_writers(mnt):
    """A reader that opened a file being written keeps it pending after
    its writer closes: it still reads it, and the file is logged, whole,
    at the reader's close."""
    path = os.path.join(mnt.mnt, "shared")
    before = fh.log_next_index(mnt.dev)
    r = _read_after_its_writer(path, b"r" * 300)
    try:
        # one request at a time: the writer's RELEASE is handled first
        assert os.pread(r, 1000, 0) == b"r" * 300
        assert fh.log_next_index(mnt.dev) == before
    finally:
        os.close(r)
    assert fh.wait_entries(mnt.dev, before + 1)
    assert fh.file_entry(mnt.dev, os.stat(path).st_ino)[0] == 300


def test_a_reader_closing_does_not_let_a_second_writer_in(mnt):
    """The one-writer rule of a file being written holds after a reader of
    it closes: another open for writing is still refused (ETXTBSY)."""
    path = os.path.join(mnt.mnt, "one-writer")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(b"1" * 10)
        f.flush()
        with open(path, "rb") as r:
            assert r.read() == b"1" * 10
        with pytest.raises(OSError) as e:
            os.close(os.open(path, os.O_WRONLY))
        assert e.value.errno == errno.ETXTBSY
        f.write(b"2" * 10)
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"1" * 10 + b"2" * 10


def test_reopening_a_pending_file_after_its_writer_closed(mnt):
    """While a reader keeps a file pending, a new writer may open it once
    its first writer has closed: O_TRUNC empties it, and that writer is
    the only one; the log gets what the second writer wrote."""
    path = os.path.join(mnt.mnt, "reopened")
    before = fh.log_next_index(mnt.dev)
    r = _read_after_its_writer(path, b"old" * 100)
    try:
        w2 = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            assert os.pread(r, 1000, 0) == b""
            with pytest.raises(OSError) as e:
                os.close(os.open(path, os.O_WRONLY))
            assert e.value.errno == errno.ETXTBSY
            os.write(w2, b"new")
        finally:
            os.close(w2)
        assert fh.log_next_index(mnt.dev) == before
    finally:
        os.close(r)
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"new"
    assert fh.file_entry(mnt.dev, os.stat(path).st_ino)[0] == 3


def test_chmod_and_chown_of_a_pending_file_reach_its_entry(mnt):
    """A file being written may still change its mode and owner (tar and
    cp -a do so before the close): its entry has the last ones."""
    path = os.path.join(mnt.mnt, "owned")
    before = fh.log_next_index(mnt.dev)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, b"o" * 10)
        # chown first: a chown clears the set-group-ID bit of a file
        os.fchown(fd, 1234, 5678)
        os.fchmod(fd, 0o2751)
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    st = os.stat(path)
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o2751, 1234,
                                                           5678)
    assert _file_owner_mode(mnt.dev, st.st_ino) == (0o2751, 1234, 5678)


def test_a_set_group_id_directory_hands_down_its_group(mnt):
    """As on ext4: a file or directory made in a set-group-ID directory
    gets that directory's group, and a directory made there is
    set-group-ID too; elsewhere the creator's group."""
    d = os.path.join(mnt.mnt, "sgid")
    os.mkdir(d, 0o755)
    os.chown(d, 0, 4321)
    os.chmod(d, 0o2775)
    before = fh.log_next_index(mnt.dev)
    with open(os.path.join(d, "f"), "wb") as f:
        f.write(b"g")
    os.mkdir(os.path.join(d, "sub"), 0o755)
    os.mkdir(os.path.join(mnt.mnt, "plain"), 0o755)
    assert fh.wait_entries(mnt.dev, before + 3)
    st = os.stat(os.path.join(d, "f"))
    assert (st.st_uid, st.st_gid) == (0, 4321)
    assert _file_owner_mode(mnt.dev, st.st_ino)[1:] == (0, 4321)
    st = os.stat(os.path.join(d, "sub"))
    assert (st.st_uid, st.st_gid) == (0, 4321)
    assert st.st_mode & 0o7777 == 0o2755 & ~_umask()
    st = os.stat(os.path.join(mnt.mnt, "plain"))
    assert st.st_gid == os.getgid() and not st.st_mode & 0o2000


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_the_longest_name_the_log_holds(mnt, master):
    """A path of the log holds 79 bytes: a name that makes a path of 79
    bytes is created (file or directory, at the root or below), one of 80
    fails with ENAMETOOLONG and logs nothing."""
    os.mkdir(os.path.join(mnt.mnt, "d"))
    before = fh.log_next_index(mnt.dev)
    for top, room in ((mnt.mnt, 79), (os.path.join(mnt.mnt, "d"), 77)):
        os.mkdir(os.path.join(top, "m" * room))
        with open(os.path.join(top, "f" * room), "wb") as f:
            f.write(b"l")
        for err in (lambda: os.mkdir(os.path.join(top, "M" * (room + 1))),
                    lambda: open(os.path.join(top, "F" * (room + 1)),
                                 "wb").close()):
            with pytest.raises(OSError) as e:
                err()
            assert e.value.errno == errno.ENAMETOOLONG
    assert fh.wait_entries(mnt.dev, before + 4)
    assert os.path.isfile(os.path.join(mnt.mnt, "d", "f" * 77))
    _fsck_clean(master, mnt.mnt)


def test_a_name_with_a_control_character_is_refused_at_once(mnt, master):
    """What the log cannot hold is refused when the file is created, not
    discovered at its close after its bytes are written: EINVAL, and
    nothing is pending or logged."""
    before = fh.log_next_index(mnt.dev)
    bad = os.path.join(mnt.mnt, "a\x01b")
    with pytest.raises(OSError) as e:
        open(bad, "wb").close()
    assert e.value.errno == errno.EINVAL
    with pytest.raises(OSError) as e:
        os.mkdir(bad + "d")
    assert e.value.errno == errno.EINVAL
    assert fh.log_next_index(mnt.dev) == before
    assert os.listdir(mnt.mnt) == [".meta"]


def test_a_pending_name_belongs_to_its_directory(mnt):
    """A file being written is found only in its own directory: the same
    name elsewhere is free, and is a file of its own."""
    for d in ("a", "b"):
        os.mkdir(os.path.join(mnt.mnt, d))
    before = fh.log_next_index(mnt.dev)
    with open(os.path.join(mnt.mnt, "a/x"), "wb") as f:
        f.write(b"A")
        f.flush()
        assert not os.path.exists(os.path.join(mnt.mnt, "b/x"))
        with open(os.path.join(mnt.mnt, "b/x"), "xb") as g:
            g.write(b"BB")
    assert fh.wait_entries(mnt.dev, before + 2)
    with open(os.path.join(mnt.mnt, "a/x"), "rb") as f:
        assert f.read() == b"A"
    with open(os.path.join(mnt.mnt, "b/x"), "rb") as f:
        assert f.read() == b"BB"


def test_a_truncated_preallocation_gives_back_its_memory(mnt, master):
    """Memory a file being written reserved and no longer needs (it was
    made shorter before its close) is free again once it is logged."""
    unit = _unit(mnt)
    path = os.path.join(mnt.mnt, "shrunk")
    before = fh.log_next_index(mnt.dev)
    free = os.statvfs(mnt.mnt).f_bfree
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.posix_fallocate(fd, 0, 4 * unit)
        os.ftruncate(fd, 10)
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    assert size == 10 and [ln for _, _, ln in fmap[1]] == [unit]
    assert os.statvfs(mnt.mnt).f_bfree == free - 1
    _fsck_clean(master, mnt.mnt)


def _fill_log(dev, master, free):
    """Fill the log of the unmounted @dev until @free slots are left, with
    MKDIR entries of directories d0, d1, ... (each a copy of a real one,
    its index and CRC redone as a writer would). Returns the slots."""
    master.famfs("mkdir", "-D", dev, "d0")
    proto = bytearray(fh.read_entry(dev, 0))
    with open(dev, "rb") as f:
        f.seek(fh.LOG_OFFSET + 8)  # the header's length, header included
        log_len = struct.unpack("<Q", f.read(8))[0]
    slots = (log_len - fh.LOG_HDR) // fh.ENTRY
    n = slots - free
    with open(dev, "r+b") as f:
        f.seek(fh.LOG_OFFSET + fh.LOG_HDR)
        out = bytearray()
        for i in range(n):
            e = bytearray(proto)
            e[28:28 + 80] = (b"d%d" % i).ljust(80, b"\0")
            struct.pack_into("<Q", e, 0, i)
            struct.pack_into("<Q", e, 536, zlib.crc32(bytes(e[:536])))
            out += e
        f.write(out)
        f.seek(fh.LOG_NEXT_INDEX - 8)  # next_seqnum, then next_index
        f.write(struct.pack("<QQ", n, n))
    return slots


def test_pending_files_keep_a_log_slot_each(tmp_path, master, device,
                                            mounts):
    """Each file being written keeps one free slot of the log for its
    entry, and gives it back when it is logged: with two slots left, a
    file logged leaves room for one more being written, and while that
    one is open no other can be created (ENOSPC at once, not a file lost
    at its close)."""
    slots = _fill_log(device, master, 2)
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    assert m.status()["log_slots"] == str(slots)
    with open(os.path.join(m.mnt, "first"), "wb") as f:
        f.write(b"1")
    assert fh.wait_entries(device, slots - 1)
    with open(os.path.join(m.mnt, "second"), "wb") as f:
        f.write(b"2")
        f.flush()
        with pytest.raises(OSError) as e:
            open(os.path.join(m.mnt, "third"), "wb").close()
        assert e.value.errno == errno.ENOSPC
    assert fh.wait_entries(device, slots)
    for name, data in (("first", b"1"), ("second", b"2")):
        with open(os.path.join(m.mnt, name), "rb") as f:
            assert f.read() == data
    assert "discarded" not in m.log_text()


def test_a_users_mkdir_or_chmod_never_takes_a_writers_slot(master, mounts):
    """The slot a file being written keeps is its own: a user's mkdir, or
    chmod of their directory, that would take it gets ENOSPC, and root's
    file is logged at its close (it used to be lost there, after a close
    that returned 0)."""
    d = tempfile.mkdtemp(prefix="famfs-slots-", dir="/tmp")
    os.chmod(d, 0o755)
    dev = os.path.join(d, "famfs.img")
    fh.mkfs(master, dev, 256 << 20)
    slots = _fill_log(dev, master, 4)
    m = fh.Mount(master, dev, os.path.join(d, "mnt"),
                 os.path.join(d, "fused.log"))
    mounts.append(m)
    m.mount()

    def user(*cmd):
        return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                               "--clear-groups"] + list(cmd),
                              capture_output=True, text=True)
    try:
        pub = os.path.join(m.mnt, "pub")
        mine = os.path.join(pub, "mine")
        os.mkdir(pub, 0o755)
        os.chmod(pub, 0o1777)
        p = user("mkdir", "-m", "755", mine)
        assert p.returncode == 0, p.stderr
        # one slot is left; the file being written keeps it
        with open(os.path.join(m.mnt, "victim"), "wb") as f:
            f.write(b"root's bytes")
            f.flush()
            for cmd in (("mkdir", os.path.join(pub, "x")),
                        ("chmod", "700", mine)):
                p = user(*cmd)
                assert p.returncode != 0, cmd
                assert "No space left on device" in p.stderr, p.stderr
            with pytest.raises(OSError) as e:
                os.chmod(pub, 0o777)
            assert e.value.errno == errno.ENOSPC
        assert fh.wait_entries(dev, slots)
        with open(os.path.join(m.mnt, "victim"), "rb") as f:
            assert f.read() == b"root's bytes"
        assert not os.path.exists(os.path.join(pub, "x"))
        assert os.stat(mine).st_mode & 0o7777 == 0o755
        assert os.stat(pub).st_mode & 0o7777 == 0o1777
        assert "lost" not in m.log_text()
    finally:
        m.unmount()
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("grow", ["ftruncate", "posix_fallocate"])
def test_a_file_made_shorter_then_longer_reads_zeros_there(mnt, grow):
    """truncate(2) that makes a file longer than it is shows zeros there,
    also where bytes were written before a shrink, and also for root
    (whose preallocation keeps what the device held only where nothing
    was written)."""
    path = os.path.join(mnt.mnt, "shrunk-" + grow)
    before = fh.log_next_index(mnt.dev)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        os.write(fd, b"x" * 100)
        os.ftruncate(fd, 10)
        if grow == "ftruncate":
            os.ftruncate(fd, 100)
        else:
            os.posix_fallocate(fd, 0, 100)
        assert os.pread(fd, 200, 0) == b"x" * 10 + bytes(90)
    finally:
        os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"x" * 10 + bytes(90)
