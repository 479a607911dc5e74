#!/usr/bin/env python3
"""Re-derive the expected crawl numbers of the bundled demo site (testdata/site/).

Standard library only. Walks the files on disk the way a correct crawler walks the
served site, starting at "/":

  * follows <a href> only (not <img src>, <link href>, <form action>);
  * resolves every href against the document's <base href> when it has one
    (itself resolved against the document URL), else against the document URL;
  * normalises: lower-case scheme and host, remove dot segments, drop the fragment,
    drop utm_* query parameters (and the "?" if nothing is left);
  * never leaves the origin (mailto:, https://example.com/ are skipped);
  * honours robots.txt (Disallow: /private/ for User-agent: *);
  * a URL that is a directory ("/items/") is served from its index.html;
  * a URL with no file behind it is a broken link (the server answers 404).

The origin is the literal placeholder http://SITE_ORIGIN, which the test server replaces
with its real origin in .html/.txt/.xml files. Root-relative links need no substitution.

Usage:
  python3 check_site.py           # print the report
  python3 check_site.py --check   # also compare with EXPECTED below; exit 1 on mismatch
"""

from __future__ import annotations

import os
import re
import sys
import xml.etree.ElementTree as ET
from collections import deque
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

SITE_DIR = os.path.dirname(os.path.abspath(__file__))
ORIGIN = "http://SITE_ORIGIN"
START = ORIGIN + "/"
NON_UTF8_PAGES = {"/blog/a-night-at-the-cafe.html"}  # windows-1252 on purpose

# --------------------------------------------------------------------------- expected
# The numbers the README promises. `--check` fails if the site drifts from them.
EXPECTED = {
    # HTML pages reached from "/" via <a href>, robots honoured, rel=nofollow NOT followed.
    "reached_html": [
        "/",
        "/about.html",
        "/ancestries/",
        "/ancestries/12.html",
        "/ancestries/15.html",
        "/ancestries/23.html",
        "/ancestries/31.html",
        "/ancestries/44.html",
        "/ancestries/58.html",
        "/ancestries/63.html",
        "/ancestries/77.html",
        "/blog/",
        "/blog/a-night-at-the-cafe.html",
        "/blog/behind-the-scenes.html",
        "/blog/choosing-an-ancestry.html",
        "/blog/patch-notes-2-1.html",
        "/blog/spell-roundup.html",
        "/blog/welcome-to-the-compendium.html",
        "/classes/",
        "/classes/12.html",
        "/classes/14.html",
        "/classes/20.html",
        "/classes/26.html",
        "/classes/3.html",
        "/classes/5.html",
        "/classes/7.html",
        "/classes/9.html",
        "/items/",
        "/items/item-1.html",
        "/items/item-10.html",
        "/items/item-11.html",
        "/items/item-12.html",
        "/items/item-2.html",
        "/items/item-3.html",
        "/items/item-4.html",
        "/items/item-5.html",
        "/items/item-6.html",
        "/items/item-7.html",
        "/items/item-8.html",
        "/items/item-9.html",
        "/spells/",
        "/spells/102.html",
        "/spells/19.html",
        "/spells/33.html",
        "/spells/41.html",
        "/spells/77.html",
        "/spells/8.html",
    ],
    "nofollow_only": ["/login.html"],
    "sitemap_only": ["/orphan.html"],
    "resources": ["/images/logo.png"],
    "broken": {
        "/classes/77.html": {"from": ["/classes/"], "texts": ["Catfolk"]},
        "/items/item-99.html": {"from": ["/blog/patch-notes-2-1.html"], "texts": ["Dragonbone Lute"]},
    },
    "disallowed": ["/private/secret.html"],
    # HTML files never fetched by any correct crawl (A-D): secret.html is linked but
    # disallowed; only-linked-here.html is only linked from secret.html, so never discovered.
    "never_reached": ["/private/only-linked-here.html", "/private/secret.html"],
    "sitemap_count": 12,
    "html_files": 51,
    "max_depth": 2,
    # Crawl A but ignoring <base href> (a bug to catch): the relative links of
    # /blog/spell-roundup.html then resolve under /blog/ and 404. The page set is unchanged
    # (the spells are also linked from /spells/), so only the broken count gives it away.
    "extra_broken_if_base_ignored": [
        "/blog/102.html", "/blog/19.html", "/blog/33.html",
        "/blog/41.html", "/blog/77.html", "/blog/8.html",
    ],
}

# --------------------------------------------------------------------------- parsing


class PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.links: list[tuple[str, set[str], str]] = []  # (href, rel tokens, text)
        self.other_refs: list[tuple[str, str]] = []  # (tag.attr, url) not followed
        self.tags: dict[str, int] = {}
        self.meta: dict[str, str] = {}
        self.canonical: str | None = None
        self.lang: str | None = None
        self.title = ""
        self._in_title = False
        self._a: list[object] | None = None  # [href, rel, text parts]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == "html":
            self.lang = a.get("lang")
        elif tag == "base" and self.base is None and a.get("href") is not None:
            self.base = a["href"]
        elif tag == "title":
            self._in_title = True
        elif tag == "meta" and a.get("name"):
            self.meta[a["name"].lower()] = a.get("content") or ""
        elif tag == "link":
            rel = set((a.get("rel") or "").lower().split())
            if "canonical" in rel:
                self.canonical = a.get("href")
            elif a.get("href"):
                self.other_refs.append(("link.href", a["href"]))
        elif tag == "img" and a.get("src"):
            self.other_refs.append(("img.src", a["src"]))
        elif tag == "form" and a.get("action"):
            self.other_refs.append(("form.action", a["action"]))
        elif tag == "a" and a.get("href") is not None:
            self._a = [a["href"], set((a.get("rel") or "").lower().split()), []]

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "a" and self._a is not None:
            href, rel, parts = self._a
            self.links.append((href, rel, " ".join("".join(parts).split())))
            self._a = None

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._a is not None:
            self._a[2].append(data)


def sniff_charset(raw: bytes) -> str:
    m = re.search(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_-]+)", raw[:1024], re.I)
    return m.group(1).decode("ascii").lower() if m else "utf-8"


def decode(raw: bytes) -> tuple[str, str]:
    cs = sniff_charset(raw)
    # WHATWG: the labels iso-8859-1/latin1/windows-1252 all mean windows-1252.
    py = "cp1252" if cs in ("windows-1252", "iso-8859-1", "latin1") else cs
    return raw.decode(py), cs


# --------------------------------------------------------------------------- URLs


def remove_dot_segments(path: str) -> str:
    out: list[str] = []
    segs = path.split("/")
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    res = "/".join(out)
    return res if res.startswith("/") else "/" + res


def normalise(url: str) -> str:
    p = urlsplit(url)
    scheme, host = p.scheme.lower(), p.netloc.lower()
    path = remove_dot_segments(p.path or "/") if scheme in ("http", "https") else p.path
    query = [(k, v) for k, v in parse_qsl(p.query, keep_blank_values=True) if not k.lower().startswith("utm_")]
    return urlunsplit((scheme, host, path, urlencode(query), ""))


def resolve(doc_url: str, base: str | None, href: str) -> str:
    base_url = urljoin(doc_url, base) if base is not None else doc_url
    return urljoin(base_url, href)


def path_of(url: str) -> str:
    p = urlsplit(url)
    return p.path + ("?" + p.query if p.query else "")


def file_for(path: str) -> str | None:
    rel = path.split("?", 1)[0].lstrip("/")
    full = os.path.join(SITE_DIR, rel)
    if path.endswith("/"):
        full = os.path.join(full, "index.html")
    return full if os.path.isfile(full) else None


