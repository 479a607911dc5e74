"""Checks rip-render's output: every page of the bench's N is there, complete (its ten items).

Usage: python3 check.py N < out.ndjson   (prints "complete N/N" or what is missing; exit 1)
"""
import json
import re
import sys

n = int(sys.argv[1])
complete, bad = set(), []
for line in sys.stdin:
    r = json.loads(line)
    if r.get("_type") != "page":
        continue
    i = int(re.search(r"/p/(\d+)\.html", r["url"]).group(1))
    body = r.get("body", "")
    missing = [k for k in range(10) if f">item {i}-{k} {k * 3} " not in body]
    if missing:
        bad.append(f"page {i}: items {missing} missing")
    else:
        complete.add(i)
print(f"complete {len(complete)}/{n}")
for b in bad[:5]:
    print(b, file=sys.stderr)
sys.exit(0 if len(complete) == n else 1)
