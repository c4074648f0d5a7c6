"""Locate a quotation in a text: exact spans (offsets into the ORIGINAL text), a score, a verdict, and highlighting.

Matching runs on a *normalized view* of both strings (:mod:`quill_core._textview`: NFKC, case-folded, straight
quotes, one '-' for dash runs, whitespace collapsed, dropped next to CJK) that maps every normalized character back
to the original one, so spans are reported in original offsets, on character boundaries, with
``text[start:end] == matched``. Candidate regions are found and refined by :mod:`quill_core._spansearch`. Scores
are :func:`rapidfuzz.fuzz.ratio` (0-100) of the normalized quote against the normalized matched text. A quote
with an ellipsis (``...``, ``…``, ``[...]``) may also match its parts in order, the omitted middle then lying
inside the span.
"""

from __future__ import annotations

import html
import re
from typing import Iterable

from rapidfuzz import fuzz

from ._errors import InputError
from ._spansearch import INDEX_MIN_CHARS, refine, search, search_parts, vote
from ._textview import View, build_view, cached_view, normalized
from ._types import Span


VERBATIM, NEAR, NOT_FOUND = "verbatim", "near", "not_found"
_ELLIPSIS = re.compile(r"\s*(?:\[\s*\.{3,}\s*\]|\(\s*\.{3,}\s*\)|\.{3,})\s*")
_EDGE_ELLIPSIS = re.compile(r"^(?:\.{3,}|\[\.{3,}\])\s*|\s*(?:\.{3,}|\[\.{3,}\])$")


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


def _spans(quote: str, text: str, threshold: float) -> tuple[View, str, list[tuple[int, int, float]], bool]:
    if not 0 <= threshold <= 100:
        raise InputError(f"threshold must be between 0 and 100, got {threshold}")
    if quote is None or not quote.strip():
        raise InputError("the quote is empty")
    view = cached_view(text or "")
    q = _strip_quote(normalized(quote))
    if not q or not view.norm:
        return view, q, [], False
    parts = [p for p in _ELLIPSIS.split(q) if p.strip()] if "..." in q else []
    if len(parts) > 1 and view.norm.find(q) < 0:
        hits = search_parts(parts, view, threshold)
        if hits:
            return view, q, hits, True
    hits = search(q, view, 0, len(view.norm), threshold)
    return view, q, hits, False


def _to_span(view: View, quote: str, q: str, s: int, e: int, threshold: float, elided: bool) -> Span:
    """The span in original offsets, scored on the original matched text (so re-scoring it agrees)."""
    os_, oe = view.to_original(s, e)
    matched = view.original[os_:oe]
    if elided:
        sc = score(quote, matched)
        exact = sc >= 100.0
    else:
        norm = normalized(matched)
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
    if len(t) > INDEX_MIN_CHARS and view.index is not None:
        starts = vote(q, view, 0, len(t))[:1]
        pad = len(q) // 3 + 8
        region = (max(0, starts[0][0] - pad), min(len(t), starts[0][1] + len(q) + pad)) if starts else (0, len(t))
    else:
        region = (0, len(t))
    s, e, sc = refine(q, t, *region)
    if e <= s:
        return Span(0, 0, 0.0, "", NOT_FOUND)
    return _to_span(view, quote, q, s, e, threshold, False)


def score(quote: str, candidate: str) -> float:
    """How well ``candidate`` (e.g. a span's ``matched``) reproduces ``quote``: the locate score, 0-100."""
    q = _strip_quote(normalized(quote))
    c = normalized(candidate)
    whole = fuzz.ratio(q, c)
    parts = [p for p in _ELLIPSIS.split(q) if p.strip()]
    if len(parts) > 1 and whole < 100:
        hits = search_parts(parts, build_view(candidate), 50.0)
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
