"""How an extractor's answer is scored against the corpus's expected answer.

Text: both sides are turned into tokens (NFKC, lower-cased, runs of word characters:
punctuation and markup dropped, non-Latin letters kept; in the scripts written without
spaces between words, Han, kana, Hangul and Thai, each character is a token, as evaluations
of extraction for those languages count, so that the same sentences cut at other
punctuation score the same), then into the set of their 4-token shingles (a text under 4
tokens is one shingle of what it has). Per page, precision is the share of the extractor's
shingles found in the expected text, recall the share of the expected shingles the
extractor found; an empty answer to a page with text scores 0 and 0. The corpus score
averages precision and recall over the pages and takes F1 of the two averages (as the
article-extraction benchmarks do); the per-page F1 ranks the worst pages.

Metadata, after `norm` (NFKC, case-folded, punctuation to spaces, whitespace collapsed):
- headline: equal to the expected `title`;
- byline: the same words as the expected `byline`, a leading "by" and the word "and"
  dropped (our `authors` joined);
- published: the same instant when both have a time zone, else the same calendar date;
- siteName: equal;
- lang: the same primary subtag (`en-US` matches `en`).
Each is counted over the pages whose expected metadata has a value (the headline over every
page with a title); a missing answer is a miss.

Beside the strict headline and byline, the same pages counted by the issue's own
definition (`CONTRACT`: the headline is "not the <title> with the site's name glued on"; an
author is a name). Only the expected answer is read past, never the extractor's:
- headline (contract): right when strictly right, or when the expected title is the
  extractor's headline with at most six words glued after it by ` | `, ` - `, ` – `,
  ` — `, ` :: `, ` · `, ` » `, ` / ` or ` • ` ("Mozilla - Wikipedia" for "Mozilla");
- byline (contract): right when strictly right, or when the extractor's names are the
  words of the expected byline less, in each of its parts (cut at line breaks, commas and
  spaced separators), a leading "By" (`Written by`, `Par`, `Von`, …), another person's
  role to the part's end ("Edited by …", "Photographs by …"), numbers, "updated",
  "published", and month and weekday names, "am", "pm", "at", "on", "last" beside a number
  or such a word; a part ending in "Editor", "Writer", "Staff", "News", … is a role or a
  desk and read past whole, unless nothing else is left. An expected byline that is only
  dates names nobody: right when the extractor names nobody.
bench.py prints every page where a strict and a contract column differ, for each call to be
checked.
"""
import re
import unicodedata
from datetime import datetime

BLOCK = {
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl",
    "dt", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}
SKIP = {"script", "style", "noscript", "template"}


def html_text(html):
    """The text of an HTML fragment or page, a line break at each block's edges."""
    import lxml.html

    if not html or not html.strip():
        return ""
    try:
        root = lxml.html.fromstring(html)
    except Exception:  # noqa: BLE001 (lxml raises several kinds on empty or odd input)
        return ""
    out = []

    def walk(el):
        tag = el.tag if isinstance(el.tag, str) else None
        block = tag in BLOCK
        if tag is not None and tag not in SKIP:
            if block:
                out.append("\n")
            if el.text:
                out.append(el.text)
            for child in el:
                walk(child)
            if block:
                out.append("\n")
        if el.tail:
            out.append(el.tail)

    walk(root)
    return re.sub(r"\s*\n\s*", "\n", "".join(out)).strip()


MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MD_AUTOLINK = re.compile(r"<(?:https?|mailto):[^>]*>")


def markdown_text(md):
    """Markdown less its link targets and image sources (the rest is punctuation)."""
    md = MD_LINK.sub(lambda m: m.group(1), md or "")
    return MD_AUTOLINK.sub(" ", md)


# Scripts written without spaces between words: each character is a token (Han ideographs,
# kana, Hangul, Thai), as evaluations of extraction and of translation for these languages
# tokenise; any other run of word characters is one token.
UNSPACED = (
    "\u0e00-\u0e7f"  # Thai
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul jamo, compatibility jamo, syllables
    "\u3040-\u30ff\u31f0-\u31ff"  # hiragana, katakana (NFKC makes half-width ones full)
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # Han
)
WORD = re.compile(rf"[{UNSPACED}]|(?:(?![{UNSPACED}])\w)+")


def tokens(text):
    return WORD.findall(unicodedata.normalize("NFKC", text or "").lower())


def shingles(text, n=4):
    t = tokens(text)
    if len(t) < n:
        return {tuple(t)} if t else set()
    return {tuple(t[i : i + n]) for i in range(len(t) - n + 1)}


def precision_recall(answer, expected):
    a, e = shingles(answer), shingles(expected)
    if not e:
        return (1.0, 1.0) if not a else (0.0, 1.0)
    if not a:
        return 0.0, 0.0
    common = len(a & e)
    return common / len(a), common / len(e)


def f1(p, r):
    return 2 * p * r / (p + r) if p + r else 0.0


def norm(s):
    s = unicodedata.normalize("NFKC", s or "").casefold()
    return " ".join(re.sub(r"[\W_]+", " ", s).split())


def same_title(ours, expected):
    return bool(ours) and norm(ours) == norm(expected)