def load_robots() -> list[str]:
    disallow, applies = [], False
    with open(os.path.join(SITE_DIR, "robots.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if ":" not in line:
                continue
            k, v = (x.strip() for x in line.split(":", 1))
            if k.lower() == "user-agent":
                applies = v == "*"
            elif k.lower() == "disallow" and applies and v:
                disallow.append(v)
    return disallow


def load_sitemap() -> list[str]:
    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    root = ET.parse(os.path.join(SITE_DIR, "sitemap.xml")).getroot()
    return [loc.text.strip() for loc in root.findall("sm:url/sm:loc", ns)]


# --------------------------------------------------------------------------- crawl

_parsed: dict[str, PageParser] = {}


def parse_file(full: str) -> PageParser:
    if full not in _parsed:
        with open(full, "rb") as f:
            text, _ = decode(f.read())
        pp = PageParser()
        pp.feed(text)
        pp.close()
        _parsed[full] = pp
    return _parsed[full]


def is_html(full: str) -> bool:
    return full.endswith(".html")


def crawl(seeds: list[str], follow_nofollow: bool, disallow: list[str], ignore_base: bool = False):
    html: dict[str, int] = {}  # path -> depth
    resources: dict[str, int] = {}
    broken: dict[str, dict[str, list[str]]] = {}
    disallowed: dict[str, list[str]] = {}
    skipped: dict[str, list[str]] = {}  # external / non-http -> referrers
    nofollow_skipped: dict[str, list[str]] = {}
    raw_urls: set[str] = set()  # distinct URLs if utm_* were NOT stripped
    queue = deque()
    seen: set[str] = set()
    for s in seeds:
        n = normalise(s)
        if n not in seen:
            seen.add(n)
            queue.append((n, 0))
    while queue:
        url, depth = queue.popleft()
        path = path_of(url)
        full = file_for(path)
        if full is None:
            continue  # broken; recorded when the link was seen
        if not is_html(full):
            resources[path] = depth
            continue
        html[path] = depth
        pp = parse_file(full)
        for href, rel, text in pp.links:
            absu = resolve(url, None if ignore_base else pp.base, href)
            n = normalise(absu)
            p = urlsplit(n)
            if p.scheme not in ("http", "https") or f"{p.scheme}://{p.netloc}" != ORIGIN.lower():
                skipped.setdefault(n, []).append(path)
                continue
            tpath = path_of(n)
            if tpath == path:
                continue  # same-page link (e.g. "#comments")
            raw = urlsplit(absu)
            raw_urls.add(urlunsplit(("http", "site_origin", remove_dot_segments(raw.path), raw.query, "")))
            if "nofollow" in rel and not follow_nofollow:
                nofollow_skipped.setdefault(tpath, []).append(path)
                continue
            if any(tpath.startswith(d) for d in disallow):
                disallowed.setdefault(tpath, []).append(path)
                continue
            if file_for(tpath) is None:
                b = broken.setdefault(tpath, {"from": [], "texts": []})
                if path not in b["from"]:
                    b["from"].append(path)
                if text not in b["texts"]:
                    b["texts"].append(text)
            if n not in seen:
                seen.add(n)
                queue.append((n, depth + 1))
    # a nofollow target that is also linked normally is not "nofollow-only"
    nofollow_skipped = {k: v for k, v in nofollow_skipped.items() if k not in html and k not in resources}
    return dict(html=html, resources=resources, broken=broken, disallowed=disallowed,
                skipped=skipped, nofollow_skipped=nofollow_skipped, raw_urls=raw_urls)


# --------------------------------------------------------------------------- page checks


def all_html_files() -> list[str]:
    out = []
    for dp, _dn, fn in os.walk(SITE_DIR):
        for f in fn:
            if f.endswith(".html"):
                rel = "/" + os.path.relpath(os.path.join(dp, f), SITE_DIR).replace(os.sep, "/")
                out.append(rel[: -len("index.html")] if rel.endswith("/index.html") else rel)
    return sorted(out)


def structure_problems() -> list[str]:
    problems = []
    for path in all_html_files():
        full = file_for(path)
        with open(full, "rb") as f:
            raw = f.read()
        _, cs = decode(raw)
        try:
            raw.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        if path in NON_UTF8_PAGES:
            if utf8 or cs != "windows-1252":
                problems.append(f"{path}: must be windows-1252 bytes (not valid UTF-8) declared by <meta charset>")
        elif not utf8 or cs != "utf-8":
            problems.append(f"{path}: must be UTF-8 and declare it")
        pp = parse_file(full)
        url = ORIGIN + path
        if pp.lang != "en":
            problems.append(f"{path}: <html lang> is {pp.lang!r}")
        if not pp.title.strip():
            problems.append(f"{path}: empty <title>")
        for m in ("description", "keywords"):
            if not pp.meta.get(m):
                problems.append(f"{path}: no <meta name={m}>")
        if pp.canonical is None or normalise(resolve(url, pp.base, pp.canonical)) != normalise(url):
            problems.append(f"{path}: canonical {pp.canonical!r} does not resolve to {url}")
        for tag, want in (("nav", 1), ("main", 1), ("footer", 1), ("h1", 1)):
            if pp.tags.get(tag, 0) != want:
                problems.append(f"{path}: {pp.tags.get(tag, 0)} <{tag}> (want {want})")
        for tag in ("h2", "h3"):
            if not pp.tags.get(tag):
                problems.append(f"{path}: no <{tag}>")
    return problems


# --------------------------------------------------------------------------- report


def main() -> int:
    check = "--check" in sys.argv[1:]
    disallow = load_robots()
    sitemap = load_sitemap()
    sitemap_paths = [path_of(normalise(u)) for u in sitemap]

    base = crawl([START], follow_nofollow=False, disallow=disallow)
    nf = crawl([START], follow_nofollow=True, disallow=disallow)
    sm = crawl([START, *sitemap], follow_nofollow=False, disallow=disallow)
    both = crawl([START, *sitemap], follow_nofollow=True, disallow=disallow)
    norobots = crawl([START], follow_nofollow=False, disallow=[])
    nobase = crawl([START], follow_nofollow=False, disallow=disallow, ignore_base=True)

    files = all_html_files()
    reached = sorted(base["html"])
    nofollow_only = sorted(set(nf["html"]) - set(base["html"]))
    sitemap_only = sorted(set(sm["html"]) - set(base["html"]))
    never_any = sorted(set(files) - set(both["html"]))

    print(f"robots.txt Disallow (User-agent: *): {disallow}")
    print(f"HTML files on disk: {len(files)}")
    print()
    print(f"A. HTML pages reached from / (robots honoured, nofollow NOT followed, no sitemap): {len(reached)}")
    for p in sorted(reached, key=lambda p: (base['html'][p], p)):
        print(f"   depth {base['html'][p]}  {p}")
    print(f"B. ... following rel=nofollow too: {len(nf['html'])}  (+{nofollow_only})")
    print(f"C. ... seeding the sitemap too (nofollow NOT followed): {len(sm['html'])}  (+{sitemap_only})")
    print(f"D. ... sitemap + nofollow: {len(both['html'])}")
    print(f"   ignoring robots.txt (for contrast): {len(norobots['html'])}  "
          f"(+{sorted(set(norobots['html']) - set(base['html']))})")
    print(f"HTML files a correct crawler never reaches (A-D): {never_any}")
    extra_nobase = sorted(set(nobase["broken"]) - set(base["broken"]))
    print(f"   ignoring <base href> (a bug): {len(nobase['html'])} pages, "
          f"{len(nobase['broken'])} broken links (+{extra_nobase})")
    print()
    print(f"Non-HTML resources reached via <a href>: {sorted(base['resources'])}")
    print(f"Broken links (404): {len(base['broken'])}")
    for p, info in sorted(base["broken"].items()):
        print(f"   {p}  linked from {info['from']} with text {info['texts']}")
    print(f"Disallowed by robots (linked, not fetched): {base['disallowed']}")
    print(f"Skipped, off-origin or not http: {sorted(base['skipped'])}")
    print(f"Skipped, rel=nofollow only: {base['nofollow_skipped']}")
    fetched = len(base["html"]) + len(base["resources"]) + len(base["broken"])
    print(f"URLs fetched by crawl A (pages + resources + 404s, excluding robots.txt): {fetched}")
    extra_raw = len(base["raw_urls"]) - len({path_of(normalise(u)) for u in base["raw_urls"]})
    print(f"Extra distinct URLs if utm_* parameters were NOT stripped: {extra_raw}")
    print()
    print(f"Sitemap: {len(sitemap)} URLs, {len(set(sitemap_paths) - set(base['html']))} not reachable by links: "
          f"{sorted(set(sitemap_paths) - set(base['html']))}")
    missing_sm = [p for p in sitemap_paths if file_for(p) is None]
    if missing_sm:
        print(f"   sitemap entries with no file: {missing_sm}")
    problems = structure_problems()
    print(f"Per-page structure problems: {len(problems)}")
    for pr in problems:
        print("   " + pr)

    if not check:
        return 0
    got = {
        "reached_html": reached,
        "nofollow_only": nofollow_only,
        "sitemap_only": sitemap_only,
        "resources": sorted(base["resources"]),
        "broken": {k: v for k, v in sorted(base["broken"].items())},
        "disallowed": sorted(base["disallowed"]),
        "never_reached": never_any,
        "sitemap_count": len(sitemap),
        "html_files": len(files),
        "max_depth": max(base["html"].values()),
        "extra_broken_if_base_ignored": extra_nobase,
    }
    bad = [k for k in EXPECTED if got[k] != (sorted(EXPECTED[k]) if isinstance(EXPECTED[k], list) else EXPECTED[k])]
    if missing_sm:
        bad.append("sitemap entries without files")
    if problems:
        bad.append("page structure")
    print()
    if bad:
        for k in bad:
            print(f"MISMATCH {k}: got {got.get(k)!r}, expected {EXPECTED.get(k)!r}")
        return 1
    print("OK: site matches EXPECTED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
