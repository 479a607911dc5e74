#!/usr/bin/env python3
"""The reference walk: a plain breadth-first `<a href>` walk of the benchmark site, read
from disk (no HTTP), with Python's HTML parser. It defines which pages a crawler must find:
every HTML page reachable from the front page through `<a href>` links on the same origin,
with `<base href>` honoured, fragments and utm_* parameters dropped, dot segments removed,
robots.txt's Disallow prefixes skipped.

Usage: walk.py SITE_DIR ORIGIN > pages.txt   (one path per line)
Also importable: normalise(url) is the comparison key used for every tool's output.
"""
import collections
import html.parser
import os
import posixpath
import sys
import urllib.parse


def normalise(url, origin=None):
    """Path (with query) of a URL on the origin, canonicalised; None when off-origin."""
    u = urllib.parse.urlsplit(url.strip())
    if u.scheme.lower() not in ("http", "https"):
        return None
    if origin is not None:
        o = urllib.parse.urlsplit(origin)
        if u.netloc.lower() != o.netloc.lower():
            return None
    path = u.path or "/"
    trailing = path.endswith("/")
    path = posixpath.normpath(path)
    if path == ".":
        path = "/"
    if trailing and not path.endswith("/"):
        path += "/"
    path = path.replace("//", "/")
    query = "&".join(p for p in u.query.split("&") if p and not p.startswith("utm_"))
    return path + ("?" + query if query else "")


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base = None
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base" and self.base is None and a.get("href"):
            self.base = a["href"]
        elif tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])


def walk(site, origin):
    disallow = []
    robots = os.path.join(site, "robots.txt")
    if os.path.exists(robots):
        for line in open(robots):
            k, _, v = line.partition(":")
            if k.strip().lower() == "disallow" and v.strip():
                disallow.append(v.strip())
    origin = origin.rstrip("/")
    seen = {"/"}
    queue = collections.deque(["/"])
    pages = []
    while queue:
        path = queue.popleft()
        file = os.path.join(site, path.split("?")[0].lstrip("/"))
        if file.endswith("/") or os.path.isdir(file):
            file = os.path.join(file, "index.html")
        if not os.path.isfile(file) or not file.endswith(".html"):
            continue
        pages.append(path)
        parser = Links()
        parser.feed(open(file, encoding="utf-8", errors="replace").read())
        page_url = origin + path
        base = urllib.parse.urljoin(page_url, parser.base) if parser.base else page_url
        for href in parser.hrefs:
            key = normalise(urllib.parse.urljoin(base, href), origin)
            if key is None or key in seen or any(key.startswith(d) for d in disallow):
                continue
            seen.add(key)
            queue.append(key)
    return pages


if __name__ == "__main__":
    for p in walk(sys.argv[1], sys.argv[2]):
        print(p)
