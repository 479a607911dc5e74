"""The corpus split of the extraction benchmark, fixed before any tuning.

The pages (folder names) are ordered by the SHA-256 of their name; the first half of that
order is the tuning half (`tune`: what extraction rules may be chosen on), the rest the
held-out half (`held`: only reported). Adding a page to the corpus moves at most the pages
around it in that order, never the whole split.
"""
import hashlib


def halves(names):
    """(tune, held): two lists of names, each sorted, the first with the extra page."""
    ordered = sorted(names, key=lambda n: hashlib.sha256(n.encode("utf-8")).hexdigest())
    cut = (len(ordered) + 1) // 2
    return sorted(ordered[:cut]), sorted(ordered[cut:])
