#!/usr/bin/env python3
"""Reads back rip-write's tables (pyarrow, or Python's csv) and checks each row equals its
doc, column by column, in order. Usage: check.py docs.ndjson DIR parquet|csv
Prints one JSON line: rows checked per concept, row groups, mismatches (must be 0)."""
import csv
import json
import sys

docs_path, folder, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
by_concept = {}
with open(docs_path, encoding="utf-8") as f:
    for line in f:
        d = json.loads(line)
        by_concept.setdefault(d["concept"], []).append(d)


def same(cell, want):
    if want is None:
        return cell is None or cell == ""
    if isinstance(want, (dict,)) or (fmt == "csv" and not isinstance(want, str)):
        if isinstance(cell, str):
            return json.loads(cell) == want
    return cell == want


report = {"format": fmt, "rows": {}, "rowGroups": {}, "mismatches": 0}
for concept, docs in by_concept.items():
    path = f"{folder}/{concept}.{fmt}"
    if fmt == "parquet":
        import pyarrow.parquet as pq
        pf = pq.ParquetFile(path)
        report["rowGroups"][concept] = pf.metadata.num_row_groups
        rows = pf.read().to_pylist()
    else:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    report["rows"][concept] = len(rows)
    if len(rows) != len(docs):
        report["mismatches"] += abs(len(rows) - len(docs))
    for row, doc in zip(rows, docs):
        for col, cell in row.items():
            if not same(cell, doc.get(col)):
                report["mismatches"] += 1
                if report["mismatches"] <= 5:
                    print(f"{concept} {doc['url']} {col}: {cell!r} != {doc.get(col)!r}", file=sys.stderr)
print(json.dumps(report))
sys.exit(1 if report["mismatches"] else 0)
