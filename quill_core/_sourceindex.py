"""Which source documents may hold a text: a lexical pre-filter over thousands of documents, no embedding.

Every document is reduced to its *key* (NFKC, case-folded, letters and digits only, Traditional Chinese made
Simplified) and the keys are joined into one string. A text's key gives up to :data:`GRAMS` q-grams spread over it
(3 characters when it holds Chinese, else 6); each occurrence of a q-gram in the joined string votes for its
document, and the documents with the most votes are the candidates that span matching then checks. A verbatim
quote gets every vote of its document; a misquote keeps most of them. Searching is ``str.find`` in C: about 2 ms per
text over the 4,500 poems (580,000 characters) of the chinese tier; building ~0.2 s.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable

from ._text import has_cjk, simplified_chars

GRAMS = 8
"""q-grams taken from a text (spread evenly over its key)."""
MAX_HITS = 2_000
"""Occurrences of one q-gram counted at most (a very common q-gram says little)."""
_NON_WORD = re.compile(r"[\W_]+")


def index_key(text: str) -> str:
    """A text as the index compares it: NFKC, case-folded, only letters and digits, Traditional made Simplified."""
    return simplified_chars(_NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold()))


def grams(k: str) -> list[str]:
    """Up to :data:`GRAMS` q-grams of a key, evenly spread (the whole key when it is shorter than one q-gram)."""
    q = 3 if has_cjk(k) else 6
    if len(k) <= q:
        return [k] if k else []
    starts = sorted({round(i * (len(k) - q) / max(1, GRAMS - 1)) for i in range(GRAMS)})
    return list(dict.fromkeys(k[s : s + q] for s in starts))


class GramIndex:
    """The keys of many documents, searched by q-grams (see the module docstring)."""

    def __init__(self, docs: Iterable[tuple[Hashable, str]]) -> None:
        parts: list[str] = []
        self._ids: list[Hashable] = []
        self._starts: list[int] = []
        pos = 0
        for doc, text in docs:
            k = index_key(text)
            self._ids.append(doc)
            self._starts.append(pos)
            parts.append(k)
            pos += len(k) + 1
        self._text = "\n".join(parts)  # '\n' never occurs in a key, so no q-gram spans two documents
        self._chars = frozenset(self._text)  # a q-gram with another character cannot occur (English in poems)

    def __len__(self) -> int:
        return len(self._ids)

    def candidates(self, text: str, *, limit: int = 16) -> list[Hashable]:
        """The documents whose keys share q-grams with ``text``'s, most shared first (at most ``limit``)."""
        votes: Counter = Counter()
        for g in grams(index_key(text)):
            if not self._chars.issuperset(g):
                continue
            seen: set[int] = set()
            at = self._text.find(g)
            hits = 0
            while at >= 0 and hits < MAX_HITS:
                seen.add(bisect.bisect_right(self._starts, at) - 1)
                hits += 1
                at = self._text.find(g, at + 1)
            votes.update(seen)
        return [self._ids[i] for i, _ in votes.most_common(limit)]
