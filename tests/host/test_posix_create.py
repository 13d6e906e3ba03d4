# SPDX-License-Identifier: GPL-2.0-or-later
"""Creation through the master's mount (daemon/fused/create.c): mkdir, and
files made with open(O_CREAT) + write + close, which the log gets as one
FILE entry at the last close. A client never sees a file half written; a
daemon that dies before the close leaves nothing and no space lost."""
import errno
import json
import mmap
import os
import re
import signal
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

import famfs_host as fh
import format_check


def _data(n, seed):
    return bytes((i * 131 + seed) & 0xff for i in range(n))


def _fsck_clean(master, path):
    p = master.famfs("fsck", path, check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def _made_through(mnt, files, timeout=5.0):
    """Files, bytes, directories and directory changes the daemon says it
    logged through the mount (one line each time it lets the lock go),
    summed, once they count @files files (or after @timeout s)."""
    pat = re.compile(r"logged through the mount: (\d+) files \((\d+) "
                     r"bytes\), (\d+) directories, (\d+) directory")
    end = time.monotonic() + timeout
    while True:
        lines = pat.findall(mnt.log_text())
        made = [sum(int(x[i]) for x in lines) for i in range(4)]
        if made[0] >= files or time.monotonic() > end:
            return made
        time.sleep(0.05)


def _reads_as_upstream(dev, files, dirs, changes):
    """What an fsck of upstream's, sharing no code with ours, finds."""
    r = format_check.check(dev)
    assert r == {"errors": [], "files": files, "dirs": dirs,
                 "changes": changes}, r


def test_mkdir_logs_a_directory(mnt, master):
    before = fh.log_next_index(mnt.dev)
    os.mkdir(os.path.join(mnt.mnt, "d"), 0o750)
    os.makedirs(os.path.join(mnt.mnt, "d/e/f"))
    assert fh.log_next_index(mnt.dev) == before + 3
    st = os.stat(os.path.join(mnt.mnt, "d"))
    assert oct(st.st_mode & 0o7777) == oct(0o750 & ~_umask())
    assert os.path.isdir(os.path.join(mnt.mnt, "d/e/f"))
    with pytest.raises(FileExistsError):
        os.mkdir(os.path.join(mnt.mnt, "d"))
    _fsck_clean(master, mnt.mnt)


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def test_a_written_file_is_logged_at_close(mnt, master):
    path = os.path.join(mnt.mnt, "f")
    data = _data(5 * (1 << 20) + 123, 7)
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(data[:4096])
        f.flush()
        # still being written: visible here, not yet in the log
        assert fh.log_next_index(mnt.dev) == before
        assert os.stat(path).st_size == 4096
        f.write(data[4096:])
    assert fh.wait_entries(mnt.dev, before + 1)
    assert os.stat(path).st_size == len(data)
    with open(path, "rb") as f:
        assert f.read() == data
    # one 6 MiB extent: the memory the size needs, no more
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    assert size == len(data)
    assert fmap[0] == "simple"
    assert [ln for _, _, ln in fmap[1]] == [6 << 20]
    # the bytes are in the device, where the map says
    assert fh.read_via_fmap(mnt.dev, fmap, size) == data
    _fsck_clean(master, mnt.mnt)
    # a logged file keeps its fixed size
    with pytest.raises(OSError) as e:
        os.truncate(path, 1)
    assert e.value.errno == errno.EPERM


def _dirty_kib(path, off, length):
    """KiB of the page cache pages of @path over [off, off + length) that
    are dirty (not written back): mapped here read-only and touched, smaps
    counts each page whose page cache copy is dirty."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), length, prot=mmap.PROT_READ, offset=off)
        try:
            for i in range(0, length, 4096):
                m[i]
            with open("/proc/self/smaps") as smaps:
                lines = smaps.read().splitlines()
        finally:
            m.close()
    ino = os.stat(path).st_ino
    dirty, ours = None, False
    for line in lines:
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            ours = int(head[4]) == ino and int(head[2], 16) == off
        elif ours and head[0] in ("Private_Dirty:", "Shared_Dirty:"):
            dirty = (dirty or 0) + int(head[1])
    assert dirty is not None, "no mapping of %s in smaps" % path
    return dirty


def test_a_file_is_durable_before_it_is_logged(mnt, master):
    """Bytes written through the mount into an image file are written back
    once, before the file's entry: the log never names a file whose bytes
    a crash of the host could still lose. A logged file's bytes are written
    back before the write returns."""
    # Does this file system show dirty pages going clean (tmpfs does not)?
    last = os.path.getsize(mnt.dev) - 4096
    fd = os.open(mnt.dev, os.O_RDWR)
    try:
        old = os.pread(fd, 4096, last)
        os.pwrite(fd, b"x" * 4096, last)
        seen = _dirty_kib(mnt.dev, last, 4096)
        os.pwrite(fd, old, last)
        os.fsync(fd)
        if seen != 4 or _dirty_kib(mnt.dev, last, 4096) != 0:
            pytest.skip("the page cache of this file system does not show "
                        "its pages written back (tmpfs?)")
    finally:
        os.close(fd)
    path = os.path.join(mnt.mnt, "durable")
    data = _data(3 * 4096 + 100, 5)
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        for i in range(0, len(data), 4000):
            f.write(data[i:i + 4000])
            f.flush()
    assert fh.wait_entries(mnt.dev, before + 1)
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    start = fh.dev_offset(fmap, 0)
    assert _dirty_kib(mnt.dev, start, 4 * 4096) == 0
    assert fh.read_via_fmap(mnt.dev, fmap, size) == data
    # in place, into the logged file: durable when write(2) returns
    with open(path, "r+b") as f:
        f.write(b"y" * 4096)
        f.flush()
        assert _dirty_kib(mnt.dev, start, 4096) == 0
    assert fh.read_via_fmap(mnt.dev, fmap, 4096) == b"y" * 4096


def test_cp_tar_and_redirection_into_the_mount(mnt, master, tmp_path):
    src = tmp_path / "src"
    (src / "a/b").mkdir(parents=True)
    for i in range(20):
        (src / "a/b" / ("f%02d" % i)).write_bytes(_data(1000 * i + 1, i))
    (src / "a/top").write_bytes(_data(3 << 20, 99))
    os.chmod(src / "a/top", 0o640)
    tarball = tmp_path / "t.tar"
    with tarfile.open(tarball, "w") as t:
        t.add(src / "a", arcname="a")
    dst = os.path.join(mnt.mnt, "x")
    os.mkdir(dst)
    subprocess.run(["tar", "-x", "-f", str(tarball), "-C", dst],
                   check=True)
    p = subprocess.run(["diff", "-r", str(src / "a"), dst + "/a"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    subprocess.run(["cp", "-a", str(src / "a/top"), mnt.mnt + "/top"],
                   check=True)
    st = os.stat(mnt.mnt + "/top")
    assert st.st_mode & 0o7777 == 0o640
    subprocess.run("echo hello > %s/hello" % mnt.mnt, shell=True, check=True)
    with open(mnt.mnt + "/hello") as f:
        assert f.read() == "hello\n"
    _fsck_clean(master, mnt.mnt)
    # x, a, a/b; 20 files, top twice, hello; root's tar made a and a/b
    # 0700 and gave them their mode after their files: one change each
    _reads_as_upstream(mnt.dev, files=23, dirs=3, changes=2)


def _dir_entries(dev, rel, first, last):
    """The MKDIR entries of @rel among log indexes [first, last)."""
    out = []
    for i in range(first, last):
        if fh.read_entry(dev, i)[8] == 1:
            mode, uid, gid, r = fh.mkdir_entry(dev, i)
            if r == rel:
                out.append((mode, uid, gid))
    return out


def _owner_mode(path):
    st = os.lstat(path)
    return st.st_mode & 0o7777, st.st_uid, st.st_gid


def test_tar_as_root_keeps_directory_modes_and_owners(mnt, master, client,
                                                       device, tmp_path):
    """tar -x as root makes each directory 0700 and sets its mode and
    owner after its files (cp -a does the same): a chmod or chown of a
    logged directory is logged as a second MKDIR entry of its path, which
    every host, a new daemon and fsck read back."""
    src = tmp_path / "src"
    (src / "t/shared/deep").mkdir(parents=True)
    (src / "t/private").mkdir()
    for d, mode, uid, gid in (("t", 0o755, 0, 0),
                              ("t/shared", 0o2775, 1000, 100),
                              ("t/shared/deep", 0o711, 1000, 1000),
                              ("t/private", 0o750, 1001, 100)):
        (src / d / "f").write_bytes(_data(3000 + len(d), len(d)))
        os.chown(src / d, uid, gid)
        os.chmod(src / d, mode)
    tarball = tmp_path / "t.tar"
    subprocess.run(["tar", "-C", str(src), "--numeric-owner", "-cf",
                    str(tarball), "t"], check=True)
    first = fh.log_next_index(mnt.dev)
    p = subprocess.run(["tar", "-C", mnt.mnt, "--numeric-owner", "-xf",
                        str(tarball)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    dirs = ["t", "t/shared", "t/shared/deep", "t/private"]
    want = {d: _owner_mode(src / d) for d in dirs + [d + "/f" for d in dirs]}

    def shows(top):
        return {d: _owner_mode(os.path.join(top, d)) for d in want}

    assert shows(mnt.mnt) == want
    last = fh.log_next_index(mnt.dev)
    # each directory: made 0700 by root, then given the archive's owner
    # (chown: one entry, unless root's) and mode (chmod: one entry)
    changes = 0
    for d in dirs:
        got = _dir_entries(mnt.dev, d, first, last)
        assert got[0] == (0o700, 0, 0) and got[-1] == want[d], d
        assert len(got) == (2 if want[d][1:] == (0, 0) else 3), got
        changes += len(got) - 1
    assert changes == 7
    assert last - first == 2 * len(dirs) + changes
    # a client, and a new daemon on the master, read the same
    cm = fh.Mount(client, device, str(tmp_path / "cmnt"),
                  str(tmp_path / "fused-client.log"), opts="poll_ms=100")
    cm.mount()
    try:
        assert shows(cm.mnt) == want
        # a client may not change one
        with pytest.raises(OSError) as e:
            os.chmod(os.path.join(cm.mnt, "t"), 0o700)
        assert e.value.errno == errno.EROFS
        # the client's kernel holds the attributes for 10 s; its daemon
        # drops them when it reads the change from the log
        os.chmod(os.path.join(mnt.mnt, "t/private"), 0o700)
        end = time.monotonic() + 3
        while _owner_mode(os.path.join(cm.mnt, "t/private"))[0] != 0o700:
            assert time.monotonic() < end, "the client kept the old mode"
            time.sleep(0.05)
        os.chmod(os.path.join(mnt.mnt, "t/private"), want["t/private"][0])
        last += 2
    finally:
        cm.unmount()
    mnt.unmount()
    mnt.mount()
    assert shows(mnt.mnt) == want
    p = master.famfs("fsck", "--json", mnt.mnt, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads(p.stdout)
    assert report["directories"] == len(dirs)
    assert report["files"] == len(dirs)
    p = master.famfs("logplay", mnt.mnt)
    assert "%d entries: %d files (" % (last, len(dirs)) in p.stdout
    assert "), %d directories, %d directory mode or owner changes, 0 other" \
        % (len(dirs), changes + 2) in p.stdout, p.stdout
    _reads_as_upstream(mnt.dev, files=len(dirs), dirs=len(dirs),
                       changes=changes + 2)
    # a change to what it is already logs nothing
    os.chmod(os.path.join(mnt.mnt, "t"), 0o755)
    os.chown(os.path.join(mnt.mnt, "t/private"), 1001, 100)
    assert fh.log_next_index(mnt.dev) == last
    # the root is not in the log; a logged file's mode is in its entry
    for path in (mnt.mnt, os.path.join(mnt.mnt, "t/f")):
        with pytest.raises(OSError) as e:
            os.chmod(path, 0o700)
        assert e.value.errno == errno.EPERM
    assert fh.log_next_index(mnt.dev) == last
    assert shows(mnt.mnt) == want


def test_cp_writes_a_request_at_a_time(mnt, tmp_path):
    """st_blksize says how much one FUSE WRITE carries, so cp (which
    writes max(128 KiB, st_blksize) at a time) needs one request per
    st_blksize bytes, and the bytes land whole."""
    blk = os.stat(mnt.mnt).st_blksize
    assert blk >= 128 << 10 and blk & (blk - 1) == 0
    src = str(tmp_path / "src")
    data = _data(8 * blk + 100, 3)
    with open(src, "wb") as f:
        f.write(data)
    before = int(mnt.status()["writes"])
    fh.run(["cp", src, os.path.join(mnt.mnt, "copy")])
    assert int(mnt.status()["writes"]) - before == 9
    assert os.stat(os.path.join(mnt.mnt, "copy")).st_blksize == blk
    with open(os.path.join(mnt.mnt, "copy"), "rb") as f:
        assert f.read() == data


def test_preallocation_and_holes_read_zeros(mnt, master):
    path = os.path.join(mnt.mnt, "pre")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
    os.posix_fallocate(fd, 0, 8 << 20)
    os.pwrite(fd, b"end", (8 << 20) - 3)
    os.close(fd)
    assert os.stat(path).st_size == 8 << 20
    with open(path, "rb") as f:
        body = f.read()
    assert body[:-3] == bytes((8 << 20) - 3) and body[-3:] == b"end"
    # truncate -s of a new file before its first write: the same
    subprocess.run(["truncate", "-s", "3M", path + "2"], check=True)
    assert os.stat(path + "2").st_size == 3 << 20
    _fsck_clean(master, mnt.mnt)


def test_limits_of_the_format_are_clean_errors(mnt, master):
    long_name = "n" * 90
    with pytest.raises(OSError) as e:
        open(os.path.join(mnt.mnt, long_name), "wb").close()
    assert e.value.errno == errno.ENAMETOOLONG
    # a second writer of a file still being written is refused
    path = os.path.join(mnt.mnt, "busy")
    with open(path, "wb") as f:
        f.write(b"x")
        with pytest.raises(OSError) as e:
            open(path, "r+b").close()
        assert e.value.errno == errno.ETXTBSY
    # a full device: ENOSPC, and the partial file is not logged
    time.sleep(0.2)
    before = fh.log_next_index(mnt.dev)
    free = os.statvfs(mnt.mnt).f_bfree
    with pytest.raises(OSError) as e:
        with open(os.path.join(mnt.mnt, "huge"), "wb") as f:
            chunk = bytes(1 << 20)
            for _ in range(2048):
                f.write(chunk)
                f.flush()
    assert e.value.errno == errno.ENOSPC
    # a file cut short is never logged, and its memory is free again
    time.sleep(0.2)
    assert fh.log_next_index(mnt.dev) == before
    assert not os.path.exists(os.path.join(mnt.mnt, "huge"))
    assert "huge: discarded, not logged: a write found no room" in \
        mnt.log_text()
    assert os.statvfs(mnt.mnt).f_bfree == free
    _fsck_clean(master, mnt.mnt)


def test_ls_lists_files_being_written_once(mnt, master):
    """readdir on the master lists files still being written after the
    logged ones, each once, across as many READDIR requests as long names
    need; once logged, each is listed once more, as a logged file."""
    d = os.path.join(mnt.mnt, "many")
    os.mkdir(d)
    name = "%03d-" + "x" * 64
    logged = [name % i for i in range(20)]
    for n in logged:
        with open(os.path.join(d, n), "wb") as f:
            f.write(b"l")
    pending = [name % i for i in range(20, 170)]
    files = [open(os.path.join(d, n), "wb") for n in pending]
    try:
        files[0].write(b"p")
        files[0].flush()
        seen = os.listdir(d)
        assert sorted(seen) == sorted(logged + pending)
        inos = {e.name: e.inode() for e in os.scandir(d)}
        assert all(inos[n] == os.stat(os.path.join(d, n)).st_ino
                   for n in pending)
        assert all(inos[n] >= 1 << 41 for n in pending)
        # ls -l: the attributes of a pending file, as stat gives them
        st = os.stat(os.path.join(d, pending[0]))
        assert st.st_size == 1 and st.st_mtime > 0
    finally:
        for f in files:
            f.close()
    # logged at their close (RELEASE comes just after close(2) returns)
    end = time.monotonic() + 10
    while (any(os.stat(os.path.join(d, n)).st_ino >= 1 << 41
               for n in pending) and time.monotonic() < end):
        time.sleep(0.05)
    seen = [e for e in os.scandir(d)]
    assert sorted(e.name for e in seen) == sorted(logged + pending)
    assert all(e.inode() < 1 << 41 for e in seen)
    _fsck_clean(master, mnt.mnt)


def test_a_client_never_sees_a_file_being_written(tmp_path, master, client,
                                                  device, mounts, mnt):
    cm = fh.Mount(client, device, str(tmp_path / "cmnt"),
                  str(tmp_path / "fused-client.log"))
    mounts.append(cm)
    cm.mount()
    path = os.path.join(mnt.mnt, "slow")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(_data(1 << 20, 3))
        f.flush()
        assert not os.path.exists(os.path.join(cm.mnt, "slow"))
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(os.path.join(cm.mnt, "slow"), "rb") as f:
        assert f.read() == _data(1 << 20, 3)
    # the client cannot create
    with pytest.raises(OSError) as e:
        os.mkdir(os.path.join(cm.mnt, "nope"))
    assert e.value.errno == errno.EROFS


def test_a_daemon_killed_mid_write_leaves_nothing(mnt, master):
    before = fh.log_next_index(mnt.dev)
    free_before = os.statvfs(mnt.mnt).f_bfree
    f = open(os.path.join(mnt.mnt, "torn"), "wb")
    f.write(bytes(4 << 20))
    f.flush()
    assert os.statvfs(mnt.mnt).f_bfree == free_before - 2
    os.kill(mnt.pid, signal.SIGKILL)
    mnt.wait_daemon_exit()
    try:
        f.close()
    except OSError:
        pass  # the connection is gone
    mnt.unmount()
    assert fh.log_next_index(mnt.dev) == before
    mnt.mount()
    assert not os.path.exists(os.path.join(mnt.mnt, "torn"))
    assert os.statvfs(mnt.mnt).f_bfree == free_before
    _fsck_clean(master, mnt.mnt)


def test_a_file_closed_after_a_lazy_umount_is_logged(mnt, master):
    """The last close after umount -l ends the file system in the same
    close(2), before the daemon can have read that file's RELEASE: the
    daemon holds the mount while files are pending, logs the file, and
    only then lets the connection end. Writer and daemon share one CPU,
    as in a one-CPU guest, where the RELEASE was lost every time."""
    mib = bytes(range(256)) * 4096
    before = fh.log_next_index(mnt.dev)
    os.sched_setaffinity(mnt.pid, {0})
    code = ("import os, subprocess, sys\n"
            "os.sched_setaffinity(0, {0})\n"
            "mib = bytes(range(256)) * 4096\n"
            "f = open(sys.argv[1], 'wb')\n"
            "f.write(mib)\n"
            "f.flush()\n"
            "subprocess.run(['umount', '-l', sys.argv[2]], check=True)\n"
            "f.write(mib * 2)\n"
            "f.close()\n")
    subprocess.run([sys.executable, "-c", code,
                    os.path.join(mnt.mnt, "lazy"), mnt.mnt],
                   check=True, timeout=60)
    assert mnt.wait_daemon_exit(10), "the daemon outlived its file system"
    assert fh.log_next_index(mnt.dev) == before + 1
    # said before it exited, though it had no time to let the lock go
    assert _made_through(mnt, 1, timeout=0) == [1, 3 << 20, 0, 0]
    mnt.mount()
    with open(os.path.join(mnt.mnt, "lazy"), "rb") as f:
        assert f.read() == mib * 3
    _fsck_clean(master, mnt.mnt)


def test_a_new_mount_keeps_no_file_of_the_old_one_open(mnt, master):
    """mount.famfs started by a writer whose file on a lazily unmounted
    mount of the same device is still open: the helper and the new daemon
    must not inherit that file, or its RELEASE never comes, the file is
    never logged and the old daemon never ends."""
    old_pid = mnt.pid
    f = open(os.path.join(mnt.mnt, "inherited"), "wb")
    f.write(b"x" * 5000)
    f.flush()
    subprocess.run(["umount", "-l", mnt.mnt], check=True)
    before = fh.log_next_index(mnt.dev)
    p = subprocess.run([fh.MOUNT, mnt.dev, mnt.mnt, "-o",
                        "logfile=" + mnt.logfile], env=mnt.host.env,
                       pass_fds=(f.fileno(),), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    new_pid = int(mnt.status()["pid"])
    f.close()
    assert fh.wait_entries(mnt.dev, before + 1)
    mnt.pid = old_pid
    assert mnt.wait_daemon_exit(10), "the old daemon outlived its mount"
    mnt.pid = new_pid
    with open(os.path.join(mnt.mnt, "inherited"), "rb") as g:
        assert g.read() == b"x" * 5000


def _writer(path, end):
    """A child that writes 3 MiB to @path, then ends as @end says:
    "kill" (SIGKILL to itself, the file still open) or "exit" (exit(0)
    without closing it)."""
    code = ("import os, signal\n"
            "fd = os.open(%r, os.O_CREAT | os.O_WRONLY, 0o644)\n"
            "os.write(fd, b'\\xab' * (3 << 20))\n"
            "if %r == 'kill':\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "os._exit(0)\n") % (path, end)
    return subprocess.run(["/usr/bin/python3", "-c", code]).returncode


def test_a_killed_writer_leaves_nothing(mnt, master):
    before = fh.log_next_index(mnt.dev)
    free = os.statvfs(mnt.mnt).f_bfree
    assert _writer(os.path.join(mnt.mnt, "killed"), "kill") == -9
    time.sleep(0.3)
    assert fh.log_next_index(mnt.dev) == before
    assert not os.path.exists(os.path.join(mnt.mnt, "killed"))
    assert os.statvfs(mnt.mnt).f_bfree == free
    assert "killed: discarded, not logged: its writer was killed" in \
        mnt.log_text()
    # one that exits without closing has written its file: logged
    assert _writer(os.path.join(mnt.mnt, "exited"), "exit") == 0
    assert fh.wait_entries(mnt.dev, before + 1)
    assert os.stat(os.path.join(mnt.mnt, "exited")).st_size == 3 << 20
    _fsck_clean(master, mnt.mnt)


def test_a_killed_child_holding_the_writers_fd_ends_nothing(mnt):
    """A shell's background job writes to the shell's exec 3> file and
    is killed: the file is its parent's, which goes on writing it and
    closes it; the file is logged whole. When the killed one is the last
    holder (the parent closed first), nothing is logged."""
    before = fh.log_next_index(mnt.dev)
    path = os.path.join(mnt.mnt, "kept")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"a" * 4096)
    child = os.fork()
    if child == 0:
        os.write(fd, b"b" * 4096)
        os.kill(os.getpid(), signal.SIGKILL)
    assert os.waitpid(child, 0)[1] & 0x7f == signal.SIGKILL
    os.write(fd, b"c" * 4096)
    os.close(fd)
    assert fh.wait_entries(mnt.dev, before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"a" * 4096 + b"b" * 4096 + b"c" * 4096
    # the parent closes first; its child, the last holder, is killed
    path = os.path.join(mnt.mnt, "gone")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    rd, wr = os.pipe()
    child = os.fork()
    if child == 0:
        os.write(fd, b"b" * 4096)
        os.read(rd, 1)
        os._exit(0)
    os.close(fd)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    os.close(rd)
    os.close(wr)
    assert fh.wait_for(lambda: "gone: discarded, not logged: its writer "
                       "was killed" in mnt.log_text())
    assert fh.log_next_index(mnt.dev) == before + 1
    assert not os.path.exists(path)


def test_a_read_only_creator_is_no_writer(mnt):
    """open(O_RDONLY | O_CREAT) makes an empty file and writes nothing:
    while a reader still has the file open after that close, a writer
    may open it."""
    path = os.path.join(mnt.mnt, "rdcreat")
    fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
    r = os.open(path, os.O_RDONLY)
    os.close(fd)
    w = os.open(path, os.O_WRONLY)
    os.write(w, b"now")
    os.close(w)
    os.close(r)
    with open(path, "rb") as f:
        assert f.read() == b"now"


def test_famfs_creat_goes_through_the_mount(mnt, master):
    """On a mounted master, famfs creat makes contiguous files through the
    mount (create + fallocate + close): the daemon logs them, with no
    replay of the log by the CLI. Interleaved ones still go through the
    log, and both kinds read back their pattern."""
    m = mnt.mnt
    master.famfs("creat", "-s", "3m", "-r", "-S", "4", "-m", "0640",
                 os.path.join(m, "viamount"))
    assert _made_through(mnt, 1) == [1, 3 << 20, 0, 0]
    st = os.stat(os.path.join(m, "viamount"))
    assert st.st_size == 3 << 20 and st.st_mode & 0o7777 == 0o640
    master.famfs("verify", "-S", "4", "-f", os.path.join(m, "viamount"))
    master.famfs("creat", "-N", "2", "-s", "8m", os.path.join(m, "striped"))
    # not through the mount; the next one is, and is counted once
    master.famfs("creat", "-s", "2m", os.path.join(m, "second"))
    assert _made_through(mnt, 2) == [2, 5 << 20, 0, 0]
    assert fh.file_entry(mnt.dev, os.stat(os.path.join(m, "striped"))
                         .st_ino)[1][0] == "interleave"
    # rerun: the file of the right size is left alone; another size fails
    master.famfs("creat", "-s", "3m", os.path.join(m, "viamount"))
    p = master.famfs("creat", "-s", "4m", os.path.join(m, "viamount"),
                     check=False)
    assert p.returncode == 1 and "exists with size" in p.stderr
    # what the mount cannot do, the log path says: no such directory
    p = master.famfs("creat", "-s", "2m", os.path.join(m, "nodir/f"),
                     check=False)
    assert p.returncode == 1 and "does not exist" in p.stderr
    _fsck_clean(master, m)


def test_the_cli_waits_while_files_are_pending(mnt, master):
    """One writer per device: while a file is being written through the
    mount the daemon holds the log lock. famfs mkdir and famfs creat of a
    contiguous file go through the same daemon and work, so a user who
    keeps a file open cannot stall them; what writes the log itself (an
    interleaved creat) waits for the lock and says whose it is."""
    env = dict(master.env, FAMFS_LOCK_TIMEOUT="1")
    with open(os.path.join(mnt.mnt, "p"), "wb") as f:
        f.write(b"x")
        f.flush()
        fh.run([fh.FAMFS, "creat", "-s", "2m", os.path.join(mnt.mnt, "q")],
               env=env)
        fh.run([fh.FAMFS, "mkdir", "-p", "-m", "0750",
                os.path.join(mnt.mnt, "dd/ee")], env=env)
        p = fh.run([fh.FAMFS, "creat", "-N", "2", "-s", "4m",
                    os.path.join(mnt.mnt, "il")], env=env, check=False)
        assert p.returncode == 1, p.stderr
        assert "log lock" in p.stderr and "famfs-fused" in p.stderr
    # p and q, and dd and dd/ee: through the daemon
    assert _made_through(mnt, 2) == [2, 1 + (2 << 20), 2, 0]
    st = os.stat(os.path.join(mnt.mnt, "dd/ee"))
    assert st.st_mode & 0o7777 == 0o750
    # -p again: there already, fine; without -p: "exists", exit 1
    master.famfs("mkdir", "-p", os.path.join(mnt.mnt, "dd/ee"))
    p = master.famfs("mkdir", os.path.join(mnt.mnt, "dd"), check=False)
    assert p.returncode == 1 and "exists" in p.stderr
    master.famfs("creat", "-N", "2", "-s", "4m", os.path.join(mnt.mnt, "il"))
    _fsck_clean(master, mnt.mnt)


def test_the_daemon_lets_go_of_the_log_lock_after_the_last_file(
        tmp_path, master, device, mounts):
    """The daemon holds the log lock while a file is being written and
    lets go of it a moment (0.1 s) after the last one, so the next file
    of a tar does not take it anew; then another writer gets it. With
    poll_ms=0 nothing else wakes the daemon: the moment is its own."""
    mnt = fh.Mount(master, device, str(tmp_path / "mnt"),
                   str(tmp_path / "fused.log"), opts="poll_ms=0")
    mounts.append(mnt)
    mnt.mount()
    with open(os.path.join(mnt.mnt, "p"), "wb") as f:
        f.write(b"x")
        f.flush()
        time.sleep(0.3)  # longer than the linger: the file holds it
        assert fh.try_log_lock(device) is None
    fd = fh.take_log_lock(device, timeout=10)
    try:
        # and the daemon, finding it held, refuses to create
        with pytest.raises(OSError) as e:
            os.mkdir(os.path.join(mnt.mnt, "d"))
        assert e.value.errno == errno.EBUSY
    finally:
        os.close(fd)
    os.mkdir(os.path.join(mnt.mnt, "d"))


def test_creation_while_another_writer_holds_the_lock(mnt, master,
                                                      device):
    """The daemon never waits for the log lock (the writer holding it may
    need the daemon to serve it): mkdir and create fail with EBUSY while
    another writer holds it, and work once it is free."""
    fd = fh.take_log_lock(device)
    try:
        with pytest.raises(OSError) as e:
            os.mkdir(os.path.join(mnt.mnt, "later"))
        assert e.value.errno == errno.EBUSY
        with pytest.raises(OSError) as e:
            open(os.path.join(mnt.mnt, "later-f"), "wb").close()
        assert e.value.errno == errno.EBUSY
        assert "being written by" in mnt.log_text()
    finally:
        os.close(fd)
    os.mkdir(os.path.join(mnt.mnt, "later"))
    open(os.path.join(mnt.mnt, "later-f"), "wb").close()
    assert os.stat(os.path.join(mnt.mnt, "later-f")).st_size == 0
    _fsck_clean(master, mnt.mnt)


NOBODY = 65534


def _world_mount(master, mounts, opts=""):
    """A master mount every user can reach (pytest's tmp is root's 0700),
    with a directory the unprivileged user may create in."""
    d = tempfile.mkdtemp(prefix="famfs-posix-", dir="/tmp")
    os.chmod(d, 0o755)
    dev = os.path.join(d, "famfs.img")
    fh.mkfs(master, dev, 256 << 20)
    m = fh.Mount(master, dev, os.path.join(d, "mnt"),
                 os.path.join(d, "fused.log"), opts)
    mounts.append(m)
    m.mount()
    old = os.umask(0)
    try:
        os.mkdir(os.path.join(m.mnt, "pub"), 0o1777)
    finally:
        os.umask(old)
    yield m
    m.unmount()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def world_mnt(master, mounts):
    yield from _world_mount(master, mounts)


@pytest.fixture
def world_mnt_delayed(master, mounts):
    """The same, each closed file logged 0.1 s after its close."""
    yield from _world_mount(master, mounts, "commit_delay=100")


def _as_user(code):
    return subprocess.run(["setpriv", "--reuid=%d" % NOBODY,
                           "--regid=%d" % NOBODY, "--clear-groups",
                           "/usr/bin/python3", "-c", code],
                          capture_output=True, text=True)


def test_a_users_file_never_shows_what_the_device_held(world_mnt, master):
    """Memory a discarded file wrote is free again, with its bytes still
    in it: a user's preallocation there reads zeros (root's, like famfs
    creat -s, is not scrubbed: root can read the device anyway). A user
    owns the files they make and cannot give them to root."""
    m = world_mnt.mnt
    assert _writer(os.path.join(m, "junk"), "kill") == -9
    time.sleep(0.3)
    assert not os.path.exists(os.path.join(m, "junk"))
    p = _as_user("import os\n"
                 "fd = os.open(%r, os.O_CREAT | os.O_RDWR, 0o600)\n"
                 "os.posix_fallocate(fd, 0, 3 << 20)\n"
                 "assert os.pread(fd, 3 << 20, 0) == bytes(3 << 20)\n"
                 "try:\n"
                 "    os.fchown(fd, 0, 0)\n"
                 "    raise SystemExit('chown to root worked')\n"
                 "except PermissionError:\n"
                 "    pass\n"
                 "os.close(fd)\n" % os.path.join(m, "pub/u"))
    assert p.returncode == 0, p.stderr
    time.sleep(0.3)
    st = os.stat(os.path.join(m, "pub/u"))
    assert (st.st_uid, st.st_gid, st.st_size) == (NOBODY, NOBODY, 3 << 20)
    with open(os.path.join(m, "pub/u"), "rb") as f:
        assert f.read() == bytes(3 << 20)
    # the user cannot create where the directory's mode says no
    p = _as_user("open(%r, 'wb')" % os.path.join(m, "rootonly"))
    assert p.returncode != 0 and "Permission denied" in p.stderr
    _fsck_clean(master, m)


def test_holes_and_the_last_page_never_show_what_the_device_held(mnt,
                                                                  master):
    """Root's files keep what the device held only where nothing is
    written and the size does not reach (famfs creat -s): a hole before a
    write, and the rest of the last page (which a mapping shows whole),
    read as zeros, on the device itself too."""
    with open(mnt.dev, "r+b") as f:
        f.seek(10 << 20)  # the memory after the log, where files go
        f.write(b"\xaa" * (64 << 20))
    path = os.path.join(mnt.mnt, "holey")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.seek(8192)
        f.write(b"z" * 10)
    assert fh.wait_entries(mnt.dev, before + 1)
    want = bytes(8192) + b"z" * 10
    with open(path, "rb") as f:
        assert f.read() == want
    size, fmap = fh.file_entry(mnt.dev, os.stat(path).st_ino)
    assert size == len(want)
    with open(mnt.dev, "rb") as f:
        f.seek(fh.dev_offset(fmap, 0))
        assert f.read(12288) == want + bytes(12288 - len(want))


def test_a_user_lists_files_being_written_only_where_it_may(world_mnt):
    """readdir lists pending files with the directory's own permissions:
    an unprivileged user lists root's file being written in a directory
    open to all but cannot open it (0600), and cannot list a 0700
    directory's pending file at all."""
    m = world_mnt.mnt
    os.mkdir(os.path.join(m, "private"), 0o700)
    fd_pub = os.open(os.path.join(m, "pub", "rootfile"),
                     os.O_CREAT | os.O_WRONLY, 0o600)
    fd_priv = os.open(os.path.join(m, "private", "secret"),
                      os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd_pub, b"root")
        p = _as_user("import os, sys\n"
                     "print(sorted(os.listdir(sys.argv[0] + '/pub')))\n"
                     "try:\n"
                     "    open(sys.argv[0] + '/pub/rootfile').read()\n"
                     "    print('opened')\n"
                     "except PermissionError:\n"
                     "    print('EACCES')\n"
                     "try:\n"
                     "    os.listdir(sys.argv[0] + '/private')\n"
                     "    print('listed')\n"
                     "except PermissionError:\n"
                     "    print('EACCES')\n".replace(
                         "sys.argv[0]", repr(m)))
        assert p.returncode == 0, p.stderr
        assert p.stdout.split("\n")[:3] == ["['rootfile']", "EACCES",
                                            "EACCES"], p.stdout
        assert os.listdir(os.path.join(m, "private")) == ["secret"]
    finally:
        os.close(fd_pub)
        os.close(fd_priv)


