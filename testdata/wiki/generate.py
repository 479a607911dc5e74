#!/usr/bin/env python3
"""Generates the Emberfall Wiki test dump: testdata/wiki/emberfall-wiki.xml and manifest.json.

A MediaWiki XML export (format 0.11) of a few hundred pages about the invented tabletop game
of the demo site (testdata/site): creatures, items, places, classes and ancestries with
infobox templates (the Template: pages themselves are in the dump), templates nested in
infobox parameters, sections and subsections, categories (some with sort keys), redirects,
references (named and reused), comments, tables, external links, pages with an old revision,
and titles with awkward characters (`&`, `+`, `%`, `'`, `/`, non-ASCII).

Deterministic: the same script writes the same bytes. `scripts/mediawiki` imports the dump
into a real MediaWiki; `manifest.json` lists what a correct client must find (all page
titles of the main namespace, redirects and their targets, each category's members, the page
tests delete). Usage:

    python3 testdata/wiki/generate.py           # rewrite the dump and manifest
    python3 testdata/wiki/generate.py --check   # exit 1 if the committed files differ
"""

import hashlib
import json
import random
import sys
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
DUMP = HERE / "emberfall-wiki.xml"
MANIFEST = HERE / "manifest.json"

rng = random.Random(20261201)

NS_MAIN, NS_TEMPLATE, NS_CATEGORY = 0, 10, 14
BASE_TS = 1_767_225_600  # 2026-01-01T00:00:00Z


