#!/usr/bin/env python3
"""Runs one peer extractor over the corpus pages and writes what it found, one JSON line a page.

Usage: peers.py trafilatura|readability PAGES.ndjson OUT.ndjson

PAGES.ndjson holds `{"name", "url", "html"}` lines. Each output line is `{"name", "text",
"headline", "authors", "published", "siteName", "lang"}` (what the peer gives; missing ones
left out). The last line is `{"cpuSeconds": ...}`: the user + system CPU of this process over
the extraction loop only (the imports and the reading of the pages are not counted, which
favours the peers slightly). bench.py runs it with `PYTHONHASHSEED=0`: readability-lxml's
`short_title` depends on a set's order.

- trafilatura: `bare_extraction(html, url=..., include_comments=False, with_metadata=True)`,
  its defaults otherwise (fallback extractors on, tables kept): the setting its own
  evaluation reports as its default.
- readability-lxml: `Document(html, url=...).summary(html_partial=True)` turned to text as the
  expected pages are (score.py's `html_text`), `short_title()` as its headline.
"""
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from score import html_text  # noqa: E402

peer, pages_path, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
pages = [json.loads(line) for line in open(pages_path, encoding="utf-8")]

if peer == "trafilatura":
    import logging
    import trafilatura

    logging.disable(logging.CRITICAL)

    def run(page):
        doc = trafilatura.bare_extraction(
            page["html"], url=page["url"], include_comments=False, with_metadata=True
        )
        if doc is None:
            return {}
        d = doc if isinstance(doc, dict) else doc.as_dict()
        authors = [a.strip() for a in (d.get("author") or "").split(";") if a.strip()]
        return {
            "text": d.get("text") or "",
            "headline": d.get("title"),
            "authors": authors or None,
            "published": d.get("date"),
            "siteName": d.get("sitename"),
            "lang": d.get("language"),
        }

elif peer == "readability":
    import logging

    from readability import Document

    logging.disable(logging.CRITICAL)

    def run(page):
        doc = Document(page["html"], url=page["url"])
        return {"text": html_text(doc.summary(html_partial=True)), "headline": doc.short_title()}

else:
    sys.exit(f"peers.py: unknown peer `{peer}` (expected trafilatura or readability)")

results = []
t0 = os.times()
for page in pages:
    try:
        r = run(page)
    except Exception as e:  # a peer failing on a page scores it as empty
        r = {"error": f"{type(e).__name__}: {e}"}
    r["name"] = page["name"]
    results.append(r)
t1 = os.times()
cpu = (t1.user - t0.user) + (t1.system - t0.system)
with open(out_path, "w", encoding="utf-8") as f:
    for r in results:
        f.write(json.dumps({k: v for k, v in r.items() if v is not None}, ensure_ascii=False) + "\n")
    f.write(json.dumps({"cpuSeconds": cpu}) + "\n")
