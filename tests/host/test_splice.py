# SPDX-License-Identifier: GPL-2.0-or-later
"""Fallback reads spliced from the image file (famfs-fused(8), "Data
paths"): the same bytes as the copying path, never a byte outside the
file, across extent and strip boundaries and past EOF, and EIO once the
image is gone."""
import errno
import os

import pytest

import famfs_host as fh

SIZE = 9 * fh.MiB + 4321  # ends inside a chunk, not on a page


@pytest.fixture
def readers(tmp_path, master, client, device, mounts, mnt):
    """The master, and two clients of the same image: the default path
    (spliced) and splice=no (copied from the daemon's mapping)."""
    out = [mnt]
    for name, opts in (("spliced", ""), ("copied", "splice=no")):
        c = fh.Mount(client, device, str(tmp_path / name),
                     str(tmp_path / ("fused-%s.log" % name)), opts=opts)
        mounts.append(c)
        c.mount()
        out.append(c)
    return out


def _files(m, master):
    """A simple file and an interleaved one (4 strips of 2 MiB chunks)
    made alternately, so their memory interleaves; random contents."""
    data = {}
    for name, opts in (("s1", ()), ("i1", ("-N", "4", "-B", "8", "-C",
                                           "2m")),
                       ("s2", ()), ("i2", ("-N", "2", "-B", "4", "-C",
                                           "2m"))):
        path = os.path.join(m.mnt, name)
        master.famfs("creat", "-s", str(SIZE), *opts, path)
        data[name] = os.urandom(SIZE)
        with open(path, "r+b") as f:
            f.write(data[name])
    return data


# (offset, length): inside one chunk, across one and several chunk (or
# extent) boundaries, a whole MiB at an odd offset, the tail past EOF,
# a read starting at and past EOF.
READS = [(0, 8192), (2 * fh.MiB - 5000, 12000), (fh.MiB + 3, fh.MiB),
         (2 * fh.MiB - 4096, 512 * 1024), (6 * fh.MiB - 1, 2 * fh.MiB + 2),
         (SIZE - 10000, 65536), (SIZE - 1, 4096), (SIZE, 65536),
         (SIZE + 12345, 8192), (0, SIZE + 8192)]


def test_spliced_reads_match(readers, master):
    m, spliced, copied = readers
    data = _files(m, master)
    st = spliced.status()
    # an image file, and a pipe holds at least 2 pages: always spliced
    assert st["read_splice"] == "1", spliced.log_text()
    assert copied.status()["read_splice"] == "0"
    # an image file's mapping can be pinned: replies name its bytes
    assert copied.status()["map_replies"] == "1"
    before = int(st["spliced_reads"])
    for name, want in data.items():
        for c in (spliced, copied):
            fd = os.open(os.path.join(c.mnt, name), os.O_RDONLY)
            try:
                for off, ln in READS:
                    got = b""
                    while len(got) < ln:  # a client may read in pieces
                        b = os.pread(fd, ln - len(got), off + len(got))
                        if not b:
                            break
                        got += b
                    assert got == want[off:off + ln], \
                        (c.mnt, name, off, ln, len(got))
            finally:
                os.close(fd)
    # the spliced side took its path (clients read past the page cache)
    assert int(spliced.status()["spliced_reads"]) > before
    assert int(copied.status()["spliced_reads"]) == 0
    # and its neighbours' bytes never leak into a file
    for name, want in data.items():
        with open(os.path.join(spliced.mnt, name), "rb") as f:
            assert f.read() == want


def test_spliced_read_eio_when_image_truncated(readers, master):
    """The image shrinks under the mount: a spliced read fails with EIO,
    never a short read, and the daemon stays up."""
    m, spliced, _ = readers
    path = os.path.join(m.mnt, "t")
    master.famfs("creat", "-s", "4m", "-r", "-S", "9", path)
    cpath = os.path.join(spliced.mnt, "t")
    fd = os.open(cpath, os.O_RDONLY)
    try:
        assert len(os.pread(fd, 512 * 1024, 0)) == 512 * 1024
        os.truncate(spliced.dev, 4 * fh.MiB)
        with pytest.raises(OSError) as e:
            os.pread(fd, 512 * 1024, fh.MiB)
        assert e.value.errno == errno.EIO
    finally:
        os.close(fd)
    assert fh.alive(spliced.pid)
    assert spliced.status()["device_health"] == "lost"


def test_one_mib_reads_are_spliced(readers, master):
    """A pipe holds 1 MiB without CAP_SYS_RESOURCE, less than a 1 MiB
    READ and its header: the daemon keeps the kernel's READs to what it
    can splice, so a 1 MiB read(2) is spliced too (in two READs), while
    splice=no keeps 1 MiB READs."""
    m, spliced, copied = readers
    path = os.path.join(m.mnt, "big")
    master.famfs("creat", "-s", "4m", "-r", "-S", "11", path)
    for c in (spliced, copied):
        st = c.status()
        s0, r0 = int(st["spliced_reads"]), int(st["reads"])
        fd = os.open(os.path.join(c.mnt, "big"), os.O_RDONLY)
        try:
            assert len(os.pread(fd, fh.MiB, fh.MiB)) == fh.MiB
        finally:
            os.close(fd)
        st = c.status()
        spliced_now = int(st["spliced_reads"]) - s0
        reads = int(st["reads"]) - r0  # the READs, and those of .status
        if c is spliced:
            assert spliced_now >= 1, (spliced_now, reads)
        else:
            assert spliced_now == 0 and reads >= 1
    master.famfs("verify", "-S", "11", "-f",
                 os.path.join(spliced.mnt, "big"))
