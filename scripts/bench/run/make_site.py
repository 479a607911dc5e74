#!/usr/bin/env python3
"""A static site of N pages for scripts/bench/run: /index.html links to N/100 section
pages (/s/K.html), each listing 100 pages (/p/K/I.html, 2-8 KB of text); every page
links back to its section and to three other pages. Every page is reachable from /
within depth 2, so a breadth-first crawl of / with no limit captures exactly
1 + N/100 + N pages. Usage: make_site.py DIR N"""
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
sections = (n + 99) // 100
para = ("<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod "
        "tempor incididunt ut labore et dolore magna aliqua.</p>\n")


def page(title, body):
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>"
            f"</head><body><main><h1>{title}</h1>\n{body}</main></body></html>\n")


os.makedirs(os.path.join(root, "s"), exist_ok=True)
with open(os.path.join(root, "index.html"), "w") as f:
    f.write(page("Bench site", "".join(f'<a href="/s/{k}.html">Section {k}</a>\n'
                                        for k in range(sections))))
for k in range(sections):
    ids = range(k * 100, min(n, k * 100 + 100))
    with open(os.path.join(root, "s", f"{k}.html"), "w") as f:
        f.write(page(f"Section {k}", "".join(f'<a href="/p/{k}/{i}.html">Page {i}</a>\n'
                                              for i in ids)))
    os.makedirs(os.path.join(root, "p", str(k)), exist_ok=True)
    for i in ids:
        links = "".join(f'<a href="/p/{j // 100}/{j}.html">page {j}</a>\n'
                        for j in ((i + 1) % n, (i + 7) % n, (i * 31 + 5) % n))
        with open(os.path.join(root, "p", str(k), f"{i}.html"), "w") as f:
            f.write(page(f"Page {i}", f'<a href="/s/{k}.html">up</a>\n{links}'
                         + para * (15 + i % 45)))
print(1 + sections + n)
