#!/usr/bin/env python3
"""Check a --json output against the keys and value types famfs documents.

    json_keys.py fsck|fsck-nofs FILE
    json_keys.py status FILE [full|unread|bare]...

status takes one word per mount listed, in order: full (the log was read:
role, log, usage and warnings), unread (log_not_read says why not), bare
(neither: the problems say why).

Parses FILE with the json module (one object, one line) and compares every
object's key set and every value's type with the layout below; exits 1 and
says what differs.
"""
import json
import sys

U = "uint"    # a non-negative integer (not a bool)
I = "int"
S = str
B = bool

SPACE = {"device": U, "used": U, "free": U}
DEVICE = {"index": U, "uuid": S, "size": U, "used": U, "free": U,
          "present": B, "path": S}
USAGE = {"files": U, "directories": U, "bytes_in_files": U, "space": SPACE,
         "devices": [DEVICE]}
WARN = {"setid_files": U, "warnings": [S], "warnings_not_listed": U}

FSCK = {
    "device": S, "status": S, "exit_code": I,
    "superblock": {"valid": B, "uuid": S, "master_uuid": S, "role": S,
                   "alloc_unit": U},
    "log": {"valid": B, "bytes": U, "slots": U, "used": U},
    **USAGE,
    "problems": [S], "problems_not_listed": U, "voided_entries": U,
    "names_with_control_characters": U,
    **WARN,
}
FSCK_NOFS = dict(FSCK, superblock={"valid": B})

BARE = {
    "mountpoint": S, "source": S, "fstype": S, "healthy": B, "mode": S,
    "status": "status",   # the daemon's key=value lines: str or uint values
    "problems": [S],
}
MOUNT = {
    "full": dict(BARE, role=S, log={"bytes": U, "slots": U, "used": U},
                 **USAGE, **WARN),
    "unread": dict(BARE, log_not_read=S),
    "bare": BARE,
}
STATUS = {
    "kernel_module": {"name": S, "loaded": B, "version": S},
    "mounts": "mounts",
    "healthy": B,
}
LAYOUT = {"fsck": FSCK, "fsck-nofs": FSCK_NOFS, "status": STATUS}


def check(v, want, where, errs, mounts=()):
    if isinstance(want, dict):
        if not isinstance(v, dict):
            errs.append(f"{where}: {type(v).__name__}, not an object")
            return
        if set(v) != set(want):
            errs.append(f"{where}: keys {sorted(v)} != {sorted(want)}")
        for k in set(v) & set(want):
            check(v[k], want[k], f"{where}.{k}", errs, mounts)
    elif isinstance(want, list):
        if not isinstance(v, list):
            errs.append(f"{where}: {type(v).__name__}, not an array")
            return
        for i, e in enumerate(v):
            check(e, want[0], f"{where}[{i}]", errs)
    elif want == "mounts":
        if not isinstance(v, list) or len(v) != len(mounts):
            errs.append(f"{where}: {len(mounts)} mounts expected: {v!r}")
            return
        for i, (e, kind) in enumerate(zip(v, mounts)):
            check(e, MOUNT[kind], f"{where}[{i}]", errs)
    elif want == "status":
        if not isinstance(v, dict):
            errs.append(f"{where}: not an object")
            return
        for k, e in v.items():
            if not (isinstance(e, str) or
                    (type(e) is int and e >= 0)):
                errs.append(f"{where}.{k}: {e!r} is no string or count")
    elif want in (U, I):
        if type(v) is not int or (want == U and v < 0):
            errs.append(f"{where}: {v!r} is not an {want}")
    elif type(v) is not want:
        errs.append(f"{where}: {v!r} is not a {want.__name__}")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    if text.count("\n") != 1 or not text.endswith("\n"):
        print(f"# {path}: not one line")
        return 1
    errs = []
    check(json.loads(text), LAYOUT[kind], kind, errs, sys.argv[3:])
    for e in errs:
        print(f"# {e}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
