#!/usr/bin/env python3
"""Compares each tool's crawl with the reference walk and prints the benchmark table.

Usage: compare.py ORIGIN REFERENCE.txt TIMES.tsv RESULTS.ndjson
TIMES.tsv: tool<TAB>urls-file<TAB>seconds<TAB>peak-rss-kb<TAB>exit-code<TAB>cpu-seconds
(user + system, the tool's process tree), one line per tool.
Each urls-file has one fetched URL per line; URLs are compared by walk.normalise.
"""
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from walk import normalise  # noqa: E402

origin, ref_file, times_file, results_file = sys.argv[1:5]
ref = [l.strip() for l in open(ref_file) if l.strip()]
ref_set = set(ref)
rows = []
for line in open(times_file):
    tool, urls_file, secs, rss, code, cpu = line.rstrip("\n").split("\t")
    secs, rss, cpu = float(secs), int(rss), float(cpu or 0)
    found = set()
    for u in open(urls_file, errors="replace"):
        key = normalise(u, origin)
        if key is not None:
            found.add(key)
    pages = found & ref_set
    missed = sorted(ref_set - found)
    extra = sorted(k for k in found - ref_set if k.endswith(".html") or k.endswith("/"))
    rows.append((tool, secs, rss, code, pages, missed, extra, cpu))

fmt = "{:<28} {:>8} {:>9} {:>9} {:>7} {:>10} {:>10} {:>7} {:>6}"
print(fmt.format("tool", "wall s", "pages/s", "peak MB", "CPU s", "pages/CPUs", "pages",
                 "missed", "extra"))
for tool, secs, rss, code, pages, missed, extra, cpu in rows:
    rate = len(pages) / secs if secs > 0 else 0
    per_cpu = len(pages) / cpu if cpu > 0 else 0
    print(fmt.format(tool + ("" if code == "0" else f" (exit {code})"), f"{secs:.2f}",
                     f"{rate:.0f}", f"{rss / 1024:.1f}", f"{cpu:.2f}", f"{per_cpu:.0f}",
                     f"{len(pages)}/{len(ref)}", len(missed), len(extra)))
    with open(results_file, "a") as f:
        f.write(json.dumps({
            "bench": "crawl", "tool": tool, "seconds": secs, "pagesPerSec": round(rate),
            "peakRssKb": rss, "cpuSeconds": cpu, "pages": len(pages), "reference": len(ref),
            "missed": len(missed), "extra": len(extra), "exit": int(code),
            "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }) + "\n")
print()
for tool, secs, rss, code, pages, missed, extra, cpu in rows:
    if missed:
        print(f"{tool} missed {len(missed)}: {' '.join(missed[:8])}{' …' if len(missed) > 8 else ''}")
    if extra:
        print(f"{tool} fetched {len(extra)} pages outside the reference set: "
              f"{' '.join(extra[:8])}{' …' if len(extra) > 8 else ''}")
