#!/usr/bin/env python3
"""Writes `page` records (NDJSON) of real HTML pages for the rip-parse benchmark.

Usage: make_pages.py OUT COUNT DIR...

Takes every *.html file over 2 KiB under the DIRs (the 1-2 KiB rustdoc redirect stubs
are left out), sorted by path, and picks COUNT of them evenly spread over that list.
When there are fewer than COUNT files, the list is cycled (the same files repeated) and
this script says so on stderr. Each record looks like one rip-fetch writes: text body,
Content-Type text/html, the file's path under http://docs.example/ as its URL.
"""
import json
import os
import sys

out, count, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
files = []
for d in dirs:
    for root, _, names in os.walk(d):
        for n in names:
            if n.endswith(".html"):
                p = os.path.join(root, n)
                if os.path.getsize(p) > 2048:
                    files.append((os.path.relpath(p, d), p))
files.sort()
if not files:
    sys.exit(f"make_pages.py: no HTML files over 2 KiB under {dirs}")
if len(files) >= count:
    step = len(files) / count
    chosen = [files[int(i * step)] for i in range(count)]
else:
    print(f"make_pages.py: only {len(files)} files; cycling them to {count} pages", file=sys.stderr)
    chosen = [files[i % len(files)] for i in range(count)]
html_bytes = 0
with open(out, "w", encoding="utf-8") as f:
    for i, (rel, path) in enumerate(chosen):
        with open(path, "rb") as h:
            raw = h.read()
        body = raw.decode("utf-8", errors="replace")
        html_bytes += len(raw)
        url = f"http://docs.example/{i}/{rel}"
        rec = {
            "_type": "page", "url": url, "finalUrl": url, "status": 200,
            "contentType": "text/html; charset=utf-8", "charset": "utf-8", "charsetSource": "header",
            "fetchedAt": "2026-12-01T09:00:00Z", "fromCache": False, "httpAttempts": 1, "elapsedMs": 3,
            "body": body, "truncated": False, "depth": 1, "attempt": 0,
        }
        f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        f.write("\n")
print(json.dumps({"pages": len(chosen), "distinctFiles": len(set(p for _, p in chosen)),
                  "htmlBytes": html_bytes, "ndjsonBytes": os.path.getsize(out)}))
