#!/usr/bin/env python3
"""N synthetic `doc` records of two concepts (item, spell), as rip-parse writes them with
rules.toml beside this script: strings that need quoting, lists, integers, floats,
booleans, nulls, fields missing. Deterministic (seeded). Usage: gen_docs.py N > docs.ndjson"""
import json
import random
import sys

n = int(sys.argv[1])
rnd = random.Random(42)
words = ["rope", "silk", "dragon", "ember", "fall", "é", "ünïcödé", "a,b", 'say "hi"', "line\nbreak"]
out = sys.stdout
for i in range(n):
    if i % 5 == 4:
        doc = {
            "_type": "doc", "url": f"http://bench.test/spells/{i}.html", "concept": "spell",
            "id": str(i), "name": f"Spell {i} " + rnd.choice(words), "depth": 2, "attempt": 0,
            "traits": [rnd.choice(words) for _ in range(rnd.randrange(4))],
            "ranks": [rnd.randrange(10) for _ in range(rnd.randrange(3))],
            "summary": " ".join(rnd.choice(words) for _ in range(rnd.randrange(20, 120))),
        }
    else:
        doc = {
            "_type": "doc", "url": f"http://bench.test/items/item-{i}.html", "concept": "item",
            "id": str(i), "name": f"Item {i} " + rnd.choice(words), "depth": 2, "attempt": 0,
            "httpAttempts": 1, "elapsedMs": rnd.randrange(5, 900),
            "traits": [rnd.choice(words) for _ in range(rnd.randrange(5))],
            "level": rnd.randrange(0, 25), "price": round(rnd.random() * 1000, 2),
            "magic": rnd.random() < 0.3,
            "summary": " ".join(rnd.choice(words) for _ in range(rnd.randrange(20, 200))),
            "stats": f"<dt>weight</dt><dd>{rnd.randrange(10)} {rnd.choice(words)}</dd>",
        }
        if i % 7 == 0:
            doc["price"] = None
        if i % 11 == 0:
            del doc["stats"]
    out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    out.write("\n")
