# SPDX-License-Identifier: GPL-2.0-or-later
"""A daemon restart does not unmount: the FUSE connection waits in the
service manager's fd store and the next daemon takes it over. The test
plays systemd's part: a NOTIFY_SOCKET that keeps the fds the daemon
stores (FDSTORE=1, SCM_RIGHTS), and each new daemon started with them as
LISTEN_FDS/LISTEN_FDNAMES and its own pid in LISTEN_PID."""
import ctypes
import errno
import fcntl
import os
import re
import signal
import socket
import statistics
import struct
import subprocess
import threading
import time

import pytest

import famfs_host as fh

RESTARTS = 20  # hand-overs (SIGUSR1, as a restart does)
KILLS = 3  # SIGKILL in the middle of serving
# No operation may wait longer than this across a restart. The daemon
# needs a few tens of ms; the rest is margin for a loaded build machine.
BOUND = 5.0
HANDOVER_EXIT = 75

# Offsets in the state memfd (daemon/fused/takeover.c, version 1).
STATE_VERSION_OFF = 8
STATE_FAILED_OFF = 16


class FakeSystemd:
    """The notify socket and the fd store of one service."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.store = {}
        self.ready = 0

    def close(self):
        for fd in self.store.values():
            os.close(fd)
        self.store.clear()
        self.sock.close()

    def _one(self, timeout):
        self.sock.settimeout(timeout)
        msg, fds, _, _ = socket.recv_fds(self.sock, 4096, 8)
        kv = dict(l.split("=", 1) for l in msg.decode().splitlines()
                  if "=" in l)
        if kv.get("FDSTORE") == "1" and fds:
            name = kv.get("FDNAME", "stored")
            if name in self.store:
                os.close(self.store[name])
            self.store[name] = fds.pop(0)
        if kv.get("FDSTOREREMOVE") == "1":
            fd = self.store.pop(kv.get("FDNAME", "stored"), None)
            if fd is not None:
                os.close(fd)
        if kv.get("READY") == "1":
            self.ready += 1
        for fd in fds:
            os.close(fd)

    def wait(self, cond, what, timeout=20.0):
        end = time.monotonic() + timeout
        while not cond():
            left = end - time.monotonic()
            assert left > 0, "no %s from the daemon within %.0f s" % (
                what, timeout)
            try:
                self._one(left)
            except socket.timeout:
                pass

    def start(self, argv, env):
        """Start @argv with the stored fds, as systemd does."""
        names = sorted(self.store)
        fds = [self.store[n] for n in names]
        env = dict(env, NOTIFY_SOCKET=self.path)
        if fds:
            env["LISTEN_FDS"] = str(len(fds))
            env["LISTEN_FDNAMES"] = ":".join(names)

        def child():
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in fds]
            for i, fd in enumerate(high):
                os.dup2(fd, 3 + i)

        # LISTEN_PID must be the daemon's own pid: a shell sets it, then
        # becomes the daemon.
        wrapper = ["/bin/sh", "-c",
                   'LISTEN_PID=$$; export LISTEN_PID; exec "$@"', "sh"]
        return subprocess.Popen(wrapper + argv, env=env, preexec_fn=child,
                                pass_fds=tuple(range(3, 3 + len(fds))),
                                stderr=subprocess.PIPE, text=True)


def mount_id(mnt):
    at = fh.mounts_at(mnt)
    return at[-1]["id"] if at else None


class Load:
    """The master keeps creating files; a reader keeps one file open and,
    in a loop, stats, opens and reads the newest ones. Every operation's
    start and end are kept, and every failure."""

    def __init__(self, host, mnt, held):
        self.host, self.mnt, self.held = host, mnt, held
        self.names = []  # made: famfs creat said so
        self.seeds = {}  # name -> the seed its contents come from
        self.ops = []  # (start, end, what)
        self.failures = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._create, daemon=True),
                        threading.Thread(target=self._read, daemon=True)]

    def _timed(self, what, fn):
        """Run one operation; whatever it raises (a command past its
        timeout too) is a failure, counted, and the operation's time is
        kept either way. Returns whether it succeeded."""
        t0 = time.monotonic()
        ok = False
        try:
            fn()
            ok = True
        except Exception as e:  # noqa: BLE001 - every way of failing counts
            self.failures.append((what, repr(e), t0))
        self.ops.append((t0, time.monotonic(), what))
        return ok

    def _create(self):
        i = 0
        while not self.stop.is_set() and i < 300:
            path = os.path.join(self.mnt, "n%03d" % i)

            def creat():
                p = self.host.famfs("creat", "-s", "2m", "-r", "-S",
                                    str(i + 1), path, check=False,
                                    timeout=30)
                assert p.returncode == 0, p.stderr
            if self._timed("creat", creat):
                self.names.append(path)
                self.seeds[path] = i + 1
            i += 1
            time.sleep(0.05)

    def _read(self):
        fd = os.open(self.held, os.O_RDONLY)
        first = os.pread(fd, 4096, 0)
        try:
            while not self.stop.is_set():
                self._timed("read held", lambda: self._same(
                    os.pread(fd, 4096, 0), first))
                self._timed("stat root", lambda: os.stat(self.mnt))
                if not self.names:
                    continue
                new = self.names[-1]
                self._timed("stat new", lambda: os.stat(new))
                self._timed("open+read new", lambda: self._open_read(new))
                self._timed("readdir", lambda: os.listdir(self.mnt))
        finally:
            os.close(fd)

    @staticmethod
    def _same(a, b):
        assert a == b, "held file changed"

    @staticmethod
    def _open_read(path):
        fd = os.open(path, os.O_RDONLY)
        try:
            assert len(os.read(fd, 4096)) == 4096
        finally:
            os.close(fd)

    def start(self):
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in self.threads), \
            "an operation never returned"

    def verify(self):
        """Every file made under the load holds what its creat wrote."""
        args = []
        for path in self.names:
            args += ["-m", "%s,%d" % (path, self.seeds[path])]
        p = self.host.famfs("verify", "-q", *args, check=False, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr

    def longest(self, t0=0.0, t1=float("inf"), meta=True):
        """The longest operation overlapping [t0, t1]; metadata operations
        of the reader only (creat is a whole CLI run), or all."""
        return max((e - s for s, e, what in self.ops
                    if s <= t1 and e >= t0 and (what != "creat" or not meta)),
                   default=0.0)


def _daemon_argv(device, mnt, log, opts=""):
    return [fh.FUSED, "-f", "-o", "logfile=" + log + opts, device, mnt]


def _wait_exit(p, timeout=20):
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError("daemon %d did not exit" % p.pid)


class Service:
    """A mount's daemons as its systemd unit runs them, for one test: the
    fake notify socket and fd store (sd), what the test starts or opens
    (procs), all of it ended on leaving the with-block (_end_all)."""

    def __init__(self, tmp_path, host, device, mounts, env=None):
        self.mnt = str(tmp_path / "mnt")
        self.log = str(tmp_path / "fused.log")
        self.host, self.device, self.mounts = host, device, mounts
        self.env = env or host.env
        self.sd = FakeSystemd(str(tmp_path / "notify"))
        self.procs = []
        self.m = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _end_all(self.procs, self.sd)

    def first(self, env=None):
        """The first daemon: it mounts and stores its connection."""
        if env:
            self.env = env
        os.makedirs(self.mnt, exist_ok=True)
        self.m = fh.Mount(self.host, self.device, self.mnt, self.log)
        self.mounts.append(self.m)
        p = self.start()
        self.m.pid = p.pid
        self.sd.wait(lambda: self.sd.ready == 1 and len(self.sd.store) == 2,
                     "READY=1 and two stored fds (famfs-conn, famfs-state)")
        assert sorted(self.sd.store) == ["famfs-conn", "famfs-state"]
        return self.m, p

    def start(self, opts=""):
        """The next daemon, given what is stored, as systemd starts it."""
        p = self.sd.start(_daemon_argv(self.device, self.mnt, self.log,
                                       opts), self.env)
        self.procs.append(p)
        return p

    def successor(self, ready, opts="", stored=False):
        """The next daemon, once it has said READY=1 (the @ready-th time),
        and with @stored, stored a connection of its own."""
        p = self.start(opts)
        self.m.pid = p.pid
        self.sd.wait(lambda: self.sd.ready == ready and
                     (not stored or len(self.sd.store) == 2),
                     "READY=1 (%d)%s" % (ready, " and a new connection "
                                         "stored" if stored else ""))
        return p


def test_restart_keeps_mount(tmp_path, master, device, mounts):
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, sd = svc.mnt, svc.sd
        m, p = svc.first()
        held = os.path.join(mnt, "held")
        master.famfs("creat", "-s", "2m", "-r", "-S", "7", held)
        mid = mount_id(mnt)
        load = Load(master, mnt, held)
        svc.procs.append(load.stop.set)
        load.start()
        time.sleep(0.3)
        kills = {5, 12, 19}
        windows = []
        starts = []  # from the old daemon's exit to the new one's READY=1
        for i in range(RESTARTS + KILLS):
            kill = i in kills
            t0 = time.monotonic()
            p.send_signal(signal.SIGKILL if kill else signal.SIGUSR1)
            _wait_exit(p)
            exited = time.monotonic()
            if not kill:
                assert p.returncode == HANDOVER_EXIT, (
                    p.returncode, p.stderr.read())
            p = svc.successor(sd.ready + 1)
            windows.append((t0, time.monotonic()))
            starts.append(windows[-1][1] - exited)
            assert mount_id(mnt) == mid, "restart %d: the mount changed" % i
            time.sleep(0.25)
        time.sleep(0.3)
        load.finish()
        assert not load.failures, load.failures[:10]
        # Both threads really worked through the restarts: files were
        # made and read, and every file made holds its data.
        whats = {what for _, _, what in load.ops}
        assert {"creat", "read held", "stat new", "open+read new"} <= whats, \
            whats
        assert len(load.names) > 0 and len(load.ops) > len(load.names)
        load.verify()
        st = m.status()
        assert st["takeovers"] == str(RESTARTS + KILLS)
        assert st["pid"] == str(p.pid)
        assert abs(int(st["started"]) - time.time()) < 120
        assert mount_id(mnt) == mid
        out = master.famfs("status", mnt).stdout
        assert "restarts without unmounting: %d" % (RESTARTS + KILLS) \
            in out, out
        assert re.search(r"started: +\d{4}-\d\d-\d\d ", out), out
        # The blackout of a restart: the longest metadata operation
        # (stat, open, read, readdir) overlapping it, from the signal to
        # the new daemon's READY=1.
        black = [load.longest(t0, t1) for t0, t1 in windows]
        worst = load.longest(meta=False)
        print("\n# restart blackout over %d restarts (%d SIGKILL): median "
              "%.1f ms, max %.1f ms; %d operations, longest %.1f ms "
              "(creat included), %d files created; exit to READY=1: "
              "median %.1f ms, max %.1f ms" % (
                  len(windows), KILLS, statistics.median(black) * 1000,
                  max(black) * 1000, len(load.ops), worst * 1000,
                  len(load.names), statistics.median(starts) * 1000,
                  max(starts) * 1000))
        assert worst < BOUND, "an operation took %.1f s" % worst
        # A stop (SIGTERM, no restart queued) unmounts and empties the store.
        p.send_signal(signal.SIGTERM)
        _wait_exit(p)
        assert p.returncode == 0
        sd.wait(lambda: not sd.store, "FDSTOREREMOVE of both fds")
        assert mount_id(mnt) is None


def _end_all(procs, sd):
    """What a test leaves: what it asked to be told (callables) told, its
    open fds (ints) closed, its processes still running killed, and the
    fake systemd closed before they are waited for: a writer killed with
    a file of a connection nobody serves waits in its close for that
    connection to end."""
    for q in procs:
        if callable(q):
            q()
        elif isinstance(q, int):
            os.close(q)
        elif q.poll() is None:
            q.kill()
    sd.close()
    for q in procs:
        if isinstance(q, subprocess.Popen):
            q.wait()


def _poke_state(sd, off, value):
    os.pwrite(sd.store["famfs-state"], struct.pack("<I", value), off)


def _remounts_with(tmp_path, master, device, mounts, off, value, why):
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, sd, procs = svc.mnt, svc.sd, svc.procs
        m, p = svc.first()
        old = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
        procs.append(old)
        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        _poke_state(sd, off, value)
        p = svc.successor(2, stored=True)
        assert re.search(why, m.log_text()), m.log_text()
        assert "mounting anew" in m.log_text()
        # A new mount (mount ids are reused: the old mount's files tell):
        # the old one was detached and its connection ended.
        assert mount_id(mnt) is not None
        with pytest.raises(OSError) as e:
            os.listdir(old)
        assert e.value.errno in (errno.ENOTCONN, errno.ECONNABORTED)
        assert m.status()["takeovers"] == "0"
        os.listdir(mnt)
        # The new mount's state starts afresh: the next restart takes over.
        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        p = svc.successor(3)
        assert m.status()["takeovers"] == "1"


def test_three_failed_adoptions_remount(tmp_path, master, device, mounts):
    _remounts_with(tmp_path, master, device, mounts, STATE_FAILED_OFF, 3,
                   r"3 takeovers in a row failed")


def test_incompatible_state_remounts(tmp_path, master, device, mounts):
    _remounts_with(tmp_path, master, device, mounts, STATE_VERSION_OFF, 99,
                   r"state version 99")


def test_umount_empties_store(tmp_path, master, device, mounts):
    # umount(8) ends the session: the daemon exits and takes its
    # connection out of the store, so none is left without a daemon.
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, sd = svc.mnt, svc.sd
        m, p = svc.first()
        subprocess.run(["umount", mnt], check=True)
        _wait_exit(p)
        assert p.returncode == 0
        sd.wait(lambda: not sd.store, "FDSTOREREMOVE of both fds")
        assert mount_id(mnt) is None


def test_sigterm_restart_job_keeps_mount_stop_job_unmounts(tmp_path, master,
                                                          device, mounts):
    # systemd sends SIGTERM for a stop and for a restart alike; the daemon
    # asks it over D-Bus for its unit's job. A fake systemd on a private
    # bus answers "restart" (keep the mount, leave the connection stored),
    # then "stop" (unmount, empty the store).
    jobfile = tmp_path / "jobtype"
    ready = str(tmp_path / "bus-ready")
    jobfile.write_text("restart\n")
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, sd, procs = svc.mnt, svc.sd, svc.procs
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork",
                                "--nopidfile", "--print-address=1"],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        procs.append(bus)
        addr = bus.stdout.readline().strip()
        assert addr, "dbus-daemon gave no address"
        procs.append(subprocess.Popen(
            ["/usr/bin/python3", os.path.join(os.path.dirname(__file__),
                                              "fake_systemd1.py"),
             addr, str(jobfile), ready]))
        for _ in range(200):
            if os.path.exists(ready):
                break
            time.sleep(0.05)
        assert os.path.exists(ready), "the fake systemd never came up"
        m, p = svc.first(dict(master.env, DBUS_SYSTEM_BUS_ADDRESS=addr))
        mid = mount_id(mnt)
        p.send_signal(signal.SIGTERM)
        _wait_exit(p)
        assert p.returncode == 0
        assert mount_id(mnt) == mid, "a restart job unmounted"
        assert sorted(sd.store) == ["famfs-conn", "famfs-state"]
        assert "stays in the service manager's fd store" in m.log_text()
        p = svc.successor(2)
        assert m.status()["takeovers"] == "1"
        assert mount_id(mnt) == mid
        jobfile.write_text("stop\n")
        p.send_signal(signal.SIGTERM)
        _wait_exit(p)
        assert p.returncode == 0
        sd.wait(lambda: not sd.store, "FDSTOREREMOVE of both fds")
        assert mount_id(mnt) is None


# A writer in a process of its own: a daemon started from this one would
# inherit the open file and, closing it before exec, wait on a FLUSH that
# only it could answer. It writes 3 MiB, then on each line of its input
# writes 4 KiB more, and closes the file at end of input.
WRITER = r"""
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"x" * (3 << 20))
print("written", flush=True)
def attempt(what, fn):
    try:
        fn()
        print(what, "ok", flush=True)
    except OSError as e:
        print(what, errno.errorcode[e.errno], flush=True)
