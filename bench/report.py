#!/usr/bin/python3
"""The report of `make bench`: reads the RESULT lines that bench/meta.py,
bench/fallback_read.sh, bench/restart.sh and bench/vm.sh (once per kernel
line: groups vm_* on 6.12, vm73_* on 7.3) left in OUT/*.txt and writes

  OUT/bench.json   every figure (all RESULT keys) and the table's rows
  OUT/table.txt    the table, also printed
  OUT/sweep.dat    throughput vs access size (guest, random reads)
  OUT/sweep.png    its plot (gnuplot)

  bench/report.py OUT

A RESULT line is "RESULT GROUP key=value ...". A missing group (a step
that failed) leaves its rows out and is listed under "missing".
"""
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(out):
    groups = {}
    for name in sorted(os.listdir(out)):
        if not name.endswith(".txt") or name == "table.txt":
            continue
        with open(os.path.join(out, name)) as f:
            for line in f:
                words = line.split()
                if len(words) < 2 or words[0] != "RESULT":
                    continue
                kv = {}
                for w in words[2:]:
                    k, _, v = w.partition("=")
                    if k == "kernel":  # a line like 7.3, not a number
                        kv[k] = v
                        continue
                    try:
                        kv[k] = int(v)
                    except ValueError:
                        try:
                            kv[k] = float(v)
                        except ValueError:
                            kv[k] = v
                groups[words[1]] = dict(kv, source=name)
    return groups