def test_who_may_change_a_logged_directory(world_mnt):
    """A logged directory's mode and owner change as on any file system:
    its owner may chmod it and give it a group of their own, only root
    may give it away; each change is one MKDIR entry, a refusal none."""
    m = world_mnt.mnt
    os.mkdir(os.path.join(m, "rootdir"), 0o755)
    before = fh.log_next_index(world_mnt.dev)
    p = _as_user("import errno, os, sys\n"
                 "m = sys.argv[1]\n"
                 "os.mkdir(m + '/pub/mine', 0o700)\n"
                 "os.chmod(m + '/pub/mine', 0o755)\n"
                 "for f, a in ((os.chmod, ('/rootdir', 0o777)),\n"
                 "             (os.chown, ('/pub/mine', 0, -1)),\n"
                 "             (os.chown, ('/pub/mine', -1, 0))):\n"
                 "    try:\n"
                 "        f(m + a[0], *a[1:])\n"
                 "        print('done')\n"
                 "    except PermissionError as e:\n"
                 "        print(errno.errorcode[e.errno])\n"
                 .replace("sys.argv[1]", repr(m)))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["EPERM"] * 3, p.stdout
    assert _owner_mode(os.path.join(m, "pub/mine")) == (0o755, NOBODY,
                                                        NOBODY)
    assert _owner_mode(os.path.join(m, "rootdir"))[0] == 0o755
    # mkdir, then chmod: two entries; the refusals logged nothing
    assert fh.log_next_index(world_mnt.dev) == before + 2
    assert _dir_entries(world_mnt.dev, "pub/mine", before, before + 2) == \
        [(0o700, NOBODY, NOBODY), (0o755, NOBODY, NOBODY)]
    # root may give it away
    os.chown(os.path.join(m, "pub/mine"), 0, 0)
    assert _owner_mode(os.path.join(m, "pub/mine")) == (0o755, 0, 0)
    assert fh.log_next_index(world_mnt.dev) == before + 3


