"""The ``Quill`` facade: every operation the app and the CLI need, over resources it owns (see
:class:`~quill_core._resources.Resources`). It calls the stages; no stage receives the facade."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ._attribution import Entailer
from ._config import Settings
from ._criteria import Weights
from ._embed import Embedder
from ._errors import InputError, QuillError
from ._evaluate import EvalReport, evaluate, load_dataset
from ._generate import Generator
from ._insert import insert
from ._kb import KnowledgeBase, build_tier, import_file
from ._names import author_key, clean_author
from ._query import SAME_LANGUAGE, parse_query, quote_filters
from ._rank import RANKERS, get_ranker, score_quote, suggest
from ._resources import Resources
from ._retrieve import Retriever, StoreIndex
from ._scorer import Scorer
from ._sources import SourceInfo, SourceLibrary
from ._spans import locate
from ._store import VectorStore
from ._text import detect_lang
from ._types import (
    BrowsePage,
    Candidate,
    FilterOptions,
    Filters,
    ImportReport,
    IndexProgress,
    InsertResult,
    KBStats,
    Progress,
    Provenance,
    Query,
    Quote,
    Span,
    Suggestion,
)
from ._verify import Verification, verify

FILTER_AUTHORS = 3000  # the most quoted authors the filter lists (any other name can still be typed)
FILTER_TOPICS = 1000
SOURCE_REACH = 400  # characters of source text around a quote that insertion may use as evidence


class Quill:
    """Everything Quill does, over injected or lazily created resources (thread-safe: the app shares one)."""

    def __init__(self, settings: Settings | None = None, *, kb: KnowledgeBase | None = None,
                 embedder: Embedder | None = None, store: VectorStore | None = None, scorer: Scorer | None = None,
                 generator: Generator | None = None, entailer: Entailer | None = None,
                 sources: SourceLibrary | None = None) -> None:
        self.settings = settings or Settings.load()
        self._resources = Resources(self.settings, kb=kb, embedder=embedder, store=store, scorer=scorer,
                                    generator=generator, entailer=entailer, sources=sources)
        self._lock = threading.Lock()
        self._options: tuple[int, FilterOptions] | None = None
        self._indexing_lock = threading.Lock()
        self._indexing = IndexProgress()
        self._warmed = False

    # -- resources (made on first use) -----------------------------------------------------------------------------
    @property
    def kb(self) -> KnowledgeBase:
        return self._resources.kb.get()

    @property
    def embedder(self) -> Embedder:
        return self._resources.embedder.get()

    @property
    def store(self) -> VectorStore:
        return self._resources.store.get()

    @property
    def scorer(self) -> Scorer:
        """The language model's passage scorer (loads the LM on first use)."""
        return self._resources.scorer.get()

    @property
    def generator(self) -> Generator:
        return self._resources.generator.get()

    @property
    def entailer(self) -> Entailer:
        return self._resources.entailer.get()

    @property
    def sources(self) -> SourceLibrary:
        return self._resources.sources.get()

    @property
    def retriever(self) -> Retriever:
        return self._resources.retriever.get()

    @property
    def collection(self) -> str:
        """The Chroma collection holding this knowledge base's vectors for this embedder."""
        return self._resources.index.get().collection

    # -- knowledge base --------------------------------------------------------------------------------------------
    def stats(self) -> KBStats:
        return self.kb.stats()

    def filter_options(self) -> FilterOptions:
        """The languages, authors and topics the retrieval filters offer (recomputed when the knowledge base
        changes)."""
        kb = self.kb
        with self._lock:
            if self._options is None or self._options[0] != kb.revision:
                options = FilterOptions(langs=tuple(sorted(kb.stats().by_lang)),
                                        authors=tuple(kb.authors(limit=FILTER_AUTHORS)),
                                        topics=tuple(kb.topics(limit=FILTER_TOPICS)))
                self._options = (kb.revision, options)
            return self._options[1]

    def browse(self, *, search: str = "", author: str = "", lang: str = "", topic: str = "", collection: str = "",
               limit: int = 20, offset: int = 0) -> BrowsePage:
        """One page of the quotes matching every given filter (``search`` is a substring of the text)."""
        filters = {"search": search, "author": author, "lang": lang, "topic": topic, "collection": collection}
        return BrowsePage(quotes=tuple(self.kb.browse(**filters, limit=limit, offset=offset)),
                          total=self.kb.count(**filters), offset=offset)

    def import_file(self, path: str | Path, *, format: str = "auto", mapping: Mapping[str, str] | None = None,
                    collection: str | None = None, progress: Progress | None = None) -> ImportReport:
        """Import a quote file into the knowledge base, then index what is new."""
        report = import_file(self.kb, path, format=format, mapping=dict(mapping) if mapping else None,
                             collection=collection, progress=_scaled(progress, 0.0, 0.5))
        self.index(progress=_scaled(progress, 0.5, 1.0))
        return report

    def build(self, tier: str = "starter", *, index: bool = True, progress: Progress | None = None) -> ImportReport:
        """Build a bundled tier into this Quill's knowledge base and (unless ``index`` is false) index it."""
        report = build_tier(self.kb, tier, home=self.settings.home,
                            progress=_scaled(progress, 0.0, 0.3 if index else 1.0))
        if index:
            self.index(progress=_scaled(progress, 0.3, 1.0))
        return report

    def index(self, *, progress: Progress | None = None) -> int:
        """Bring the vector collection in line with the knowledge base; return how many quotes were embedded.
        Interrupted, it keeps what it stored: the next call embeds only the rest."""
        return self._resources.index.get().sync(progress=progress)

    def index_in_background(self) -> IndexProgress:
        """Start :meth:`index` in a background thread (unless one runs) and return where it stands. Meanwhile
        suggestions search the quotes embedded so far by meaning and every quote by words. The first call also
        loads the language model in another thread (converting the packaged one once), so the first click finds
        it ready."""
        with self._indexing_lock:
            if not self._indexing.running:
                if not self._warmed:
                    self._warmed = True
                    threading.Thread(target=self._warm_up, name="quill-warm-up", daemon=True).start()
                self._indexing = IndexProgress(running=True, message="indexing the knowledge base")
                threading.Thread(target=self._index_thread, name="quill-index", daemon=True).start()
            return self._indexing

    def _warm_up(self) -> None:
        try:
            self.scorer.quote_alone(["Well begun is half done."])
        except QuillError:  # the first real request reports it
            pass

    def indexing(self) -> IndexProgress:
        """Where background indexing stands (see :meth:`index_in_background`)."""
        return self._indexing

    def _index_thread(self) -> None:
        def note(fraction: float, message: str) -> None:
            self._indexing = IndexProgress(fraction=fraction, message=message, running=True)

        try:
            self.index(progress=note)
            self._indexing = IndexProgress(fraction=1.0, message="the index is up to date")
        except QuillError as exc:
            self._indexing = IndexProgress(fraction=self._indexing.fraction, error=str(exc))

    # -- suggest ---------------------------------------------------------------------------------------------------
    def retrieve(self, paragraph: str | Query, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """The ``k`` quotes nearest to the text around the insertion point, filtered, best first."""
        return self.retriever.retrieve(_query(paragraph), k=k, filters=filters)

    def search(self, text: str, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """Dense nearest neighbours of a free text (also used to look quotes up when verifying)."""
        return self.retriever.search(text, k=k, filters=filters)

    def suggest(self, paragraph: str | Query, *, k: int = 5, ranker: str = "default", filters: Filters | None = None,
                weights: Weights | Mapping[str, float] | None = None, candidates: int = 20,
                quote_lang: str = SAME_LANGUAGE,
                preview: Callable[[list[Suggestion]], None] | None = None) -> list[Suggestion]:
        """The ``k`` best quotes for the paragraph's insertion point: ``candidates`` retrieved (dense + BM25), then
        ordered by ``ranker`` (see ``RANKERS``); ``weights`` (a :class:`Weights` or a name -> weight mapping)
        adjusts the default ranker's criteria. ``quote_lang`` picks the quotes' language: ``"auto"`` the paragraph's
        (when the knowledge base holds quotes in it), ``"any"``, or a language code (see
        :func:`~quill_core._query.quote_filters`). Each suggestion carries its breakdown, a one-line ``why`` and its
        place in an added source text when found. ``preview`` receives the retrieved quotes, in retrieval order, as
        soon as retrieval returns (tens of milliseconds), before the language model reranks them."""
        spec = get_ranker(ranker)
        query = _query(paragraph)
        filters = quote_filters(query, filters, quote_lang, holds=self._holds_lang)
        return suggest(query, retriever=self.retriever, scorer=self.scorer if spec.needs_lm else None,
                       records=self.kb, provenance=self.provenance if self._resources.has_sources() else None,
                       k=k, ranker=ranker, filters=filters, weights=weights, candidates=candidates, preview=preview)

    def _holds_lang(self, lang: str) -> bool:
        """Whether the knowledge base holds quotes in ``lang`` (its statistics are cached per revision)."""
        return self.kb.stats().by_lang.get(lang, 0) > 0

    def score(self, paragraph: str | Query, quote: str, *, author: str = "",
              weights: Weights | Mapping[str, float] | None = None) -> Suggestion:
        """Every criterion of ``quote`` (attributed to ``author``) inserted at the paragraph's ``[Q]``, including
        authenticity and credibility against the knowledge base."""
        return score_quote(_query(paragraph), quote, retriever=self.retriever, scorer=self.scorer, records=self.kb,
                           author=author, weights=weights)

    def evaluate(self, dataset: str | Path, *, rankers: Sequence[str] | None = None, limit: int = 0, lang: str = "",
                 kb: str = "none", candidates: int = 20, weights: Weights | Mapping[str, float] | None = None,
                 progress: Progress | None = None) -> EvalReport:
        """MRR, Hit@k and NDCG@3 of each ranker on a JSONL evaluation set, overall and per language. The set's gold
        quotes join the corpus; the knowledge base ``kb`` (default none) adds its quotes and is only read."""
        rows = load_dataset(dataset, limit=limit, lang=lang)
        names = tuple(rankers or RANKERS)
        needs_lm = any(get_ranker(r).needs_lm for r in names)
        return evaluate(rows, embedder=self.embedder, scorer=self.scorer if needs_lm else None,
                        kb=self._retriever_of(kb), rankers=names, weights=Weights.of(weights) if weights is not None else None,
                        candidates=candidates, corpus_rows=load_dataset(dataset),
                        dataset=str(dataset), kb_name=kb or "none", lm=self.settings.lm_model, progress=progress)

    def _retriever_of(self, kb: str) -> Retriever | None:
        """The retriever of the knowledge base named ``kb`` (this Quill's own, another one read only, or none)."""
        if not kb or kb == "none":
            return None
        own = kb == self.settings.kb
        other = self.kb if own else KnowledgeBase.open(replace(self.settings, kb=kb))
        if len(other) == 0:
            raise InputError(f"knowledge base {kb!r} is empty: build or import it first, or use --kb none")
        return self.retriever if own else Retriever(other, self.embedder, StoreIndex(other, self.store, self.embedder))

    # -- verify and sources ----------------------------------------------------------------------------------------
    def locate(self, quote: str, text: str, *, threshold: float = 90) -> list[Span]:
        """Every span of ``text`` where ``quote`` occurs."""
        return locate(quote, text, threshold=threshold)

    def list_sources(self) -> list[SourceInfo]:
        """The source texts added so far."""
        return self.sources.list() if self._resources.has_sources() else []

    def add_source(self, name_or_path: str | Path, *, author: str = "", title: str = "", index: bool = True,
                   progress: Progress | None = None) -> SourceInfo:
        """Add a bundled source (``shakespeare``, ``bible``, ``sotu``) or a .txt / .md file."""
        return self.sources.add(name_or_path, author=author, title=title, index=index, progress=progress)

    def provenance(self, quote: Quote | str, *, threshold: float = 90) -> Provenance | None:
        """Where a quote occurs in the added sources (with the exact span), or None."""
        return self.sources.provenance(quote, threshold=threshold)

    def verify(self, draft: str, *, threshold: float = 75.0, k: int = 8) -> list[Verification]:
        """Verdicts on every quotation of ``draft``."""
        return verify(draft, kb=self.kb, neighbours=lambda text, n: self.search(text, k=n), threshold=threshold,
                      k=k, sources=self.sources if self._resources.has_sources() else None)

    # -- insert ----------------------------------------------------------------------------------------------------
    def resolve_quote(self, quote: Quote | str, *, author: str | None = None) -> Quote:
        """The :class:`Quote` to insert: a given Quote (its author replaced by ``author`` if given), or a text looked
        up in the knowledge base; a text the knowledge base does not attribute needs ``author``."""
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
               progress: Progress | None = None) -> InsertResult:
        """Write one sentence bringing the quote and its author into the paragraph at ``[Q]`` (else at the end)."""
        chosen = self.resolve_quote(quote, author=author)
        return insert(paragraph, chosen, generator=self.generator, scorer=self.scorer, entailer=self.entailer,
                      drafts=drafts, passage=self._source_passage(chosen), progress=progress)

    def _source_passage(self, quote: Quote) -> str:
        """The text around the quote in an added source (evidence for attribution), or ''."""
        if not self._resources.has_sources():
            return ""
        found = self.sources.provenance(quote)
        if found is None:
            return ""
        text = self.sources.text(found.source, found.doc)
        lo = max(found.passage_start, found.span.start - SOURCE_REACH)
        hi = min(found.passage_end, found.span.end + SOURCE_REACH)
        return text[lo:hi]


def _query(paragraph: str | Query) -> Query:
    return paragraph if isinstance(paragraph, Query) else parse_query(paragraph)


def _scaled(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    """Map a sub-task's 0..1 progress into [lo, hi] of the caller's bar."""
    if progress is None:
        return None
    return lambda fraction, message: progress(lo + (hi - lo) * max(0.0, min(1.0, fraction)), message)
