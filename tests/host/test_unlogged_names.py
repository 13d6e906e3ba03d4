# SPDX-License-Identifier: GPL-2.0-or-later
"""A file written through the master's mount is not in the log until it is
logged (at its close, or commit_delay= ms later): until then its name is
the daemon's alone, so it may be renamed or removed, which the format
allows since no entry names it. What is logged stays: a rename or unlink
of a logged file, or a rename over one, is refused (EPERM)."""
import errno
import os
import signal
import subprocess
import threading
import time

import pytest

import famfs_host as fh


def _data(n, seed):
    return bytes((i * 151 + seed) & 0xff for i in range(n))


def _logged_names(dev):
    """The relative paths of the FILE entries in the log, in order (a
    FILE entry's path follows its size, flags, uid, gid and mode)."""
    names = []
    for i in range(fh.log_next_index(dev)):
        e = fh.read_entry(dev, i)
        if int.from_bytes(e[8:12], "little") == 0:
            names.append(e[40:40 + 80].split(b"\0")[0].decode())
    return names


def _free(mnt):
    st = os.statvfs(mnt.mnt)
    return st.f_bfree * st.f_frsize


def _mount(tmp_path, master, device, mounts, opts="", name="mnt"):
    m = fh.Mount(master, device, str(tmp_path / name),
                 str(tmp_path / ("fused-%s.log" % name)), opts)
    mounts.append(m)
    m.mount()
    return m


def test_a_file_being_written_may_be_renamed(mnt):
    """Renamed before its close, even into another directory, a file is
    logged once, under its new name; the old name is free at once."""
    os.mkdir(os.path.join(mnt.mnt, "d"))
    data = _data(300000, 1)
    old = os.path.join(mnt.mnt, "part")
    new = os.path.join(mnt.mnt, "d/whole")
    before = fh.log_next_index(mnt.dev)
    with open(old, "wb") as f:
        f.write(data[:1000])
        os.rename(old, new)
        assert not os.path.exists(old)
        assert os.listdir(os.path.join(mnt.mnt, "d")) == ["whole"]
        f.write(data[1000:])
    assert fh.wait_for(lambda: fh.log_next_index(mnt.dev) == before + 1)
    assert _logged_names(mnt.dev)[-1] == "d/whole"
    with open(new, "rb") as f:
        assert f.read() == data
    assert "part" not in os.listdir(mnt.mnt)
    # the name is free for a new file
    with open(old, "wb") as f:
        f.write(b"again")
    assert fh.wait_for(lambda: fh.log_next_index(mnt.dev) == before + 2)
    assert _logged_names(mnt.dev)[-2:] == ["d/whole", "part"]


def test_what_is_logged_keeps_its_name(mnt):
    """Once logged, a file's name is in its entry: it cannot be renamed or
    removed, and a file being written cannot take it over (rename(2) would
    remove it); the refusals change nothing."""
    logged = os.path.join(mnt.mnt, "logged")
    with open(logged, "wb") as f:
        f.write(b"logged")
    assert fh.wait_for(lambda: "logged" in _logged_names(mnt.dev))
    before = fh.log_next_index(mnt.dev)
    for op, args in ((os.rename, (logged, logged + "2")),
                     (os.unlink, (logged,))):
        with pytest.raises(OSError) as e:
            op(*args)
        assert e.value.errno == errno.EPERM
    path = os.path.join(mnt.mnt, "pending")
    with open(path, "wb") as f:
        f.write(b"new")
        with pytest.raises(OSError) as e:
            os.rename(path, logged)
        assert e.value.errno == errno.EPERM
        # the log holds 79 bytes of path at most
        with pytest.raises(OSError) as e:
            os.rename(path, os.path.join(mnt.mnt, "n" * 80))
        assert e.value.errno == errno.ENAMETOOLONG
        with pytest.raises(OSError) as e:
            os.rename(path, os.path.join(mnt.mnt, "nodir/x"))
        assert e.value.errno == errno.ENOENT
    assert fh.wait_for(lambda: fh.log_next_index(mnt.dev) == before + 1)
    assert _logged_names(mnt.dev)[-2:] == ["logged", "pending"]
    with open(logged, "rb") as f:
        assert f.read() == b"logged"
    with open(path, "rb") as f:
        assert f.read() == b"new"