def test_the_shadow_tree_follows_a_directorys_changes(mnt, master,
                                                       tmp_path):
    """famfs logplay --shadow gives each directory of upstream's shadow
    tree its last logged mode and owner: on the first play, and on a play
    over a tree made before the change."""
    d = os.path.join(mnt.mnt, "d")
    os.mkdir(d, 0o755)
    os.chmod(d, 0o700)
    os.chown(d, 7, 8)
    shadow = str(tmp_path / "shadow")
    os.mkdir(shadow, 0o700)

    def play():
        p = master.famfs("logplay", "--shadow", shadow, mnt.mnt)
        return p.stdout

    out = play()
    assert "0 files, 1 directories (0 already there), 2 directory mode " \
        "or owner changes" in out, out
    assert _owner_mode(os.path.join(shadow, "root/d")) == (0o700, 7, 8)
    # another change: the tree there catches up, the first entry's mode
    # (0755) never comes back
    os.chmod(d, 0o2750)
    os.chown(d, 9, 8)
    assert _owner_mode(d) == (0o2750, 9, 8)
    out = play()
    assert "1 directories (1 already there, 1 of them given a later mode " \
        "or owner), 4 directory mode or owner changes" in out, out
    assert _owner_mode(os.path.join(shadow, "root/d")) == (0o2750, 9, 8)
    out = play()
    assert "(1 already there), 4 directory" in out, out
    # a dry run where no tree is yet counts the same
    os.mkdir(str(tmp_path / "none"), 0o700)
    p = master.famfs("logplay", "--shadow", str(tmp_path / "none"), "-n",
                     mnt.mnt, check=False)
    assert "0 files, 1 directories (0 already there), 4 directory mode " \
        "or owner changes, dry run" in p.stdout, (p.stdout, p.stderr)


