#!/usr/bin/python3
"""The report of `make bench`: reads the RESULT lines that bench/meta.py,
bench/fallback_read.sh, bench/restart.sh and bench/vm.sh left in
OUT/*.txt and writes

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


# The table: (figure, group, ratio key or None, how to show the values).
def rows(g):
    def ratio(group, key):
        r = g[group]
        return {"median": r[key], "min": r[key + "_min"],
                "max": r[key + "_max"]}

    def vm(name, side, key, what):
        r = g[name]
        base = "dmap" if key == "dratio" else "rmap"
        return (what, ratio(name, side + "_" + key),
                "%.0f vs %.0f MiB/s (%d passes)" % (r[side + "_mibs"],
                                                    r[base + "_mibs"],
                                                    r["passes"]))
    stock, node = "stock devdax mmap", "raw node mmap (same memory)"
    table = [
        ("vm_seq", lambda: vm("vm_seq", "fmap", "dratio",
                              "famfs mmap / %s, sequential 1 MiB" % stock)),
        ("vm_a64", lambda: vm("vm_a64", "fmap", "dratio",
                              "famfs mmap / %s, random 64 B" % stock)),
        ("vm_seq", lambda: vm("vm_seq", "fmap", "ratio",
                              "famfs mmap / %s, sequential 1 MiB" % node)),
        ("vm_a64", lambda: vm("vm_a64", "fmap", "ratio",
                              "famfs mmap / %s, random 64 B" % node)),
        ("vm_seq", lambda: vm("vm_seq", "fread", "dratio",
                              "famfs read(2) / memcpy from %s, sequential "
                              "1 MiB" % stock)),
        ("vm_a65536", lambda: vm("vm_a65536", "fread", "dratio",
                                 "famfs read(2) / memcpy from %s, random "
                                 "64 KiB" % stock)),
        ("vm_a64", lambda: vm("vm_a64", "fread", "dratio",
                              "famfs read(2) / memcpy from %s, random 64 B"
                              % stock)),
        ("vm_mmap_touch", lambda: (
            "page faults per GiB, first mmap touch (famfs; stock; raw node)",
            None, "%d; %d; %d" % (g["vm_mmap_touch"]["faults_per_gib"],
                                  g["vm_setup"]["dmap_faults_per_gib"],
                                  g["vm_setup"]["rmap_faults_per_gib"]))),
        ("vm_mmap_touch", lambda: (
            "daemon requests per GiB: mmap touch; read(2) of %s"
            % size(g["vm_read_requests"]["bytes"]), None,
            "%d; %d (per open: open, release, attributes)" % (
                g["vm_mmap_touch"]["requests_per_gib"],
                g["vm_read_requests"]["requests"]))),
        ("fallback", lambda: (
            "fallback read / raw file read, client (daemon serves)",
            ratio("fallback", "client_ratio"),
            "%d vs %d MiB/s, %d FUSE requests/GiB" % (
                g["fallback"]["client_mibs"], g["fallback"]["direct_mibs"],
                g["fallback"]["client_requests_per_pass"] * 1024 /
                g["fallback"]["size_mib"]))),
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
        out.append({"figure": figure, "ratio": r, "values": values,
                    "group": group})
    return out


def render(table):
    lines = ["%-64s %-22s %s" % ("figure", "ratio median [min-max]",
                                 "values")]
    for row in table:
        r = row["ratio"]
        shown = ("%.3f [%.3f-%.3f]" % (r["median"], r["min"], r["max"])
                 if r else "-")
        lines.append("%-64s %-22s %s" % (row["figure"], shown,
                                         row["values"]))
    return "\n".join(lines) + "\n"


def sweep(out, g):
    pts = sorted((r["access"], r) for name, r in g.items()
                 if name.startswith("vm_a") and r.get("pattern") == "rand")
    if not pts:
        return None
    dat = os.path.join(out, "sweep.dat")
    with open(dat, "w") as f:
        f.write("# access_bytes famfs_mmap raw_node_mmap famfs_read "
                "stock_devdax_mmap (MiB/s, medians, random reads)\n")
        for a, r in pts:
            f.write("%d %.1f %.1f %.1f %.1f\n" % (
                a, r["fmap_mibs"], r["rmap_mibs"], r["fread_mibs"],
                r.get("dmap_mibs", float("nan"))))
    if not shutil.which("gnuplot"):
        print("report: no gnuplot (DEPS_BENCH=1 scripts/deps.sh): "
              "no sweep.png", file=sys.stderr)
        return None
    png = os.path.join(out, "sweep.png")
    xtics = ", ".join('"%s" %d' % (size(a).replace(" ", ""), a)
                      for a, _ in pts)
    script = """
set terminal pngcairo size 960,600 font ",11"
set output "%s"
set title "Random reads from a 1 GiB famfs file and from raw devdax mappings\\n(QEMU TCG guest, median of %d passes)"
set xlabel "access size (bytes copied per access)"
set ylabel "MiB/s"
set logscale xy 2
set xtics (%s)
set grid
set key bottom right
plot "%s" using 1:2 with linespoints lw 2 title "famfs mmap + memcpy", \\
     "" using 1:5 with linespoints lw 2 dt 2 title "stock devdax mmap + memcpy", \\
     "" using 1:3 with linespoints lw 2 dt 3 title "raw node mmap (same memory) + memcpy", \\
     "" using 1:4 with linespoints lw 2 title "famfs read(2)"
""" % (png, pts[0][1]["passes"], xtics, dat)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/report.py OUT")
    out = sys.argv[1]
    g = parse(out)
    table = rows(g)
    expected = ["meta_creat", "meta_batch", "meta_replay", "meta_mount",
                "fallback", "restart", "vm_setup", "vm_seq", "vm_a64",
                "vm_mmap_touch", "vm_read_requests"]
    missing = [e for e in expected if e not in g]
    text = render(table)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    png = sweep(out, g)
    commit = subprocess.run(["git", "-C", TOP, "rev-parse", "--short",
                             "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(
                       timespec="seconds"),
                   "commit": commit, "host": platform.node(),
                   "table": table, "results": g, "missing": missing,
                   "plot": png}, f, indent=1, sort_keys=True)
    print("report: %s/bench.json%s" % (out, ", " + png if png else ""))
    if missing:
        print("report: missing figures: %s" % " ".join(missing),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