for line in sys.stdin:
    attempt("write", lambda: os.write(fd, b"y" * 4096))
attempt("close", lambda: os.close(fd))
"""


def _writer(path, procs):
    w = subprocess.Popen(["/usr/bin/python3", "-c", WRITER, path],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    procs.append(w)
    assert w.stdout.readline().strip() == "written"
    return w


def _tell(w, line):
    """One more write by writer @w; what it says of it."""
    w.stdin.write(line + "\n")
    w.stdin.flush()
    return w.stdout.readline().strip()


def _alive_after(p, seconds):
    time.sleep(seconds)
    return p.poll() is None


def test_a_restart_waits_for_a_file_being_written(tmp_path, master, device,
                                                  mounts):
    """A file being written through the mount lives in the daemon alone,
    so a restart (or a stop) first waits for it to be closed: the daemon
    serves meanwhile (its writer's writes, a new file of another
    process), leaves as soon as the file is logged, and the next daemon
    serves it whole."""
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, procs = svc.mnt, svc.procs
        m, p = svc.first()
        mid = mount_id(mnt)
        path = os.path.join(mnt, "slow")
        w = _writer(path, procs)
        p.send_signal(signal.SIGUSR1)
        assert _alive_after(p, 0.5), "the daemon left a file being written"
        assert re.search(r"waiting up to 10 s for 1 file\(s\) being "
                         r"written", m.log_text()), m.log_text()
        assert _tell(w, "more") == "write ok"
        during = os.path.join(mnt, "during")
        with open(during, "wb") as f:
            f.write(b"d" * 5000)
        assert p.poll() is None
        w.stdin.close()
        assert w.stdout.readline().strip() == "close ok"
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        p = svc.successor(2)
        assert mount_id(mnt) == mid
        assert m.status()["takeovers"] == "1"
        with open(path, "rb") as f:
            data = f.read()
        assert data == b"x" * (3 << 20) + b"y" * 4096
        with open(during, "rb") as f:
            assert f.read() == b"d" * 5000
        assert "still being written" not in m.log_text()
        # A stop waits the same way, then unmounts; the file is logged.
        w = _writer(os.path.join(mnt, "last"), procs)
        p.send_signal(signal.SIGTERM)
        assert _alive_after(p, 0.5), "the stop left a file being written"
        assert mount_id(mnt) == mid
        w.stdin.close()
        assert w.stdout.readline().strip() == "close ok"
        _wait_exit(p)
        assert p.returncode == 0
        assert mount_id(mnt) is None
        m.mount()
        with open(os.path.join(mnt, "last"), "rb") as f:
            assert f.read() == b"x" * (3 << 20)


def test_a_file_being_written_is_lost_cleanly_by_a_restart(tmp_path, master,
                                                           device, mounts):
    """A restart that does not wait for a file being written (a second
    signal, or writer_wait=0) loses it cleanly: its writer's next write
    and its close fail with EIO (not a hang, not a file cut short), the
    name is not logged, its memory is free and the log lock is not left
    held."""
    with Service(tmp_path, master, device, mounts) as svc:
        mnt, procs = svc.mnt, svc.procs
        m, p = svc.first()
        used = m.status()["space_used"]
        for n, (nudge, opts) in enumerate([(True, ",writer_wait=0"),
                                           (False, "")]):
            path = os.path.join(mnt, "half%d" % n)
            w = _writer(path, procs)
            assert m.status()["space_used"] != used
            p.send_signal(signal.SIGUSR1)
            if nudge:  # the default wait, cut short by a second signal
                assert _alive_after(p, 0.5)
                p.send_signal(signal.SIGUSR1)
            _wait_exit(p, timeout=8)
            assert p.returncode == HANDOVER_EXIT
            assert "stopping with 1 file(s) still being written" in \
                m.log_text()
            p = svc.successor(2 + n, opts)
            assert m.status()["space_used"] == used
            # A file the successor makes while the lost one is still
            # open never takes its number: the old open must not reach it.
            newer = os.path.join(mnt, "newer%d" % n)
            w2 = _writer(newer, procs)
            assert _tell(w, "more") == "write EIO"
            w.stdin.close()
            assert w.stdout.readline().strip() == "close EIO"
            assert w.wait(timeout=30) == 0
            assert "was lost when the daemon restarted" in m.log_text()
            assert not os.path.exists(path)
            w2.stdin.close()
            assert w2.stdout.readline().strip() == "close ok"
            with open(newer, "rb") as f:
                assert f.read() == b"x" * (3 << 20)
            used = m.status()["space_used"]
        # Nobody holds the log lock: the CLI appends at once.
        master.famfs("creat", "-s", "2m", "-r", "-S", "3",
                     os.path.join(mnt, "after"), timeout=20)
        master.famfs("verify", "-S", "3", "-f", os.path.join(mnt, "after"))


def test_unmounted_while_down_mounts_anew(tmp_path, master, device, mounts):
    # umount(8) between two daemons ends the stored connection: the next
    # daemon sees that, says so and mounts anew instead of waiting on it.
    with Service(tmp_path, master, device, mounts) as svc:
        mnt = svc.mnt
        m, p = svc.first()
        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        # umount(2) itself: umount(8) would stat the mount point first,
        # and that waits for a daemon.
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.umount2(mnt.encode(), 0) == 0, os.strerror(
            ctypes.get_errno())
        p = svc.successor(2, stored=True)
        assert "the connection has ended (unmounted); mounting anew" in \
            m.log_text(), m.log_text()
        assert mount_id(mnt) is not None
        assert m.status()["takeovers"] == "0"


def test_daemons_dying_mid_takeover_are_counted(tmp_path, master, device,
                                                mounts):
    """Successors that die while taking over (here: the device they are
    given is no famfs, found only after the takeover began) are counted
    in the kept state: one such death is followed by a good takeover,
    three in a row make the next daemon mount anew instead of adopting
    the connection again."""
    svc = Service(tmp_path, master, device, mounts)
    mnt, sd, procs = svc.mnt, svc.sd, svc.procs

    def failed_count():
        return struct.unpack_from(
            "<I", os.pread(sd.store["famfs-state"], 4, STATE_FAILED_OFF))[0]

    def dying_successor():
        """A successor started on a junk device where the image was."""
        os.rename(device, device + ".away")
        try:
            with open(device, "wb") as f:
                f.truncate(64 * fh.MiB)
            q = svc.start()
            _wait_exit(q)
            assert q.returncode == 1, q.returncode
            assert "not a famfs" in q.stderr.read() + m.log_text()
        finally:
            os.replace(device + ".away", device)

    with svc:
        m, p = svc.first()
        f = os.path.join(mnt, "f")
        master.famfs("creat", "-s", "2m", "-r", "-S", "9", f)
        mid = mount_id(mnt)
        held = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
        procs.append(held)
        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        assert failed_count() == 0
        dying_successor()
        assert failed_count() == 1
        p = svc.successor(2)
        assert m.status()["takeovers"] == "1"
        assert failed_count() == 0, "a good takeover resets the count"
        assert mount_id(mnt) == mid
        assert "f" in os.listdir(held), "the adopted connection serves"
        p.send_signal(signal.SIGUSR1)
        _wait_exit(p)
        assert p.returncode == HANDOVER_EXIT
        for n in (1, 2, 3):
            dying_successor()
            assert failed_count() == n
        p = svc.successor(3)
        assert "3 takeovers in a row failed" in m.log_text(), m.log_text()
        assert "mounting anew" in m.log_text()
        assert m.status()["takeovers"] == "0"
        with pytest.raises(OSError) as e:
            os.listdir(held)  # the old connection was ended, not adopted
        assert e.value.errno in (errno.ENOTCONN, errno.ECONNABORTED)
        master.famfs("verify", "-S", "9", "-f", f)
