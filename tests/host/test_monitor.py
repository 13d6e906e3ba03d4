# SPDX-License-Identifier: GPL-2.0-or-later
"""The monitoring socket upstream famfs's scripts query (famfs-fused(8),
MONITORING): found through the user.famfs.shadow xattr of the mount, HTTP
on SHADOW/sock, root only, with the figures .meta/.status has."""
import http.client
import os
import socket
import stat

import yaml

import famfs_host as fh

NOBODY = 65534
# A client that talks HTTP on a unix socket, run as the unprivileged user:
# prints the status line, or the errno name when connect() is refused.
CLIENT = r"""
import errno, http.client, socket, sys
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
try:
    c = C("localhost", timeout=10)
    c.request("GET", sys.argv[2])
    r = c.getresponse()
    print(r.status, r.read().decode().strip())
except OSError as e:
    print(errno.errorcode[e.errno])
"""


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=10)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.path)


def ask(sock, url, method="GET", body=None):
    c = UnixHTTP(sock)
    c.request(method, url, body=body)
    r = c.getresponse()
    return r.status, r.getheader("Content-Type"), r.read().decode()


def shadow(mnt):
    return os.getxattr(mnt, "user.famfs.shadow").decode()


def test_monitor_figures_match_status(mnt, master):
    for i in range(3):
        master.famfs("creat", "-s", "2m", os.path.join(mnt.mnt, "f%d" % i))
    assert os.path.exists(os.path.join(mnt.mnt, "f1"))
    for name in ("nothere", "nor-this"):
        assert not os.path.exists(os.path.join(mnt.mnt, name))
    sh = shadow(mnt.mnt)
    sock = os.path.join(sh, "sock")
    st = os.stat(sock)
    assert stat.S_ISSOCK(st.st_mode) and st.st_uid == 0
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sh).st_mode) == 0o700

    code, ctype, body = ask(sock, "/icache_stats")
    status = mnt.status()
    assert code == 200 and ctype == "text/yaml", body
    got = yaml.safe_load(body)["icache_stats"]
    # every .status key, with its value (the request counters move as
    # .status itself is read)
    moving = {"requests", "reads"}
    assert set(got) >= set(status), body
    for k, v in status.items():
        if k not in moving:
            assert str(got[k]) == v, (k, got[k], v)
    # upstream's three figures are our lookups
    assert got["search_count"] == int(status["lookups"]) > 0
    assert got["search_fail_ct"] == int(status["lookup_misses"]) >= 2
    assert got["nodes_scanned"] == got["search_count"] - got["search_fail_ct"]
    assert int(status["files"]) == 3

    assert ask(sock, "/pid")[2] == "pid: %d\n" % mnt.pid
    assert ask(sock, "/log_level")[::2] == (200, "6\n")
    assert ask(sock, "/log_level", "POST", "7")[2] == \
        "log level set to 7 (from 6)\n"
    assert ask(sock, "/log_level", "PUT", "level=6")[2] == \
        "log level set to 6 (from 7)\n"
    assert ask(sock, "/log_level", "POST", "8")[2] == \
        "Failed to set log level to 8\n"
    assert ask(sock, "/log_level")[2] == "6\n"
    assert ask(sock, "/icache_dump")[0] == 200
    log = mnt.log_text()
    assert "namespace: 3 files" in log and " file f2 mode 0644 " in log, log
    assert ask(sock, "/nothing")[0] == 404
    assert ask(sock, "/pid", "POST", "x")[0] == 405
    assert ask(sock, "/log_level", "DELETE")[0] == 405

    # the directory we made for the socket goes with the daemon
    mnt.unmount()
    assert not os.path.exists(sh)


def test_monitor_refuses_unprivileged(mnt):
    sh = shadow(mnt.mnt)
    sock = os.path.join(sh, "sock")
    as_user = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
               "--clear-groups", "/usr/bin/python3", "-c", CLIENT, sock]
    # the socket and its directory are root's alone
    p = fh.run(as_user + ["/pid"])
    assert p.stdout.strip() == "EACCES", p.stdout + p.stderr
    # and were they opened up, the daemon checks who is asking
    os.chmod(sh, 0o755)
    os.chmod(sock, 0o666)
    try:
        p = fh.run(as_user + ["/icache_stats"])
        assert p.stdout.startswith("403 "), p.stdout + p.stderr
        assert "search_count" not in p.stdout
    finally:
        os.chmod(sh, 0o700)
        os.chmod(sock, 0o600)
    assert ask(sock, "/pid")[0] == 200


def test_monitor_sweeps_dirs_of_killed_daemons(tmp_path, master, device,
                                               mounts):
    run = str(tmp_path / "run")
    os.makedirs(run)
    master.env["FAMFS_RUN_DIR"] = run
    old = os.path.join(run, "shadow-old")      # a killed daemon's socket
    empty = os.path.join(run, "shadow-empty")  # killed before it bound
    young = os.path.join(run, "shadow-young")  # a daemon starting now
    for d in (old, empty, young):
        os.makedirs(d, mode=0o700)
    s = socket.socket(socket.AF_UNIX)
    s.bind(os.path.join(old, "sock"))
    s.close()                                  # nobody listens any more
    for d in (old, empty):
        os.utime(d, (0, 0))
    m = fh.Mount(master, device, str(tmp_path / "m"),
                 str(tmp_path / "fused.log"))
    mounts.append(m)
    m.mount()
    sh = shadow(m.mnt)
    assert os.path.dirname(sh) == run
    assert ask(os.path.join(sh, "sock"), "/pid")[0] == 200
    assert sorted(os.listdir(run)) == sorted(["shadow-young",
                                              os.path.basename(sh)])
    m.unmount()
    assert os.listdir(run) == ["shadow-young"]
