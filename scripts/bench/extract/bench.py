#!/usr/bin/env python3
"""The extraction benchmark's driver: runs rip-parse and the peers over the corpus pages in
one run, scores them (score.py) on each half of the split (split.py), prints the table and
the worst pages, and writes it all as JSON. See scripts/bench/extract/run."""
import argparse
import json
import os
import resource
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import score  # noqa: E402
import split  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--corpus", required=True)
ap.add_argument("--rip-parse", required=True)
ap.add_argument("--python", default=sys.executable, help="the venv's python, with the peers")
ap.add_argument("--out", required=True, help="folder for the inputs, answers and results")
ap.add_argument("--peers", default="trafilatura,readability")
ap.add_argument("--worst", type=int, default=15)
ap.add_argument("--results", help="an NDJSON file to append the headline figures to")
ap.add_argument(
    "--rescore", action="store_true",
    help="run nothing: score the answers an earlier run left in --out (after a change to score.py)",
)
args = ap.parse_args()

names = sorted(
    n for n in os.listdir(args.corpus) if os.path.isfile(os.path.join(args.corpus, n, "source.html"))
)
tune, held = split.halves(names)
half_of = {n: "tune" for n in tune} | {n: "held" for n in held}
os.makedirs(args.out, exist_ok=True)


def url_of(name):
    # Readability's own tests read each page as http://fakehost/test/page.html; a folder
    # per page keeps the URLs apart.
    return f"http://fakehost/{name}/page.html"


def read(name, file):
    with open(os.path.join(args.corpus, name, file), "rb") as f:
        return f.read().decode("utf-8", errors="replace")


expected = {}
pages_path = os.path.join(args.out, "pages.ndjson")
records_path = os.path.join(args.out, "page-records.ndjson")
for n in names:
    expected[n] = {
        "text": score.html_text(read(n, "expected.html")),
        "meta": json.loads(read(n, "expected-metadata.json")),
    }


def write_inputs():
    """The pages for the peers and, the same pages as `page` records, for rip-parse."""
    with open(pages_path, "w", encoding="utf-8") as pages, open(records_path, "w", encoding="utf-8") as recs:
        for n in names:
            html = read(n, "source.html")
            pages.write(json.dumps({"name": n, "url": url_of(n), "html": html}, ensure_ascii=False) + "\n")
            rec = {
                "_type": "page", "url": url_of(n), "finalUrl": url_of(n), "status": 200,
                "contentType": "text/html; charset=utf-8", "charset": "utf-8", "charsetSource": "header",
                "fetchedAt": "2026-12-01T09:00:00Z", "fromCache": False, "httpAttempts": 1,
                "elapsedMs": 3, "body": html, "truncated": False, "depth": 0, "attempt": 0,
            }
            recs.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")


if not args.rescore:
    write_inputs()


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_rip_parse(markdown):
    """rip-parse's answers by page name, and its process's CPU seconds."""
    out = os.path.join(args.out, "rip-parse-markdown.ndjson" if markdown else "rip-parse.ndjson")
    cmd = [args.rip_parse, "--threads", "1"] + (["--markdown"] if markdown else [])
    cpu_path = out + ".cpu"
    if args.rescore:
        cpu = float(open(cpu_path).read()) if os.path.exists(cpu_path) else None
    else:
        before = child_cpu()
        with open(records_path, "rb") as i, open(out, "wb") as o:
            subprocess.run(cmd, stdin=i, stdout=o, check=False)
        cpu = child_cpu() - before
        with open(cpu_path, "w") as f:
            f.write(f"{cpu}\n")
    by_url = {}
    for line in open(out, encoding="utf-8"):
        r = json.loads(line)
        if r.get("_type") == "doc":
            by_url[r["url"]] = r
    answers = {}
    for n in names:
        d = by_url.get(url_of(n), {})
        a = {k: d.get(k) for k in ("headline", "authors", "published", "siteName", "lang")}
        a["text"] = score.markdown_text(d.get("markdown")) if markdown else d.get("text", "")
        a["contentFrom"] = d.get("contentFrom")
        answers[n] = a
    return answers, cpu


def run_peer(peer):
    out = os.path.join(args.out, f"{peer}.ndjson")
    if not args.rescore:
        # A fixed hash seed: readability-lxml's `short_title` picks among candidates in a
        # set's order, so its headline on a page (mercurial) changed from run to run.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run([args.python, os.path.join(here, "peers.py"), peer, pages_path, out], check=True, env=env)
    answers, cpu = {}, None
    for line in open(out, encoding="utf-8"):
        r = json.loads(line)
        if "cpuSeconds" in r:
            cpu = r["cpuSeconds"]
        else:
            answers[r["name"]] = r
    return answers, cpu


runs = {}
runs["rip-parse"] = run_rip_parse(False)
runs["rip-parse --markdown"] = run_rip_parse(True)
for p in [p for p in args.peers.split(",") if p]:
    runs[p] = run_peer(p)