def test_a_file_removed_before_it_is_logged_leaves_nothing(mnt):
    """unlink of a file being written takes its name at once; its writer
    goes on writing to it, and at its close nothing is logged and its
    memory is free again."""
    free = _free(mnt)
    path = os.path.join(mnt.mnt, "scratch")
    before = fh.log_next_index(mnt.dev)
    with open(path, "wb") as f:
        f.write(_data(4 << 20, 2))
        f.flush()
        assert _free(mnt) <= free - (4 << 20)
        os.unlink(path)
        assert not os.path.exists(path)
        assert "scratch" not in os.listdir(mnt.mnt)
        f.write(b"more")
    assert fh.wait_for(lambda: _free(mnt) == free)
    assert fh.log_next_index(mnt.dev) == before
    assert "scratch: discarded, not logged: it was removed before it " \
        "was logged" in mnt.log_text()
    # and the name may be used again
    with open(path, "wb") as f:
        f.write(b"kept")
    assert fh.wait_for(lambda: fh.log_next_index(mnt.dev) == before + 1)
    with open(path, "rb") as f:
        assert f.read() == b"kept"


def test_a_rename_over_a_file_being_written_replaces_it(mnt):
    """rename(2) onto the name of another file not yet logged replaces
    that file, as on any file system: its writer finishes, and only the
    renamed file is logged under the name."""
    a, b = (os.path.join(mnt.mnt, n) for n in ("a", "b"))
    before = fh.log_next_index(mnt.dev)
    fa = open(a, "wb")
    fb = open(b, "wb")
    try:
        fa.write(b"from a")
        fb.write(b"from b")
        os.rename(a, b)
        assert [n for n in os.listdir(mnt.mnt) if n != ".meta"] == ["b"]
    finally:
        fb.close()
        fa.close()
    assert fh.wait_for(lambda: fh.log_next_index(mnt.dev) == before + 1)
    assert _logged_names(mnt.dev)[-1] == "b"
    with open(b, "rb") as f:
        assert f.read() == b"from a"


def test_commit_delay_keeps_a_closed_file_unlogged_for_a_while(
        tmp_path, master, device, mounts):
    """With commit_delay=, a closed file is logged that much later: until
    then it reads back whole on the master, and may not be written again
    (ETXTBSY). The daemon wakes itself for it (poll_ms=0: nothing else
    wakes it)."""
    m = _mount(tmp_path, master, device, mounts,
               "commit_delay=1500,poll_ms=0")
    path = os.path.join(m.mnt, "late")
    data = _data(100000, 3)
    before = fh.log_next_index(m.dev)
    assert m.status()["commit_delay_ms"] == "1500"
    with open(path, "wb") as f:
        f.write(data)
        assert m.status()["files_being_written"] == "1"
    assert fh.log_next_index(m.dev) == before
    with open(path, "rb") as f:
        assert f.read() == data
    with pytest.raises(OSError) as e:
        open(path, "r+b")
    assert e.value.errno == errno.ETXTBSY
    assert fh.log_next_index(m.dev) == before
    assert m.status()["files_being_written"] == "1"
    assert fh.wait_for(lambda: fh.log_next_index(m.dev) == before + 1)
    assert m.status()["files_being_written"] == "0"
    assert _logged_names(m.dev)[-1] == "late"
    assert fh.file_entry(m.dev, os.stat(path).st_ino)[0] == len(data)
    # logged: an ordinary file from now on, open for writing in place
    with open(path, "r+b") as f:
        f.write(b"X")


