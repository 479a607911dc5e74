"""The bench's site: N pages built by script, sharing a 300 KB bundle.

Each page /p/<i>.html is an empty shell: a <ul class=items> that /bundle.js fills from
/api/<i>.json (ten items, "item <i>-<k> <price>"). The bundle is ~300 KB of generated
library code (as a real site's framework bundle) ending in the page's own code. A page is
complete when its list holds its ten items (check.py).

Usage: python3 site.py DIR N
"""
import json
import os
import sys

root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(f"{root}/p", exist_ok=True)
os.makedirs(f"{root}/api", exist_ok=True)

# A library of small functions, about as dense as a minified framework: parsed by every page.
lib = ["var lib = {};"]
k = 0
while sum(len(x) for x in lib) < 300_000:
    lib.append(
        f"lib.f{k} = function (a, b) {{ var s = 0; for (var i = 0; i < a.length; i++) "
        f"{{ s += a.charCodeAt(i) * {k % 97 + 1} + (b || 0); }} return s.toString(36) + '{k:05x}'; }};"
    )
    k += 1
app = (
    "fetch('/api/' + document.body.dataset.id + '.json').then(r => r.json()).then(d => {"
    " const ul = document.querySelector('ul.items');"
    " for (const it of d.items) { const li = document.createElement('li');"
    " li.textContent = it.name + ' ' + it.price + ' ' + lib.f1(it.name).length; ul.appendChild(li); } });"
)
with open(f"{root}/bundle.js", "w") as f:
    f.write("\n".join(lib) + "\n" + app + "\n")
for i in range(n):
    with open(f"{root}/p/{i}.html", "w") as f:
        f.write(
            f"<!doctype html><html><head><meta charset=utf-8><title>Page {i}</title>"
            f"<script src=/bundle.js defer></script></head><body data-id={i}><main><h1>Page {i}</h1>"
            f"<ul class=items></ul><img src=/p/{i}.png></main></body></html>"
        )
    with open(f"{root}/api/{i}.json", "w") as f:
        json.dump({"items": [{"name": f"item {i}-{k}", "price": k * 3} for k in range(10)]}, f)