def timestamp(i):
    import datetime

    t = datetime.datetime.fromtimestamp(BASE_TS + i * 3600, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------

SYL_A = ["Ash", "Ember", "Cinder", "Gloam", "Frost", "Thorn", "Mire", "Dusk", "Iron", "Salt",
         "Bramble", "Hollow", "Storm", "Bone", "Moss", "Glass", "Umber", "Velvet", "Rust", "Pale"]
CREATURE_B = ["Drake", "Wyrm", "Hound", "Stalker", "Wraith", "Golem", "Moth", "Serpent", "Toad",
              "Lurker", "Shade", "Howler", "Beetle", "Owl", "Treant", "Basilisk"]
ITEM_B = ["Blade", "Lantern", "Amulet", "Cloak", "Helm", "Bow", "Ring", "Tome", "Gauntlet",
          "Staff", "Shield", "Flask", "Compass", "Crown", "Key"]
PLACE_B = ["Hold", "Reach", "Marsh", "Spire", "Vale", "Crossing", "Deep", "Wastes", "Harbor",
           "Barrow", "Fen", "Citadel"]

CREATURE_TYPES = {"Wyrm": "Dragons", "Drake": "Dragons", "Basilisk": "Dragons",
                  "Wraith": "Undead", "Shade": "Undead", "Howler": "Undead",
                  "Golem": "Constructs", "Lantern": "Constructs",
                  "Moth": "Spirits", "Owl": "Spirits", "Treant": "Spirits"}
REGIONS = ["Northern Marches", "Cinder Coast", "Gloamwood", "Saltflats"]
RARITIES = ["Common", "Uncommon", "Rare", "Legendary"]


def unique_names(count, first, second):
    names = []
    seen = set()
    while len(names) < count:
        n = f"{rng.choice(first)} {rng.choice(second)}"
        if n not in seen:
            seen.add(n)
            names.append(n)
    return names


CREATURES = unique_names(118, SYL_A, CREATURE_B) + ["Æther Wisp", "Ka'Rath the Undying"]
ITEMS = unique_names(96, SYL_A, ITEM_B) + ["+1 Dagger", "100% Pure Ember", "Sword of Ash/Reforged",
                                           "Salt & Pepper Pouch"]
PLACES = unique_names(57, SYL_A, PLACE_B) + ["Café of Lanterns", "Q&A Tavern", "Mount Ḱelvar"]
CLASSES = ["Warden", "Pyromancer", "Lamplighter", "Duelist", "Grave Singer", "Tinker",
           "Wayfarer", "Oathkeeper"]
ANCESTRIES = ["Emberkin", "Saltborn", "Mossfolk", "Glasswright", "Hollowed", "Stormcallers"]

# The page tests delete between enumeration and fetch.
DOOMED = "Vanishing Wisp"
CREATURES.append(DOOMED)

BOOKS = [("Emberfall Core Rules", 2019), ("Emberfall Bestiary", 2020),
         ("Tides of Cinder", 2021), ("The Gloamwood Gazetteer", 2022)]


def ref_book():
    title, year = rng.choice(BOOKS)
    return f"{{{{Cite book |title={title} |page={rng.randint(3, 320)} |year={year}}}}}"


def link(target, label=None):
    return f"[[{target}|{label}]]" if label else f"[[{target}]]"


def number_text(n):
    """A number as an editor would type it: sometimes with a thousands comma."""
    if n >= 1000 and rng.random() < 0.6:
        return f"{n:,}"
    return str(n)


def prose(subject, others, sentences=3):
    verbs = ["is often seen near", "was first described alongside", "is feared by travellers of",
             "trades rumours with", "is sometimes mistaken for", "is said to guard"]
    out = []
    for _ in range(sentences):
        other = rng.choice(others)
        style = rng.random()
        target = link(other) if style < 0.5 else link(other, other.lower())
        s = f"The {subject} {rng.choice(verbs)} {target}"
        if rng.random() < 0.3:
            s += f", an ''old'' and '''dangerous''' acquaintance"
        out.append(s + ".")
    return " ".join(out)


# --------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------

pages = []  # dicts: title, ns, revisions [text,...], redirect (target or None)


def add(title, text, ns=NS_MAIN, old=None, redirect=None):
    revs = [old, text] if old is not None else [text]
    pages.append({"title": title, "ns": ns, "revisions": revs, "redirect": redirect})


def singular(category):
    return category[:-1] if category.endswith("s") else category


def creature_page(name, i):
    kind = name.split()[-1]
    cat = CREATURE_TYPES.get(kind, "Beasts")
    habitats = rng.sample(PLACES, 2)
    hp = rng.choice([rng.randint(8, 90), rng.randint(100, 4000)])
    challenge = rng.randint(1, 20)
    speed = rng.choice([20, 30, 40, 60])
    named_ref = "bestiary"
    lines = ["{{Infobox creature",
             f"| name        = {name}",
             f"| image       = {name}.png",
             f"| caption     = A '''{name}''' at rest<ref name=\"{named_ref}\"/>",
             f"| type        = [[{cat}|{singular(cat)}]]",
             f"| habitat     = [[{habitats[0]}]], [[{habitats[1]}]]",
             f"| size        = {rng.choice(['Tiny', 'Small', 'Medium', 'Large', 'Huge'])}"]
    if i % 3 == 0:
        lines.append(f"| hit_points  = {{{{Nowrap|{number_text(hp)}}}}}")
    else:
        lines.append(f"| hit_points  = {number_text(hp)}")
    lines += [f"| challenge   = {challenge}",
              f"| speed       = {{{{Convert|{speed}|ft|m}}}}",
              f"| diet        = {rng.choice(['Carnivore', 'Herbivore', 'Ash', 'Memories'])}"
              + (" <!-- confirmed in the errata -->" if i % 4 == 0 else ""),
              f"| first_seen  = {ref_book()}",
              "}}"]
    infobox = "\n".join(lines)
    body = [infobox,
            f"The '''{name}''' is a {link(cat, singular(cat).lower())} of the "
            f"{link(rng.choice(REGIONS))}.<ref name=\"{named_ref}\">{ref_book()}</ref> "
            + prose(name, PLACES + CREATURES, 2),
            "", "== Description ==",
            prose(name, CREATURES, 3) + (f"<ref>{ref_book()}</ref>" if i % 2 else ""),
            "", "=== Appearance ===",
            f"Its hide is the colour of {rng.choice(['wet ash', 'old brass', 'moonlit salt'])}."
            " <!-- TODO: add the picture from the 2nd edition -->",
            "", "== Behaviour ==",
            prose(name, CREATURES + ITEMS, 2) + f"<ref name=\"{named_ref}\" />"]
    if i % 5 == 0:
        body += ["", "=== Hunting ===", prose(name, PLACES, 2),
                 "", "==== In winter ====", "It sleeps under the snow for weeks."]
    if i % 4 == 1:
        body += ["", "== Statistics ==",
                 '{| class="wikitable"', "! Level !! Hit points !! Notes", "|-",
                 f"| 1 || {hp // 4} || Young", "|-", f"| 5 || {hp} || ''Adult''", "|}"]
    body += ["", "== See also ==", f"* {link(rng.choice(CREATURES))}",
             f"* [https://example.invalid/emberfall/{i} Official errata]",
             "", "== References ==", "{{Reflist}}", "",
             f"[[Category:Creatures]]",
             f"[[Category:{cat}|{name.split()[0]}]]" if i % 2 else f"[[Category:{cat}]]"]
    return "\n".join(body) + "\n"


def item_page(name, i):
    rarity = RARITIES[min(3, int(rng.random() ** 2 * 4))]
    gp, sp = rng.randint(1, 5000), rng.randint(0, 9)
    weight = rng.choice([1, 2, 3, 5, 8, 12])
    maker = rng.choice(PLACES)
    wielder = rng.choice(CLASSES)
    lines = ["{{Infobox item",
             f"|name={name}",
             f"|rarity={rarity}",
             f"|price={{{{Coin|gp={number_text(gp)}|sp={sp}}}}}",
             f"|weight={{{{Convert|{weight}|lb|kg}}}}",
             f"|made_in={link(maker)}",
             f"|wielder={link(wielder, 'a ' + wielder.lower())}"]
    if i % 5 == 0:
        lines.append("|attunement={{Yes}}")
    lines.append("}}")
    body = ["\n".join(lines),
            f"The '''{name}''' is a {rarity.lower()} item forged in {link(maker)}."
            f"<ref>{ref_book()}</ref>",
            "", "== History ==", prose(name, PLACES + ITEMS, 3),
            "", "== Properties ==",
            f"* Weight: {weight} lb", f"* Price: {gp} gp", ""]
    if i % 3 == 0:
        body += ['{| class="wikitable sortable"', "|+ Upgrades", "! Tier !! Cost", "|-",
                 f"| I || {gp // 2}", "|-", f"| II || {gp}", "|}", ""]
    body += ["== References ==", "<references />", "",
             "[[Category:Items]]", f"[[Category:{rarity} items]]"]
    return "\n".join(body) + "\n"


def place_page(name, i):
    region = REGIONS[i % len(REGIONS)]
    pop = rng.choice([0, rng.randint(40, 900), rng.randint(1000, 250000)])
    lines = ["{{Infobox place",
             f" | name = {name}",
             f" | region = [[{region}]]",
             f" | population = {number_text(pop)}"
             + (f" ({{{{as of|{2019 + i % 5}}}}})" if i % 2 else ""),
             f" | coordinates = {{{{Coord|{rng.randint(1, 89)}|N|{rng.randint(1, 179)}|W}}}}",
             f" | ruler = {link(rng.choice(CREATURES)) if i % 7 == 0 else 'None'}",
             " }}"]
    body = ["\n".join(lines),
            f"'''{name}''' is a place in the {link(region)}." + prose(name, PLACES, 2),
            "", "== Geography ==", prose(name, PLACES + CREATURES, 2),
            "", "== History ==", f"{{{{Main|History of the {region}}}}}",
            prose(name, ITEMS, 2) + f"<ref>{ref_book()}</ref>",
            "", "== References ==", "{{Reflist}}", "",
            "[[Category:Places]]", f"[[Category:{region}]]"]
    return "\n".join(body) + "\n"


def class_page(name, i):
    return "\n".join([
        "{{Infobox class",
        f"| name = {name}",
        f"| hit_die = d{rng.choice([6, 8, 10, 12])}",
        f"| primary = {rng.choice(['Strength', 'Wit', 'Grace', 'Ember'])}",
        f"| signature_item = {link(ITEMS[i])}",
        "}}",
        f"The '''{name}''' is one of the eight classes of the {link('Emberfall Core Rules')}.",
        "", "== Features ==", prose(name, ITEMS, 2),
        "", "== Playing a " + name + " ==", prose(name, CREATURES, 2),
        "", "[[Category:Classes]]"]) + "\n"


def ancestry_page(name, i):
    return "\n".join([
        "{{Infobox ancestry",
        f"| name = {name}",
        f"| lifespan = {rng.randint(40, 900)} years",
        f"| homeland = {link(PLACES[i])}",
        "}}",
        f"The '''{name}''' are a people of the {link(REGIONS[i % 4])}.",
        "", "== Culture ==", prose(name, PLACES, 2),
        "", "[[Category:Ancestries]]"]) + "\n"


TEMPLATES = {
    "Infobox creature": """<includeonly>{| class="infobox"
|+ {{{name|{{PAGENAME}}}}}
|-
| colspan="2" | [[File:{{{image|}}}|220px]]<br/>{{{caption|}}}
|-
! Type
| {{{type|}}}
|-
! Habitat
| {{{habitat|}}}
|-
! Size
| {{{size|}}}
|-
! Hit points
| {{{hit_points|}}}
|-
! Challenge
| {{{challenge|}}}
|-
! Speed
| {{{speed|}}}
|-
! Diet
| {{{diet|}}}
{{#if:{{{first_seen|}}}|
{{!}}-
! First seen
{{!}} {{{first_seen}}}
}}
|}[[Category:Articles with infoboxes]]</includeonly><noinclude>
An infobox for creatures. Parameters: name, image, caption, type, habitat, size, hit_points,
challenge, speed, diet, first_seen.
</noinclude>""",
    "Infobox item": """<includeonly>{| class="infobox"
|+ {{{name|{{PAGENAME}}}}}
|-
! Rarity
| {{{rarity|}}}
|-
! Price
| {{{price|}}}
|-
! Weight
| {{{weight|}}}
|-
! Made in
| {{{made_in|}}}
|}[[Category:Articles with infoboxes]]</includeonly><noinclude>An infobox for items.</noinclude>""",
    "Infobox place": """<includeonly>{| class="infobox"
|+ {{{name|{{PAGENAME}}}}}
|-
! Region
| {{{region|}}}
|-
! Population
| {{{population|}}}
|-
! Coordinates
| {{{coordinates|}}}
|}[[Category:Articles with infoboxes]]</includeonly><noinclude>An infobox for places.</noinclude>""",
    "Infobox class": """<includeonly>{| class="infobox"
|+ {{{name|{{PAGENAME}}}}}
|-
! Hit die
| {{{hit_die|}}}
|}</includeonly><noinclude>An infobox for classes.</noinclude>""",
    "Infobox ancestry": """<includeonly>{| class="infobox"
|+ {{{name|{{PAGENAME}}}}}
|-
! Lifespan
| {{{lifespan|}}}
|}</includeonly><noinclude>An infobox for ancestries.</noinclude>""",
    "Nowrap": '<span style="white-space:nowrap">{{{1}}}</span><noinclude>Keeps text on one line.</noinclude>',
    "Convert": "{{{1}}} {{{2}}}<noinclude>A simplified unit converter: shows the value and its unit.</noinclude>",
    "Coin": "{{#if:{{{gp|}}}|{{{gp}}} gp}}{{#if:{{{sp|}}}|&nbsp;{{{sp}}} sp}}<noinclude>A price in gold and silver pieces.</noinclude>",
    "Cite book": "''{{{title}}}''{{#if:{{{year|}}}| ({{{year}}})}}{{#if:{{{page|}}}|, p.&nbsp;{{{page}}}}}<noinclude>Cites a rule book.</noinclude>",
    "Reflist": '<div class="reflist"><references /></div><noinclude>The list of references.</noinclude>',
    "Main": "<div class=\"hatnote\">''Main article: [[{{{1}}}]]''</div><noinclude>Points to the main article.</noinclude>",
    "Coord": "{{{1}}}°{{{2}}} {{{3}}}°{{{4}}}<noinclude>Coordinates on the map of Emberfall.</noinclude>",
    "As of": "as of {{{1}}}<noinclude>A date qualifier.</noinclude>",
    "Yes": "Yes<noinclude>A yes cell.</noinclude>",
    "!": "|<noinclude>A pipe, for use inside parser functions.</noinclude>",
}

CATEGORY_TEXT = {
    "Creatures": "Every creature of Emberfall.\n\n[[Category:Contents]]",
    "Dragons": "Drakes, wyrms and basilisks.\n\n[[Category:Creatures]]",
    "Undead": "Things that should have stayed buried.\n\n[[Category:Creatures]]",
    "Constructs": "Made, not born.\n\n[[Category:Creatures]]",
    "Spirits": "Moths, owls and other spirits.\n\n[[Category:Creatures]]",
    "Beasts": "Ordinary (and less ordinary) animals.\n\n[[Category:Creatures]]",
    "Items": "Everything that can be carried.\n\n[[Category:Contents]]",
    "Places": "Towns, ruins and wilderness.\n\n[[Category:Contents]]",
    "Classes": "The eight classes.\n\n[[Category:Contents]]",
    "Ancestries": "The peoples of Emberfall.\n\n[[Category:Contents]]",
    "Contents": "The top category.",
}


def build():
    # Templates first: each article is then parsed with its templates present on import, so
    # the links tables (categories added by templates too) need no refreshLinks jobs.
    for name, text in TEMPLATES.items():
        add(f"Template:{name}", text, ns=NS_TEMPLATE)
    add("Template:R from alternative name",
        "<includeonly>[[Category:Redirects from alternative names]]</includeonly>", ns=NS_TEMPLATE)
    for name, text in CATEGORY_TEXT.items():
        add(f"Category:{name}", text + "\n", ns=NS_CATEGORY)
    for i, name in enumerate(CREATURES):
        old = None
        if i % 10 == 3:
            old = f"'''{name}''' is a creature. (stub)\n\n[[Category:Stubs]]\n"
        add(name, creature_page(name, i), old=old)
    for i, name in enumerate(ITEMS):
        add(name, item_page(name, i))
    for i, name in enumerate(PLACES):
        add(name, place_page(name, i))
    for i, name in enumerate(CLASSES):
        add(name, class_page(name, i))
    for i, name in enumerate(ANCESTRIES):
        add(name, ancestry_page(name, i))
    for region in REGIONS:
        members = [p for i, p in enumerate(PLACES) if REGIONS[i % 4] == region]
        add(region, f"The '''{region}''' is one of the four regions of Emberfall.\n\n"
                    "== Places ==\n" + "\n".join(f"* {link(p)}" for p in members) + "\n")
        add(f"History of the {region}",
            f"A short history of the {link(region)}.\n\n== Early years ==\nNothing is known.\n\n"
            "== Later years ==\nEven less is known.<!-- a comment with [[Not a link]] -->\n")
    add("Main Page", "'''Welcome to the Emberfall Wiki''', the fan wiki of the "
        "[[Emberfall Core Rules|Emberfall]] game.\n\n== Browse ==\n"
        "* [[:Category:Creatures|Creatures]]\n* [[:Category:Items|Items]]\n"
        "* [[:Category:Places|Places]]\n")
    add("Emberfall Core Rules", "{{Infobox item\n|name=Emberfall Core Rules\n|rarity=Common\n"
        "|price={{Coin|gp=40}}\n}}\nThe '''''Emberfall Core Rules''''' is the main rule book."
        "<ref name=\"pub\">Published by Lantern Press.</ref>\n\n== Editions ==\n"
        "{| class=\"wikitable\"\n! Edition !! Year\n|-\n| First || 2019\n|-\n| Second || 2023\n|}\n\n"
        "== Reception ==\nWell received.<ref name=\"pub\"/>\n\n== References ==\n{{Reflist}}\n")
    add("Ash (disambiguation)", "'''Ash''' may refer to:\n"
        + "\n".join(f"* {link(n)}" for n in CREATURES + ITEMS if n.startswith("Ash "))
        + "\n\n[[Category:Disambiguation pages]]\n")
    # Redirects: alternative spellings and old names.
    redirect_targets = CREATURES[:10] + ITEMS[:6] + PLACES[:4] + CLASSES[:2]
    seen = {p["title"] for p in pages}
    for i, target in enumerate(redirect_targets):
        alias = target.replace(" ", "-") if i % 2 else target.upper()
        if alias in seen or alias == target:
            alias = f"{target} (old name)"
        seen.add(alias)
        add(alias, f"#REDIRECT [[{target}]]\n\n{{{{R from alternative name}}}}\n", redirect=target)
    add("Aether Wisp", "#REDIRECT [[Æther Wisp]]\n", redirect="Æther Wisp")
    add("Pyro", "#REDIRECT [[Pyromancer#Features]]\n", redirect="Pyromancer")


# --------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------


def sha1_base36(text):
    n = int(hashlib.sha1(text.encode()).hexdigest(), 16)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(31, "0")


def dump_xml():
    out = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ '
           'http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">',
           "  <siteinfo>", "    <sitename>Emberfall Wiki</sitename>", "    <dbname>wiki</dbname>",
           "    <base>http://127.0.0.1/index.php/Main_Page</base>",
           "    <generator>testdata/wiki/generate.py</generator>", "    <case>first-letter</case>",
           "    <namespaces>", '      <namespace key="0" case="first-letter" />',
           '      <namespace key="10" case="first-letter">Template</namespace>',
           '      <namespace key="14" case="first-letter">Category</namespace>',
           "    </namespaces>", "  </siteinfo>"]
    rev_id = 0
    for page_id, p in enumerate(pages, start=1):
        out += ["  <page>", f"    <title>{escape(p['title'])}</title>", f"    <ns>{p['ns']}</ns>",
                f"    <id>{page_id}</id>"]
        if p["redirect"]:
            out.append(f'    <redirect title="{escape(p["redirect"], {chr(34): "&quot;"})}" />')
        parent = None
        for text in p["revisions"]:
            rev_id += 1
            out += ["    <revision>", f"      <id>{rev_id}</id>"]
            if parent:
                out.append(f"      <parentid>{parent}</parentid>")
            out += [f"      <timestamp>{timestamp(rev_id)}</timestamp>",
                    "      <contributor>", "        <username>Admin</username>",
                    "        <id>1</id>", "      </contributor>",
                    "      <comment>generated by testdata/wiki/generate.py</comment>",
                    "      <model>wikitext</model>", "      <format>text/x-wiki</format>",
                    f'      <text bytes="{len(text.encode())}" xml:space="preserve">'
                    f"{escape(text)}</text>",
                    f"      <sha1>{sha1_base36(text)}</sha1>", "    </revision>"]
            parent = rev_id
        out.append("  </page>")
    out.append("</mediawiki>")
    return "\n".join(out) + "\n"


