#!/usr/bin/env python3
"""Runs the rip-parse measurements for scripts/bench/parse/run and prints a table.

Each measurement is one process, timed by wall clock, its CPU time (user + system) and
peak RSS read from wait4(). rip-parse reads the NDJSON file and writes its docs to
/dev/null, two ways in the same run: as it runs by default (generic extraction in one
streaming pass, a tree only for pages that need one) and with --no-stream (a tree for
every page: rip-parse as it was before the streaming pass). The floor
(examples/parse_floor.rs) loads the bodies first, untimed, then only parses them into a
DOM; its CPU figure is its timed seconds. The RSS check runs rip-parse on the input
streamed twice over (twice the length): peak RSS must not grow with the length of the
input.
"""
import argparse
import json
import os
import platform
import subprocess
import time

ap = argparse.ArgumentParser()
ap.add_argument("--rip-parse", required=True)
ap.add_argument("--floor", required=True)
ap.add_argument("--input", required=True)
ap.add_argument("--meta", required=True)
ap.add_argument("--results", required=True)
ap.add_argument("--rules", required=True)
args = ap.parse_args()
meta = json.load(open(args.meta))
pages, html_mb = meta["pages"], meta["htmlBytes"] / 1e6
cores = os.cpu_count() or 1


def timed(cmd, stdin=None, feed=None):
    started = time.monotonic()
    feeder = subprocess.Popen(feed, stdout=subprocess.PIPE) if feed else None
    p = subprocess.Popen(cmd, stdin=feeder.stdout if feeder else stdin,
                         stdout=subprocess.PIPE if "parse_floor" in cmd[0] else subprocess.DEVNULL)
    out = p.stdout.read() if p.stdout else b""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - started
    if feeder:
        feeder.stdout.close()
        feeder.wait()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 2):
        raise SystemExit(f"{cmd} exited {code}")
    return wall, usage.ru_maxrss / 1024, out, usage.ru_utime + usage.ru_stime


rows = []


def record(name, threads, n, seconds, rss_mb, cpu, note=""):
    row = {"bench": "parse", "what": name, "threads": threads, "pages": n, "seconds": round(seconds, 2),
           "pagesPerSec": round(n / seconds), "mbPerSec": round(html_mb * n / pages / seconds, 1),
           "cpuUsPerPage": round(cpu * 1e6 / n), "peakRssMb": round(rss_mb), "note": note}
    rows.append(row)
    print(f"{name:<40} {threads:>2} thr {row['pagesPerSec']:>7} pages/s {row['mbPerSec']:>6} MB/s "
          f"{row['cpuUsPerPage']:>5} µs CPU/page peak RSS {row['peakRssMb']:>4} MB {note}", flush=True)
    return row


load = os.getloadavg()[0]
print(f"{pages} pages, {html_mb:.0f} MB of HTML ({meta['distinctFiles']} distinct files), "
      f"{cores} cores, load average {load:.1f} at start", flush=True)
results = {}
VARIANTS = [
    ("generic", []),
    ("--markdown", ["--markdown"]),
    ("--rules rustdoc.toml", ["--rules", args.rules]),
]
for threads in sorted({1, cores}):
    wall, rss, out, _ = timed([args.floor, args.input, "--threads", str(threads)])
    floor = json.loads(out)
    results[("floor", threads)] = record("floor: DOM parse only", threads, pages, floor["seconds"], rss,
                                         floor["seconds"] * threads, "(bodies preloaded, untimed)")
    wall, rss, out, _ = timed([args.floor, args.input, "--threads", str(threads), "--stream"])
    secs = json.loads(out)["seconds"]
    results[("floor-stream", threads)] = record("floor: read + decode + DOM parse", threads, pages,
                                                secs, rss, secs * threads)
    for label, extra in VARIANTS:
        for how, flag in [("tree", ["--no-stream"]), ("streaming", [])]:
            name = f"rip-parse {label}, {how}"
            wall, rss, _, cpu = timed([args.rip_parse, "-q", "--threads", str(threads), "-i", args.input]
                                      + extra + flag)
            results[(label, how, threads)] = record(name, threads, pages, wall, rss, cpu)

wall, rss, _, cpu = timed([args.rip_parse, "-q", "--threads", str(cores)], feed=["cat", args.input, args.input])
record("rip-parse generic, input x2", cores, 2 * pages, wall, rss, cpu, "(same pages twice, stdin)")


def ratio(label, threads):
    tree, streaming = results[(label, "tree", threads)], results[(label, "streaming", threads)]
    return round(tree["cpuUsPerPage"] / streaming["cpuUsPerPage"], 2)


summary = {
    "bench": "parse", "what": "summary", "pages": pages, "cores": cores, "loadAverage": round(load, 1),
    "machine": platform.machine(),
    "cpuTreeOverStreaming1": {label: ratio(label, 1) for label, _ in VARIANTS},
    "cpuTreeOverStreamingN": {label: ratio(label, cores) for label, _ in VARIANTS},
    "streamingVsFloor1": round(results[("generic", "streaming", 1)]["pagesPerSec"]
                               / results[("floor", 1)]["pagesPerSec"], 2),
    "peakRssMb": max(r["peakRssMb"] for r in rows if r["what"].startswith("rip-parse")),
}
print("CPU per page, tree over streaming (1 thread): "
      + ", ".join(f"{k} {v}x" for k, v in summary["cpuTreeOverStreaming1"].items())
      + f"; ({cores} threads): "
      + ", ".join(f"{k} {v}x" for k, v in summary["cpuTreeOverStreamingN"].items())
      + f"; generic streaming at {summary['streamingVsFloor1']:.1f}x the DOM-only floor's pages/s"
      + f"; peak RSS {summary['peakRssMb']} MB")
with open(args.results, "a") as f:
    for r in rows + [summary]:
        f.write(json.dumps(r) + "\n")
