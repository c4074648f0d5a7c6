"""Check the quotations in a draft: find them (:mod:`quill_core._quotations`), look each up, and say whether it is
verbatim, misquoted, misattributed or unknown, with the canonical text, its author and a word-level diff
(character-level for Chinese).

    results = verify(draft, kb=kb, neighbours=lambda text, k: quill.search(text, k=k))

Lookup: an exact match of the normalized text in the knowledge base (``kb.by_key``); else the embedding
neighbours (``neighbours(text, k)``, injected) scored by fuzzy matching; else, when a source library is given,
the source texts (a span found there is the canonical text, its document's author the author). Chinese is looked
up in Simplified script (:func:`quill_core._text.simplified_chars`), so a Traditional draft (海內存知己) matches its
Simplified quote; offsets still index the draft as written. A named work (《作品》) that is not the quote's is a
misattribution too.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Final, Literal, Mapping, Protocol, Sequence

from rapidfuzz import fuzz

from ._errors import InputError
from ._spans import closest_span
from ._text import is_cjk, key, normalize, simplified_chars
from ._names import same_author, same_work
from ._quotations import Quotation, find_quotations
from ._types import Candidate, Provenance, Quote, Tone, Verdict


VERBATIM: Final = "verbatim"
MISQUOTED: Final = "misquoted"
MISATTRIBUTED: Final = "misattributed"
UNKNOWN: Final = "unknown"
MAX_DRAFT_CHARS = 100_000

Neighbours = Callable[[str, int], Sequence[Candidate]]
DiffTag = Literal["equal", "replace", "delete", "insert"]


@dataclass(frozen=True)
class VerdictMeaning:
    """What a verdict means for a writer: a short ``label``, a ``tone`` and a one-line ``explanation``."""

    label: str
    tone: Tone
    explanation: str


VERDICT_MEANINGS: Mapping[Verdict, VerdictMeaning] = MappingProxyType({
    VERBATIM: VerdictMeaning("verified", "success",
                             "The wording matches the knowledge base (or a source text) and the author agrees."),
    MISQUOTED: VerdictMeaning("misquoted", "warning",
                              "A known quotation, but the draft's wording differs from the canonical text."),
    MISATTRIBUTED: VerdictMeaning("misattributed", "error",
                                  "The wording is right, but the draft names another author than the record."),
    UNKNOWN: VerdictMeaning("not in the knowledge base", "neutral",
                            "Quill cannot vouch for this quotation: it is in neither the knowledge base nor a source."),
})
"""Every verdict's meaning for a writer (read-only); the pages and renderers show these, never their own."""


@dataclass(frozen=True)
class DiffOp:
    """One step from the canonical text to the draft's wording: ``equal``, ``replace``, ``delete`` (only in the
    canonical text) or ``insert`` (only in the draft). ``canonical`` / ``draft`` hold the words on each side."""

    op: DiffTag
    canonical: str = ""
    draft: str = ""


@dataclass(frozen=True)
class Verification:
    """The verdict on one quotation of a draft (offsets index the draft).

    ``canonical`` and ``author`` come from the knowledge base (or a source text); ``claimed_author`` and
    ``claimed_work`` are what the draft credits; ``score`` (0-100) is how closely the draft's wording matches
    ``canonical``; ``diff`` is filled for ``misquoted``; ``source`` holds the provenance in a source text when one
    was found; ``note`` says anything else worth knowing.
    """

    start: int
    end: int
    text: str
    verdict: Verdict
    canonical: str = ""
    author: str = ""
    claimed_author: str = ""
    score: float = 0.0
    diff: tuple[DiffOp, ...] = ()
    quote_id: str = ""
    source: Provenance | None = None
    note: str = ""
    claimed_work: str = ""

    @property
    def meaning(self) -> VerdictMeaning:
        """What the verdict means for a writer (label, tone, explanation)."""
        return VERDICT_MEANINGS[self.verdict]


class SourceLookup(Protocol):
    """What :func:`verify` needs from a source library (see :class:`quill_core._sources.SourceLibrary`)."""

    def find(self, text: str, *, author: str = "") -> Provenance | None: ...

    def covers(self, author: str) -> str: ...


