"""How an extractor's answer is scored against the corpus's expected answer.

Text: both sides are turned into tokens (NFKC, lower-cased, runs of word characters:
punctuation and markup dropped, non-Latin letters kept), then into the set of their 4-token
shingles (a text under 4 tokens is one shingle of what it has). Per page, precision is the
share of the extractor's shingles found in the expected text, recall the share of the expected
shingles the extractor found; an empty answer to a page with text scores 0 and 0. The corpus
score averages precision and recall over the pages and takes F1 of the two averages (as the
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


WORD = re.compile(r"\w+")


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
