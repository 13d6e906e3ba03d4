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
    # Our kernel's body names the index whatever the header's nodeid is.
    assert request(dev, GET_DAXDEV, 7, struct.pack("<I", 0))[1] == \
        expect_ok(DAXDEV.pack(0, 0, 0, 0, 0, name))


def test_get_daxdev_upstream_form(files):
    """Upstream's kernel series sends GET_DAXDEV with no body and the
    device index in the header's nodeid."""
    dev, _ = files
    name = os.path.realpath(dev).encode()
    assert request(dev, GET_DAXDEV, 0)[1] == \
        expect_ok(DAXDEV.pack(0, 0, 0, 0, 0, name))
    for index in (1, 24, 1 << 40):
        assert request(dev, GET_DAXDEV, index)[1] == \
            expect_err(errno.EINVAL)


def test_other_opcodes_go_to_libfuse(files):
    dev, _ = files
    rc, out = request(dev, LOOKUP, 1, b"dir\0")
    assert rc == 3 and out == b""


# ---- INIT and famfs opcodes through a real libfuse session --------------

INIT_IN = struct.Struct("<IIIII44x")       # fuse_init_in, 64 bytes
INIT_OUT = struct.Struct("<IIIIHHIIHHI28x")  # fuse_init_out, 64 bytes
FUSE_INIT, INIT_EXT, DAX_FMAP_HI = 26, 1 << 30, 1 << (43 - 32)
# the protocol minor of the 6.12 famfs_fuse series, whose famfs bit is 43
MINOR = 41


def session(dev, famfs, reqs):
    raw = b""
    for unique, (opcode, nodeid, body) in enumerate(reqs, start=1):
        raw += IN_HDR.pack(IN_HDR.size + len(body), opcode, unique, nodeid,
                           0, 0, 1, 0, 0) + body
    cmd = [fh.RAWREQ, "--session", dev] + (["famfs"] if famfs else [])
    p = subprocess.run(cmd, input=raw, capture_output=True, timeout=30)
    assert p.returncode == 0, p.stderr
    replies, buf = [], p.stdout
    while buf:
        ln = OUT_HDR.unpack_from(buf)[0]
        replies.append(buf[:ln])
        buf = buf[ln:]
    return replies


def init_req(offer, minor=MINOR, flags2=None):
    flags = INIT_EXT | 0x1  # FUSE_ASYNC_READ, and flags2 present
    if flags2 is None:
        flags2 = DAX_FMAP_HI if offer else 0
    return (FUSE_INIT, 0, INIT_IN.pack(7, minor, 128 << 10, flags, flags2))


def test_init_accepts_dax_fmap(files):
    dev, ino = files
    base = {}
    for famfs in (False, True):
        for offer in (False, True):
            rep = session(dev, famfs, [init_req(offer)])
            assert len(rep) == 1
            ln, err, unique = OUT_HDR.unpack_from(rep[0])
            assert (ln, err, unique) == (16 + 64, 0, 1)
            o = INIT_OUT.unpack_from(rep[0], 16)
            assert o[0] == 7
            flags2 = o[10]
            want = famfs and offer
            assert bool(flags2 & DAX_FMAP_HI) == want
            if want:
                assert o[3] & INIT_EXT
            base[(famfs, offer)] = rep[0]
    # the patch sets exactly one bit and changes nothing else
    a = bytearray(base[(False, True)])
    b = bytearray(base[(True, True)])
    fl2 = 16 + 32  # offsetof(struct fuse_init_out, flags2)
    assert a[:fl2] == b[:fl2] and a[fl2 + 4:] == b[fl2 + 4:]
    assert struct.unpack_from("<I", b, fl2)[0] ^ \
        struct.unpack_from("<I", a, fl2)[0] == DAX_FMAP_HI


def test_famfs_opcodes_through_session(files):
    dev, ino = files
    rep = session(dev, True, [
        init_req(True),
        (GET_FMAP, ino["striped"], b""),
        (GET_DAXDEV, 0, struct.pack("<I", 0)),
        (LOOKUP, 1, b"striped\0"),
    ])
    assert len(rep) == 4
    assert rep[1] == expect_ok(expected_fmap(dev, ino["striped"]), unique=2)
    name = os.path.realpath(dev).encode()
    assert rep[2] == expect_ok(DAXDEV.pack(0, 0, 0, 0, 0, name), unique=3)
    ln, err, unique = OUT_HDR.unpack_from(rep[3])
    assert err == 0 and unique == 4
    assert struct.unpack_from("<Q", rep[3], 16)[0] == ino["striped"]