def size(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


# The kernel lines of the guest step: (line, group prefix, whether the
# famfs device's own node maps: famfs_dax on 6.12 does, fsdev_dax on 7.3
# has no mmap, so there is no raw node side there).
KLINES = (("6.12", "vm_", True), ("7.3", "vm73_", False))


def ratio_of(g, group, key):
    r = g[group]
    return {"median": r[key], "min": r[key + "_min"], "max": r[key + "_max"]}


# The guest's rows of one kernel line, as (group, make) for rows().
def vm_rows(g, kline, pre, raw):
    def vm(name, side, key, what):
        r = g[pre + name]
        base = "dmap" if key == "dratio" else "rmap"
        return ("%s %s" % (kline, what),
                ratio_of(g, pre + name, side + "_" + key),
                "%.0f vs %.0f MiB/s (%d passes)" % (r[side + "_mibs"],
                                                    r[base + "_mibs"],
                                                    r["passes"]))

    def no_raw(what):
        return ("%s %s" % (kline, what), "n/a",
                "not applicable on %s: fsdev_dax's node has no mmap" % kline)

    def raw_row(name, what):
        if raw:
            return vm(name, "fmap", "ratio", what)
        if pre + name not in g:  # the row only where the line ran
            raise KeyError(pre + name)
        return no_raw(what)

    # A fallback row on famfs_dax where the line has none (7.3), or None.
    def no_fallback(key, what):
        if key != "famfs_dax" or raw:
            return None
        if pre + "seq" not in g:  # the row only where the line ran
            raise KeyError(pre + "seq")
        return (what, "n/a", "not applicable on %s: fsdev_dax's node has "
                "no mmap, so no fallback mode" % kline)

    def fallback(key, dev):
        what = ("%s fallback client read(2) on %s / famfs read(2), "
                "1 MiB" % (kline, dev))
        na = no_fallback(key, what)
        if na:
            return na
        r = g[pre + "fallback_" + key]
        return (what, ratio_of(g, pre + "fallback_" + key, "ratio"),
                "%.0f vs %.0f MiB/s (%d passes), %.0f FUSE requests/GiB, "
                "daemon %.0f ms CPU/GiB%s" % (
                    r["client_mibs"], r["famfs_mibs"], r["passes"],
                    r["requests_per_gib"], r["cpu_ms_per_gib"],
                    "" if r["map_replies"] else ", replies copied first"))

    def fallback_memcpy(key, dev):
        what = ("%s fallback client read(2) on %s / memcpy from stock "
                "devdax mmap, 1 MiB" % (kline, dev))
        na = no_fallback(key, what)
        if na:
            return na
        r = g[pre + "fallback_%s_memcpy" % key]
        return (what, ratio_of(g, pre + "fallback_%s_memcpy" % key,
                               "fread_dratio"),
                "%.0f vs %.0f MiB/s (%d passes)" % (
                    r["fread_mibs"], r["dmap_mibs"], r["passes"]))

    stock, node = "stock devdax mmap", "raw node mmap (same memory)"
    return [
        (pre + "seq", lambda: vm("seq", "fmap", "dratio",
                                 "famfs mmap / %s, sequential 1 MiB" % stock)),
        (pre + "a64", lambda: vm("a64", "fmap", "dratio",
                                 "famfs mmap / %s, random 64 B" % stock)),
        (pre + "seq", lambda: raw_row(
            "seq", "famfs mmap / %s, sequential 1 MiB" % node)),
        (pre + "a64", lambda: raw_row(
            "a64", "famfs mmap / %s, random 64 B" % node)),
        (pre + "seq", lambda: vm("seq", "fread", "dratio",
                                 "famfs read(2) / memcpy from %s, sequential "
                                 "1 MiB" % stock)),
        (pre + "a65536", lambda: vm("a65536", "fread", "dratio",
                                    "famfs read(2) / memcpy from %s, random "
                                    "64 KiB" % stock)),
        (pre + "a64", lambda: vm("a64", "fread", "dratio",
                                 "famfs read(2) / memcpy from %s, random 64 B"
                                 % stock)),
        (pre + "fallback_devdax",
         lambda: fallback("devdax", "device_dax")),
        (pre + "fallback_famfs_dax" if raw else pre + "seq",
         lambda: fallback("famfs_dax", "famfs_dax")),
        (pre + "fallback_devdax_memcpy",
         lambda: fallback_memcpy("devdax", "device_dax")),
        (pre + "fallback_famfs_dax_memcpy" if raw else pre + "seq",
         lambda: fallback_memcpy("famfs_dax", "famfs_dax")),
        (pre + "mmap_touch", lambda: (
            "%s page faults per GiB, first mmap touch (famfs; stock; raw "
            "node)" % kline, None, "%d; %d; %s" % (
                g[pre + "mmap_touch"]["faults_per_gib"],
                g[pre + "setup"]["dmap_faults_per_gib"],
                "%d" % g[pre + "setup"]["rmap_faults_per_gib"] if raw
                else "n/a"))),
        (pre + "mmap_touch", lambda: (
            "%s daemon requests per GiB: mmap touch; read(2) of %s"
            % (kline, size(g[pre + "read_requests"]["bytes"])), None,
            "%d; %d (per open: open, release, attributes)" % (
                g[pre + "mmap_touch"]["requests_per_gib"],
                g[pre + "read_requests"]["requests"]))),
    ]


# Fallback sides beyond the first row: (key prefix, what the row says).
FALLBACK_SIDES = [
    ("client_copy", "client, splice=no (copied from the mapping)"),
    ("client_512k", "client, dd bs=512K (spliced)"),
    ("client_copy_512k", "client, dd bs=512K, splice=no"),
    ("client_r2", "client, 2 readers at once"),
    ("client_r4", "client, 4 readers at once"),
]


def fallback_row(g, side, what):
    def make():
        f = g["fallback"]
        base = {"512k": "direct_512k", "r2": "direct_r2",
                "r4": "direct_r4"}.get(side.rsplit("_", 1)[-1], "direct")
        return ("  %s" % what, ratio_of(g, "fallback", side + "_ratio"),
                "%d vs %d MiB/s, %d req/GiB, daemon %d ms CPU/GiB" % (
                    f[side + "_mibs"], f[base + "_mibs"],
                    f[side + "_requests_per_gib"],
                    f[side + "_cpu_ms_per_gib"]))
    return make


# The table: (group, make); make() gives (figure, ratio, values) where
# ratio is a {median, min, max} dict, None (a count, no ratio) or "n/a"
# (no such side on that kernel line).
def rows(g):
    def ratio(group, key):
        return ratio_of(g, group, key)

    def against(group, what, size, num, ours, theirs, unit):
        """A creation row: WHAT (with its SIZE), the ratio, and OURS vs
        THEIRS (NUM's format) in UNIT (which may name the rounds)."""
        r = g[group]
        text = (num + " vs " + num + " " + unit) % (
            (r[ours], r[theirs]) + ((r["rounds"],) if "%d" in unit else ()))
        return what % r[size], ratio(group, "ratio"), text

    def stripe(group, kline):
        r = g[group]
        return ("guest, famfs mode (%s): mmap sequential read, %d MiB "
                "striped over 3 devices / on one" % (kline, r["mib"]),
                ratio(group, "ratio"),
                "%.4f vs %.4f s per pass (median of %d)" % (
                    r["striped_s"], r["one_s"], r["passes"]))

    def posix_tar(group, kline):
        return against(
            group, "guest, famfs mode (" + kline + "): tar -x of %d small "
            "files, mount / /tmp", "files", "%.0f", "famfs_files_per_s",
            "tmp_files_per_s", "files/s (median of %d rounds)")

    def posix_null(group, unit):
        r = g[group]
        return ("  the same into a FUSE server that does nothing, with "
                "default_permissions / /tmp", ratio(group, "null_ratio"),
                "%.1f vs %.1f %s" % (
                    r["null_" + unit], r["tmp_" + unit], unit.replace(
                        "files_per_s", "files/s").replace("mibs", "MiB/s")))

    def devcopy(group, where):
        r = g[group]
        return (where + ": the daemon's write into device memory, "
                "non-temporal stores / memcpy + flush",
                ratio(group, "ratio"),
                "%.0f vs %.0f MiB/s (memcpy alone %.0f), %d MiB" % (
                    r["stream_mibs"], r["flush_mibs"], r["plain_mibs"],
                    r["mib"]))

    def posix_cp(group, kline):
        return against(
            group, "guest, famfs mode (" + kline + "): cp of a %d MiB file, "
            "mount / /tmp", "mib", "%.1f", "famfs_mibs", "tmp_mibs",
            "MiB/s (median of %d rounds)")

    table = []
    for kline, pre, raw in KLINES:
        table += vm_rows(g, kline, pre, raw)
    table += [
        ("fallback", lambda: (
            "fallback read / raw file read, client (daemon serves)",
            ratio("fallback", "client_ratio"),
            "%d vs %d MiB/s, %d FUSE requests/GiB%s" % (
                g["fallback"]["client_mibs"], g["fallback"]["direct_mibs"],
                g["fallback"]["client_requests_per_pass"] * 1024 /
                g["fallback"]["size_mib"],
                ", daemon %d ms CPU/GiB" % g["fallback"][
                    "client_cpu_ms_per_gib"]
                if "client_cpu_ms_per_gib" in g["fallback"] else ""))),
    ]
    table += [("fallback", fallback_row(g, side, what))
              for side, what in FALLBACK_SIDES]
    table += [
        ("fallback", lambda: (
            "  a FUSE server that only replies, same reads / raw file "
            "(FUSE's ceiling)", ratio("fallback", "null_ratio"),
            "%d vs %d MiB/s" % (g["fallback"]["null_mibs"],
                                g["fallback"]["direct_mibs"]))),
        ("fallback", lambda: (
            "  the client / that FUSE server, side by side",
            ratio("fallback", "client_of_null"),
            "1.0: the daemon adds nothing to FUSE's own cost")),
    ]
    table += [
        ("fallback", lambda: (
            "fallback read / raw file read, master (page cache)",
            ratio("fallback", "master_ratio"),
            "%d vs %d MiB/s" % (g["fallback"]["master_mibs"],
                                g["fallback"]["direct_mibs"]))),
        ("fallback", lambda: (
            "  the client again, dd and its daemon on one CPU (diagnostic)",
            ratio("fallback", "client_onecpu_ratio"),
            "%d vs %d MiB/s" % (g["fallback"]["client_onecpu_mibs"],
                                g["fallback"]["direct_mibs"]))),
        ("restart", lambda: (
            "restart blackout, fallback mode: longest op across a restart",
            None, "median %.1f ms, max %.1f ms (%d restarts, %d of them "
            "SIGKILL; %d ops, %d failed)" % (
                g["restart"]["blackout_median_ms"],
                g["restart"]["blackout_max_ms"], g["restart"]["restarts"],
                g["restart"]["kills"], g["restart"]["ops"],
                g["restart"]["failures"]))),
        ("meta_creat", lambda: (
            "famfs creat / fallocate in tmpfs, files per second",
            ratio("meta_creat", "ratio"),
            "%.0f vs %.0f files/s (one process per file)" % (
                g["meta_creat"]["empty_files_per_s"],
                g["meta_creat"]["raw_files_per_s"]))),
        ("meta_creat", lambda: (
            "famfs creat, nearly full log / empty log",
            ratio("meta_creat", "full_ratio"),
            "%.0f vs %.0f files/s" % (g["meta_creat"]["full_files_per_s"],
                                      g["meta_creat"]["empty_files_per_s"]))),
        ("meta_tar", lambda: against(
            "meta_tar", "tar -x of %d small files into the mount / into "
            "tmpfs", "files", "%.0f", "famfs_files_per_s", "raw_files_per_s",
            "files/s (fallback mode, this host)")),
        ("meta_tar", lambda: (
            "  the same into a FUSE server that does nothing / into tmpfs "
            "(FUSE's ceiling)", ratio("meta_tar", "null_ratio"),
            "%.0f vs %.0f files/s" % (g["meta_tar"]["null_files_per_s"],
                                      g["meta_tar"]["raw_files_per_s"]))),
        ("meta_tar", lambda: (
            "  that server with default_permissions, as the mount has / "
            "into tmpfs", ratio("meta_tar", "null_perm_ratio"),
            "%.0f vs %.0f files/s" % (
                g["meta_tar"]["null_perm_files_per_s"],
                g["meta_tar"]["raw_files_per_s"]))),
        ("meta_tar", lambda: (
            "  the mount / that server with default_permissions",
            ratio("meta_tar", "of_null"),
            "%.0f vs %.0f files/s" % (
                g["meta_tar"]["famfs_files_per_s"],
                g["meta_tar"]["null_perm_files_per_s"]))),
        ("meta_rsync", lambda: against(
            "meta_rsync", "rsync -a of %d small files into a mount with "
            "commit_delay= / into tmpfs", "files", "%.0f",
            "famfs_files_per_s", "raw_files_per_s",
            "files/s (fallback mode, this host)")),
        ("meta_cp", lambda: against(
            "meta_cp", "cp of a %d MiB file into the mount / into tmpfs",
            "mib", "%.0f", "famfs_mibs", "raw_mibs",
            "MiB/s (fallback mode, this host)")),
        ("vm_posix_tar", lambda: posix_tar("vm_posix_tar", "6.12")),
        ("vm_posix_tar", lambda: posix_null("vm_posix_tar", "files_per_s")),
        ("vm_posix_cp", lambda: posix_cp("vm_posix_cp", "6.12")),
        ("vm_posix_cp", lambda: posix_null("vm_posix_cp", "mibs")),
        ("vm73_posix_tar", lambda: posix_tar("vm73_posix_tar", "7.3")),
        ("vm73_posix_tar",
         lambda: posix_null("vm73_posix_tar", "files_per_s")),
        ("vm73_posix_cp", lambda: posix_cp("vm73_posix_cp", "7.3")),
        ("vm73_posix_cp", lambda: posix_null("vm73_posix_cp", "mibs")),
        ("devcopy", lambda: devcopy("devcopy", "this host")),
        ("vm_devcopy", lambda: devcopy("vm_devcopy", "guest (6.12)")),
        ("vm73_devcopy", lambda: devcopy("vm73_devcopy", "guest (7.3)")),
        ("vm_stripe3", lambda: stripe("vm_stripe3", "6.12")),
        ("vm73_stripe3", lambda: stripe("vm73_stripe3", "7.3")),
        ("meta_batch", lambda: (
            "famfs creat -M, %d files in one run" % g["meta_batch"]["files"],
            None, "%.0f files/s (min %.0f, max %.0f)" % (
                g["meta_batch"]["files_per_s"],
                g["meta_batch"]["files_per_s_min"],
                g["meta_batch"]["files_per_s_max"]))),
        ("meta_replay", lambda: (
            "log replay, full default log (%d entries), libfamfs"
            % g["meta_replay"]["entries"], None,
            "%.1f ms (min %.1f, max %.1f), %.0f entries/s" % (
                g["meta_replay"]["median_ms"], g["meta_replay"]["min_ms"],
                g["meta_replay"]["max_ms"],
                g["meta_replay"]["entries_per_s"]))),
        ("meta_mount", lambda: (
            "mount + first lookup, full log / one-entry log",
            ratio("meta_mount", "ratio"),
            "%.1f vs %.1f ms" % (g["meta_mount"]["full_ms"],
                                 g["meta_mount"]["small_ms"]))),
    ]
    out = []
    for group, make in table:
        try:
            figure, r, values = make()
        except KeyError:
            continue
        row = {"figure": figure, "ratio": r, "values": values,
               "group": group}
        for kline, pre, _ in KLINES:
            if group.startswith(pre):
                row["kernel"] = kline
        out.append(row)
    return out


def render(table):
    lines = ["%-69s %-22s %s" % ("figure", "ratio median [min-max]",
                                 "values")]
    for row in table:
        r = row["ratio"]
        if isinstance(r, dict):
            shown = "%.3f [%.3f-%.3f]" % (r["median"], r["min"], r["max"])
        else:
            shown = r or "-"
        lines.append("%-69s %-22s %s" % (row["figure"], shown,
                                         row["values"]))
    return "\n".join(lines) + "\n"


def sweep(out, g, kline, pre, raw):
    """sweep.dat and sweep.png (6.12), sweep-7.3.* (7.3): one kernel line's
    random reads; without a raw node side its column is nan, not plotted."""
    sfx = "" if kline == KLINES[0][0] else "-" + kline
    pts = sorted((r["access"], r) for name, r in g.items()
                 if name.startswith(pre + "a") and
                 r.get("pattern") == "rand")
    if not pts:
        return None
    dat = os.path.join(out, "sweep%s.dat" % sfx)
    nan = float("nan")
    with open(dat, "w") as f:
        f.write("# access_bytes famfs_mmap raw_node_mmap famfs_read "
                "stock_devdax_mmap (MiB/s, medians, random reads; "
                "kernel %s)\n" % kline)
        for a, r in pts:
            f.write("%d %.1f %.1f %.1f %.1f\n" % (
                a, r["fmap_mibs"], r.get("rmap_mibs", nan), r["fread_mibs"],
                r.get("dmap_mibs", nan)))
    if not shutil.which("gnuplot"):
        print("report: no gnuplot (DEPS_BENCH=1 scripts/deps.sh): "
              "no sweep%s.png" % sfx, file=sys.stderr)
        return None
    png = os.path.join(out, "sweep%s.png" % sfx)
    xtics = ", ".join('"%s" %d' % (size(a).replace(" ", ""), a)
                      for a, _ in pts)
    lines = ['"%s" using 1:2 with linespoints lw 2 title "famfs mmap + '
             'memcpy"' % dat,
             '"" using 1:5 with linespoints lw 2 dt 2 title "stock devdax '
             'mmap + memcpy"']
    if raw:
        lines.append('"" using 1:3 with linespoints lw 2 dt 3 title "raw '
                     'node mmap (same memory) + memcpy"')
    lines.append('"" using 1:4 with linespoints lw 2 title "famfs read(2)"')
    script = """
set terminal pngcairo size 960,600 font ",11"
set output "%s"
set title "Random reads from a 1 GiB famfs file and from raw devdax mappings\\n(QEMU TCG guest, kernel %s, median of %d passes)"
set xlabel "access size (bytes copied per access)"
set ylabel "MiB/s"
set logscale xy 2
set xtics (%s)
set grid
set key bottom right
plot %s
""" % (png, kline, pts[0][1]["passes"], xtics, ", \\\n     ".join(lines))
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/report.py OUT")
    out = sys.argv[1]
    g = parse(out)
    table = rows(g)
    expected = ["meta_creat", "meta_batch", "meta_tar", "meta_rsync",
                "meta_cp",
                "meta_replay", "meta_mount",
                "fallback", "restart"]
    for _, pre, _ in KLINES:
        expected += [pre + k for k in ("setup", "seq", "a64", "mmap_touch",
                                       "read_requests")]
    expected += ["vm_fallback_devdax", "vm73_fallback_devdax",
                 "vm_fallback_famfs_dax",  # famfs_dax: 6.12 only
                 "vm_fallback_devdax_memcpy", "vm73_fallback_devdax_memcpy",
                 "vm_posix_tar", "vm_posix_cp",
                 "vm73_posix_tar", "vm73_posix_cp",
                 "devcopy", "vm_devcopy", "vm73_devcopy",
                 "vm_stripe3", "vm73_stripe3",
                 "vm_fallback_famfs_dax_memcpy"]
    missing = [e for e in expected if e not in g]
    text = render(table)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    plots = {kline: sweep(out, g, kline, pre, raw)
             for kline, pre, raw in KLINES}
    png = plots[KLINES[0][0]]
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(
                       timespec="seconds"),
                   "commit": commit, "host": platform.node(),
                   "table": table, "results": g, "missing": missing,
                   "plot": png, "plots": plots}, f, indent=1,
                  sort_keys=True)
    print("report: %s/bench.json%s" % (
        out, "".join(", " + p for p in plots.values() if p)))
    if missing:
        print("report: missing figures: %s" % " ".join(missing),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
