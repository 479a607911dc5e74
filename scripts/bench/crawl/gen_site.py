#!/usr/bin/env python3
"""Writes the crawl benchmark's static site: a front page, SECTIONS sections of ITEMS item
pages each, paginated listings (50 items a page), and a robots.txt-disallowed /private/
area. Every page is plain HTML, 3-8 KB, with navigation, breadcrumbs, listing or related
links written the ways real sites write them: root-relative, relative with `../`,
absolute, with #fragments, and a few ?utm_ tracking links that repeat an item.

Usage: gen_site.py DIR ORIGIN [SECTIONS] [ITEMS]
ORIGIN (http://127.0.0.1:PORT) is used for the absolute links.
"""
import os
import random
import sys

root, origin = sys.argv[1], sys.argv[2].rstrip("/")
sections = int(sys.argv[3]) if len(sys.argv) > 3 else 20
items = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
per_page = 50
rng = random.Random(7)
words = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud").split()


def para(n):
    return "<p>" + " ".join(rng.choice(words) for _ in range(n)) + ".</p>\n"


def nav():
    links = "".join(f'<li><a href="/s{k}/">Section {k}</a></li>' for k in range(sections))
    return f'<nav aria-label="Main"><ul><li><a href="/">Home</a></li>{links}</ul></nav>\n'


def page(title, body, crumbs=""):
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f'<link rel="stylesheet" href="/style.css"></head><body>\n<header>{nav()}</header>\n'
            f"<main>{crumbs}<h1>{title}</h1>\n{body}</main>\n"
            f'<footer><a href="/about.html">About</a> · <a href="mailto:a@b.example">Mail</a>'
            f' · <a href="https://example.com/">Elsewhere</a></footer>\n'
            f"<script>var x = '<a href=\"/not-a-link.html\">';</script></body></html>\n")


def write(path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


pages_per_section = (items + per_page - 1) // per_page
write("/robots.txt", "User-agent: *\nDisallow: /private/\n")
write("/style.css", "body { font-family: sans-serif }\n")
write("/about.html", page("About", para(80)))
front = "".join(f'<li><a href="s{k}/">Section {k}</a> ({items} items)</li>\n' for k in range(sections))
write("/index.html", page("Front page", f"<ul>{front}</ul>\n{para(120)}"))

for k in range(sections):
    pager = "".join(f'<a href="page-{p}.html">{p}</a> ' for p in range(1, pages_per_section + 1))
    write(f"/s{k}/index.html", page(f"Section {k}", f'<p class="pager">{pager}</p>\n{para(100)}'))
    for p in range(1, pages_per_section + 1):
        rows = []
        for i in range((p - 1) * per_page, min(p * per_page, items)):
            rows.append(f'<tr><td class="name"><a href="item-{i}.html">Item {k}-{i}</a></td>'
                        f"<td>{rng.randint(1, 99)} gp</td><td>{rng.choice(words)}</td></tr>")
        prev = f'<a href="page-{p - 1}.html" rel="prev">Previous</a>' if p > 1 else ""
        nxt = f'<a href="page-{p + 1}.html" rel="next">Next</a>' if p < pages_per_section else ""
        body = (f'<table class="items"><tbody>{"".join(rows)}</tbody></table>\n'
                f'<p class="pager">{prev} {nxt}</p>\n{para(40)}')
        crumbs = f'<p class="crumbs"><a href="./">Section {k}</a></p>'
        write(f"/s{k}/page-{p}.html", page(f"Section {k}, page {p}", body, crumbs))
    for i in range(items):
        related = []
        for _ in range(6):
            k2, i2 = rng.randrange(sections), rng.randrange(items)
            style = rng.randrange(4)
            if style == 0:
                href = f"/s{k2}/item-{i2}.html"
            elif style == 1:
                href = f"../s{k2}/item-{i2}.html#top"
            elif style == 2:
                href = f"{origin}/s{k2}/item-{i2}.html"
            else:
                href = f"/s{k2}/./item-{i2}.html"
            related.append(f'<li><a href="{href}">Item {k2}-{i2}</a></li>')
        if i % 97 == 0:
            related.append(f'<li><a href="item-{i}.html?utm_source=related">this page</a></li>')
        if i % 400 == 0:
            related.append(f'<li><a href="/private/note-{k}-{i}.html">staff note</a></li>')
        listing = i // per_page + 1
        body = (f'<dl><dt>Price</dt><dd>{rng.randint(1, 99)} gp</dd></dl>\n{para(150)}'
                f'<h2 id="related">Related</h2><ul>{"".join(related)}</ul>\n'
                f'<p><a href="item-{(i + 1) % items}.html">Next item</a> · '
                f'<a href="page-{listing}.html#row-{i}">Back to the list</a></p>\n')
        crumbs = f'<p class="crumbs"><a href="/">Home</a> › <a href="./">Section {k}</a></p>'
        write(f"/s{k}/item-{i}.html", page(f"Item {k}-{i}", body, crumbs))
        if i % 400 == 0:
            write(f"/private/note-{k}-{i}.html", page("Staff note", para(30)))
