#!/usr/bin/env python3
"""The pages one change moves: two results.json of bench.py (before, after), every extractor.

Usage: compare.py BEFORE/results.json AFTER/results.json [--min 0.0005]

For each extractor in both, the F1 of each half before and after, then every page whose F1
moved by at least --min (F1, P, R before → after, its half) and every metadata cell that
turned (the column, before → after). A change to extraction is compared on two runs of
bench.py; a change to score.py on one run's answers scored twice (`bench.py --rescore`).
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("before")
ap.add_argument("after")
ap.add_argument("--min", type=float, default=0.0005, help="the least F1 move to list")
args = ap.parse_args()
before, after = (json.load(open(p)) for p in (args.before, args.after))

for name, b in before["extractors"].items():
    a = after["extractors"].get(name)
    if a is None:
        continue
    halves = "  ".join(
        f"{w} {b['halves'][w]['f1']:.4f} → {a['halves'][w]['f1']:.4f}" for w in ("tune", "held", "all")
    )
    print(f"{name}: {halves}")
    for page, pb in sorted(b["pageScores"].items()):
        pa = a["pageScores"].get(page)
        if pa is None:
            continue
        if abs(pa["f1"] - pb["f1"]) >= args.min:
            print(
                f"  {page:<40} {pb['half']:<4}  F1 {pb['f1']:.3f} → {pa['f1']:.3f}"
                f"  (P {pb['p']:.3f} → {pa['p']:.3f}, R {pb['r']:.3f} → {pa['r']:.3f})"
            )
        for column, right in sorted(pa.get("meta", {}).items()):
            was = pb.get("meta", {}).get(column)
            if was is not None and was != right:
                print(f"  {page:<40} {pb['half']:<4}  {column}: {was} → {right}")