def test_rsync_into_the_mount_needs_commit_delay(tmp_path, master, device,
                                                 mounts):
    """rsync writes each file under a temporary name, closes it, sets its
    mode, then renames it. Without commit_delay= the temporary file is
    logged at its close and the rename fails; with it, rsync -a succeeds
    and only the final names are logged, with their modes."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    files = {"a.bin": _data(70000, 4), "sub/b.txt": b"b\n", "empty": b""}
    for rel, data in files.items():
        (src / rel).write_bytes(data)
    os.chmod(src / "a.bin", 0o640)
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    dst = os.path.join(m.mnt, "dst")
    p = subprocess.run(["rsync", "-a", str(src) + "/", dst + "/"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for rel, data in files.items():
        with open(os.path.join(dst, rel), "rb") as f:
            assert f.read() == data
    # the stop logs what is still waiting
    m.unmount()
    names = _logged_names(device)
    assert sorted(names) == sorted("dst/" + r for r in files), names
    m.mount()
    for rel, data in files.items():
        with open(os.path.join(dst, rel), "rb") as f:
            assert f.read() == data
    assert os.stat(os.path.join(dst, "a.bin")).st_mode & 0o7777 == 0o640
    # without the delay: rsync's rename fails, its temporary file is kept
    m.unmount()
    m.opts = ""
    m.mount()
    (src / "c").write_bytes(b"c")
    p = subprocess.run(["rsync", "-a", str(src) + "/", dst + "/"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "Operation not permitted" in p.stderr, p.stderr
    assert [n for n in _logged_names(device) if n.startswith("dst/.c.")]


def test_fsync_before_the_close_skips_the_delay(tmp_path, master, device,
                                                mounts):
    """A writer that needs its file logged when close(2) returns calls
    fsync(2) first; a file opened again to be synced is logged at that
    close."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    before = fh.log_next_index(m.dev)
    with open(os.path.join(m.mnt, "synced"), "wb") as f:
        f.write(b"now")
        os.fsync(f.fileno())
    assert fh.wait_for(lambda: fh.log_next_index(m.dev) == before + 1)
    with open(os.path.join(m.mnt, "later"), "wb") as f:
        f.write(b"later")
    assert fh.log_next_index(m.dev) == before + 1
    fd = os.open(os.path.join(m.mnt, "later"), os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    assert fh.wait_for(lambda: fh.log_next_index(m.dev) == before + 2)
    assert _logged_names(m.dev)[-2:] == ["synced", "later"]


def test_a_closed_file_may_still_be_renamed_or_removed(tmp_path, master,
                                                       device, mounts):
    """Within commit_delay=, a closed file is renamed as one being
    written, and an unlink frees its memory at once."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    free = _free(m)
    before = fh.log_next_index(m.dev)
    for name in ("gone", "tmp"):
        with open(os.path.join(m.mnt, name), "wb") as f:
            f.write(_data(2 << 20, 5))
    os.unlink(os.path.join(m.mnt, "gone"))
    os.rename(os.path.join(m.mnt, "tmp"), os.path.join(m.mnt, "kept"))
    assert sorted(n for n in os.listdir(m.mnt) if n != ".meta") == ["kept"]
    assert _free(m) == free - (2 << 20)
    m.unmount()
    assert fh.log_next_index(device) == before + 1
    assert _logged_names(device)[-1] == "kept"


def test_a_daemon_killed_within_the_delay_loses_the_file(tmp_path, master,
                                                         device, mounts):
    """commit_delay= trades durability at close for renames: a daemon
    that dies before a closed file is logged loses it, and the next mount
    has its memory free."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    free = _free(m)
    before = fh.log_next_index(m.dev)
    with open(os.path.join(m.mnt, "lost"), "wb") as f:
        f.write(_data(1 << 20, 6))
    os.kill(m.pid, signal.SIGKILL)
    assert m.wait_daemon_exit()
    subprocess.run(["umount", "-l", m.mnt], capture_output=True)
    assert fh.log_next_index(device) == before
    m.opts = ""
    m.mount()
    assert not os.path.exists(os.path.join(m.mnt, "lost"))
    assert _free(m) == free


def test_a_reader_of_a_closed_file_does_not_hold_its_commit(
        tmp_path, master, device, mounts):
    """A closed file is logged when its delay is over even while a reader
    has it open: that reader goes on reading it, under its own inode,
    and the next open finds the logged file. Its inode, logged, takes no
    chmod or truncate."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=200")
    path = os.path.join(m.mnt, "read")
    data = _data(300000, 7)
    before = fh.log_next_index(m.dev)
    with open(path, "wb") as f:
        f.write(data)
    with open(path, "rb") as r:
        held = os.fstat(r.fileno()).st_ino
        assert fh.wait_for(lambda: fh.log_next_index(m.dev) == before + 1)
        assert _logged_names(m.dev)[-1] == "read"
        assert r.read() == data
        assert os.stat(path).st_ino != held
        with pytest.raises(PermissionError):
            os.fchmod(r.fileno(), 0o600)
        with pytest.raises(PermissionError):
            os.truncate("/proc/self/fd/%d" % r.fileno(), 10)
        os.utime(r.fileno(), (1, 1))  # times are no one's to keep
        with pytest.raises(OSError) as e:
            open("/proc/self/fd/%d" % r.fileno(), "r+b")
        assert e.value.errno == errno.ETXTBSY
        r.seek(1000)
        assert r.read(10) == data[1000:1010]
    with open(path, "rb") as f:
        assert f.read() == data
    assert os.stat(path).st_mode & 0o777 != 0o600


def test_readers_that_keep_reopening_do_not_starve_the_commit(
        tmp_path, master, device, mounts):
    """Readers taking turns, each opening the file before the last one
    closes it (a loop of famfs getmap, a monitor), never leave it
    unopened: the file is logged anyway once its delay is over."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=300")
    path = os.path.join(m.mnt, "busy")
    before = fh.log_next_index(m.dev)
    with open(path, "wb") as f:
        f.write(b"busy")
    held = open(path, "rb")
    end = time.monotonic() + 3
    logged_at = None
    t0 = time.monotonic()
    while time.monotonic() < end:
        nxt = open(path, "rb")
        held.close()
        held = nxt
        if logged_at is None and fh.log_next_index(m.dev) == before + 1:
            logged_at = time.monotonic() - t0
        time.sleep(0.02)
    held.close()
    assert logged_at is not None, "still not logged after 3 s of readers"
    assert logged_at < 2, logged_at
    assert _logged_names(m.dev)[-1] == "busy"


