"""Candidate search and refinement: where in a normalized text a normalized quote (or its ellipsis-separated parts)
occurs, as spans of the view's normalized offsets with their :func:`rapidfuzz.fuzz.ratio` scores.

Exact occurrences come from ``str.find``, near ones from candidate regions found by repeated
:func:`rapidfuzz.fuzz.partial_ratio_alignment`; a long text searched again gets a q-gram index instead, and only
regions where the quote's rare q-grams line up are examined. Each candidate window is then refined: its edges are
re-anchored on the quote's first and last characters and words and polished to maximise the Levenshtein
similarity, so insertions or deletions inside the quote neither shift nor truncate the span.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from ._text import CJK
from ._textview import View, codes


INDEX_MIN_CHARS = 20_000
"""A text longer than this (searched more than once) is searched through its q-gram index."""


def _gram_len(q: str) -> int:
    cjk = len(CJK.findall(q))
    return 2 if cjk * 3 >= len(q) else 4


def _hashes(cps: np.ndarray, g: int) -> np.ndarray:
    """Polynomial hashes of every ``g``-gram of a code-point array."""
    c = cps.astype(np.uint64)
    n = len(c) - g + 1
    h = c[:n]
    for k in range(1, g):
        h = h * np.uint64(1_000_003) + c[k : k + n]
    return h


def _index(view: View, g: int) -> tuple[np.ndarray, np.ndarray]:
    if view.index is None:
        view.index = {}
    idx = view.index.get(g)
    if idx is None:
        h = _hashes(codes(view.norm), g)
        order = np.argsort(h)
        idx = (h[order], order.astype(np.int32))
        view.index[g] = idx
    return idx


def vote(q: str, view: View, lo: int, hi: int) -> list[tuple[int, int]]:
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
    hq = _hashes(codes(q), g)
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


def refine(q: str, t: str, lo: int, hi: int, floor: float = 0.0) -> tuple[int, int, float]:
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
    if not words or CJK.search(q):
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


def search(q: str, view: View, lo: int, hi: int, threshold: float, *,
           limit: int = 1000) -> list[tuple[int, int, float]]:
    """All non-overlapping spans of ``q`` in ``view.norm[lo:hi]`` scoring at least ``threshold``, best first.

    A long text searched more than once gets a q-gram index and only its voted regions are examined (exact
    occurrences included: they win every vote); otherwise exact occurrences come from ``str.find`` and near
    ones from repeated partial-ratio alignment over the parts not yet explained.
    """
    t = view.norm
    m = len(q)
    pad = m // 3 + 8
    found: list[tuple[int, int, float]] = []
    indexed = (hi - lo > INDEX_MIN_CHARS and m >= 2 * _gram_len(q) and threshold < 100
               and (view.index is not None or view.uses > 0))
    if indexed:
        candidates = [(max(lo, c0 - pad), min(hi, c1 + m + pad)) for c0, c1 in vote(q, view, lo, hi)]
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
        s, e, sc = refine(q, t, a, b, threshold)
        if sc >= threshold and e > s and all(e <= s2 or e2 <= s for s2, e2, _ in found):
            found.append((s, e, sc))
    found.sort(key=lambda x: (-x[2], x[0]))
    return found


def search_parts(parts: Sequence[str], view: View, threshold: float) -> list[tuple[int, int, float]]:
    """Spans where the ellipsis-separated ``parts`` all match, in order, with gaps between them."""
    t = view.norm
    total = sum(len(p) for p in parts)
    gap = max(2_000, 20 * total)
    out: list[tuple[int, int, float]] = []
    for s0, e0, sc0 in search(parts[0], view, 0, len(t), threshold):
        end, weighted = e0, sc0 * len(parts[0])
        for part in parts[1:]:
            hits = search(part, view, end, min(len(t), end + gap + len(part)), threshold, limit=1)
            if not hits:
                break
            s1, e1, sc1 = min(hits, key=lambda h: (-h[2], h[0]))  # the best, then the nearest
            end, weighted = e1, weighted + sc1 * len(part)
        else:
            out.append((s0, end, weighted / total))
    return out