def manifest():
    main = [p for p in pages if p["ns"] == NS_MAIN]
    articles = sorted(p["title"] for p in main if not p["redirect"])
    redirects = {p["title"]: p["redirect"] for p in main if p["redirect"]}
    categories = {}
    for p in main:
        text = p["revisions"][-1]
        for line in text.splitlines():
            if line.startswith("[[Category:"):
                cat = line[len("[[Category:"):].split("]]")[0].split("|")[0]
                categories.setdefault(cat, []).append(p["title"])
    infobox_pages = sorted(p["title"] for p in main
                           if p["revisions"][-1].startswith("{{Infobox"))
    return {
        "about": "What a correct client finds in the Emberfall Wiki built from emberfall-wiki.xml. "
                 "Written by generate.py; see README.md.",
        "main_namespace": {"articles": len(articles), "redirects": len(redirects),
                           "total": len(main)},
        "templates": sorted(p["title"] for p in pages if p["ns"] == NS_TEMPLATE),
        "category_pages": sorted(p["title"] for p in pages if p["ns"] == NS_CATEGORY),
        "articles": articles,
        "redirects": dict(sorted(redirects.items())),
        "categories": {k: sorted(v) for k, v in sorted(categories.items())},
        "category_subcategories": {
            c: sorted(f"Category:{s}" for s, t in CATEGORY_TEXT.items()
                      if f"[[Category:{c}]]" in t)
            for c in sorted(CATEGORY_TEXT)},
        "pages_with_old_revisions": sorted(p["title"] for p in pages if len(p["revisions"]) > 1),
        "pages_with_infobox": infobox_pages,
        "doomed": DOOMED,
    }


def main():
    build()
    xml = dump_xml()
    man = json.dumps(manifest(), indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        ok = DUMP.read_text() == xml and MANIFEST.read_text() == man
        print("testdata/wiki: " + ("up to date" if ok else "OUT OF DATE: run generate.py"))
        sys.exit(0 if ok else 1)
    DUMP.write_text(xml)
    MANIFEST.write_text(man)
    m = json.loads(man)
    print(f"wrote {DUMP.name} ({len(xml.encode())} bytes, {len(pages)} pages): "
          f"{m['main_namespace']}, {len(m['templates'])} templates, "
          f"{len(m['category_pages'])} category pages")


if __name__ == "__main__":
    main()
