"""The normalized character view of a text, with the offset map back to the original (what span matching runs on).

Normalization: NFKC (full-width forms become ASCII), case-folded, Traditional Chinese characters made Simplified
(:func:`quill_core._text.simplified_chars`, so 海內存知己 matches 海内存知己), curly and CJK quote marks made
straight, dashes (and runs of them) made one '-', the ideographic full stop made '.', '…' made '...', whitespace
runs (line breaks included) made one space and dropped next to CJK characters. Every normalized character maps back
to the original one it came from, so spans found in the view are reported in original offsets, on character
boundaries (never inside a combining sequence). Views of long texts are cached (LRU), with the q-gram indexes built
on them.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ._text import CJK, CJK_RANGES, STRAIGHT_CHARS, simplified_chars


_MATCH_CHARS = {**STRAIGHT_CHARS, "\u301d": '"', "\u301e": '"', "\u3002": ".", "\uff61": "."}
"""The normalization table of :mod:`quill_core._text` plus what matching alone equates: the double prime quotation
marks 〝〞 and the ideographic full stops 。｡ ('.'), so a quote matches across Chinese and Western punctuation."""
_CJK_CODES = tuple((ord(CJK_RANGES[i]), ord(CJK_RANGES[i + 2])) for i in range(0, len(CJK_RANGES), 3))
""":data:`quill_core._text.CJK_RANGES` as code-point ranges (for vectorized tests)."""


class CharTable(dict):
    """``str.translate`` table filled on demand: every character maps to ONE character (offsets survive).

    Characters whose normalized form is longer (ligatures, '…', 'ß') map to themselves here and are expanded in
    a second pass, recorded in :attr:`expansions`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.expansions: dict[str, str] = {}
        self._lock = threading.Lock()

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if ch in _MATCH_CHARS:
            out = _MATCH_CHARS[ch]
        elif ch.isspace():
            out = " "
        elif unicodedata.combining(ch):
            out = ch
        else:
            norm = unicodedata.normalize("NFKC", ch).casefold()
            norm = "".join(" " if c.isspace() else _MATCH_CHARS.get(c, c) for c in norm)
            if len(norm) == 1:
                out = simplified_chars(norm)
            else:
                out = ch
                with self._lock:
                    self.expansions[ch] = norm
        with self._lock:
            self[cp] = out
        return out


TABLE = CharTable()
for _c in range(128):  # warm the ASCII part so ASCII texts take str.translate's fast path
    TABLE[_c]  # noqa: B018


@dataclass
class View:
    """The normalized text and, for each of its characters, the offset of the original character it came from."""

    original: str
    norm: str
    source: np.ndarray  # int32, len(norm): norm offset -> original offset
    index: dict[int, tuple[np.ndarray, np.ndarray]] | None = None
    uses: int = 0

    def to_original(self, s: int, e: int) -> tuple[int, int]:
        """Original offsets of the norm span ``[s, e)``, widened to whole characters (combining marks, runs)."""
        text, src = self.original, self.source
        os_ = int(src[s])
        oe = int(src[e - 1]) + 1
        if self.norm[e - 1] == "-" and e < len(src):  # a collapsed run of dashes ends where the next char starts
            oe = max(oe, int(src[e]))
        while os_ > 0 and unicodedata.combining(text[os_]):
            os_ -= 1
        while oe < len(text) and unicodedata.combining(text[oe]):
            oe += 1
        return os_, oe


_expansion_re: tuple[int, re.Pattern[str] | None] = (-1, None)


def _expansions_pattern() -> re.Pattern[str] | None:
    """A character class of every character seen so far whose normal form is longer than one character."""
    global _expansion_re
    size, pattern = _expansion_re
    if size != len(TABLE.expansions):
        chars = "".join(re.escape(ch) for ch in list(TABLE.expansions))
        pattern = re.compile(f"[{chars}]") if chars else None
        _expansion_re = (len(TABLE.expansions), pattern)
    return pattern


def build_view(text: str) -> View:
    """Normalize ``text`` keeping the offset map: a 1:1 ``translate`` pass, then (vectorized) whitespace runs
    collapsed or dropped, dash runs collapsed, and the rare longer forms ('…' -> '...') expanded."""
    stage = text.translate(TABLE)
    cps = codes(stage)
    n = len(cps)
    if not n:
        return View(text, "", np.zeros(0, dtype=np.int32))
    space, dash = cps == 32, cps == 45
    drop = np.zeros(n, dtype=bool)
    drop[1:] = (space[1:] & space[:-1]) | (dash[1:] & dash[:-1])
    solid = np.flatnonzero(~space)
    if not len(solid):
        return View(text, "", np.zeros(0, dtype=np.int32))
    drop[: solid[0]] = True
    drop[solid[-1] + 1 :] = True
    if not text.isascii():
        orig = codes(text)
        cjk = np.zeros(n, dtype=bool)
        for a, b in _CJK_CODES:
            cjk |= (orig >= a) & (orig <= b)
        if cjk.any() and space.any():  # a space run next to a CJK character is dropped
            ar = np.arange(n)
            before = np.maximum.accumulate(np.where(space, 0, ar))
            after = np.minimum.accumulate(np.where(space, n - 1, ar)[::-1])[::-1]
            drop |= space & (cjk[before] | cjk[after])
    kept = np.flatnonzero(~drop)
    norm = cps[kept].tobytes().decode("utf-32-le", "surrogatepass")
    pattern = _expansions_pattern() if not text.isascii() else None
    if pattern is None or not pattern.search(norm):
        return View(text, norm, kept.astype(np.int32))
    parts: list[str] = []
    sources: list[np.ndarray] = []
    pos = 0
    for m in pattern.finditer(norm):
        i = m.start()
        rep = TABLE.expansions[m.group()]
        parts += [norm[pos:i], rep]
        sources += [kept[pos:i], np.full(len(rep), kept[i])]
        pos = i + 1
    parts.append(norm[pos:])
    sources.append(kept[pos:])
    return View(text, "".join(parts), np.concatenate(sources).astype(np.int32))


_CACHE: OrderedDict[str, View] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16


def cached_view(text: str) -> View:
    """The (cached) normalized view of ``text``: a text searched again reuses its view and q-gram index."""
    if len(text) < 200:
        return build_view(text)
    with _CACHE_LOCK:
        view = _CACHE.get(text)
        if view is not None:
            _CACHE.move_to_end(text)
            view.uses += 1
            return view
    view = build_view(text)
    with _CACHE_LOCK:
        _CACHE[text] = view
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return view


def clear_cache() -> None:
    """Forget every cached view (and its q-gram indexes), e.g. to time a text's first query."""
    with _CACHE_LOCK:
        _CACHE.clear()


_SPACE_RUN = re.compile(" +")
_DASH_RUN = re.compile("-{2,}")


def normalized(text: str) -> str:
    """The normalized form of ``text`` (what :func:`build_view` gives, without the offset map)."""
    if len(text) > 2_000:
        return build_view(text).norm
    stage = _DASH_RUN.sub("-", text.translate(TABLE))
    if " " in stage:
        if text.isascii() or not CJK.search(text):
            stage = _SPACE_RUN.sub(" ", stage).strip(" ")
        else:
            return build_view(text).norm
    if not text.isascii():
        pattern = _expansions_pattern()
        if pattern is not None and pattern.search(stage):
            stage = pattern.sub(lambda m: TABLE.expansions[m.group()], stage)
    return stage


def codes(s: str) -> np.ndarray:
    """The code points of ``s`` as a uint32 array."""
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
