#!/usr/bin/env python3
"""Writes the golden streams of testdata/health/ (run it from anywhere; it is deterministic).

Each stream is what a real pipeline of stages would write, simulated record by record so
that every stage's `ledger` and `summary` records are exactly what the stages write:

    discover | rip-fetch | rip-route | rip-fetch | rip-route | rip-parse | rip-write

- aon.ndjson:  the reference's worked example (2e.aonprd.com): the mis-linked
               Classes.aspx?ID=77 "Catfolk", a same-id decoy (Spells.aspx?ID=77), two
               genuinely missing pages and one removed page (410).
- site.ndjson: the demo site's shape (testdata/site): generic docs whose `name` is the
               page title and whose `links` hold the link texts; /classes/77.html → the
               Catfolk ancestry, decoys /spells/77.html and /classes/12.html vs
               /ancestries/12.html; /items/item-99.html genuinely missing; a robots gap.
- lost.ndjson: site.ndjson with one doc lost between rip-parse and rip-write (its line
               dropped, rip-write's counts as it would then have read them).
- unwritten.ndjson: site.ndjson where rip-write could not write one doc.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = "2026-12-01T09:00:00Z"


def rec(kind, **fields):
    return {"_type": kind, **fields}


class Stage:
    def __init__(self, name, pid, fn):
        self.name, self.pid, self.fn = name, pid, fn

    def run(self, lines):
        inp, out, ledger, result = {}, {}, [], []

        def emit(r):
            result.append(r)
            out[r["_type"]] = out.get(r["_type"], 0) + 1

        for r in lines:
            inp[r["_type"]] = inp.get(r["_type"], 0) + 1
            produced = self.fn(r, ledger)
            if produced is None:
                emit(r)  # pass through
            else:
                for p in produced:
                    emit(p)
        if ledger:
            # Flushed early, as rip-core's Pipe does when its input goes idle.
            result.insert(0, rec("ledger", stage=self.name, entered=ledger))
            out["ledger"] = out.get("ledger", 0) + 1
        summary = rec("summary", stage=self.name, pid=self.pid, startedAt=T0,
                      endedAt="2026-12-01T09:00:05Z", input=inp, output=dict(out),
                      badLines=0, status="complete")
        result.append(summary)
        return result


CTX = ("depth", "parent", "linkText")


def ctx(r):
    return {k: r[k] for k in CTX if k in r}


def fetch(plan, pid, round_):
    """plan: url -> list of outcomes per round: ('ok', elapsed) | ('fail', status, code)."""
    def fn(r, ledger):
        if r["_type"] != "ref":
            return None
        if r.get("attempt", 0) == 0 and "resolves" not in r:
            ledger.append(r["url"])
        outcome = plan.get(r["url"], [("ok", 20)])[r.get("attempt", 0)]
        if outcome[0] == "ok":
            return [rec("page", url=r["url"], finalUrl=r["url"], status=200,
                        contentType="text/html", fetchedAt=T0, fromCache=False,
                        httpAttempts=1, elapsedMs=outcome[1], body="<html>…</html>",
                        truncated=False, **ctx(r), attempt=r.get("attempt", 0),
                        **({"errors": r["errors"]} if r.get("errors") else {}))]
        _, status, code = outcome
        cat = "TRANSIENT" if status >= 500 else "PERMANENT"
        err = {"code": code, "message": f"HTTP {status}", "operation": "rip-fetch",
               "attempt": r.get("attempt", 0) + 1}
        return [rec("failure", url=r["url"], status=status, category=cat,
                    retryable=status >= 500, attempt=r.get("attempt", 0) + 1,
                    httpAttempts=3 if status >= 500 else 1, phase="fetch", **ctx(r),
                    errors=r.get("errors", []) + [err], elapsedMs=40)]
    return Stage("rip-fetch", pid, fn)


def route(pid, last, dead=()):
    def fn(r, ledger):
        if r["_type"] != "failure":
            return None
        if r["retryable"] and not last:
            return [rec("ref", url=r["url"], **ctx(r), attempt=r["attempt"],
                        errors=r["errors"])]
        if r["status"] in dead:
            return [rec("expected", url=r["url"], reason="removed upstream", source="policy",
                        rule="410 → expected", phase="fetch", status=r["status"],
                        attempt=r["attempt"], **ctx(r))]
        return [rec("error", url=r["url"], errors=r["errors"], status=r["status"],
                    category=r["category"], phase="fetch", attempt=r["attempt"], **ctx(r),
                    capturedAt="2026-12-01T09:00:04Z")]
    return Stage("rip-route", pid, fn)


def parse(docs, pid):
    def fn(r, ledger):
        if r["_type"] != "page":
            return None
        d = docs[r["url"]]
        doc = rec("doc", url=r["url"], concept=d.get("concept", "unknown"))
        for k in ("id", "name"):
            if k in d:
                doc[k] = d[k]
        doc.update(ctx(r))
        doc["attempt"] = r["attempt"]
        doc["httpAttempts"] = r["httpAttempts"]
        doc["elapsedMs"] = r["elapsedMs"]
        if r.get("errors"):
            doc["errors"] = r["errors"]
        doc.update(d.get("fields", {}))
        return [doc]
    return Stage("rip-parse", pid, fn)


def write_stage(pid, fail=()):
    """rip-write: passes everything on; a record it cannot write is followed by a
    `failure` (RESOURCE, phase write, write.io), as rip-write does."""
    counts = {"written": 0}

    def fn(r, ledger):
        if r["_type"] not in ("doc", "error", "expected"):
            return None
        if r["url"] in fail:
            err = {"code": "write.io", "operation": "rip-write", "attempt": r.get("attempt", 0) + 1,
                   "message": "cannot write out/site/x.json: Permission denied (os error 13)"}
            return [r, rec("failure", url=r["url"], category="RESOURCE", retryable=False,
                           attempt=r.get("attempt", 0) + 1, httpAttempts=0, phase="write",
                           **ctx(r), errors=[err])]
        counts["written"] += 1
        return None
    st = Stage("rip-write", pid, fn)
    orig = st.run

    def run(lines):
        res = orig(lines)
        res[-1]["counters"] = dict(counts)
        if fail:
            res[-1]["status"] = "partial"
        return res
    st.run = run
    return st


def discover(refs, expected, pid=100):
    out = [rec("ref", **r, attempt=0) for r in refs] + expected
    counts = {}
    for r in out:
        counts[r["_type"]] = counts.get(r["_type"], 0) + 1
    return out + [rec("summary", stage="rip-discover", pid=pid, startedAt=T0,
                      endedAt="2026-12-01T09:00:01Z", input={}, output=counts, badLines=0,
                      status="complete", counters={"pages": len(refs)})]


def pipeline(refs, expected, plan, docs, dead=()):
    lines = discover(refs, expected)
    for st in (fetch(plan, 101, 1), route(102, False, dead), fetch(plan, 103, 2),
               route(104, True, dead), parse(docs, 105)):
        lines = st.run(lines)
    return lines


def save(name, lines):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for r in lines:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


def aon():
    o = "https://2e.aonprd.com/"
    refs = [
        dict(url=o + "Ancestries.aspx?ID=77", depth=1, parent=o + "Ancestries.aspx", linkText="Catfolk"),
        dict(url=o + "Classes.aspx?ID=77", depth=2, parent=o + "Ancestries.aspx?ID=77", linkText="Catfolk"),
        dict(url=o + "Spells.aspx?ID=77", depth=1, parent=o + "Spells.aspx", linkText="Gust of Wind"),
        dict(url=o + "Feats.aspx?ID=750", depth=1, parent=o + "Feats.aspx", linkText="Cat Fall"),
        dict(url=o + "Equipment.aspx?ID=3611", depth=1, parent=o + "Equipment.aspx", linkText="Dragonbone Lute"),
        dict(url=o + "Monsters.aspx?ID=3542", depth=1, parent=o + "Monsters.aspx", linkText="Ember Wyrm"),
        dict(url=o + "Ancestries.aspx?ID=9", depth=1, parent=o + "Ancestries.aspx", linkText="Shoony"),
    ]
    plan = {
        o + "Classes.aspx?ID=77": [("fail", 404, "httpError.permanent")],
        o + "Feats.aspx?ID=750": [("fail", 503, "httpError.transient"), ("ok", 95)],
        o + "Equipment.aspx?ID=3611": [("fail", 404, "httpError.permanent")],
        o + "Monsters.aspx?ID=3542": [("fail", 404, "httpError.permanent")],
        o + "Ancestries.aspx?ID=9": [("fail", 410, "httpError.permanent")],
        o + "Ancestries.aspx?ID=77": [("ok", 31)],
        o + "Spells.aspx?ID=77": [("ok", 18)],
    }
    docs = {
        o + "Ancestries.aspx?ID=77": dict(concept="ancestry", id="77", name="Catfolk", fields={"hitPoints": 8}),
        o + "Spells.aspx?ID=77": dict(concept="spell", id="77", name="Gust of Wind", fields={"rank": 1}),
        o + "Feats.aspx?ID=750": dict(concept="feat", id="750", name="Cat Fall", fields={"level": 1}),
    }
    save("aon.ndjson", pipeline(refs, [], plan, docs))


def site():
    o = "http://127.0.0.1:8080"
    refs = [
        dict(url=o + "/", depth=0),
        dict(url=o + "/classes/", depth=1, parent=o + "/", linkText="Classes"),
        dict(url=o + "/ancestries/", depth=1, parent=o + "/", linkText="Ancestries"),
        dict(url=o + "/blog/patch-notes-2-1.html", depth=1, parent=o + "/", linkText="Compendium Update 2.1"),
        dict(url=o + "/classes/12.html", depth=2, parent=o + "/classes/", linkText="Wizard"),
        dict(url=o + "/classes/77.html", depth=2, parent=o + "/classes/", linkText="Catfolk"),
        dict(url=o + "/ancestries/12.html", depth=2, parent=o + "/ancestries/", linkText="Dwarf"),
        dict(url=o + "/ancestries/77.html", depth=2, parent=o + "/ancestries/", linkText="Catfolk"),
        dict(url=o + "/spells/77.html", depth=2, parent=o + "/blog/spell-roundup.html", linkText="Gust of Wind"),
        dict(url=o + "/items/item-7.html", depth=2, parent=o + "/items/", linkText="Bag of Holding"),
        dict(url=o + "/items/item-99.html", depth=2, parent=o + "/blog/patch-notes-2-1.html", linkText="Dragonbone Lute"),
    ]
    expected = [rec("expected", url=o + "/private/secret.html", reason="disallowed by robots.txt",
                    source="robots", rule="Disallow: /private/", phase="discover", attempt=0,
                    depth=2, parent=o + "/blog/behind-the-scenes.html", linkText="the secret page")]
    plan = {
        o + "/classes/77.html": [("fail", 404, "httpError.permanent")],
        o + "/items/item-99.html": [("fail", 404, "httpError.permanent")],
        o + "/items/item-7.html": [("fail", 503, "httpError.transient"), ("ok", 140)],
        o + "/": [("ok", 12)], o + "/classes/": [("ok", 15)], o + "/ancestries/": [("ok", 14)],
        o + "/blog/patch-notes-2-1.html": [("ok", 22)], o + "/classes/12.html": [("ok", 9)],
        o + "/ancestries/12.html": [("ok", 11)], o + "/ancestries/77.html": [("ok", 10)],
        o + "/spells/77.html": [("ok", 13)],
    }
    site_name = " | Emberfall Compendium"

    def generic(title, links=()):
        fields = {"lang": "en"}
        if links:
            fields["links"] = [{"href": o + h, "text": t} for h, t in links]
        return dict(concept="unknown", name=title + site_name, fields=fields)

    docs = {
        o + "/": generic("Emberfall Compendium", [("/classes/", "Classes"), ("/ancestries/", "Ancestries")])
        | {"name": "Emberfall Compendium"},
        o + "/classes/": generic("Classes", [("/classes/12.html", "Wizard"), ("/classes/77.html", "Catfolk"),
                                             ("/ancestries/12.html", "Dwarf")]),
        o + "/ancestries/": generic("Ancestries", [("/ancestries/12.html", "Dwarf"), ("/ancestries/77.html", "Catfolk")]),
        o + "/blog/patch-notes-2-1.html": generic("Compendium Update 2.1 | Blog",
                                                  [("/items/item-99.html", "Dragonbone Lute")]),
        o + "/classes/12.html": generic("Wizard | Classes"),
        o + "/ancestries/12.html": generic("Dwarf | Ancestries"),
        o + "/ancestries/77.html": generic("Catfolk | Ancestries"),
        o + "/spells/77.html": generic("Gust of Wind | Spells"),
        o + "/items/item-7.html": generic("Bag of Holding | Items"),
    }
    lines = pipeline(refs, expected, plan, docs)
    save("site.ndjson", write_stage(106).run(lines))

    # The same pipeline, with one doc lost between rip-parse and rip-write.
    lost = [r for r in lines if not (r["_type"] == "doc" and r["url"] == o + "/ancestries/12.html")]
    save("lost.ndjson", write_stage(106).run(lost))

    # rip-write could not write one doc (read-only folder): the stream still accounts
    # for it, followed by rip-write's `failure` annotation.
    save("unwritten.ndjson", write_stage(106, fail={o + "/spells/77.html"}).run(lines))


if __name__ == "__main__":
    aon()
    site()
