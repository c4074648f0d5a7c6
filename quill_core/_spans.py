"""Locate a quotation in a text: exact spans (offsets into the ORIGINAL text), a score, a verdict, and highlighting.

Matching runs on a *normalized view* of both strings: NFKC (full-width forms become ASCII), case-folded, curly and
CJK quote marks made straight, dashes (and runs of them) made one '-', the ideographic full stop made '.',
'…' made '...', whitespace runs (line breaks included) made one space and dropped next to CJK characters. The view
maps every normalized character back to the original one, so spans are reported in original offsets, on
character boundaries (never inside a combining sequence), with ``text[start:end] == matched``.

Search: exact occurrences by ``str.find``, near ones from candidate regions found by repeated
:func:`rapidfuzz.fuzz.partial_ratio_alignment`; a long text searched again (its view is cached, LRU) gets a
q-gram index instead, and only regions where the quote's rare q-grams line up are examined. Each candidate window
is then refined: its edges are re-anchored on the quote's first and last characters and words and polished to
maximise the Levenshtein similarity, so insertions or deletions inside the quote neither shift nor truncate the
span. Scores are :func:`rapidfuzz.fuzz.ratio` (0-100) of the normalized quote against the normalized matched
text. A quote with an ellipsis (``...``, ``…``, ``[...]``) may also match its parts in order, the omitted middle
then lying inside the span.
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from ._errors import InputError
from ._types import Span


VERBATIM, NEAR, NOT_FOUND = "verbatim", "near", "not_found"

_STRAIGHT = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u2039": "'", "\u203a": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u300c": '"', "\u300d": '"', "\u300e": '"', "\u300f": '"', "\u301d": '"', "\u301e": '"',
    "\u3002": ".", "\uff61": ".",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
}
# ideographs, kana and CJK / full-width punctuation (not full-width Latin letters or digits)
_CJK = ("\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65")
_CJK_RE = re.compile(f"[{_CJK}]")
_ELLIPSIS = re.compile(r"\s*(?:\[\s*\.{3,}\s*\]|\(\s*\.{3,}\s*\)|\.{3,})\s*")


# -- the normalized view ----------------------------------------------------------------------------------------
class _CharTable(dict):
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
        if ch in _STRAIGHT:
            out = _STRAIGHT[ch]
        elif ch.isspace():
            out = " "
        elif unicodedata.combining(ch):
            out = ch
        else:
            norm = unicodedata.normalize("NFKC", ch).casefold()
            norm = "".join(" " if c.isspace() else _STRAIGHT.get(c, c) for c in norm)
            if len(norm) == 1:
                out = norm
            else:
                out = ch
                with self._lock:
                    self.expansions[ch] = norm
        with self._lock:
            self[cp] = out
        return out


_TABLE = _CharTable()
for _c in range(128):  # warm the ASCII part so ASCII texts take str.translate's fast path
    _TABLE[_c]  # noqa: B018


@dataclass
class _View:
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


_CJK_RANGES = ((0x2E80, 0x2FFF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
               (0xF900, 0xFAFF), (0xFF01, 0xFF0F), (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65))
_expansion_re: tuple[int, re.Pattern[str] | None] = (-1, None)


def _expansions_pattern() -> re.Pattern[str] | None:
    """A character class of every character seen so far whose normal form is longer than one character."""
    global _expansion_re
    size, pattern = _expansion_re
    if size != len(_TABLE.expansions):
        chars = "".join(re.escape(ch) for ch in list(_TABLE.expansions))
        pattern = re.compile(f"[{chars}]") if chars else None
        _expansion_re = (len(_TABLE.expansions), pattern)
    return pattern


def _build_view(text: str) -> _View:
    """Normalize ``text`` keeping the offset map: a 1:1 ``translate`` pass, then (vectorized) whitespace runs
    collapsed or dropped, dash runs collapsed, and the rare longer forms ('…' -> '...') expanded."""
    stage = text.translate(_TABLE)
    codes = _codes(stage)
    n = len(codes)
    if not n:
        return _View(text, "", np.zeros(0, dtype=np.int32))
    space, dash = codes == 32, codes == 45
    drop = np.zeros(n, dtype=bool)
    drop[1:] = (space[1:] & space[:-1]) | (dash[1:] & dash[:-1])
    solid = np.flatnonzero(~space)
    if not len(solid):
        return _View(text, "", np.zeros(0, dtype=np.int32))
    drop[: solid[0]] = True
    drop[solid[-1] + 1 :] = True
    if not text.isascii():
        orig = _codes(text)
        cjk = np.zeros(n, dtype=bool)
        for a, b in _CJK_RANGES:
            cjk |= (orig >= a) & (orig <= b)
        if cjk.any() and space.any():  # a space run next to a CJK character is dropped
            ar = np.arange(n)
            before = np.maximum.accumulate(np.where(space, 0, ar))
            after = np.minimum.accumulate(np.where(space, n - 1, ar)[::-1])[::-1]
            drop |= space & (cjk[before] | cjk[after])
    kept = np.flatnonzero(~drop)
    norm = codes[kept].tobytes().decode("utf-32-le", "surrogatepass")
    pattern = _expansions_pattern() if not text.isascii() else None
    if pattern is None or not pattern.search(norm):
        return _View(text, norm, kept.astype(np.int32))
    parts: list[str] = []
    sources: list[np.ndarray] = []
    pos = 0
    for m in pattern.finditer(norm):
        i = m.start()
        rep = _TABLE.expansions[m.group()]
        parts += [norm[pos:i], rep]
        sources += [kept[pos:i], np.full(len(rep), kept[i])]
        pos = i + 1
    parts.append(norm[pos:])
    sources.append(kept[pos:])
    return _View(text, "".join(parts), np.concatenate(sources).astype(np.int32))


_CACHE: OrderedDict[str, _View] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 16
_INDEX_MIN_CHARS = 20_000


def _view(text: str) -> _View:
    """The (cached) normalized view of ``text``: a text searched again reuses its view and q-gram index."""
    if len(text) < 200:
        return _build_view(text)
    with _CACHE_LOCK:
        view = _CACHE.get(text)
        if view is not None:
            _CACHE.move_to_end(text)
            view.uses += 1
            return view
    view = _build_view(text)
    with _CACHE_LOCK:
        _CACHE[text] = view
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return view


_SPACE_RUN = re.compile(" +")
_DASH_RUN = re.compile("-{2,}")
_EDGE_ELLIPSIS = re.compile(r"^(?:\.{3,}|\[\.{3,}\])\s*|\s*(?:\.{3,}|\[\.{3,}\])$")


def _norm(text: str) -> str:
    """The normalized form of ``text`` (what :func:`_build_view` gives, without the offset map)."""
    if len(text) > 2_000:
        return _build_view(text).norm
    stage = _DASH_RUN.sub("-", text.translate(_TABLE))
    if " " in stage:
        if text.isascii() or not _CJK_RE.search(text):
            stage = _SPACE_RUN.sub(" ", stage).strip(" ")
        else:
            return _build_view(text).norm
    if not text.isascii():
        pattern = _expansions_pattern()
        if pattern is not None and pattern.search(stage):
            stage = pattern.sub(lambda m: _TABLE.expansions[m.group()], stage)
    return stage


def _strip_quote(q: str) -> str:
    """Drop wrapping quotation marks, and leading/trailing ellipses, from a normalized quote."""
    q = q.strip()
    while len(q) >= 2 and q[0] in "\"'" and q[-1] in "\"'":
        q = q[1:-1].strip()
    if q[:1] == '"' and q.count('"') == 1:
        q = q[1:].strip()
    if q[-1:] == '"' and q.count('"') == 1:
        q = q[:-1].strip()
    return _EDGE_ELLIPSIS.sub("", q) if "..." in q else q


def split_ellipsis(quote: str) -> list[str]:
    """The parts of a quote around ellipses that mark omissions ('a … b' -> ['a', 'b']), normalized."""
    q = _strip_quote(_norm(quote))
    return [p for p in _ELLIPSIS.split(q) if p.strip()]


# -- candidate search --------------------------------------------------------------------------------------------
_CJK_ALL = re.compile(f"[{_CJK}]+")


def _gram_len(q: str) -> int:
    cjk = sum(len(run) for run in _CJK_ALL.findall(q))
    return 2 if cjk * 3 >= len(q) else 4


def _hashes(codes: np.ndarray, g: int) -> np.ndarray:
    """Polynomial hashes of every ``g``-gram of a code-point array."""
    c = codes.astype(np.uint64)
    n = len(c) - g + 1
    h = c[:n]
    for k in range(1, g):
        h = h * np.uint64(1_000_003) + c[k : k + n]
    return h


def _codes(s: str) -> np.ndarray:
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _index(view: _View, g: int) -> tuple[np.ndarray, np.ndarray]:
    if view.index is None:
        view.index = {}
    idx = view.index.get(g)
    if idx is None:
        h = _hashes(_codes(view.norm), g)
        order = np.argsort(h)
        idx = (h[order], order.astype(np.int32))
        view.index[g] = idx
    return idx


def _vote(q: str, view: _View, lo: int, hi: int) -> list[tuple[int, int]]:
    """Ranges of likely start offsets (in ``view.norm``) where the quote's q-grams line up on one diagonal.

    Votes with the quote's q-grams that are rare in the text; a quote made of common q-grams only votes with
    all of them. A cluster needs about a third of the voters, so typos, punctuation changes and a dropped or
    inserted word still leave the true place well above the bar.
    """
    g = _gram_len(q)
    if len(q) < 2 * g:
        return []
    sorted_h, order = _index(view, g)
    n = len(view.norm)
    hq = _hashes(_codes(q), g)
    left = np.searchsorted(sorted_h, hq, "left")
    counts = np.searchsorted(sorted_h, hq, "right") - left  # (unsorted needles: fine at these sizes)
    chosen = np.flatnonzero((counts > 0) & (counts <= max(8, n // 2000)))
    if len(chosen) < 3:
        chosen = np.flatnonzero((counts > 0) & (counts <= max(64, n // 200)))
        needed = max(3.0, 0.3 * len(hq))
    else:
        needed = max(2.0, 0.3 * len(chosen))
    if not len(chosen):
        return []
    c_left, c_counts = left[chosen], counts[chosen]
    starts = np.repeat(c_left - np.cumsum(c_counts) + c_counts, c_counts) + np.arange(int(c_counts.sum()))
    diag = order[starts] - np.repeat(chosen, c_counts)
    if lo > 0 or hi < n:
        diag = diag[(diag >= lo - len(q)) & (diag < hi)]
    if len(diag) < needed:
        return []
    diag.sort()
    # clusters of diagonals no further apart than an inserted or dropped word or two
    starts = np.concatenate(([0], np.flatnonzero(diag[1:] - diag[:-1] > max(12, len(q) // 4)) + 1))
    sizes = np.concatenate((starts[1:], [len(diag)])) - starts
    good = np.flatnonzero(sizes >= needed)
    good = good[np.argsort(-sizes[good], kind="stable")][:64]
    return list(zip(diag[starts[good]].tolist(), diag[starts[good] + sizes[good] - 1].tolist()))


def _refine(q: str, t: str, lo: int, hi: int, floor: float = 0.0) -> tuple[int, int, float]:
    """Best span of ``q`` in ``t[lo:hi]`` (norm offsets) and its ratio.

    The whole-quote :func:`~rapidfuzz.fuzz.partial_ratio_alignment` window is re-anchored by aligning the quote's
    first and last few characters near its edges (so a word inserted or dropped inside the quote moves the end
    instead of truncating it), then each boundary is polished to maximise the Levenshtein similarity with the
    quote; ties keep the longer span, so a substituted first or last character stays inside.
    """
    region = t[lo:hi]
    m = len(q)
    if not region or not m:
        return lo, lo, 0.0
    if len(region) <= m:
        ws, we = lo, hi
    else:
        al = fuzz.partial_ratio_alignment(q, region)
        ws = max(lo, lo + al.dest_start - al.src_start)
        we = min(hi, lo + al.dest_end + (m - al.src_end))
        if al.score < floor - 25:  # hopeless: no boundary move gains that much
            return ws, we, fuzz.ratio(q, t[ws:we])
        if al.score < 100 and m >= 16:
            k = min(24, m // 2)
            reach = m // 4 + 8
            a0, a1 = max(lo, ws - reach), min(hi, ws + reach + k)
            head = fuzz.partial_ratio_alignment(q[:k], t[a0:a1]) if a1 - a0 >= k else None
            b0, b1 = max(lo, we - reach - k), min(hi, we + reach)
            tail = fuzz.partial_ratio_alignment(q[-k:], t[b0:b1]) if b1 - b0 >= k else None
            s2 = a0 + head.dest_start - head.src_start if head and head.score >= 60 else ws
            e2 = b0 + _aligned_end(tail, k) if tail and tail.score >= 60 else we
            if lo <= s2 < e2 <= hi:
                ws, we = s2, e2
    sim = Levenshtein.normalized_similarity
    best = sim(q, t[ws:we])
    step = 3
    for _ in range(12):
        s_choices = range(max(lo, ws - step), min(we, ws + step + 1))  # earliest first: ties keep the longer
        hit = process.extractOne(q, [t[s:we] for s in s_choices], scorer=sim)
        ns = s_choices[hit[2]] if hit and hit[1] >= best else ws
        best = max(best, hit[1]) if hit else best
        e_choices = range(min(hi, we + step), max(ns, we - step - 1), -1)  # latest first
        hit = process.extractOne(q, [t[ns:e] for e in e_choices], scorer=sim)
        ne = e_choices[hit[2]] if hit and hit[1] >= best else we
        best = max(best, hit[1]) if hit else best
        if ns == ws and ne == we:
            break
        at_edge = abs(ns - ws) == step or abs(ne - we) == step
        ws, we = ns, ne
        step = min(step * 2, 48) if at_edge else 3
    while ws < we and t[ws] == " ":
        ws += 1
    while we > ws and t[we - 1] == " ":
        we -= 1
    ws, we = _anchor_words(q, t, ws, we, lo, hi, floor)
    return ws, we, fuzz.ratio(q, t[ws:we])


_EDGE_WORD = re.compile(r"[^\W_]+")
_ANCHOR_SLACK = 15.0  # how much ratio an edge-word anchor may cost (a dropped word is short)


def _anchor_words(q: str, t: str, ws: int, we: int, lo: int, hi: int, floor: float) -> tuple[int, int]:
    """Move a span's edges onto the quote's first / last word when that word stands right next to them.

    Character edit distance explains a word dropped or added next to an edge ('far beneficial' for 'far proved
    beneficial') as a few substitutions and cuts the span inside a word; a reader sees the edge word. A nearby
    whole-word occurrence (at most two words away) wins unless it drops the ratio under ``floor``.
    """
    words = list(_EDGE_WORD.finditer(q))
    if not words or _CJK_RE.search(q):
        return ws, we
    first, last = words[0], words[-1]
    if first.start() == 0 and not _at_word(t, ws, first.group()):
        starts = [p for p in _occurrences(t, first.group(), ws, lo, hi) if t.count(" ", min(p, ws), max(p, ws)) <= 2]
        ws = _pick(q, t, [(p, we) for p in starts], (ws, we), floor)[0]
    if last.end() == len(q) and not _at_word(t, we - len(last.group()), last.group()):
        ends = [p + len(last.group()) for p in _occurrences(t, last.group(), we - len(last.group()), lo, hi)]
        ends = [e for e in ends if e > ws and t.count(" ", min(e, we), max(e, we)) <= 2]
        we = _pick(q, t, [(ws, e) for e in ends], (ws, we), floor)[1]
    return ws, we


def _occurrences(t: str, word: str, near: int, lo: int, hi: int) -> list[int]:
    """Whole-word occurrences of ``word`` starting within a couple of words of ``near``."""
    reach = len(word) + 24
    out, p = [], t.find(word, max(lo, near - reach), min(hi, near + reach + len(word)))
    while p >= 0:
        if _is_word_at(t, p, len(word)):
            out.append(p)
        p = t.find(word, p + 1, min(hi, near + reach + len(word)))
    return out


def _pick(q: str, t: str, options: list[tuple[int, int]], current: tuple[int, int], floor: float) -> tuple[int, int]:
    base = fuzz.ratio(q, t[current[0] : current[1]])
    best, best_score = current, base
    for s, e in options:
        sc = fuzz.ratio(q, t[s:e])
        if sc >= floor and sc + _ANCHOR_SLACK >= base and (best == current or sc > best_score):
            best, best_score = (s, e), sc
    return best


def _at_word(t: str, p: int, word: str) -> bool:
    return p >= 0 and t.startswith(word, p) and _is_word_at(t, p, len(word))


def _is_word_at(t: str, p: int, n: int) -> bool:
    return (p == 0 or not t[p - 1].isalnum()) and (p + n >= len(t) or not t[p + n].isalnum())


def _aligned_end(al: Any, k: int) -> int:
    """End offset (in the searched string) of a k-character needle aligned by partial_ratio_alignment."""
    return al.dest_end + (k - al.src_end)


def _search(q: str, view: _View, lo: int, hi: int, threshold: float, *, limit: int = 1000) -> list[tuple[int, int, float]]:
    """All non-overlapping spans of ``q`` in ``view.norm[lo:hi]`` scoring at least ``threshold``, best first.

    A long text searched more than once gets a q-gram index and only its voted regions are examined (exact
    occurrences included: they win every vote); otherwise exact occurrences come from ``str.find`` and near
    ones from repeated partial-ratio alignment over the parts not yet explained.
    """
    t = view.norm
    m = len(q)
    pad = m // 3 + 8
    found: list[tuple[int, int, float]] = []
    indexed = (hi - lo > _INDEX_MIN_CHARS and m >= 2 * _gram_len(q) and threshold < 100
               and (view.index is not None or view.uses > 0))
    if indexed:
        candidates = [(max(lo, c0 - pad), min(hi, c1 + m + pad)) for c0, c1 in _vote(q, view, lo, hi)]
    else:
        pos = t.find(q, lo, hi)
        while pos >= 0 and len(found) < limit:
            found.append((pos, pos + m, 100.0))
            pos = t.find(q, pos + max(m, 1), hi)
        if threshold >= 100:
            return found
        candidates = []
        cut = max(0.0, threshold - (15 if m >= 8 else 10))
        stack = [(lo, hi)]
        while stack and len(candidates) < 256:
            a, b = stack.pop()
            if b - a < max(1, m // 2):
                continue
            al = fuzz.partial_ratio_alignment(q, t[a:b], score_cutoff=cut)
            if al is None:
                continue
            ws, we = a + al.dest_start, a + al.dest_end
            short = max(0, m - (we - ws))  # a window cut by the text's edge may hide where the quote starts
            candidates.append((max(a, ws - pad - short), min(b, we + pad + short)))
            stack += [(a, ws), (we, b)]
    for a, b in candidates:
        if any(s < b and a < e for s, e, _ in found):
            continue  # a region touching a span already found holds no better, separate occurrence
        pos = t.find(q, a, b) if indexed else -1
        if pos >= 0:
            found.append((pos, pos + m, 100.0))
            continue
        s, e, sc = _refine(q, t, a, b, threshold)
        if sc >= threshold and e > s and all(e <= s2 or e2 <= s for s2, e2, _ in found):
            found.append((s, e, sc))
    found.sort(key=lambda x: (-x[2], x[0]))
    return found


def _search_parts(parts: Sequence[str], view: _View, threshold: float) -> list[tuple[int, int, float]]:
    """Spans where the ellipsis-separated ``parts`` all match, in order, with gaps between them."""
    t = view.norm
    total = sum(len(p) for p in parts)
    gap = max(2_000, 20 * total)
    out: list[tuple[int, int, float]] = []
    for s0, e0, sc0 in _search(parts[0], view, 0, len(t), threshold):
        end, weighted = e0, sc0 * len(parts[0])
        for part in parts[1:]:
            hits = _search(part, view, end, min(len(t), end + gap + len(part)), threshold, limit=1)
            if not hits:
                break
            s1, e1, sc1 = min(hits, key=lambda h: (-h[2], h[0]))  # the best, then the nearest
            end, weighted = e1, weighted + sc1 * len(part)
        else:
            out.append((s0, end, weighted / total))
    return out


def _spans(quote: str, text: str, threshold: float) -> tuple[_View, str, list[tuple[int, int, float]], bool]:
    if not 0 <= threshold <= 100:
        raise InputError(f"threshold must be between 0 and 100, got {threshold}")
    if quote is None or not quote.strip():
        raise InputError("the quote is empty")
    view = _view(text or "")
    q = _strip_quote(_norm(quote))
    if not q or not view.norm:
        return view, q, [], False
    parts = [p for p in _ELLIPSIS.split(q) if p.strip()] if "..." in q else []
    if len(parts) > 1 and view.norm.find(q) < 0:
        hits = _search_parts(parts, view, threshold)
        if hits:
            return view, q, hits, True
    hits = _search(q, view, 0, len(view.norm), threshold)
    return view, q, hits, False


def _to_span(view: _View, quote: str, q: str, s: int, e: int, threshold: float, elided: bool) -> Span:
    """The span in original offsets, scored on the original matched text (so re-scoring it agrees)."""
    os_, oe = view.to_original(s, e)
    matched = view.original[os_:oe]
    if elided:
        sc = score(quote, matched)
        exact = sc >= 100.0
    else:
        norm = _norm(matched)
        sc = fuzz.ratio(q, norm)
        exact = norm == q
    verdict = VERBATIM if exact else NEAR if sc >= threshold else NOT_FOUND
    return Span(start=os_, end=oe, score=round(float(sc), 2), matched=matched, verdict=verdict)


def locate(quote: str, text: str, *, threshold: float = 90) -> list[Span]:
    """Every occurrence of ``quote`` in ``text`` scoring at least ``threshold`` (0-100), in text order.

    Offsets index the original ``text`` (``text[span.start:span.end] == span.matched``); ``verdict`` is
    ``"verbatim"`` when the span equals the quote after normalization, else ``"near"``. No span: not found.
    """
    view, q, hits, elided = _spans(quote, text, threshold)
    spans = [_to_span(view, quote, q, s, e, threshold, elided) for s, e, _ in hits]
    return sorted((sp for sp in spans if sp.verdict != NOT_FOUND), key=lambda sp: sp.start)


def closest_span(quote: str, text: str, *, threshold: float = 90) -> Span:
    """The best-scoring region of ``text`` for ``quote``, even below ``threshold`` (then verdict ``not_found``).

    An empty text gives ``Span(0, 0, 0.0, "", "not_found")``.
    """
    view, q, hits, elided = _spans(quote, text, threshold)
    if hits:
        s, e, sc = max(hits, key=lambda h: h[2])
        return _to_span(view, quote, q, s, e, threshold, elided)
    if not q or not view.norm:
        return Span(0, 0, 0.0, "", NOT_FOUND)
    t = view.norm
    if len(t) > _INDEX_MIN_CHARS and view.index is not None:
        starts = _vote(q, view, 0, len(t))[:1]
        pad = len(q) // 3 + 8
        region = (max(0, starts[0][0] - pad), min(len(t), starts[0][1] + len(q) + pad)) if starts else (0, len(t))
    else:
        region = (0, len(t))
    s, e, sc = _refine(q, t, *region)
    if e <= s:
        return Span(0, 0, 0.0, "", NOT_FOUND)
    return _to_span(view, quote, q, s, e, threshold, False)


def score(quote: str, candidate: str) -> float:
    """How well ``candidate`` (e.g. a span's ``matched``) reproduces ``quote``: the locate score, 0-100."""
    q = _strip_quote(_norm(quote))
    c = _norm(candidate)
    whole = fuzz.ratio(q, c)
    parts = [p for p in _ELLIPSIS.split(q) if p.strip()]
    if len(parts) > 1 and whole < 100:
        hits = _search_parts(parts, _build_view(candidate), 50.0)
        if hits:
            whole = max(whole, max(h[2] for h in hits))
    return float(whole)


# -- highlighting ------------------------------------------------------------------------------------------------
def highlight(text: str, spans: Iterable[Span | tuple[int, int]]) -> str:
    """``text`` as HTML with every span wrapped in ``<mark>``; every character of ``text`` is escaped.

    Offsets are Python ``str`` indices (so multi-byte characters are safe); overlapping spans are merged and
    out-of-range offsets clipped. A :class:`Span` mark carries its verdict as a class (``quill-verbatim`` ...).
    """
    text = text or ""
    ranges: list[tuple[int, int, str]] = []
    for sp in spans:
        if isinstance(sp, Span):
            a, b, verdict = sp.start, sp.end, sp.verdict
        else:
            a, b = sp[0], sp[1]
            verdict = ""
        a, b = max(0, min(len(text), int(a))), max(0, min(len(text), int(b)))
        if b > a:
            ranges.append((a, b, verdict))
    ranges.sort()
    merged: list[list] = []
    for a, b, verdict in ranges:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b, verdict])
    out: list[str] = []
    pos = 0
    for a, b, verdict in merged:
        out.append(html.escape(text[pos:a]))
        cls = f' class="quill-{verdict.replace("_", "-")}"' if verdict in (VERBATIM, NEAR, NOT_FOUND) else ""
        out.append(f"<mark{cls}>{html.escape(text[a:b])}</mark>")
        pos = b
    out.append(html.escape(text[pos:]))
    return "".join(out)