DIO_MMAP_HI = 1 << (36 - 32)  # FUSE_DIRECT_IO_ALLOW_MMAP
OPEN_IN = struct.Struct("<II")     # fuse_open_in
OPEN_OUT = struct.Struct("<QII")   # fuse_open_out
FUSE_OPEN, FOPEN_DIRECT_IO = 14, 1


@pytest.mark.parametrize("famfs", (False, True))
@pytest.mark.parametrize("dax_offer", (False, True))
@pytest.mark.parametrize("dio_offer", (False, True))
def test_init_direct_io_allow_mmap(files, famfs, dax_offer, dio_offer):
    """Fallback mode accepts FUSE_DIRECT_IO_ALLOW_MMAP when offered, and a
    read-only mount then opens regular files for direct I/O; famfs mode
    leaves both alone (the kernel serves the data)."""
    dev, ino = files
    flags2 = (DAX_FMAP_HI if dax_offer else 0) | \
        (DIO_MMAP_HI if dio_offer else 0)
    init = init_req(False, flags2=flags2)
    rep = session(dev, famfs, [
        init,
        (FUSE_OPEN, ino["dir/simple"], OPEN_IN.pack(os.O_RDONLY, 0)),
    ])
    assert len(rep) == 2
    o = INIT_OUT.unpack_from(rep[0], 16)
    in_famfs = famfs and dax_offer
    want = dio_offer and not in_famfs
    assert bool(o[10] & DIO_MMAP_HI) == want
    assert bool(o[10] & DAX_FMAP_HI) == in_famfs
    ln, err, unique = OUT_HDR.unpack_from(rep[1])
    assert (err, unique) == (0, 2)
    _, open_flags, _ = OPEN_OUT.unpack_from(rep[1], 16)
    assert bool(open_flags & FOPEN_DIRECT_IO) == want


# ---- the famfs bit belongs to one protocol minor per series ------------

BIT43, BIT44 = 1 << (43 - 32), 1 << (44 - 32)


@pytest.mark.parametrize("minor,bit", [(41, BIT43), (46, BIT44)])
def test_init_famfs_bit_of_each_series(files, minor, bit):
    dev, ino = files
    rep = session(dev, True, [init_req(True, minor, BIT43 | BIT44)])
    flags2 = INIT_OUT.unpack_from(rep[0], 16)[10]
    assert flags2 & (BIT43 | BIT44) == bit


@pytest.mark.parametrize("minor", [38, 40, 42, 44, 45, 47, 50])
def test_init_famfs_bit_unknown_minor_is_no_famfs(files, minor):
    """A protocol no famfs_fuse series speaks may give bit 43 or 44 to
    another feature: the daemon accepts neither, and then opcodes 54 and
    55 are not famfs's: libfuse answers them (ENOSYS)."""
    dev, ino = files
    rep = session(dev, True, [
        init_req(True, minor, BIT43 | BIT44),
        (GET_FMAP, ino["striped"], b""),
        (GET_DAXDEV, 0, struct.pack("<I", 0)),
    ])
    assert len(rep) == 3
    assert INIT_OUT.unpack_from(rep[0], 16)[10] & (BIT43 | BIT44) == 0
    for i in (1, 2):
        assert OUT_HDR.unpack_from(rep[i])[1] == -errno.ENOSYS


def test_init_famfs_bit_not_on_another_fuse_device(files):
    """Without the famfs module's device (plain: the stock /dev/fuse),
    the bit of the 6.12 series is not read as famfs mode either."""
    dev, ino = files
    rep = session(dev, False, [init_req(True), (GET_FMAP, ino["striped"], b"")])
    assert INIT_OUT.unpack_from(rep[0], 16)[10] & DAX_FMAP_HI == 0
    assert OUT_HDR.unpack_from(rep[1])[1] == -errno.ENOSYS
