# SPDX-License-Identifier: GPL-2.0-or-later
"""FUSE_GET_FMAP / FUSE_GET_DAXDEV: raw requests, as the famfs kernel
module would send them, go to the daemon's own handler (fused-rawreq);
the replies are checked byte for byte against the wire ABI of DESIGN.md
§3, built here from the log decoded independently of the C code."""
import errno
import os
import struct
import subprocess

import pytest

import famfs_host as fh

IN_HDR = struct.Struct("<IIQQIIIHH")  # fuse_in_header, 40 bytes
OUT_HDR = struct.Struct("<IiQ")       # fuse_out_header, 16 bytes
FMAP_HDR = struct.Struct("<BBHIIIQQ")  # fuse_famfs_fmap_header, 32 bytes
SIMPLE = struct.Struct("<IIQQ")       # fuse_famfs_simple_ext, 24 bytes
IEXT = struct.Struct("<IIQQ")         # fuse_famfs_iext, 24 bytes
DAXDEV = struct.Struct("<HHIQQ256s")  # fuse_daxdev_out, 280 bytes
GET_FMAP, GET_DAXDEV, LOOKUP = 54, 55, 1
META = 1 << 40  # .meta inode numbers: dir, .superblock, .log, .status

assert (IN_HDR.size, OUT_HDR.size, FMAP_HDR.size, SIMPLE.size, IEXT.size,
        DAXDEV.size) == (40, 16, 32, 24, 24, 280)


def request(dev, opcode, nodeid, body=b"", unique=0x1234567890):
    raw = IN_HDR.pack(IN_HDR.size + len(body), opcode, unique, nodeid,
                      0, 0, 1, 0, 0) + body
    p = subprocess.run([fh.RAWREQ, dev, "famfs"], input=raw,
                       capture_output=True, timeout=30)
    return p.returncode, p.stdout


def expect_ok(payload, unique=0x1234567890):
    return OUT_HDR.pack(OUT_HDR.size + len(payload), 0, unique) + payload


def expect_err(err, unique=0x1234567890):
    return OUT_HDR.pack(OUT_HDR.size, -err, unique)


def expected_fmap(dev, ino):
    size, fmap = fh.file_entry(dev, ino)
    if fmap[0] == "simple":
        out = FMAP_HDR.pack(0, 0, 1, 0, len(fmap[1]), 0, size, 0)
        for d, o, ln in fmap[1]:
            out += SIMPLE.pack(d, 0, o, ln)
        return out
    _, chunk, strips = fmap
    out = FMAP_HDR.pack(0, 0, 1, 1, 1, 0, size, 0)
    out += IEXT.pack(len(strips), chunk, size, 0)
    for d, o, ln in strips:
        out += SIMPLE.pack(d, 0, o, ln)
    return out


@pytest.fixture
def files(mnt, master):
    m = mnt.mnt
    master.famfs("mkdir", os.path.join(m, "dir"))
    master.famfs("creat", "-s", "5m", os.path.join(m, "dir/simple"))
    master.famfs("creat", "-s", "33m", "-N", "8", "-B", "8", "-C", "4m",
                 os.path.join(m, "striped"))
    ino = {n: os.stat(os.path.join(m, n)).st_ino
           for n in ("dir", "dir/simple", "striped")}
    return mnt.dev, ino


def test_get_fmap_simple(files):
    dev, ino = files
    rc, out = request(dev, GET_FMAP, ino["dir/simple"])
    assert rc == 0
    exp = expected_fmap(dev, ino["dir/simple"])
    assert len(exp) == 32 + 24
    assert out == expect_ok(exp)


def test_get_fmap_interleaved(files):
    dev, ino = files
    rc, out = request(dev, GET_FMAP, ino["striped"])
    assert rc == 0
    exp = expected_fmap(dev, ino["striped"])
    assert len(exp) == 32 + 24 + 8 * 24
    assert out == expect_ok(exp)


@pytest.mark.parametrize("which", ["superblock", "log"])
def test_get_fmap_meta(files, which):
    dev, _ = files
    ftype, off, ln = {"superblock": (1, 0, 2 * fh.MiB),
                      "log": (2, 2 * fh.MiB, 8 * fh.MiB)}[which]
    rc, out = request(dev, GET_FMAP, META + ftype)
    assert rc == 0
    exp = FMAP_HDR.pack(ftype, 0, 1, 0, 1, 0, ln, 0) + \
        SIMPLE.pack(0, 0, off, ln)
    assert out == expect_ok(exp)


def test_get_fmap_errors(files):
    dev, ino = files
    # no map: a directory, .status (served as plain FUSE files)
    assert request(dev, GET_FMAP, ino["dir"])[1] == expect_err(errno.ENODATA)
    assert request(dev, GET_FMAP, 1)[1] == expect_err(errno.ENODATA)
    assert request(dev, GET_FMAP, META + 3)[1] == expect_err(errno.ENODATA)
    assert request(dev, GET_FMAP, 999999)[1] == expect_err(errno.ENOENT)


def test_get_daxdev(files):
    dev, _ = files
    rc, out = request(dev, GET_DAXDEV, 0, struct.pack("<I", 0))
    assert rc == 0
    name = os.path.realpath(dev).encode()
    assert out == expect_ok(DAXDEV.pack(0, 0, 0, 0, 0, name))
    assert request(dev, GET_DAXDEV, 0, struct.pack("<I", 1))[1] == \
        expect_err(errno.EINVAL)
    assert request(dev, GET_DAXDEV, 0, b"\0\0")[1] == \
        expect_err(errno.EINVAL)


def test_other_opcodes_go_to_libfuse(files):
    dev, _ = files
    rc, out = request(dev, LOOKUP, 1, b"dir\0")
    assert rc == 3 and out == b""
