# SPDX-License-Identifier: GPL-2.0-or-later
"""format_check.py, the independent reader that stands in for upstream's
fsck in the creation tests, finds what such a reader must find."""
import struct

import famfs_host as fh
import format_check


def _errors(dev):
    return " | ".join(format_check.check(dev)["errors"])


def test_what_the_independent_reader_finds(tmp_path, master):
    dev = str(tmp_path / "img")
    fh.mkfs(master, dev, 256 << 20)
    master.famfs("mkdir", "-D", dev, "d")
    master.famfs("creat", "-D", dev, "-s", "3m", "d/f")
    assert format_check.check(dev) == {"errors": [], "files": 1, "dirs": 1,
                                       "changes": 0}
    good = fh.read_entry(dev, 1)
    # a second file over the first one's memory
    e = bytearray(good)
    e[16 + 24:16 + 24 + 4] = b"g\0\0\0"
    fh.write_entry(dev, 2, e, count=3)
    assert "shares memory with d/f" in _errors(dev)
    # the same directory twice is a change, not an error
    fh.write_entry(dev, 2, fh.read_entry(dev, 0))
    assert format_check.check(dev) == {"errors": [], "files": 1, "dirs": 1,
                                       "changes": 1}
    # a path that climbs out, and one under a missing directory
    e = bytearray(good)
    e[16 + 24:16 + 24 + 6] = b"../x\0\0"
    fh.write_entry(dev, 2, e)
    assert "bad path '../x'" in _errors(dev)
    e[16 + 24:16 + 24 + 6] = b"n/x\0\0\0"
    fh.write_entry(dev, 2, e)
    assert "n/x: no parent directory" in _errors(dev)
    # our fsck --repair's void entry is ours alone
    e = bytearray(fh.ENTRY)
    struct.pack_into("<I", e, 8, 0x766f6964)
    fh.write_entry(dev, 2, e)
    assert "unknown type 0x766f6964" in _errors(dev)
    # a damaged byte, then a damaged superblock
    with open(dev, "r+b") as f:
        f.seek(fh.LOG_OFFSET + fh.LOG_HDR + fh.ENTRY + 30)
        f.write(b"\xff")
    assert "log entry 1: bad crc" in _errors(dev)
    with open(dev, "r+b") as f:
        f.seek(50)
        f.write(b"\xff")
    assert _errors(dev) == "superblock: bad magic, version or crc"