def scored(answers):
    pages = {}
    for n in names:
        a = answers.get(n, {})
        p, r = score.precision_recall(a.get("text") or "", expected[n]["text"])
        meta = {}
        for key, ours, same in score.METADATA:
            want = expected[n]["meta"].get(key)
            if want:
                meta[key] = same(a.get(ours), want)
        for column, key, ours, same in score.CONTRACT:
            want = expected[n]["meta"].get(key)
            if want:
                meta[column] = same(a.get(ours), want)
        pages[n] = {"p": p, "r": r, "f1": score.f1(p, r), "meta": meta, "half": half_of[n]}
    return pages


COLUMNS = [key for key, _, _ in score.METADATA] + [c for c, _, _, _ in score.CONTRACT]


def summary(pages, which):
    sel = [v for n, v in pages.items() if which in ("all", v["half"])]
    p = sum(v["p"] for v in sel) / len(sel)
    r = sum(v["r"] for v in sel) / len(sel)
    out = {"pages": len(sel), "precision": p, "recall": r, "f1": score.f1(p, r)}
    for key in COLUMNS:
        hits = [v["meta"][key] for v in sel if key in v["meta"]]
        out[key] = {"right": sum(hits), "of": len(hits)}
    return out


report = {"pages": len(names), "tune": tune, "held": held, "extractors": {}}
for name, (answers, cpu) in runs.items():
    pages = scored(answers)
    report["extractors"][name] = {
        "cpuMsPerPage": None if cpu is None else 1000 * cpu / len(names),
        "halves": {w: summary(pages, w) for w in ("tune", "held", "all")},
        "pageScores": {n: {k: v[k] for k in ("p", "r", "f1", "half", "meta")} for n, v in pages.items()},
    }


def pct(m):
    return f"{100 * m['right'] / m['of']:.0f}% ({m['right']}/{m['of']})" if m["of"] else "-"


ANSWER_KEY = {key: ours for key, ours, _ in score.METADATA} | {c: ours for c, _, ours, _ in score.CONTRACT}


def gives(name, column):
    """Whether the extractor gives the column's field on some page (readability-lxml gives
    only a title: its other columns read "–", not 0 %)."""
    return any(a.get(ANSWER_KEY[column]) for a in runs[name][0].values())


def cell(name, s, column, width):
    return f"{pct(s[column]) if gives(name, column) else '–':>{width}}"


print(f"{'extractor':<22} {'half':<5} {'F1':>6} {'P':>6} {'R':>6} {'CPU ms/page':>11}  "
      f"{'headline':>13} {'byline':>12} {'published':>12} {'siteName':>12} {'lang':>12}"
      f"  {'headline (contract)':>20} {'byline (contract)':>18}")
for name, e in report["extractors"].items():
    for w in ("tune", "held", "all"):
        s = e["halves"][w]
        cpu = "" if w != "all" or e["cpuMsPerPage"] is None else f"{e['cpuMsPerPage']:.2f}"
        print(f"{name:<22} {w:<5} {s['f1']:6.3f} {s['precision']:6.3f} {s['recall']:6.3f} {cpu:>11}  "
              + " ".join(cell(name, s, k, 12) for k, _, _ in score.METADATA)
              + "  " + " ".join(cell(name, s, c, 19) for c, _, _, _ in score.CONTRACT))
ours = report["extractors"]["rip-parse"]["pageScores"]
worst = sorted(ours.items(), key=lambda kv: kv[1]["f1"])[: args.worst]
report["worst"] = [{"page": n, **v} for n, v in worst]
print(f"\nrip-parse's {args.worst} worst pages (F1, P, R, half; contentFrom):")
for n, v in worst:
    cf = runs["rip-parse"][0][n].get("contentFrom")
    print(f"  {v['f1']:.3f}  P {v['p']:.3f}  R {v['r']:.3f}  {v['half']:<4}  {n}  {cf or ''}")

print("\nWhere the strict and the contract columns differ (extractor, page, half: expected | ours):")
for name, (answers, _) in runs.items():
    if name.endswith("--markdown"):  # the same docs' metadata as rip-parse's
        continue
    for n, v in report["extractors"][name]["pageScores"].items():
        for column, key, ours, _ in score.CONTRACT:
            if gives(name, column) and column in v["meta"] and v["meta"][column] != v["meta"][key]:
                got = answers.get(n, {}).get(ours)
                print(f"  {name}  {n} ({v['half']}), {column}: {expected[n]['meta'][key]!r} | {got!r}")

with open(os.path.join(args.out, "results.json"), "w") as f:
    json.dump(report, f, indent=1)
if args.results and not args.rescore:
    with open(args.results, "a") as f:
        line = {"bench": "extract", "pages": len(names)}
        line["extractors"] = {
            k: {"cpuMsPerPage": v["cpuMsPerPage"], **{w: v["halves"][w] for w in ("tune", "held")}}
            for k, v in report["extractors"].items()
        }
        f.write(json.dumps(line) + "\n")
print(f"\nwrote {os.path.join(args.out, 'results.json')}", file=sys.stderr)
