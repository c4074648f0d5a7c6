"""The ``Quill`` facade: one object that owns (lazily) the knowledge base, embedder, vector store and models, and
offers every operation the app and the CLI need. Pass any resource in to replace it (tests inject fakes)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from ._config import Settings
from ._embed import Embedder, load_embedder
from ._store import VectorStore, collection_name
from ._names import author_key
from ._query import parse_query, query_text
from ._types import Candidate, Filters, ImportReport, KBStats, Query, Quote, Suggestion, Progress


EMBED_BATCH = 1024


class Quill:
    """Everything Quill does, over injected or lazily created resources (thread-safe: the app shares one)."""

    def __init__(self, settings: Settings | None = None, *, kb: Any = None, embedder: Embedder | None = None,
                 store: VectorStore | None = None, **resources: Any) -> None:
        self.settings = settings or Settings.load()
        self._kb = kb
        self._embedder = embedder
        self._store = store
        self._resources = resources  # scorer, generator, entailer, ... (filled by later stages)
        self._lock = threading.RLock()
        self._indexed_revision: int | None = None

    # -- resources ------------------------------------------------------------------------------------------
    @property
    def kb(self) -> Any:
        with self._lock:
            if self._kb is None:
                from ._kb import KnowledgeBase

                self._kb = KnowledgeBase.open(self.settings)
            return self._kb

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = load_embedder(self.settings.embedding_model)
            return self._embedder

    @property
    def store(self) -> VectorStore:
        with self._lock:
            if self._store is None:
                self._store = VectorStore(self.settings)
            return self._store

    @property
    def collection(self) -> str:
        return collection_name("quotes", self.kb.name, self.embedder.name)

    # -- knowledge base -------------------------------------------------------------------------------------
    def stats(self) -> KBStats:
        return self.kb.stats()

    def import_file(self, path: str | Path, *, format: str = "auto", mapping: dict[str, str] | None = None,
                    collection: str | None = None, progress: Progress | None = None) -> ImportReport:
        """Import a quote file into the knowledge base, then index what is new."""
        from ._kb import import_file

        report = import_file(self.kb, path, format=format, mapping=mapping, collection=collection,
                             progress=_scaled(progress, 0.0, 0.5))
        self.index(progress=_scaled(progress, 0.5, 1.0))
        return report

    def build(self, tier: str = "starter", *, progress: Progress | None = None) -> ImportReport:
        """Build a bundled tier into this Quill's knowledge base and index it."""
        from ._kb import build_tier

        report = build_tier(self.kb, tier, progress=_scaled(progress, 0.0, 0.3))
        self.index(progress=_scaled(progress, 0.3, 1.0))
        return report

    def index(self, *, progress: Progress | None = None) -> int:
        """Bring the vector collection in line with the knowledge base; return how many quotes were embedded."""
        with self._lock:
            kb, store, name = self.kb, self.store, self.collection
            if self._indexed_revision == kb.revision:
                return 0
            present = store.ids(name)
            wanted: list[Quote] = []
            kb_ids: set[str] = set()
            for quote in kb.iter_quotes():
                kb_ids.add(quote.id)
                if quote.id not in present:
                    wanted.append(quote)
            stale = sorted(present - kb_ids)
            if stale:
                store.delete(name, stale)
            for start in range(0, len(wanted), EMBED_BATCH):
                batch = wanted[start : start + EMBED_BATCH]
                vectors = self.embedder.embed_batch([q.text for q in batch])
                # ids, vectors and the filter fields only: the KB holds the text (documents would double the write)
                store.upsert(name, [q.id for q in batch], vectors,
                             metadatas=[{"lang": q.lang, "author": author_key(q.author)} for q in batch])
                if progress:
                    done = min(start + EMBED_BATCH, len(wanted))
                    progress(done / len(wanted), f"embedded {done:,} of {len(wanted):,} quotes")
            self._indexed_revision = kb.revision
            return len(wanted)

    # -- suggest --------------------------------------------------------------------------------------------
    def retrieve(self, paragraph: str | Query, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """The ``k`` quotes nearest to the text around the insertion point, filtered, best first."""
        query = paragraph if isinstance(paragraph, Query) else parse_query(paragraph)
        return self.search(query_text(query), k=k, filters=filters)

    def search(self, text: str, *, k: int = 10, filters: Filters | None = None,
               vector: Any = None) -> list[Candidate]:
        """Dense nearest neighbours of a free text (also used to look quotes up when verifying); ``vector`` is the
        text's embedding when the caller already has it."""
        self.index()
        filters = filters or Filters()
        where = _where(filters)
        vector = self.embedder.embed_batch([text])[0] if vector is None else vector
        allowed = self.kb.ids(topic=filters.topic, author=filters.author, lang=filters.lang) if filters.topic else None
        hits = self.store.query(self.collection, vector, k=k, where=where, ids=allowed)
        quotes = {q.id: q for q in self.kb.get([i for i, _ in hits])}
        return [Candidate(quote=quotes[i], similarity=s) for i, s in hits if i in quotes]

    @property
    def lexical(self) -> Any:
        """The BM25 index (:class:`~quill_core._lexical.LexicalIndex`) of the knowledge base, rebuilt when it changes."""
        with self._lock:
            kb = self.kb
            held = self._resources.get("lexical")
            if held is None or held[0] != kb.revision:
                from ._lexical import LexicalIndex

                held = (kb.revision, LexicalIndex(kb.iter_quotes()))
                self._resources["lexical"] = held
            return held[1]

    def suggest(self, paragraph: str | Query, *, k: int = 5, ranker: str = "default", filters: Filters | None = None,
                weights: Any = None, candidates: int = 20) -> list[Suggestion]:
        """The ``k`` best quotes for the paragraph's insertion point: ``candidates`` retrieved (dense + BM25), then
        ordered by ``ranker`` (``vanilla``, ``bm25``, ``hybrid``, ``quill``, ``default``; see
        :mod:`quill_core._rank`); ``weights`` (a :class:`~quill_core._rank.Weights` or a name -> weight mapping)
        adjusts the default ranker's criteria. Each suggestion carries its breakdown and a one-line ``why``."""
        from ._rank import suggest

        return suggest(self, paragraph, k=k, ranker=ranker, filters=filters, weights=weights, candidates=candidates)

    def score(self, paragraph: str | Query, quote: str, *, author: str = "", weights: Any = None) -> Suggestion:
        """Every criterion of ``quote`` (attributed to ``author``) inserted at the paragraph's ``[Q]``, including
        authenticity and credibility against the knowledge base (see :func:`quill_core._rank.score_quote`)."""
        from ._rank import score_quote

        return score_quote(self, paragraph, quote, author=author, weights=weights)

    def evaluate(self, dataset: str | Path, *, rankers: Any = None, limit: int = 0, lang: str = "", kb: str = "none",
                 candidates: int = 20, weights: Any = None, progress: Progress | None = None) -> Any:
        """MRR, Hit@k and NDCG@3 of each ranker on a JSONL evaluation set, overall and per language: an
        :class:`~quill_core._evaluate.EvalReport` (see :func:`quill_core._evaluate.evaluate_dataset`). The set's gold
        quotes join the corpus; the knowledge base ``kb`` (default none) is only read."""
        from ._evaluate import evaluate_dataset
        from ._rank import RANKERS

        return evaluate_dataset(self, dataset, rankers=rankers or RANKERS, limit=limit, lang=lang, kb=kb,
                                candidates=candidates, weights=weights, progress=progress)

    # -- verify and sources (spans.py, verify.py, sources.py) -----------------------------------------------
    def locate(self, quote: str, text: str, *, threshold: float = 90) -> list[Any]:
        """Every span of ``text`` where ``quote`` occurs (see :func:`quill_core._spans.locate`)."""
        from ._spans import locate

        return locate(quote, text, threshold=threshold)

    @property
    def sources(self) -> Any:
        """The :class:`~quill_core._sources.SourceLibrary` under ``settings.home/sources`` (dense via this Quill's
        store and embedder, loaded only when a lookup needs them)."""
        from ._sources import SourceLibrary

        return self._shared("sources", lambda: SourceLibrary(self.settings, store=lambda: self.store,
                                                             embedder=lambda: self.embedder))

    def add_source(self, name_or_path: str | Path, *, author: str = "", title: str = "", index: bool = True,
                   progress: Progress | None = None) -> Any:
        """Add a bundled source (``shakespeare``, ``bible``, ``sotu``) or a .txt / .md file; returns its SourceInfo."""
        return self.sources.add(name_or_path, author=author, title=title, index=index, progress=progress)

    def provenance(self, quote: Quote | str, *, threshold: float = 90) -> Any:
        """Where a quote occurs in the added sources (a Provenance with the exact span), or None."""
        return self.sources.provenance(quote, threshold=threshold)

    def verify(self, draft: str, *, threshold: float = 75.0, k: int = 8) -> list[Any]:
        """Verdicts on every quotation of ``draft`` (see :func:`quill_core._verify.verify`)."""
        from ._verify import verify

        sources = self.sources if self.sources.list() else None
        return verify(draft, kb=self.kb, neighbours=lambda text, n: self.search(text, k=n), threshold=threshold,
                      k=k, sources=sources)

    # -- insert (generate.py, attribution.py, insert.py) ----------------------------------------------------
    def _shared(self, name: str, make: Callable[[], Any]) -> Any:
        """The resource ``name`` from the constructor, else made once by ``make`` and kept."""
        with self._lock:
            if self._resources.get(name) is None:
                self._resources[name] = make()
            return self._resources[name]

    def _lm_scorer(self) -> Any:
        from ._scorer import PerplexityScorer

        return self._shared("scorer", lambda: PerplexityScorer(self.settings))

    @property
    def generator(self) -> Any:
        """The sentence generator (``generator=`` resource, else :func:`quill_core._generate.load_generator`)."""
        from ._generate import load_generator

        return self._shared("generator", lambda: load_generator(self.settings))

    @property
    def entailer(self) -> Any:
        """The attribution backend (``entailer=`` resource, else :func:`quill_core._attribution.load_entailer`)."""
        from ._attribution import load_entailer

        return self._shared("entailer", lambda: load_entailer(
            self.settings, scorer=self._lm_scorer() if not self.settings.nli_model else None,
            generator=self.generator if self.settings.llm_base_url else None))

    def insert_quote(self, quote: Quote | str, *, author: str | None = None) -> Quote:
        """The :class:`Quote` to insert: a given Quote (its author replaced by ``author`` if given), or a text looked
        up in the knowledge base; a text the knowledge base does not attribute needs ``author``."""
        from dataclasses import replace

        from ._errors import InputError
        from ._text import detect_lang
        from ._names import clean_author

        if isinstance(quote, Quote):
            return replace(quote, author=author) if author else quote
        text = (quote or "").strip()
        if not text:
            raise InputError("the quote is empty")
        found = self.kb.by_key(text)
        if author:
            same = [q for q in found if author_key(q.author) == author_key(author)]
            return same[0] if same else Quote(text=text, author=clean_author(author), lang=detect_lang(text))
        authors = {author_key(q.author): q for q in found}
        if len(authors) == 1:
            return found[0]
        if not found:
            raise InputError("this quote is not in the knowledge base: give its author")
        names = ", ".join(sorted(q.author or "unknown" for q in authors.values()))
        raise InputError(f"the knowledge base attributes this quote to several authors ({names}): give the author")

    def insert(self, paragraph: str, quote: Quote | str, *, author: str | None = None, drafts: int = 4,
               progress: Progress | None = None) -> Any:
        """Write one sentence bringing the quote and its author into the paragraph at ``[Q]`` (else at the end);
        returns an :class:`~quill_core._types.InsertResult` (see :func:`quill_core._insert.insert`)."""
        from ._insert import insert

        quote = self.insert_quote(quote, author=author)
        passage = self._source_passage(quote)
        return insert(paragraph, quote, generator=self.generator, scorer=self._lm_scorer(), entailer=self.entailer,
                      drafts=drafts, passage=passage, progress=progress)

    def _source_passage(self, quote: Quote, *, reach: int = 400) -> str:
        """The text around the quote in an added source (the verify stage's provenance), or ''."""
        if self._resources.get("sources") is None and not (self.settings.home / "sources").exists():
            return ""
        sources = self.sources
        if not sources.list():
            return ""
        found = sources.provenance(quote)
        if found is None:
            return ""
        text = sources.text(found.source, found.doc)
        lo = max(found.passage_start, found.span.start - reach)
        hi = min(found.passage_end, found.span.end + reach)
        return text[lo:hi]


def _where(filters: Filters) -> dict[str, Any] | None:
    clauses = []
    if filters.lang:
        clauses.append({"lang": filters.lang})
    if filters.author:
        clauses.append({"author": author_key(filters.author)})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _scaled(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    """Map a sub-task's 0..1 progress into [lo, hi] of the caller's bar."""
    if progress is None:
        return None
    return lambda fraction, message: progress(lo + (hi - lo) * max(0.0, min(1.0, fraction)), message)
