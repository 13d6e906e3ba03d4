# SPDX-License-Identifier: GPL-2.0-or-later
"""Every operation famfs refuses returns its documented errno (see
daemon/fused/ops.c) and leaves the log as it was: fsck clean after."""
import errno
import os

import pytest

import famfs_host as fh


@pytest.fixture
def populated(mnt, master):
    master.famfs("mkdir", os.path.join(mnt.mnt, "d"))
    master.famfs("creat", "-s", "3m", "-r", "-S", "5",
                 os.path.join(mnt.mnt, "d/f"))
    return mnt


def _pwrite(m, data, off):
    """A write crossing the end is cut short at the end (as for
    RLIMIT_FSIZE); the write that would start at the end fails EFBIG."""
    fd = os.open(os.path.join(m, "d/f"), os.O_WRONLY)
    try:
        done = 0
        while done < len(data):
            n = os.pwrite(fd, data[done:], off + done)
            assert 0 < n and off + done + n <= 3 << 20
            done += n
    finally:
        os.close(fd)


def _open(path, mode):
    with open(path, mode):
        pass


CASES = {
    "truncate": (lambda m: os.truncate(os.path.join(m, "d/f"), 100),
                 errno.EPERM),
    "truncate_grow": (lambda m: os.truncate(os.path.join(m, "d/f"), 8 << 20),
                      errno.EPERM),
    "open_trunc": (lambda m: _open(os.path.join(m, "d/f"), "wb"),
                   errno.EPERM),
    "unlink": (lambda m: os.unlink(os.path.join(m, "d/f")), errno.EPERM),
    "rmdir": (lambda m: os.rmdir(os.path.join(m, "d")), errno.EPERM),
    "rename": (lambda m: os.rename(os.path.join(m, "d/f"),
                                   os.path.join(m, "d/g")), errno.EPERM),
    "link": (lambda m: os.link(os.path.join(m, "d/f"),
                               os.path.join(m, "d/h")), errno.EPERM),
    "symlink": (lambda m: os.symlink("f", os.path.join(m, "d/s")),
                errno.EPERM),
    "mkdir_exists": (lambda m: os.mkdir(os.path.join(m, "d")), errno.EEXIST),
    "creat_exists": (lambda m: _open(os.path.join(m, "d/f"), "xb"),
                     errno.EEXIST),
    "mkdir_in_meta": (lambda m: os.mkdir(os.path.join(m, ".meta/x")),
                      errno.EPERM),
    "mknod": (lambda m: os.mkfifo(os.path.join(m, "d/fifo")), errno.EPERM),
    "chmod": (lambda m: os.chmod(os.path.join(m, "d/f"), 0o600),
              errno.EPERM),
    "chown": (lambda m: os.chown(os.path.join(m, "d/f"), 123, 456),
              errno.EPERM),
    "write_past_end": (lambda m: _pwrite(m, b"x" * 10, (3 << 20) - 5),
                       errno.EFBIG),
    "write_at_end": (lambda m: _pwrite(m, b"x", 3 << 20), errno.EFBIG),
    "write_superblock": (lambda m: _open(os.path.join(m, ".meta/.superblock"),
                                         "r+b"), errno.EROFS),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_rejected(populated, master, op):
    fn, err = CASES[op]
    before = fh.log_next_index(populated.dev)
    with pytest.raises(OSError) as e:
        fn(populated.mnt)
    assert e.value.errno == err, os.strerror(e.value.errno)
    assert fh.log_next_index(populated.dev) == before
    assert os.stat(os.path.join(populated.mnt, "d/f")).st_size == 3 << 20
    # the file is intact and the log is clean
    if not op.startswith("write"):
        master.famfs("verify", "-S", "5", "-f",
                     os.path.join(populated.mnt, "d/f"))
    master.famfs("fsck", populated.mnt)


def test_times_only_setattr_is_accepted(populated):
    # touch(1) on an existing file must not fail: times are not stored
    os.utime(os.path.join(populated.mnt, "d/f"), None)


def test_write_crossing_the_end_is_short(populated, master):
    """famfs-fused(8): a write that starts inside a file and runs past its
    end writes up to the end and returns that short count."""
    path = os.path.join(populated.mnt, "d/f")
    end = 3 << 20
    fd = os.open(path, os.O_WRONLY)
    try:
        n = os.pwrite(fd, b"y" * 10, end - 5)
        assert n == 5
        with pytest.raises(OSError) as e:      # the next one starts at the end
            os.pwrite(fd, b"y" * 5, end)
        assert e.value.errno == errno.EFBIG
    finally:
        os.close(fd)
    with open(path, "rb") as f:
        f.seek(end - 6)
        tail = f.read()
    assert tail[1:] == b"yyyyy" and len(tail) == 6
    assert os.stat(path).st_size == end
    master.famfs("fsck", populated.mnt)