# -- diffs -------------------------------------------------------------------------------------------------------
def _tokens(text: str, *, chars: bool) -> list[tuple[int, int, str]]:
    pattern = r"[^\W_]" if chars else r"[^\W_]+(?:['’][^\W_]+)*"
    return [(m.start(), m.end(), simplified_chars(normalize(m.group()).casefold()))
            for m in re.finditer(pattern, text)]


def word_diff(canonical: str, draft: str) -> tuple[DiffOp, ...]:
    """How ``draft`` departs from ``canonical``, word by word (character by character for Chinese).

    Words are compared case-insensitively with punctuation ignored and Chinese in either script (鄰 equals 邻);
    each op carries the original text of both sides (punctuation between its words included).
    """
    chars = sum(1 for ch in canonical + draft if is_cjk(ch)) * 2 >= len(re.findall(r"\w", canonical + draft))
    a, b = _tokens(canonical, chars=chars), _tokens(draft, chars=chars)
    ops: list[DiffOp] = []
    matcher = difflib.SequenceMatcher(None, [t[2] for t in a], [t[2] for t in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        left = canonical[a[i1][0] : a[i2 - 1][1]] if i2 > i1 else ""
        right = draft[b[j1][0] : b[j2 - 1][1]] if j2 > j1 else ""
        ops.append(DiffOp(tag, left, right))
    return tuple(ops)


# -- verification ------------------------------------------------------------------------------------------------
def _similarity(draft_text: str, canonical: str) -> float:
    """How closely a quotation reproduces a canonical quote (0-100): the whole, or the part it quotes."""
    kq, kc = key(draft_text), key(canonical)
    if not kq or not kc:
        return 0.0
    if kq == kc or (kq in kc and len(kq) >= min(12, len(kc))):
        return 100.0
    whole = fuzz.ratio(normalize(draft_text).casefold(), normalize(canonical).casefold())
    part = 0.0
    if len(kq) >= 0.4 * len(kc) and len(kq) >= 12:
        part = closest_span(draft_text, canonical, threshold=0).score
    return max(whole, part)


def _verdict_for(quotation: Quotation, quote: Quote, score: float, *, exact: bool, threshold: float) -> Verdict:
    if not exact and score < threshold:
        return UNKNOWN
    if not exact and score < 100:
        return MISQUOTED
    if quotation.claimed_author and not same_author(quotation.claimed_author, quote.author):
        return MISATTRIBUTED
    if quotation.claimed_work and not same_work(quotation.claimed_work, quote.work):
        return MISATTRIBUTED
    return VERBATIM


def _credit_note(q: Quotation, quote: Quote, *, record: str = "the knowledge base") -> str:
    """What the record says instead of the draft's credit (author, then work), or ''."""
    if q.claimed_author and not same_author(q.claimed_author, quote.author):
        return f"{record} attributes it to {quote.author or 'an unknown author'}"
    if q.claimed_work and not same_work(q.claimed_work, quote.work):
        return f"{record} places it in {quote.work}, not {q.claimed_work}"
    return ""


def _check(q: Quotation, kb: Any, neighbours: Neighbours | None, *, threshold: float, k: int,
           sources: SourceLookup | None) -> Verification:
    base = dict(start=q.start, end=q.end, text=q.text, claimed_author=q.claimed_author, claimed_work=q.claimed_work)
    text = simplified_chars(q.text)  # what is looked up: Traditional characters made Simplified
    script = "written in Traditional characters" if text != q.text else ""
    exact = list(kb.by_key(q.text)) if kb is not None else []
    if not exact and script and kb is not None:
        exact = list(kb.by_key(text))
    if exact:
        match = next((c for c in exact if q.claimed_author and same_author(q.claimed_author, c.author)
                      and c.author), exact[0])
        verdict = _verdict_for(q, match, 100.0, exact=True, threshold=threshold)
        note = _credit_note(q, match) if verdict == MISATTRIBUTED else ""
        return _with_source(Verification(**base, verdict=verdict, canonical=match.text, author=match.author,
                                         score=100.0, quote_id=match.id, note=_join(note, script)), q, sources)
    best: tuple[float, Quote] | None = None
    for cand in (neighbours(text, k) if neighbours is not None else []):
        sc = _similarity(text, cand.quote.text)
        if best is None or sc > best[0]:
            best = (sc, cand.quote)
    if best is not None and best[0] >= threshold:
        sc, quote = best
        verdict = _verdict_for(q, quote, sc, exact=sc >= 100, threshold=threshold)
        note = _credit_note(q, quote) if verdict == MISATTRIBUTED else ""
        if verdict == MISQUOTED and q.claimed_author and not same_author(q.claimed_author, quote.author):
            note = f"also attributed to {q.claimed_author}, but the knowledge base says {quote.author}"
        elif verdict == VERBATIM and key(text) != key(quote.text):
            note = "an exact excerpt of a longer quote"
        diff = word_diff(quote.text, q.text) if verdict == MISQUOTED else ()
        return _with_source(Verification(**base, verdict=verdict, canonical=quote.text, author=quote.author,
                                         score=round(sc, 2), diff=diff, quote_id=quote.id,
                                         note=_join(note, script)), q, sources)
    if sources is not None:
        found = sources.find(text)
        if found is not None:
            span = found.span
            quote = Quote(text=span.matched, author=found.author, work=found.title)
            exact = span.verdict == "verbatim" or key(text) == key(simplified_chars(span.matched))
            verdict = _verdict_for(q, quote, 100.0 if exact else span.score, exact=exact, threshold=threshold)
            diff = word_diff(span.matched, q.text) if verdict == MISQUOTED else ()
            note = _credit_note(q, quote, record="the source") if verdict == MISATTRIBUTED else ""
            return Verification(**base, verdict=verdict, canonical=span.matched, author=found.author,
                                score=span.score, diff=diff, source=found,
                                note=_join(f"found in source: {found.label}", note, script))
        covered = sources.covers(q.claimed_author) if q.claimed_author else ""
        if covered:
            return Verification(**base, verdict=UNKNOWN,
                                note=f"not found in {covered}: likely misattributed to {q.claimed_author}")
    return Verification(**base, verdict=UNKNOWN, note="not in the knowledge base")


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _with_source(v: Verification, q: Quotation, sources: SourceLookup | None) -> Verification:
    """Attach the source passage of a known quote ("verified in source: 王勃《杜少府之任蜀州》"), or flag a miss in its
    author's works."""
    if sources is None or v.verdict == UNKNOWN:
        return v
    found = sources.find(v.canonical, author=v.author)
    if found is not None:
        return replace(v, source=found, note=_join(v.note, f"verified in source: {found.label}"))
    covered = sources.covers(v.author)
    if covered:
        return replace(v, note=_join(v.note, f"not found in {covered}: the attribution is doubtful"))
    return v


def verify(draft: str, *, kb: Any, neighbours: Neighbours | None = None, threshold: float = 75.0, k: int = 8,
           sources: SourceLookup | None = None) -> list[Verification]:
    """Verify every quotation in ``draft`` against the knowledge base ``kb`` (needs ``by_key(text)``).

    ``neighbours(text, k)`` returns the embedding neighbours of a text (e.g. ``Quill.search``); a neighbour
    whose wording scores at least ``threshold`` (0-100) against the quotation makes it ``misquoted`` (or
    ``verbatim`` when it is an exact excerpt). ``sources`` (a :class:`~quill_core._sources.SourceLibrary`)
    adds provenance in source texts.
    """
    if draft is None or not draft.strip():
        raise InputError("the draft is empty: paste some text with quotations")
    if len(draft) > MAX_DRAFT_CHARS:
        raise InputError(f"the draft has {len(draft):,} characters; the limit is {MAX_DRAFT_CHARS:,}")
    if not 0 <= threshold <= 100:
        raise InputError(f"threshold must be between 0 and 100, got {threshold}")
    return [_check(q, kb, neighbours, threshold=threshold, k=k, sources=sources) for q in find_quotations(draft)]