def test_a_removed_file_stays_readable_to_its_reader(tmp_path, master,
                                                     device, mounts):
    """A closed file removed while a reader has it open is never logged;
    the reader reads it to its close, past the delay, and its memory is
    free once that reader is gone."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=100")
    path = os.path.join(m.mnt, "doomed")
    data = _data(1 << 20, 9)
    free = _free(m)
    before = fh.log_next_index(m.dev)
    with open(path, "wb") as f:
        f.write(data)
    with open(path, "rb") as r:
        os.unlink(path)
        time.sleep(0.4)  # past the delay
        assert r.read() == data
        assert _free(m) < free
    assert fh.wait_for(lambda: _free(m) == free)
    assert fh.log_next_index(m.dev) == before
    assert not os.path.exists(path)


def _kill_a_reader_of(path):
    """A process opens @path for reading and is killed (SIGKILL) with it
    open."""
    reader = "import sys,time; f=open(sys.argv[1],'rb'); print(flush=True); " \
             "time.sleep(60)"
    p = subprocess.Popen(["python3", "-c", reader, path],
                         stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("delay", [0, 60000])
def test_a_killed_reader_does_not_discard_the_file(tmp_path, master, device,
                                                   mounts, delay):
    """A writer killed before its close leaves nothing; a reader killed
    while the file is written, or while it waits for its delay, is not
    that writer: the file is logged whole."""
    m = _mount(tmp_path, master, device, mounts,
               "commit_delay=%d" % delay if delay else "")
    path = os.path.join(m.mnt, "survives")
    data = _data(200000, 10)
    before = fh.log_next_index(m.dev)
    with open(path, "wb") as f:
        f.write(data[:1000])
        _kill_a_reader_of(path)
        f.write(data[1000:])
    if delay:
        _kill_a_reader_of(path)
        m.unmount()
        assert fh.log_next_index(device) == before + 1
        m.opts = ""
        m.mount()
    assert fh.wait_for(lambda: fh.log_next_index(m.dev) == before + 1)
    assert _logged_names(m.dev)[-1] == "survives"
    with open(path, "rb") as f:
        assert f.read() == data


def _abort(mnt):
    """Abort the FUSE connection of @mnt, as an administrator would a hung
    one, through fusectl (mounted for this if it is not)."""
    ctl = "/sys/fs/fuse/connections"
    mounted = not fh.mounts_at(ctl)
    if mounted:
        fh.run(["mount", "-t", "fusectl", "fusectl", ctl])
    try:
        conn = os.path.join(ctl, "%d/abort" % os.minor(os.stat(mnt).st_dev))
        with open(conn, "w") as f:
            f.write("1")
    finally:
        if mounted:
            fh.run(["umount", ctl])


@pytest.mark.parametrize("end", ["SIGTERM", "abort"])
def test_a_stop_logs_the_closed_files_at_once(tmp_path, master, device,
                                              mounts, end):
    """A daemon told to stop, or whose connection is aborted
    (/sys/fs/fuse/connections), logs the files waiting for their delay
    before it goes, instead of losing them."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    before = fh.log_next_index(m.dev)
    with open(os.path.join(m.mnt, "waiting"), "wb") as f:
        f.write(b"waiting")
    assert fh.log_next_index(m.dev) == before
    if end == "SIGTERM":
        os.kill(m.pid, signal.SIGTERM)
    else:
        _abort(m.mnt)
    assert m.wait_daemon_exit(), "the daemon waited for the delay"
    subprocess.run(["umount", "-l", m.mnt], capture_output=True)
    assert fh.log_next_index(device) == before + 1
    assert _logged_names(device)[-1] == "waiting"


