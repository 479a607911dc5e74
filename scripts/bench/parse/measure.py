#!/usr/bin/env python3
"""Runs the rip-parse measurements for scripts/bench/parse/run and prints a table.

Each measurement is one process, timed by wall clock, its peak RSS read from wait4().
rip-parse reads the NDJSON file and writes its docs to /dev/null; the floor
(examples/parse_floor.rs) loads the bodies first, untimed, then only parses them into
a DOM. The RSS check runs rip-parse on the input streamed twice over (twice the
length): peak RSS must not grow with the length of the input.
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
    if code != 0:
        raise SystemExit(f"{cmd} exited {code}")
    return wall, usage.ru_maxrss / 1024, out


rows = []


def record(name, threads, n, seconds, rss_mb, note=""):
    row = {"bench": "parse", "what": name, "threads": threads, "pages": n, "seconds": round(seconds, 2),
           "pagesPerSec": round(n / seconds), "mbPerSec": round(html_mb * n / pages / seconds, 1),
           "peakRssMb": round(rss_mb), "note": note}
    rows.append(row)
    print(f"{name:<34} {threads:>2} thr {row['pagesPerSec']:>7} pages/s {row['mbPerSec']:>7} MB/s "
          f"peak RSS {row['peakRssMb']:>4} MB {note}", flush=True)
    return row


load = os.getloadavg()[0]
print(f"{pages} pages, {html_mb:.0f} MB of HTML ({meta['distinctFiles']} distinct files), "
      f"{cores} cores, load average {load:.1f} at start", flush=True)
results = {}
for threads in sorted({1, cores}):
    wall, rss, out = timed([args.floor, args.input, "--threads", str(threads)])
    floor = json.loads(out)
    results[("floor", threads)] = record("floor: DOM parse only", threads, pages, floor["seconds"], rss,
                                         "(bodies preloaded, untimed)")
    wall, rss, out = timed([args.floor, args.input, "--threads", str(threads), "--stream"])
    results[("floor-stream", threads)] = record("floor: read + decode + DOM parse", threads, pages,
                                                json.loads(out)["seconds"], rss)
    for name, extra in [("rip-parse (generic)", []), ("rip-parse --unordered", ["--unordered"]),
                        ("rip-parse --markdown", ["--markdown"])]:
        if threads == 1 and extra:
            continue
        wall, rss, _ = timed([args.rip_parse, "-q", "--threads", str(threads), "-i", args.input] + extra)
        results[(name, threads)] = record(name, threads, pages, wall, rss)

wall, rss, _ = timed([args.rip_parse, "-q", "--threads", str(cores)], feed=["cat", args.input, args.input])
record("rip-parse (generic), input x2", cores, 2 * pages, wall, rss, "(same pages twice, stdin)")

g1, gn = results[("rip-parse (generic)", 1)], results[("rip-parse (generic)", cores)]
f1, fn = results[("floor", 1)], results[("floor", cores)]
s1, sn = results[("floor-stream", 1)], results[("floor-stream", cores)]
summary = {
    "bench": "parse", "what": "summary", "pages": pages, "cores": cores, "loadAverage": round(load, 1),
    "machine": platform.machine(),
    "vsFloor1": round(g1["pagesPerSec"] / f1["pagesPerSec"], 2),
    "vsFloorN": round(gn["pagesPerSec"] / fn["pagesPerSec"], 2),
    "vsStreamFloor1": round(g1["pagesPerSec"] / s1["pagesPerSec"], 2),
    "vsStreamFloorN": round(gn["pagesPerSec"] / sn["pagesPerSec"], 2),
    "speedupN": round(gn["pagesPerSec"] / g1["pagesPerSec"], 2),
    "floorSpeedupN": round(fn["pagesPerSec"] / f1["pagesPerSec"], 2),
    "peakRssMb": max(r["peakRssMb"] for r in rows if r["what"].startswith("rip-parse")),
}
print(f"generic extraction vs floor: {summary['vsFloor1']:.0%} (1 thread), {summary['vsFloorN']:.0%} "
      f"({cores} threads); vs read+decode+parse floor: {summary['vsStreamFloor1']:.0%}, "
      f"{summary['vsStreamFloorN']:.0%}; speed-up on {cores} cores: {summary['speedupN']}x (floor: "
      f"{summary['floorSpeedupN']}x); peak RSS {summary['peakRssMb']} MB")
with open(args.results, "a") as f:
    for r in rows + [summary]:
        f.write(json.dumps(r) + "\n")
