#!/usr/bin/env python3
"""The figures of scripts/bench/render-auto/run.

  report.py run MODE N TREE DOCS     one run's line (and a JSON line to keep); TREE: tree.py's
  report.py same DOCS_AUTO DOCS_ALL  the two modes' docs compared one by one
  report.py pairs RUNS               A/B pair by pair, and the medians
"""
import json
import os
import statistics
import sys

ITEMS = 10


def docs(path):
    return [d for d in map(json.loads, open(path)) if d.get("_type") == "doc"]


def run(mode, n, tree_file, docs_file):
    n = int(n)
    t = json.load(open(tree_file))
    if t["exit"] != 0:
        sys.exit(f"bench/render-auto: {mode}: the pipeline exited {t['exit']}")
    wall, cpu = t["wall"], sum(t["cpu"].values())
    pages = docs(docs_file)
    complete = sum(1 for d in pages if len(d.get("items", [])) == ITEMS)
    tabs = sum(1 for d in pages if d.get("renderedBecause"))
    per_program = "  ".join(f"{k} {1000 * c / n:.1f}" for k, c in sorted(t["cpu"].items()))
    print(f"{mode:5} {n / wall:6.2f} pages/s  {wall:6.1f} s  cpu/page {1000 * cpu / n:6.1f} ms "
          f"({per_program})  peak {t['peakOneKiB'] / 1024:4.0f} MB (tree "
          f"{t['peakTreeKiB'] / 1024:4.0f})  docs {len(pages)} complete {complete} "
          f"renderedBecause {tabs}")
    print("#" + json.dumps({"mode": mode, "n": n, **t}))


def same(auto_file, all_file):
    def by_url(p):
        return {d["url"]: (d.get("name"), d.get("items")) for d in docs(p)}

    a, b = by_url(auto_file), by_url(all_file)
    differ = sorted(u for u in a.keys() | b.keys() if a.get(u) != b.get(u))
    script_built = {d["url"] for d in docs(auto_file)
                    if "/app/" in d["url"] or "/half/" in d["url"]}
    tabs = {d["url"] for d in docs(auto_file) if d.get("renderedBecause")}
    verdict = "same docs" if not differ else f"DOCS DIFFER: {len(differ)} of {len(b)}, e.g. {differ[0]}"
    tabs_ok = "exactly the script-built pages rendered" if tabs == script_built else \
        f"RENDERED {len(tabs)}, script-built {len(script_built)}"
    print(f"      {verdict} ({len(a)} and {len(b)} docs); {tabs_ok}")


def pairs(runs_file):
    rows = [json.loads(line[1:]) for line in open(runs_file) if line.startswith("#")]
    auto = [r for r in rows if r["mode"] == "auto"]
    all_ = [r for r in rows if r["mode"] == "all"]
    speed = [b["wall"] / a["wall"] for a, b in zip(auto, all_)]
    total = lambda r: sum(r["cpu"].values())
    cpu = [total(b) / total(a) for a, b in zip(auto, all_)]
    print("pairs: A/B pages/s " + ", ".join(f"{x:.2f}x" for x in speed)
          + "; B/A CPU " + ", ".join(f"{x:.2f}x" for x in cpu))

    def med(rs, f):
        return statistics.median(f(r) for r in rs)

    for name, rs in (("auto", auto), ("all", all_)):
        n = rs[0]["n"]
        programs = sorted({k for r in rs for k in r["cpu"]})
        per_program = "  ".join(
            f"{k} {med(rs, lambda r: 1000 * r['cpu'].get(k, 0) / n):.1f}" for k in programs)
        print(f"median {name:5} {n / med(rs, lambda r: r['wall']):6.2f} pages/s  "
              f"{med(rs, lambda r: r['wall']):6.1f} s  cpu/page "
              f"{med(rs, lambda r: 1000 * total(r) / n):6.1f} ms ({per_program})  "
              f"peak {med(rs, lambda r: r['peakOneKiB']) / 1024:4.0f} MB "
              f"(tree {med(rs, lambda r: r['peakTreeKiB']) / 1024:4.0f})")
    print(f"median A/B: {statistics.median(speed):.2f}x the pages/s "
          f"({min(speed):.2f}-{max(speed):.2f}), {statistics.median(cpu):.2f}x less CPU")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "run":
        run(*args)
    elif cmd == "same":
        same(*args)
    elif cmd == "pairs":
        pairs(*args)
    else:
        sys.exit(f"report.py: unknown command {cmd!r} (run, same or pairs)")
