# SPDX-License-Identifier: GPL-2.0-or-later
"""The FUSE mount any user can make: fusermount3 (set-user-ID root) mounts
MOUNTPOINT with the options given and hands us /dev/fuse; we answer INIT
and refuse everything else. Run as an unprivileged user, it plays a user
who names a mount like ours (subtype famfs, fsname the path of root's
image) to fool root's tools.

usage: userfuse.py MOUNTPOINT OPTIONS   (prints "mounted" once it is)
       userfuse.py --fd N              (serve a mount made already)

Where /dev/fuse is not open to users (0600, not Debian's 0666) the test
makes the very mount fusermount3 would (user_id= the user's uid) and hands
this server, run as the user, its /dev/fuse descriptor with --fd.
"""
import array
import os
import socket
import struct
import subprocess
import sys

INIT, FORGET, BATCH_FORGET, DESTROY, LOOKUP = 26, 2, 42, 38, 1
IN_HDR = struct.Struct("<IIQQIIIHH")  # len opcode unique nodeid uid gid pid
OUT_HDR = struct.Struct("<IiQ")


def mount(mnt, opts):
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    env = dict(os.environ, _FUSE_COMMFD=str(theirs.fileno()))
    p = subprocess.run(["fusermount3", "-o", opts, "--", mnt], env=env,
                       pass_fds=[theirs.fileno()], capture_output=True,
                       text=True)
    if p.returncode:
        sys.exit("fusermount3: " + p.stderr)
    fds = array.array("i")
    _, anc, _, _ = ours.recvmsg(1, socket.CMSG_LEN(fds.itemsize))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:fds.itemsize])
    return fds[0]


def reply(fd, unique, err, body=b""):
    os.write(fd, OUT_HDR.pack(OUT_HDR.size + len(body), err, unique) + body)


def serve(fd):
    while True:
        try:
            req = os.read(fd, 1 << 17)
        except OSError:
            return  # unmounted
        if not req:
            return
        _, op, unique = IN_HDR.unpack_from(req)[:3]
        if op == INIT:
            # major, minor, max_readahead, flags, max_background,
            # congestion_threshold, max_write, time_gran, then zeros
            body = struct.pack("<IIIIHHII", 7, 31, 0, 0, 0, 0, 4096, 1)
            reply(fd, unique, 0, body + bytes(64 - len(body)))
        elif op in (FORGET, BATCH_FORGET):
            continue
        elif op == DESTROY:
            reply(fd, unique, 0)
            return
        else:
            reply(fd, unique, -2 if op == LOOKUP else -38)


def main():
    if sys.argv[1] == "--fd":
        fd = int(sys.argv[2])
    else:
        fd = mount(sys.argv[1], sys.argv[2])
    print("mounted", flush=True)
    serve(fd)


if __name__ == "__main__":
    main()