def test_the_shadow_tree_counts_a_directory_made_later_as_no_change(
        tmp_path, master):
    """A MKDIR entry whose parent the log makes only later is skipped as on
    any replay, even though the final namespace has its path: a change is
    an entry of a directory an earlier entry made."""
    dev = str(tmp_path / "img")
    fh.mkfs(master, dev, 256 << 20)
    master.famfs("mkdir", "-D", dev, "a")
    master.famfs("mkdir", "-D", dev, "a/b")
    a, ab = fh.read_entry(dev, 0), fh.read_entry(dev, 1)
    for index, e in enumerate((ab, a, ab)):
        fh.write_entry(dev, index, e, count=3)
    shadow = str(tmp_path / "shadow")
    os.mkdir(shadow, 0o700)
    p = master.famfs("logplay", "--shadow", shadow, "--daxdev", dev,
                     check=False)
    assert "directory mode or owner changes" not in p.stdout, p.stdout
    assert "0 files, 3 directories" in p.stdout, p.stdout
    assert "a/b" in p.stderr and p.returncode == 1, (p.stdout, p.stderr)
    assert os.path.isdir(os.path.join(shadow, "root/a/b"))


def test_a_user_cannot_rename_or_remove_anothers_file_being_written(
        world_mnt):
    """A file not yet logged may be renamed or removed, by whom the
    directory allows: in a sticky directory open to all, only its owner
    (the kernel checks, default_permissions); in root's own directory,
    nobody else. A user's own file is theirs to rename."""
    m = world_mnt.mnt
    os.mkdir(os.path.join(m, "rootdir"), 0o755)
    before = fh.log_next_index(world_mnt.dev)
    fds = [os.open(os.path.join(m, p), os.O_CREAT | os.O_WRONLY, 0o644)
           for p in ("pub/roots", "rootdir/roots")]
    try:
        for fd in fds:
            os.write(fd, b"root's")
        p = _as_user("import errno, os\n"
                     "m = %r\n"
                     "for f, a in ((os.rename, ('/pub/roots', '/pub/x')),\n"
                     "             (os.unlink, ('/pub/roots',)),\n"
                     "             (os.rename, ('/rootdir/roots',\n"
                     "                          '/pub/y')),\n"
                     "             (os.unlink, ('/rootdir/roots',))):\n"
                     "    try:\n"
                     "        f(*(m + x for x in a))\n"
                     "        print('done')\n"
                     "    except OSError as e:\n"
                     "        print(errno.errorcode[e.errno])\n"
                     "with open(m + '/pub/tmp', 'wb') as f:\n"
                     "    f.write(b'mine')\n"
                     "    os.rename(m + '/pub/tmp', m + '/pub/mine')\n"
                     % m)
        assert p.returncode == 0, p.stderr
        assert p.stdout.split() == ["EPERM", "EPERM", "EACCES", "EACCES"], \
            p.stdout
    finally:
        for fd in fds:
            os.close(fd)
    assert fh.wait_entries(world_mnt.dev, before + 3)
    for rel, data in (("pub/roots", b"root's"), ("rootdir/roots", b"root's"),
                      ("pub/mine", b"mine")):
        with open(os.path.join(m, rel), "rb") as f:
            assert f.read() == data
    assert not os.path.exists(os.path.join(m, "pub/tmp"))
    assert _owner_mode(os.path.join(m, "pub/mine"))[1] == NOBODY