def byline_words(s):
    words = norm(s).split()
    if words and words[0] == "by":
        words = words[1:]
    return sorted(w for w in words if w != "and")


def same_byline(authors, expected):
    if not authors:
        return False
    ours = authors if isinstance(authors, str) else " ".join(authors)
    return byline_words(ours) == byline_words(expected)


# The issue's own definition of a right headline and byline (docs/records.md: the headline
# is "not the <title> with the site's name glued on"; an author is a name), a column beside
# the strict one. Only the expected answer is read past, never ours.
TITLE_GLUE = (" | ", " - ", " – ", " — ", " :: ", " · ", " » ", " / ", " • ", " @ ")
SITE_NAME_WORDS = 6


def title_by_contract(ours, expected):
    """Right when equal, or when the expected title is ours with a site's name (at most six
    words) glued after it by a separator. Only after: a short headline glued before would
    make the site's name in front of a long one pass for the headline ("Evolve: Shared
    Mutable History — evolve extension for Mercurial")."""
    if same_title(ours, expected):
        return True
    if not ours:
        return False
    exp = " ".join(unicodedata.normalize("NFKC", expected).split())
    for sep in TITLE_GLUE:
        at = exp.find(sep)
        while at >= 0:
            title, site = exp[:at], exp[at + len(sep) :]
            if norm(title) == norm(ours) and 0 < len(norm(site).split()) <= SITE_NAME_WORDS:
                return True
            at = exp.find(sep, at + 1)
    return False


BYLINE_PARTS = re.compile(r"\n|\s[|•·/–—-]\s|,")
BY_WORDS = ("by", "written by", "posted by", "par", "von", "por", "di", "door", "بقلم", "מאת")
# "Edited by Ann Lee", "Photographs by …": a role of someone who is not the author.
OTHER_ROLES = re.compile(r"\b(?:edited|reviewed|photographs?|photos|illustrations?|translated) by\b.*")
# A part that ends in one of these is a role or a desk ("Staff Writer", "WebMD Health News").
ROLE_ENDS = {
    "editor", "editors", "reporter", "correspondent", "writer", "contributor", "columnist",
    "staff", "news", "desk",
}
MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
# Read past beside a number or another such word ("April 28, 2019 at 6:01 am"; "By April
# Lee" keeps April).
DATE_WORDS = set(MONTHS) | set(
    "monday tuesday wednesday thursday friday saturday sunday am pm at on last".split()
)
DATE_ALWAYS = {"updated", "published", "modified"}


def byline_part_names(part):
    """A part's words less a leading "By", another person's role and dates; None for a role."""
    words = norm(re.sub(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])", " ", part))
    words = OTHER_ROLES.sub("", words).split()
    for by in BY_WORDS:
        if words[: len(by.split())] == by.split():
            words = words[len(by.split()) :]
            break
    if words and words[-1] in ROLE_ENDS:
        return None
    date = [w.isdigit() or w in DATE_ALWAYS for w in words]
    grew = True
    while grew:
        grew = False
        for i, w in enumerate(words):
            near = any(date[j] for j in (i - 1, i + 1) if 0 <= j < len(words))
            if not date[i] and w in DATE_WORDS and near:
                date[i] = grew = True
    return [w for w, d in zip(words, date) if not d and w != "and"]


def byline_by_contract(authors, expected):
    """Right when our names are the expected byline's names, its "By", dates, roles (a part
    of it that ends in "Editor", "Staff", "News"…, or is another's role: "Edited by …") and
    separators read past. An expected byline that is only dates names nobody: right when we
    name nobody. A byline that is only a role is compared as it is."""
    if same_byline(authors, expected):
        return True
    parts = [byline_part_names(p) for p in BYLINE_PARTS.split(unicodedata.normalize("NFKC", expected))]
    names = [w for p in parts if p for w in p]
    if not names and any(p is None for p in parts):
        return same_byline(authors, expected)
    if not names:
        return not authors
    if not authors:
        return False
    ours = authors if isinstance(authors, str) else " ".join(authors)
    return byline_words(ours) == sorted(names)


def parse_date(s):
    s = (s or "").strip()
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        m = re.match(r"\d{4}-\d{2}-\d{2}", s)
        return datetime.fromisoformat(m.group(0)) if m else None


def same_date(ours, expected):
    a, e = parse_date(ours), parse_date(expected)
    if a is None or e is None:
        return False
    if a.tzinfo is not None and e.tzinfo is not None:
        return a == e
    return a.date() == e.date()


def same_site(ours, expected):
    return bool(ours) and norm(ours) == norm(expected)


def same_lang(ours, expected):
    def primary(s):
        return (s or "").strip().lower().replace("_", "-").split("-")[0]

    return bool(ours) and primary(ours) == primary(expected)


# (expected-metadata key, answer key, comparison)
METADATA = [
    ("title", "headline", same_title),
    ("byline", "authors", same_byline),
    ("publishedTime", "published", same_date),
    ("siteName", "siteName", same_site),
    ("lang", "lang", same_lang),
]
# Columns beside the strict ones: (column, expected key, answer key, comparison).
CONTRACT = [
    ("headline by contract", "title", "headline", title_by_contract),
    ("byline by contract", "byline", "authors", byline_by_contract),
]
