# SPDX-License-Identifier: GPL-2.0-or-later
"""famfs.conf is never misread silently: no line length limit (a long
comment stays a comment), numbers are read exactly (leading zeros are
decimal) or refused with the key and line named, and a FAMFS_CONF that is
not a readable file is an error. mount.famfs -f shows what would run."""
import os
import re

import pytest

import famfs_host as fh


def _fake_mount(master, device, tmp_path, conf_text=None, conf=None):
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt, exist_ok=True)
    env = dict(master.env)
    if conf is None:
        conf = str(tmp_path / "famfs.conf")
        with open(conf, "w") as f:
            f.write(conf_text)
    env["FAMFS_CONF"] = conf
    return fh.run([fh.MOUNT, "-f", device, mnt], env=env, check=False), conf


def test_long_comment_stays_a_comment(master, device, tmp_path):
    # 2047 bytes, then what a fixed 2048-byte buffer read as a new line
    for pad in (2046, 3000):
        p, _ = _fake_mount(master, device, tmp_path,
                           "#" + "x" * pad + "role = client\n")
        assert p.returncode == 0, p.stderr
        assert "role=auto" in p.stderr and "role=client" not in p.stderr, \
            p.stderr
        assert "unknown setting" not in p.stderr, p.stderr


def test_leading_zeros_are_decimal(master, device, tmp_path):
    p, _ = _fake_mount(master, device, tmp_path,
                       "poll_ms = 00000000000000012345\n")
    assert p.returncode == 0, p.stderr
    assert re.search(r",poll_ms=12345[ ,]", p.stderr), p.stderr


def test_overflowing_number_is_refused(master, device, tmp_path):
    p, conf = _fake_mount(master, device, tmp_path,
                          "# defaults\n\npoll_ms = 99999999999999999999999\n")
    assert p.returncode == 32
    assert p.stderr == ('mount.famfs: %s:3: bad value for poll_ms: "99999999999999999999999"'
                        ' is too large (at most 3600000)\n' % conf), p.stderr


def test_negative_and_out_of_range_numbers_are_refused(master, device,
                                                       tmp_path):
    p, conf = _fake_mount(master, device, tmp_path, "readahead_kb = -5\n")
    assert p.returncode == 32
    assert p.stderr == ('mount.famfs: %s:1: bad value for readahead_kb: "-5" is not a '
                        'number\n' % conf), p.stderr
    p, conf = _fake_mount(master, device, tmp_path, "poll_ms = 3600001\n")
    assert p.returncode == 32
    assert "bad value for poll_ms: \"3600001\" is too large (at most 3600000)" in p.stderr


def test_conf_naming_a_directory_is_an_error(master, device, tmp_path):
    d = str(tmp_path / "confdir")
    os.makedirs(d)
    p, _ = _fake_mount(master, device, tmp_path, conf=d)
    assert p.returncode == 32
    assert p.stderr == "mount.famfs: cannot read %s: Is a directory\n" % d, \
        p.stderr


@pytest.mark.parametrize("key, given, passed, most", [
    # how long a stop waits for files being written (famfs-fused(8))
    ("writer_wait", "0x1e", "30", 3600),
    # how long a closed file waits to be logged
    ("commit_delay", "01000", "1000", 60000)])
def test_creation_settings_are_passed_on_as_read_and_checked(
        master, device, tmp_path, key, given, passed, most):
    p, _ = _fake_mount(master, device, tmp_path, "%s = %s\n" % (key, given))
    assert p.returncode == 0, p.stderr
    assert re.search(r",%s=%s[ ,]" % (key, passed), p.stderr), p.stderr
    p, conf = _fake_mount(master, device, tmp_path,
                          "%s = %d\n" % (key, most + 1))
    assert p.returncode == 32
    assert p.stderr == ('mount.famfs: %s:1: bad value for %s: '
                        '"%d" is too large (at most %d)\n'
                        % (conf, key, most + 1, most)), p.stderr


def test_the_daemon_checks_its_numeric_options(master, device, tmp_path):
    # famfs-fused started by hand: each number is checked before anything
    # is opened or mounted, and the message names the option and its range
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt, exist_ok=True)
    for opt, bad, why in (("writer_wait", "3601", "is too large (at most 3600)"),
                          ("commit_delay", "60001",
                           "is too large (at most 60000)"),
                          ("poll_ms", "-1", "is not a number"),
                          ("readahead_kb", "65537",
                           "is too large (at most 65536)"),
                          ("ready_fd", "2147483648",
                           "is too large (at most 2147483647)")):
        p = fh.run([fh.FUSED, "-f", "-o", "%s=%s" % (opt, bad), device, mnt],
                   env=master.env, check=False)
        assert p.returncode == 1, (opt, p.stderr)
        assert 'bad %s: "%s" %s' % (opt, bad, why) in p.stderr, p.stderr
        assert not fh.mounts_at(mnt)
