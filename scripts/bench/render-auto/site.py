#!/usr/bin/env python3
"""The mixed site of scripts/bench/render-auto: N pages, 80 % server-rendered (half with a
script that adds nothing, half with none), 10 % client-rendered (an empty application root
filled from a JSON endpoint), 10 % half and half (five items in the HTML, five placeholders
a script fills from a JSON endpoint); ten items a page. Writes DIR and prints the page URLs'
paths, one a line, the kinds interleaved as a crawl meets them (of every ten pages, one
client-rendered and one half and half).

Usage: site.py DIR N
"""
import json
import os
import sys

ITEMS = 10


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def items(page, ks):
    return "".join(f'<li class="item">{page} item {k}</li>' for k in ks)


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    app, half = n // 10, n // 10
    static = n - app - half
    paths, static_paths, app_paths, half_paths = [], [], [], []
    for i in range(1, static + 1):
        kind = "articles/article" if i % 2 else "catalog/entry"
        page = f"{kind} {i}"
        script = '<script src="/js/menu.js"></script>' if i % 2 else ""
        body = (f"<!doctype html><title>{page}</title><main><h1>{page}</h1>"
                f"<p>A page the server wrote whole.</p><ul class=\"items\">"
                f"{items(page, range(1, ITEMS + 1))}</ul></main>{script}")
        static_paths.append(f"/{kind}-{i}.html")
        write(root, static_paths[-1][1:], body)
    for i in range(1, app + 1):
        app_paths.append(f"/app/item-{i}.html")
        write(root, app_paths[-1][1:], '<!doctype html><title>App</title><div id="app"></div>'
              '<script src="/js/app.js"></script>')
        page = f"App {i}"
        write(root, f"api/app-{i}.json", json.dumps(
            {"name": page, "items": [f"{page} item {k}" for k in range(1, ITEMS + 1)]}))
    for i in range(1, half + 1):
        page = f"Half {i}"
        slots = '<li class="item placeholder"></li>' * (ITEMS // 2)
        half_paths.append(f"/half/list-{i}.html")
        write(root, half_paths[-1][1:], f"<!doctype html><title>{page}</title><main><h1>{page}</h1>"
              f"<ul class=\"items\">{items(page, range(1, ITEMS // 2 + 1))}{slots}</ul></main>"
              '<script src="/js/half.js"></script>')
        write(root, f"api/half-{i}.json", json.dumps(
            {"items": [f"{page} item {k}" for k in range(ITEMS // 2 + 1, ITEMS + 1)]}))
    write(root, "js/menu.js", "document.title += ' ·';\n")
    write(root, "js/app.js", """(async () => {
  const n = location.pathname.match(/item-(\\d+)/)[1];
  const data = await (await fetch('/api/app-' + n + '.json')).json();
  const main = document.createElement('main');
  main.innerHTML = '<h1></h1><ul class="items"></ul>';
  main.querySelector('h1').textContent = data.name;
  for (const t of data.items) {
    const li = document.createElement('li');
    li.className = 'item'; li.textContent = t;
    main.querySelector('ul').appendChild(li);
  }
  document.getElementById('app').appendChild(main);
})();
""")
    write(root, "js/half.js", """(async () => {
  const n = location.pathname.match(/list-(\\d+)/)[1];
  const data = await (await fetch('/api/half-' + n + '.json')).json();
  const slots = document.querySelectorAll('li.placeholder');
  data.items.forEach((t, i) => { slots[i].textContent = t; slots[i].classList.remove('placeholder'); });
})();
""")
    # Of every ten pages: the 1st client-rendered, the 6th half and half, the rest static.
    for k in range(n):
        kind = app_paths if k % 10 == 0 and app_paths else \
            half_paths if k % 10 == 5 and half_paths else static_paths or app_paths or half_paths
        paths.append(kind.pop(0))
    print("\n".join(paths))


main()