def test_a_user_whose_child_is_killed_or_who_races_the_commit(
        world_mnt_delayed):
    """The same paths as root's, run by an unprivileged user: a killed
    child holding the user's writer fd ends nothing (the file is logged
    whole, the user's own), and the killed child as last holder leaves
    nothing; opens of files being logged, in a second thread, never fail
    with ENOENT or ESTALE."""
    m = world_mnt_delayed.mnt
    pub = os.path.join(m, "pub")
    before = fh.log_next_index(world_mnt_delayed.dev)
    p = _as_user(
        "import errno, os, signal, threading, time\n"
        "pub = %r\n"
        "fd = os.open(pub + '/kept', os.O_WRONLY | os.O_CREAT | os.O_EXCL,"
        " 0o600)\n"
        "os.write(fd, b'a' * 4096)\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    os.write(fd, b'b' * 4096)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "assert os.waitpid(child, 0)[1] & 0x7f == signal.SIGKILL\n"
        "os.write(fd, b'c' * 4096)\n"
        "os.close(fd)\n"
        "fd = os.open(pub + '/gone', os.O_WRONLY | os.O_CREAT | os.O_EXCL,"
        " 0o600)\n"
        "rd, wr = os.pipe()\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        "    os.write(fd, b'b' * 4096)\n"
        "    os.read(rd, 1)\n"
        "    os._exit(0)\n"
        "os.close(fd)\n"
        "os.kill(child, signal.SIGKILL)\n"
        "os.waitpid(child, 0)\n"
        "names = [pub + '/r%%02d' %% i for i in range(30)]\n"
        "made, failed, opens = [0], [], [0]\n"
        "stop = threading.Event()\n"
        "def reader():\n"
        "    while not stop.is_set():\n"
        "        for i in range(made[0]):\n"
        "            try:\n"
        "                with open(names[i], 'rb') as f:\n"
        "                    if f.read() != b'%%02d' %% i:\n"
        "                        failed.append((i, 'wrong bytes'))\n"
        "                opens[0] += 1\n"
        "            except OSError as e:\n"
        "                failed.append((i, errno.errorcode[e.errno]))\n"
        "t = threading.Thread(target=reader)\n"
        "t.start()\n"
        "for i, path in enumerate(names):\n"
        "    with open(path, 'wb') as f:\n"
        "        f.write(b'%%02d' %% i)\n"
        "    made[0] = i + 1\n"
        "    time.sleep(0.04)\n"
        "time.sleep(0.2)\n"
        "stop.set()\n"
        "t.join()\n"
        "assert not failed, failed\n"
        "assert opens[0] > 50, opens\n" % pub)
    assert p.returncode == 0, p.stderr
    assert fh.wait_for(lambda: "gone: discarded, not logged: its writer "
                       "was killed" in world_mnt_delayed.log_text())
    assert fh.wait_entries(world_mnt_delayed.dev, before + 31)
    assert fh.log_next_index(world_mnt_delayed.dev) == before + 31
    assert not os.path.exists(os.path.join(pub, "gone"))
    st = os.stat(os.path.join(pub, "kept"))
    assert (st.st_uid, st.st_mode & 0o777, st.st_size) == (NOBODY, 0o600,
                                                           3 * 4096)
    with open(os.path.join(pub, "kept"), "rb") as f:
        assert f.read() == b"a" * 4096 + b"b" * 4096 + b"c" * 4096


