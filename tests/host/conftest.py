# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures for the host tier, and one "ok - NAME" line per case for
tests/run-all.sh (written to $FAMFS_TAP when set)."""
import os

import pytest

import famfs_host as fh

_results = {}


def _tap(line):
    path = os.environ.get("FAMFS_TAP")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def pytest_collection_finish(session):
    """The tier's plan: every collected test, written before any runs, so
    a run that dies half way falls short of it."""
    path = os.environ.get("FAMFS_TAP")
    if path:
        with open(path + ".plan", "w") as f:
            f.write("1..%d\n" % len(session.items))


def pytest_runtest_logstart(nodeid, location):
    """The test now running, for tests/host/run.sh to name if the whole
    run has to be killed."""
    path = os.environ.get("FAMFS_TAP")
    if path:
        with open(path + ".running", "w") as f:
            f.write(nodeid + "\n")


def pytest_runtest_logreport(report):
    name = report.nodeid.split("::", 1)[-1]
    prev = _results.get(name)
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) \
            else str(report.longrepr)
        reason = reason.replace("Skipped: ", "")
        line = "ok - %s # SKIP %s" % (name, reason)
    elif report.failed:
        line = "not ok - %s" % name
    elif report.when == "call":
        line = "ok - %s" % name
    else:
        line = None
    # A failure in setup, call or teardown wins over an earlier pass.
    if line and not (prev and prev.startswith("not ok")):
        _results[name] = line
    # Teardown is a test's last report: its line goes out now, so the
    # lines of finished tests survive a run that is killed later.
    if report.when == "teardown" and name in _results:
        _tap(_results.pop(name))


def pytest_sessionfinish(session, exitstatus):
    for line in _results.values():
        _tap(line)
    _results.clear()


def _missing():
    if os.geteuid() != 0:
        return "needs root (FUSE mounts of famfs are privileged)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    for p in (fh.MKFS, fh.FAMFS, fh.FUSED, fh.MOUNT, fh.RAWREQ, fh.PCQ):
        if not os.access(p, os.X_OK):
            return "%s not built (build first, or set BUILD_DIR)" % p
    return None


@pytest.fixture
def tools():
    why = _missing()
    if why:
        pytest.skip(why)


@pytest.fixture
def master(tmp_path, tools):
    return fh.Host(str(tmp_path), "master")


@pytest.fixture
def client(tmp_path, tools):
    h = fh.Host(str(tmp_path), "client")
    # A client host has an identity of its own, never the master's.
    with open(h.uuid_file, "w") as f:
        f.write("00000000-1111-2222-3333-444444444444\n")
    return h


@pytest.fixture
def device(tmp_path, master):
    dev = str(tmp_path / "famfs.img")
    fh.mkfs(master, dev, 1 << 30)
    return dev


@pytest.fixture(autouse=True)
def left_behind(tmp_path):
    """Whatever a test leaves mounted below its directory, however it
    ended (an error half way, a mount made outside the mounts fixture),
    is unmounted and its daemon ended, so no mount or daemon outlives the
    test. A test that passed but left a mount fails."""
    yield
    found = fh.sweep(str(tmp_path))
    assert not found, "left mounted: %s" % found


@pytest.fixture
def mounts(tmp_path):
    """Mounts made by a test; every one is unmounted afterwards, even when
    the test or another unmount fails."""
    made = []
    yield made
    errors = []
    for m in made:
        try:
            m.unmount()
        except Exception as e:  # go on with the others; report at the end
            errors.append("%s: %r" % (m.mnt, e))
    assert not errors, errors


@pytest.fixture
def mnt(tmp_path, master, device, mounts):
    m = fh.Mount(master, device, str(tmp_path / "mnt"),
                 str(tmp_path / "fused-master.log"))
    mounts.append(m)
    m.mount()
    return m