def test_famfs_creat_through_a_mount_with_commit_delay(tmp_path, master,
                                                      device, mounts):
    """famfs creat makes its files through the mount and returns once each
    is logged: a mount's commit_delay= does not hold it up (it would wait
    10 s for each file, then take the log path)."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    before = fh.log_next_index(m.dev)
    t = time.monotonic()
    for name in ("c1", "c2"):
        master.famfs("creat", "-s", "1M", os.path.join(m.mnt, name))
        assert _logged_names(m.dev)[-1] == name
    took = time.monotonic() - t
    assert fh.log_next_index(m.dev) == before + 2
    assert took < 5, took
    assert fh.wait_for(lambda: "logged through the mount: 2 files" in
                 m.log_text())


def test_after_an_umount_a_waiting_file_is_logged_at_once(tmp_path, master,
                                                          device, mounts):
    """Unmounted lazily while a reader still has a waiting file open, the
    daemon logs it at once, not when its delay runs out; the reader
    reads on, and the daemon exits at its close."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    path = os.path.join(m.mnt, "held")
    before = fh.log_next_index(m.dev)
    with open(path, "wb") as f:
        f.write(b"held")
    with open(path, "rb") as r:
        subprocess.run(["umount", "-l", m.mnt], check=True)
        assert fh.wait_for(lambda: fh.log_next_index(device) == before + 1)
        assert r.read() == b"held"
        assert fh.alive(m.pid)
    assert m.wait_daemon_exit(), "the daemon waited for the delay"
    assert _logged_names(device)[-1] == "held"


