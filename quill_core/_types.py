"""Typed results shared across modules. Everything is a frozen dataclass; offsets index the original text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping

from ._names import author_key
from ._text import has_cjk, key



Progress = Callable[[float, str], None]
"""A progress callback: ``progress(fraction in [0, 1], message)``."""

Verdict = Literal["verbatim", "misquoted", "misattributed", "unknown"]
"""What verification says of a quotation in a draft: the wording and author agree with the knowledge base (or a
source text), the wording differs, the wording is right but the author is not, or the quotation is not known."""

SpanVerdict = Literal["verbatim", "near", "not_found"]
"""How a located span matches its quote: equal after normalization, close (at least the threshold), or the closest
region only (below the threshold)."""

Tone = Literal["success", "warning", "error", "info", "neutral"]
"""How a result should strike a writer: good news, something to fix, something wrong, worth knowing, or nothing
either way (the app maps each tone to a colour)."""


def quote_id(text: str, author: str = "") -> str:
    """Stable id of a quote: a hash of its matching key and its author's key (see :func:`quill_core._text.key`)."""
    digest = hashlib.sha1(f"{key(text)}\x1f{author_key(author)}".encode("utf-8"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Quote:
    """One quotation of a knowledge base.

    ``collections`` names every collection that attests the quote (merged duplicates keep all of them);
    ``ppl`` (the quote's own perplexity under the default LM) and ``popularity`` (how widely it is attested,
    e.g. QUILL's web hit count) are cached scores that later stages fill in and may be ``None``.
    """

    text: str
    author: str = ""
    work: str = ""
    topics: tuple[str, ...] = ()
    lang: str = "en"
    collections: tuple[str, ...] = ()
    ppl: float | None = None
    popularity: float | None = None
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", quote_id(self.text, self.author))


@dataclass(frozen=True)
class Query:
    """A paragraph split at its insertion point (the ``[Q]`` marker, else the end)."""

    before: str
    after: str
    lang: str = "en"

    @property
    def text(self) -> str:
        """The paragraph without the marker."""
        return self.before + self.after

    @property
    def position(self) -> int:
        """Offset of the insertion point in :attr:`text`."""
        return len(self.before)


@dataclass(frozen=True)
class Filters:
    """Retrieval filters; empty strings mean 'any'. ``author`` compares normalized names."""

    author: str = ""
    lang: str = ""
    topic: str = ""


@dataclass(frozen=True)
class Candidate:
    """A retrieved quote with its retrieval similarity (cosine for dense retrieval, higher is closer)."""

    quote: Quote
    similarity: float
    retriever: str = "dense"


@dataclass(frozen=True)
class Criterion:
    """One scored criterion: ``value`` in [0, 1] (higher is better), the ``raw`` measurement it came from, its weight."""

    name: str
    value: float
    raw: float | None = None
    weight: float = 0.0
    note: str = ""


@dataclass(frozen=True)
class Pool:
    """Retrieved candidates of one query: ``dense`` by cosine and ``lexical`` by BM25 (``similarity`` = BM25),
    best first; ``named`` by cosine among the quotes of the authors the paragraph names (``authors``, nearest to
    the insertion point first); ``cosine`` holds the cosine of every quote in any list when known."""

    dense: tuple[Candidate, ...] = ()
    lexical: tuple[Candidate, ...] = ()
    cosine: Mapping[str, float] = field(default_factory=dict)
    named: tuple[Candidate, ...] = ()
    authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Badge:
    """A short status shown beside a result: its ``label``, ``tone`` and a one-line ``help``."""

    label: str
    tone: Tone
    help: str


@dataclass(frozen=True)
class Suggestion:
    """A ranked quote with its total score, per-criterion breakdown and, when found, its place in a source text."""

    quote: Quote
    score: float
    breakdown: tuple[Criterion, ...] = ()
    similarity: float = 0.0
    why: str = ""
    provenance: Provenance | None = None

    def criterion(self, name: str) -> Criterion | None:
        return next((c for c in self.breakdown if c.name == name), None)

    @property
    def badge(self) -> Badge:
        """Why a writer may trust this quote: verified in a source text, attested by several collections, or
        neither."""
        found = self.provenance
        if found is not None:
            return Badge("verified in source", "success", f"Found in {found.label} ({found.span.score:.0f}/100).")
        n = len(self.quote.collections)
        if n >= 2:
            return Badge(f"in {n} collections", "info", "Several independent collections attest this quotation.")
        return Badge("unverified", "neutral", "Only one collection lists this quotation; check it before publishing.")


@dataclass(frozen=True)
class Span:
    """Where a quote was found: ``text[start:end] == matched``; ``score`` in [0, 100]."""

    start: int
    end: int
    score: float
    matched: str
    verdict: SpanVerdict = "near"


@dataclass(frozen=True)
class Provenance:
    """Where a quote was found in a source text: the passage around it and its exact ``span`` (offsets into the
    document text); ``location`` is a human label such as the act and scene or the verse reference."""

    source: str
    doc: str
    title: str
    author: str
    passage_start: int
    passage_end: int
    span: Span
    location: str = ""

    @property
    def label(self) -> str:
        """Where, for a reader: a Chinese work as author《title》 (王勃《杜少府之任蜀州》), else the title and the
        location ('Hamlet, ACT III, SCENE I')."""
        if has_cjk(self.title):
            return " ".join(filter(None, [f"{self.author}《{self.title}》", self.location]))
        return ", ".join(x for x in (self.title or self.doc, self.location) if x)


@dataclass(frozen=True)
class Draft:
    """One generated insertion sentence and how it fared. ``fallback`` marks the deterministic template sentence
    used when every generated draft was rejected."""

    text: str
    fluency: float = 0.0
    attribution: float = 0.0
    rejected_reason: str = ""
    fallback: bool = False

    @property
    def rejected(self) -> bool:
        return bool(self.rejected_reason)


@dataclass(frozen=True)
class InsertResult:
    """The paragraph with the chosen sentence inserted; ``quote_span`` indexes ``paragraph``."""

    paragraph: str
    sentence: str
    quote_span: tuple[int, int]
    drafts: tuple[Draft, ...] = ()


@dataclass(frozen=True)
class RejectedRow:
    line: int
    reason: str


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows read, new quotes, duplicates merged into existing ones, rows rejected, and notes
    on what was left out as a whole (e.g. a part whose download failed)."""

    source: str
    format: str
    read: int = 0
    imported: int = 0
    merged: int = 0
    rejected: tuple[RejectedRow, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexProgress:
    """Where background indexing stands: the fraction done and its last message, whether it still runs, and the
    error that stopped it ("" if none)."""

    fraction: float = 0.0
    message: str = ""
    running: bool = False
    error: str = ""


@dataclass(frozen=True)
class KBStats:
    quotes: int
    by_lang: dict[str, int] = field(default_factory=dict)
    by_collection: dict[str, int] = field(default_factory=dict)
    authors: int = 0


@dataclass(frozen=True)
class FilterOptions:
    """What the retrieval filters can choose from in a knowledge base: languages, authors, topics (most common
    first for authors and topics)."""

    langs: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class BrowsePage:
    """One page of a knowledge base's quotes matching a filter, and how many match in all."""

    quotes: tuple[Quote, ...]
    total: int
    offset: int = 0
