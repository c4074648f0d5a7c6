"""The authors a paragraph names: a writer who types "as Einstein said, [Q]" or 韩非提出：[Q] wants a quote by that
person, so retrieval also searches their quotes and the ranking knows who was named.

An :class:`AuthorIndex` holds the authors of a catalog. Chinese names (two to six Han characters) are found as
substrings, the longest first; Latin-script names as runs of one to four words compared by :func:`author_key`
("Franklin D. Roosevelt"), or by a capitalized last name that belongs to exactly one author of the catalog
("Montesquieu", "Emerson"). Mentions are ordered by their distance to the insertion point, nearest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._names import author_key, clean_author
from ._text import HAN_RANGES
from ._types import Quote

MAX_NAMED = 3
_HAN_NAME = re.compile(f"^[{HAN_RANGES}·]{{2,6}}$")
_WORD = re.compile(r"[^\W\d_][\w'’.-]*")
_LONGEST_WORDS = 4
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？]\s*)\W*$")  # a capitalized word here may be any word ("Love is ...")


class AuthorIndex:
    """The authors of some quotes, ready to be spotted in a paragraph."""

    def __init__(self, quotes: Iterable[Quote]) -> None:
        self.chinese: dict[str, str] = {}
        self.latin: dict[str, str] = {}  # author_key -> name
        last: dict[str, set[str]] = {}
        for quote in quotes:
            name = clean_author(quote.author)
            if not name:
                continue
            if _HAN_NAME.match(name):
                self.chinese.setdefault(name, name)
            elif name.isascii() or not re.search(f"[{HAN_RANGES}]", name):
                k = author_key(name)
                if k and self.latin.setdefault(k, name) == name:
                    words = _WORD.findall(name)
                    if len(words) > 1 and len(words[-1]) > 3:
                        last.setdefault(words[-1].casefold(), set()).add(k)
        # a last name stands for its author only when no other author of the catalog bears it
        self.last_names = {word: next(iter(keys)) for word, keys in last.items()
                           if len(keys) == 1 and author_key(word) not in self.latin}
        self._zh_lengths = sorted({len(n) for n in self.chinese}, reverse=True)

    def named_in(self, before: str, after: str = "") -> tuple[str, ...]:
        """The authors named in a paragraph split at its insertion point, nearest first (at most
        :data:`MAX_NAMED`)."""
        text = before + after
        at = len(before)
        found: dict[str, int] = {}  # name -> distance to the insertion point
        for start, end, name in [*self._chinese_in(text), *self._latin_in(text)]:
            distance = at - end if end <= at else max(0, start - at)
            found[name] = min(distance, found.get(name, distance))
        return tuple(sorted(found, key=lambda n: found[n])[:MAX_NAMED])

    def _chinese_in(self, text: str) -> Iterable[tuple[int, int, str]]:
        if not self.chinese:
            return
        i = 0
        while i < len(text):
            for length in self._zh_lengths:
                name = self.chinese.get(text[i : i + length])
                if name is not None:
                    yield i, i + length, name
                    i += length
                    break
            else:
                i += 1

    def _latin_in(self, text: str) -> Iterable[tuple[int, int, str]]:
        if not self.latin:
            return
        words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
        i = 0
        while i < len(words):
            for n in range(min(_LONGEST_WORDS, len(words) - i), 0, -1):
                span = words[i : i + n]
                if not span[0][2][:1].isupper():
                    continue
                k = author_key(" ".join(w for _, _, w in span))
                name = self.latin.get(k)
                if name is None and n == 1 and not _SENTENCE_START.search(text[: span[0][0]]):
                    name = self.latin.get(self.last_names.get(span[0][2].casefold(), ""))
                if name is not None:
                    yield span[0][0], span[-1][1], name
                    i += n
                    break
            else:
                i += 1