def test_a_file_made_after_a_lazy_umount_is_logged_at_its_close(
        tmp_path, master, device, mounts):
    """A process still in a lazily unmounted mount may create there: the
    daemon, finding its mount gone from the table, logs that file at its
    close rather than after commit_delay=."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=60000")
    before = fh.log_next_index(m.dev)
    d = os.open(m.mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        subprocess.run(["umount", "-l", m.mnt], check=True)
        fd = os.open("late", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644,
                     dir_fd=d)
        os.write(fd, b"late")
        os.close(fd)
        assert fh.wait_for(lambda: fh.log_next_index(device) == before + 1)
        assert _logged_names(device)[-1] == "late"
    finally:
        os.close(d)
    assert m.wait_daemon_exit()


def test_a_killed_writers_file_is_freed_after_its_last_reader(mnt):
    """A writer killed before its close leaves nothing, also when a reader
    has the file open: its name goes at once, and its memory, which that
    reader still reads, is free again once the reader closes it."""
    path = os.path.join(mnt.mnt, "halfway")
    free = _free(mnt)
    before = fh.log_next_index(mnt.dev)
    writer = ("import sys,time; f=open(sys.argv[1],'wb'); "
              "f.write(b'x'*(3<<20)); f.flush(); print(flush=True); "
              "time.sleep(60)")
    p = subprocess.Popen(["python3", "-c", writer, path],
                         stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
        r = open(path, "rb")
    finally:
        p.kill()
        p.wait()
    try:
        time.sleep(0.3)  # its close and FLUSH have come
        assert not os.path.exists(path)
        assert _free(mnt) < free
        assert r.read(4) == b"xxxx"
    finally:
        r.close()
    assert fh.wait_for(lambda: _free(mnt) == free)
    assert fh.log_next_index(mnt.dev) == before


def test_an_open_racing_the_commit_never_fails(tmp_path, master, device,
                                               mounts):
    """A reader's open looks the name up (the file still waiting) and
    opens it; the file may be logged between the two. The open then finds
    the logged file, never ENOENT: the daemon says ESTALE and the kernel
    looks the name up again."""
    m = _mount(tmp_path, master, device, mounts, "commit_delay=100")
    names = [os.path.join(m.mnt, "r%02d" % i) for i in range(40)]
    before = fh.log_next_index(m.dev)
    made, failed, opens = [0], [], [0]
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for i in range(made[0]):
                try:
                    with open(names[i], "rb") as f:
                        if f.read() != b"%02d" % i:
                            failed.append((names[i], "wrong bytes"))
                    opens[0] += 1
                except OSError as e:
                    failed.append((names[i], errno.errorcode[e.errno]))
    t = threading.Thread(target=reader)
    t.start()
    try:
        for i, path in enumerate(names):
            with open(path, "wb") as f:
                f.write(b"%02d" % i)
            made[0] = i + 1
            time.sleep(0.04)  # each due while the reader runs
        time.sleep(0.3)
    finally:
        stop.set()
        t.join()
    assert not failed, failed
    assert opens[0] > 100
    assert fh.log_next_index(m.dev) == before + len(names)


def test_a_file_cut_short_loses_its_name_at_its_writers_close(
        tmp_path, master, mounts):
    """A write that finds no room dooms the file: at its writer's close
    the name goes, even while a reader still has it open (which reads it
    to its close), and a new file may take that name at once."""
    dev = str(tmp_path / "small.img")
    fh.mkfs(master, dev, 64 << 20)
    m = _mount(tmp_path, master, dev, mounts)
    path = os.path.join(m.mnt, "full")
    with pytest.raises(OSError) as e:
        with open(path, "wb") as f:
            reader = open(path, "rb")
            for _ in range(64):
                f.write(b"f" * (1 << 20))
                f.flush()
    assert e.value.errno == errno.ENOSPC
    try:
        # RELEASE follows close(2) a moment later
        assert fh.wait_for(lambda: not os.path.exists(path))
        assert reader.read(4096) == b"f" * 4096
    finally:
        reader.close()
    with open(path, "wb") as f:
        f.write(b"new")
    assert fh.wait_for(lambda: _logged_names(dev)[-1:] == ["full"])
    with open(path, "rb") as f:
        assert f.read() == b"new"
    assert "full: discarded, not logged: a write found no room" in \
        m.log_text()
