# SPDX-License-Identifier: GPL-2.0-or-later
"""The checks an fsck of upstream famfs makes, done here on our own from
the on-media format (DESIGN.md; daemon/lib/format.h has the same offsets):
an image our tools wrote must read the same to a reader that shares no
code with them. Single-device images only.

check(path) returns a dict: errors (a list of strings, empty when sound),
files, dirs, and changes (MKDIR entries of a directory that exists: a
reader that predates them skips each as a directory already there)."""
import struct
import zlib

from famfs_host import ENTRY, LOG_HDR, LOG_OFFSET, MiB

SB_MAGIC = 0x87b282ff
LOG_MAGIC = 0xbadcafef00d
SB_VERSION = 48
UNIT = 2 * MiB
PATH_LEN = 80
FILE, MKDIR, ADD_DAXDEV = 0, 1, 3
MAX_SIMPLE = 16
MAX_STRIPS = 16


def _crc_ok(buf, at):
    return struct.unpack_from("<Q", buf, at)[0] == zlib.crc32(buf[:at])


def _relpath(raw, errors, where):
    """The path of an entry, or None (with an error) when a reader must
    refuse it: unterminated, absolute, empty parts, . or .."""
    if b"\0" not in raw:
        errors.append("%s: path not NUL-terminated" % where)
        return None
    path = raw.split(b"\0")[0].decode("utf-8", "surrogateescape")
    parts = path.split("/")
    if not path or path.startswith("/") or \
            any(p in ("", ".", "..") for p in parts):
        errors.append("%s: bad path %r" % (where, path))
        return None
    return path


def _extents(e, errors, where):
    """The (offset, length) runs of a FILE entry's map."""
    fm = 16 + 104
    ext_type = struct.unpack_from("<I", e, fm)[0]
    if ext_type == 0:
        n = struct.unpack_from("<I", e, fm + 8)[0]
        if not 1 <= n <= MAX_SIMPLE:
            errors.append("%s: %d simple extents" % (where, n))
            return []
        return [struct.unpack_from("<QQQ", e, fm + 16 + 24 * i)
                for i in range(n)]
    if ext_type == 1:
        niext, = struct.unpack_from("<I", e, fm + 8)
        nstrips, chunk = struct.unpack_from("<QQ", e, fm + 16)
        if niext != 1 or not 1 <= nstrips <= MAX_STRIPS or \
                not chunk or chunk % 4096:
            errors.append("%s: bad interleave (%d, %d strips, chunk %d)"
                          % (where, niext, nstrips, chunk))
            return []
        return [struct.unpack_from("<QQQ", e, fm + 32 + 24 * i)
                for i in range(nstrips)]
    errors.append("%s: extent type %d" % (where, ext_type))
    return []


def check(path):
    errors = []
    out = {"errors": errors, "files": 0, "dirs": 0, "changes": 0}
    with open(path, "rb") as f:
        sb = f.read(200)
        f.seek(LOG_OFFSET)
        hdr = f.read(LOG_HDR)
        magic, version, log_off, log_len, unit = \
            struct.unpack_from("<QQQQQ", sb, 0)
        dev_size, = struct.unpack_from("<Q", sb, 112)
        if magic != SB_MAGIC or version != SB_VERSION or \
                not _crc_ok(sb, 96):
            errors.append("superblock: bad magic, version or crc")
            return out
        if log_off != LOG_OFFSET or unit != UNIT or log_len < 8 * MiB:
            errors.append("superblock: log at %d+%d, unit %d"
                          % (log_off, log_len, unit))
            return out
        lmagic, llen, last, _, _, next_index = \
            struct.unpack_from("<QQQQQQ", hdr, 0)
        if lmagic != LOG_MAGIC or llen != log_len or \
                not _crc_ok(hdr, 24) or next_index > last + 1:
            errors.append("log header: bad magic, length, crc or count")
            return out
        f.seek(LOG_OFFSET + LOG_HDR)
        raw = f.read(next_index * ENTRY)
    tree = {"": "dir"}
    used = []  # (start, end, who)
    for i in range(next_index):
        e = raw[i * ENTRY:(i + 1) * ENTRY]
        where = "log entry %d" % i
        seq, etype = struct.unpack_from("<QI", e, 0)
        if not _crc_ok(e, 536) or seq != i:
            errors.append("%s: bad crc or sequence number" % where)
            continue
        if etype == ADD_DAXDEV:
            continue
        if etype not in (FILE, MKDIR):
            errors.append("%s: unknown type %#x" % (where, etype))
            continue
        at = 16 + (24 if etype == FILE else 12)
        rel = _relpath(e[at:at + PATH_LEN], errors, where)
        if rel is None:
            continue
        parent = rel.rpartition("/")[0]
        if tree.get(parent) != "dir":
            errors.append("%s: %s: no parent directory" % (where, rel))
            continue
        if etype == MKDIR:
            if tree.get(rel) == "dir":
                out["changes"] += 1
            elif rel in tree:
                errors.append("%s: %s: a file is there" % (where, rel))
            else:
                tree[rel] = "dir"
                out["dirs"] += 1
            continue
        if rel in tree:
            errors.append("%s: %s: exists already" % (where, rel))
            continue
        size, = struct.unpack_from("<Q", e, 16)
        runs = _extents(e, errors, where)
        have = 0
        for dev, off, ln in runs:
            if dev != 0 or not ln or off % UNIT or ln % UNIT or \
                    off < log_off + log_len or off + ln > dev_size:
                errors.append("%s: %s: extent %d+%d on device %d"
                              % (where, rel, off, ln, dev))
                continue
            for s, t, who in used:
                if off < t and s < off + ln:
                    errors.append("%s: %s shares memory with %s"
                                  % (where, rel, who))
            used.append((off, off + ln, rel))
            have += ln
        if runs and size > have:
            errors.append("%s: %s: %d bytes in %d of memory"
                          % (where, rel, size, have))
        tree[rel] = "file"
        out["files"] += 1
    return out