def _daemon_wchar(m):
    """Bytes the daemon of @m has handed to write(2)-like calls so far
    (its stores into an image file go by pwrite)."""
    with open("/proc/%d/io" % m.pid) as f:
        return int(next(x for x in f if x.startswith("wchar:")).split()[1])


def test_growing_a_file_again_zeroes_only_what_was_written(world_mnt):
    """A user's file grown to 64 MiB and shrunk to nothing 20 times: the
    daemon zeroes its memory once, not 20 times (it used to zero all of
    it at each grow, in the one thread that serves every user), and what
    the user wrote before a shrink still reads as zeros after the grow."""
    path = os.path.join(world_mnt.mnt, "pub/cycle")
    before = _daemon_wchar(world_mnt)
    p = _as_user("import os\n"
                 "fd = os.open(%r, os.O_CREAT | os.O_RDWR, 0o600)\n"
                 "for _ in range(20):\n"
                 "    os.ftruncate(fd, 64 << 20)\n"
                 "    os.ftruncate(fd, 0)\n"
                 "# bytes across a 2 MiB boundary and in a later chunk\n"
                 "os.pwrite(fd, b'x' * 8192, (2 << 20) - 4096)\n"
                 "os.pwrite(fd, b'y' * 100, 7 << 20)\n"
                 "os.ftruncate(fd, 4096)\n"
                 "os.ftruncate(fd, 64 << 20)\n"
                 "os.close(fd)\n" % path)
    assert p.returncode == 0, p.stderr
    spent = _daemon_wchar(world_mnt) - before
    # 64 MiB once; then the holes before each write and the chunks the
    # writes touched, 2 MiB at most each time (11 MiB); the replies. The
    # whole 64 MiB each time would be 20 times as much.
    assert (64 << 20) <= spent < (80 << 20), spent
    p = _as_user("import os\n"
                 "with open(%r, 'rb') as f:\n"
                 "    assert f.read() == bytes(64 << 20), 'not zeros'\n"
                 % path)
    assert p.returncode == 0, p.stderr
