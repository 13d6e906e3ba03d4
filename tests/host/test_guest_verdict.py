# SPDX-License-Identifier: GPL-2.0-or-later
"""The verdicts tests/vm/run.sh and tests/e2e/run.sh give on a guest's
run (tests/lib/guest-verdict.sh): a boot counts as finished only with
exit status 0 and its stage's own last line, and the kernel trouble
looked for in a console includes WARN()s and KASAN reports."""
import os
import subprocess

import pytest

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "..", "lib", "guest-verdict.sh")
GUEST_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "..", "vm", "guest", "lib.sh")


def sh(script, *args):
    return subprocess.run(["sh", "-c", ". '%s'; %s" % (LIB, script), "sh"]
                          + list(args), capture_output=True, text=True,
                          timeout=30)


def finished(tmp_path, log, rc):
    lp, rp = tmp_path / "stage.log", tmp_path / "stage.rc"
    lp.write_text(log)
    if rc is None:
        if rp.exists():
            rp.unlink()
    else:
        rp.write_text(rc)
    p = sh('stage_finished "$1" "$2" "$3"', "check", str(lp), str(rp))
    return p.returncode == 0, p.stdout.strip()


CHECKS = "ok - install: dpkg -i\nok - fstab-mount: mounted\n"


def test_stage_finished_needs_status_0_and_its_done_line(tmp_path):
    assert finished(tmp_path, CHECKS + "# stage check done\n", "0\n") == \
        (True, "")
    # the runner's status is not 0, or was never written
    assert finished(tmp_path, CHECKS + "# stage check done\n", "1\n") == \
        (False, "stage exit 1, 1 done line")
    assert finished(tmp_path, CHECKS + "# stage check done\n", None) == \
        (False, "stage exit none, 1 done line")
    # stopped half way: every check it reached passed, no done line
    assert finished(tmp_path, CHECKS, "0\n") == \
        (False, "stage exit 0, 0 done line")
    # another stage's line, or one that is not the whole line
    assert finished(tmp_path, CHECKS + "# stage upgrade done\n", "0\n")[0] \
        is False
    assert finished(tmp_path, CHECKS + "# stage check done early\n",
                    "0\n")[0] is False
    assert finished(tmp_path, CHECKS + "# stage check done\n"
                    "# stage check done\n", "0\n")[0] is False


TROUBLE = [
    "[   12.345678] WARNING: CPU: 0 PID: 231 at fs/fuse/famfs.c:412 "
    "famfs_fetch+0x1a/0x2b0 [famfs_fuse]",
    "[    7.000001] BUG: KASAN: slab-use-after-free in fuse_famfs_open",
    "[    7.000002] KASAN: maybe wild-memory-access in range",
    "[    3.1] BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "[    3.2] kernel BUG at mm/filemap.c:1500!",
    "[    3.3] Oops: 0000 [#1] PREEMPT SMP NOPTI",
    "[    3.4] Kernel panic - not syncing: Fatal exception",
    "[    3.5] general protection fault, probably for non-canonical address",
    "[    3.6] UBSAN: array-index-out-of-bounds in fs/fuse/famfs.c:301:9",
    "[    3.7] Call Trace:",
]
TROUBLE_IDS = ["warn", "kasan-bug", "kasan", "bug", "kernel-bug", "oops",
               "panic", "gpf", "ubsan", "trace"]


@pytest.mark.parametrize("line", TROUBLE, ids=TROUBLE_IDS)
def test_kernel_trouble_is_found(tmp_path, line):
    con = tmp_path / "console.log"
    con.write_text("[    1.0] famfs_fuse: loaded\n%s\n[    9.0] ok\n" % line)
    p = sh('kernel_trouble "$1" "$2"', str(con), str(tmp_path / "out"))
    assert p.returncode == 0
    assert (tmp_path / "out").read_text() == line + "\n"


@pytest.mark.parametrize("line", TROUBLE, ids=TROUBLE_IDS)
def test_guest_dmesg_clean_uses_the_same_pattern(tmp_path, line):
    """The guest's dmesg_clean (tests/vm/guest/lib.sh, with this file
    shipped into the guest) finds the same trouble in the kernel log."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "dmesg.txt"
    (bin_ / "dmesg").write_text("#!/bin/sh\ncat '%s'\n" % log)
    (bin_ / "dmesg").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_, os.environ["PATH"]),
               FAMFS_VERDICT=LIB)
    script = ". '%s'; dmesg_clean" % GUEST_LIB
    for text, clean in (("[    1.0] famfs_fuse: loaded\n", True),
                        ("[    1.0] famfs_fuse: loaded\n%s\n" % line, False)):
        log.write_text(text)
        p = subprocess.run(["sh", "-c", script], env=env, capture_output=True,
                           text=True, timeout=30)
        assert (p.returncode == 0) == clean, (text, p.stdout, p.stderr)


def test_kernel_trouble_clean_console_and_extra_pattern(tmp_path):
    con = tmp_path / "console.log"
    con.write_text("[    1.0] famfs_fuse: loaded\n"
                   "[    2.0] famfs: bad map for inode 5: strip too short\n"
                   "[    3.0] possible circular locking dependency detected\n")
    out = str(tmp_path / "out")
    assert sh('kernel_trouble "$1" "$2"', str(con), out).returncode == 1
    # the debug kernel's extra reports, or-ed in by the VM tier
    p = sh('kernel_trouble "$1" "$2" "possible circular locking"',
           str(con), out)
    assert p.returncode == 0
    assert "possible circular locking" in (tmp_path / "out").read_text()
    # no console at all: nothing to report (the boot fails elsewhere)
    assert sh('kernel_trouble "$1" "$2"', str(tmp_path / "none"),
              out).returncode != 0
