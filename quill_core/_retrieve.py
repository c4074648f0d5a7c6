"""Retrieval: the candidate quotes of a query, by meaning (dense vectors) and by words (BM25).

One :class:`Retriever` serves every caller: ``Quill.suggest`` and ``Quill.score`` over the knowledge base's Chroma
collection, and evaluation over the gold quotes of a dataset held in memory (optionally merged with a knowledge
base). What we measure is therefore what users get. A retriever reads its quotes from a :class:`Catalog` and its
vectors from a :class:`DenseIndex`; it never writes the knowledge base.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from itertools import zip_longest
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TypeVar, runtime_checkable

import numpy as np

from ._embed import BilingualEmbedder, Embedder, model_for
from ._lexical import LexicalIndex
from ._mentions import AuthorIndex
from ._names import author_key
from ._query import query_text
from ._store import VectorStore, collection_name
from ._text import mostly_cjk
from ._types import Candidate, Filters, Pool, Progress, Query, Quote

EMBED_BATCH = 1024
T = TypeVar("T")


@runtime_checkable
class Catalog(Protocol):
    """What retrieval reads of a knowledge base (``KnowledgeBase`` is one; :class:`MemoryCatalog` another)."""

    @property
    def revision(self) -> int: ...

    def get(self, ids: Sequence[str]) -> list[Quote]: ...

    def ids(self, *, author: str = "", lang: str = "", topic: str = "") -> list[str]: ...

    def iter_quotes(self) -> Iterator[Quote]: ...


@runtime_checkable
class DenseIndex(Protocol):
    """Nearest neighbours by cosine similarity, and the stored vectors of given quotes."""

    def search(self, vector: np.ndarray, *, k: int, filters: Filters,
               exclude_lang: str = "") -> list[tuple[str, float]]: ...

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]: ...


def has_filters(filters: Filters) -> bool:
    return bool(filters.author or filters.lang or filters.topic)


class Retriever:
    """Dense and lexical candidates of one catalog (thread-safe; the BM25 index is rebuilt when the catalog changes)."""

    def __init__(self, catalog: Catalog, embedder: Embedder, dense: DenseIndex) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self.dense = dense
        self._lock = threading.Lock()
        self._indexes: dict[type, tuple[int, Any]] = {}  # index class -> (catalog revision, index)
        self._allowed: dict[tuple[str, str, str], tuple[int, frozenset[str]]] = {}  # filters -> (revision, ids)

    def _current(self, make: type[T]) -> T:
        """The index ``make(quotes)`` of the catalog at its current revision (rebuilt when the catalog changes)."""
        with self._lock:
            revision = self.catalog.revision
            cached = self._indexes.get(make)
            if cached is None or cached[0] != revision:
                cached = self._indexes[make] = (revision, make(self.catalog.iter_quotes()))
            return cached[1]

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index of the catalog at its current revision."""
        return self._current(LexicalIndex)

    @property
    def authors(self) -> AuthorIndex:
        """The catalog's authors at its current revision (to spot the ones a paragraph names)."""
        return self._current(AuthorIndex)

    def _ids(self, filters: Filters) -> frozenset[str] | None:
        """The ids the filters allow (None: every quote), kept per catalog revision: the paragraph's language is
        a filter of nearly every request, and reading ~35,000 ids costs tens of milliseconds."""
        if not has_filters(filters):
            return None
        key = (filters.author, filters.lang, filters.topic)
        revision = self.catalog.revision
        cached = self._allowed.get(key)
        if cached is None or cached[0] != revision:
            ids = frozenset(self.catalog.ids(author=filters.author, lang=filters.lang, topic=filters.topic))
            with self._lock:
                if len(self._allowed) >= 64:  # (authors and topics vary; languages are few)
                    self._allowed.clear()
                self._allowed[key] = cached = (revision, ids)
        return cached[1]

    def _spaces(self, text: str, filters: Filters) -> list[tuple[Embedder, Filters, str]]:
        """``(model, filters, language left out)`` for each vector space a search must cover: one, except for a
        bilingual embedder asked for any language, whose Chinese and other quotes are searched apart (a cosine
        between vectors of two models means nothing), the text's own language first."""
        if not isinstance(self.embedder, BilingualEmbedder):
            return [(self.embedder, filters, "")]
        if filters.lang:
            return [(model_for(self.embedder, filters.lang), filters, "")]
        zh = BilingualEmbedder.CHINESE
        spaces = [(self.embedder.for_lang(zh), replace(filters, lang=zh), ""), (self.embedder.for_lang(""), filters, zh)]
        return spaces if mostly_cjk(text) else spaces[::-1]

    def _dense(self, text: str, *, k: int, filters: Filters, query: bool,
               memo: dict[int, np.ndarray] | None = None) -> tuple[list[Candidate], Callable[[Quote], np.ndarray]]:
        """Dense hits of ``text`` (each space's list interleaved, best first) and, per quote, the query vector its
        stored vector compares with; ``memo`` keeps the text's vectors for the next call."""
        lists, vectors = [], []
        memo = {} if memo is None else memo
        spaces = self._spaces(text, filters)
        for model, space_filters, exclude in spaces:
            if id(model) not in memo:
                memo[id(model)] = (model.embed_queries if query else model.embed_batch)([text])[0]
            vector = memo[id(model)]
            vectors.append(vector)
            lists.append(self.dense.search(vector, k=k, filters=space_filters, exclude_lang=exclude))
        hits = _interleave(lists, k)
        quotes = {q.id: q for q in self.catalog.get([i for i, _ in hits])}
        found = [Candidate(quote=quotes[i], similarity=s) for i, s in hits if i in quotes]
        if len(vectors) == 1:
            return found, lambda quote: vectors[0]
        chinese = [model is self.embedder.for_lang(BilingualEmbedder.CHINESE) for model, _, _ in spaces]
        return found, lambda quote: vectors[chinese.index(mostly_cjk(quote.text))]

    def search(self, text: str, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """Dense nearest neighbours of a free text (compared with quotes as an equal), best first."""
        return self._dense(text, k=k, filters=filters or Filters(), query=False)[0]

    def retrieve(self, query: Query, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """The ``k`` quotes nearest to the text around the query's insertion point."""
        return self._dense(query_text(query), k=k, filters=filters or Filters(), query=True)[0]

    def pool(self, query: Query, *, k: int, filters: Filters | None = None) -> Pool:
        """Dense and lexical candidates for ``query`` (the same filters on both), with the cosine of every candidate
        (lexical-only ones from their stored vectors, embedded on the spot where none is stored)."""
        filters = filters or Filters()
        text = query_text(query)
        memo: dict[int, np.ndarray] = {}
        dense, vector_for = self._dense(text, k=k, filters=filters, query=True, memo=memo)
        authors = () if filters.author else self.authors.named_in(query.before, query.after)
        named = [self._dense(text, k=k, filters=replace(filters, author=a), query=True, memo=memo)[0]
                 for a in authors]
        named_hits = _interleave(named, k)
        hits = self.lexical.search(text, k=k, allowed=self._ids(filters))
        quotes = {q.id: q for q in self.catalog.get([i for i, _ in hits])}
        lexical = tuple(Candidate(quotes[i], s, retriever="bm25") for i, s in hits if i in quotes)
        cosine = {c.quote.id: c.similarity for c in [*dense, *named_hits]}
        missing = [c.quote for c in lexical if c.quote.id not in cosine]
        stored = self.dense.vectors([q.id for q in missing])
        unstored = [q for q in missing if q.id not in stored]
        if unstored:
            stored.update(zip([q.id for q in unstored], self.embedder.embed_batch([q.text for q in unstored])))
        cosine.update({q.id: float(stored[q.id] @ vector_for(q)) for q in missing})
        return Pool(dense=tuple(dense), lexical=lexical, cosine=cosine, named=tuple(named_hits), authors=authors)


def _interleave(lists: Sequence[Sequence[T]], k: int) -> list[T]:
    """The first ``k`` items of several ranked lists taken in turn (first of each, then second of each, ...)."""
    return [item for rank in zip_longest(*lists) for item in rank if item is not None][:k]


# -- dense indexes -------------------------------------------------------------------------------------------------
class StoreIndex:
    """A knowledge base's vectors in a Chroma collection (one per knowledge base and embedder), kept in line with the
    knowledge base by :meth:`sync` before every search."""

    def __init__(self, kb: Any, store: VectorStore, embedder: Embedder) -> None:
        self.kb = kb
        self.store = store
        self.embedder = embedder
        self.collection = collection_name("quotes", kb.name, embedder.name)
        self._lock = threading.RLock()
        self._synced: int | None = None

    def sync(self, *, progress: Progress | None = None) -> int:
        """Embed the quotes the collection lacks and drop the ones the knowledge base no longer holds; return how
        many were embedded."""
        with self._lock:
            kb, store, name = self.kb, self.store, self.collection
            if self._synced == kb.revision:
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
            self._synced = kb.revision
            if progress:
                progress(1.0, f"the index holds all {len(kb_ids):,} quotes")
            return len(wanted)

    def search(self, vector: np.ndarray, *, k: int, filters: Filters,
               exclude_lang: str = "") -> list[tuple[str, float]]:
        if self._lock.acquire(blocking=False):  # while another thread indexes, search the vectors stored so far
            try:
                self.sync()
            finally:
                self._lock.release()
        allowed = self.kb.ids(topic=filters.topic, author=filters.author, lang=filters.lang) if filters.topic else None
        return self.store.query(self.collection, vector, k=k, where=_where(filters, exclude_lang), ids=allowed)

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return self.store.vectors(self.collection, ids)


def _where(filters: Filters, exclude_lang: str = "") -> dict[str, Any] | None:
    clauses: list[dict[str, Any]] = []
    if filters.lang:
        clauses.append({"lang": filters.lang})
    if exclude_lang:
        clauses.append({"lang": {"$ne": exclude_lang}})
    if filters.author:
        clauses.append({"author": author_key(filters.author)})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class MemoryIndex:
    """Exact cosine search over quotes embedded in memory (evaluation's gold quotes)."""

    def __init__(self, quotes: Sequence[Quote], embedder: Embedder) -> None:
        self.quotes = list(quotes)
        self.matrix = embedder.embed_batch([q.text for q in self.quotes]) if self.quotes else np.zeros((0, 1))
        self._row = {q.id: i for i, q in enumerate(self.quotes)}

    def search(self, vector: np.ndarray, *, k: int, filters: Filters,
               exclude_lang: str = "") -> list[tuple[str, float]]:
        if not self.quotes:
            return []
        sims = self.matrix @ vector
        keep = [i for i in np.argsort(-sims, kind="stable")
                if _passes(self.quotes[i], filters) and not (exclude_lang and self.quotes[i].lang == exclude_lang)]
        return [(self.quotes[i].id, float(sims[i])) for i in keep[:k]]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        return {i: self.matrix[self._row[i]] for i in ids if i in self._row}


def _passes(quote: Quote, filters: Filters) -> bool:
    return ((not filters.lang or quote.lang == filters.lang)
            and (not filters.author or author_key(quote.author) == author_key(filters.author))
            and (not filters.topic or filters.topic in quote.topics))


class MergedIndex:
    """Several dense indexes searched as one: the best ``k`` of their hits (a quote in several keeps the last)."""

    def __init__(self, *indexes: DenseIndex) -> None:
        self.indexes = indexes

    def search(self, vector: np.ndarray, *, k: int, filters: Filters,
               exclude_lang: str = "") -> list[tuple[str, float]]:
        hits: list[tuple[str, float]] = []
        for index in self.indexes:
            hits += index.search(vector, k=k, filters=filters, exclude_lang=exclude_lang)
        return sorted(dict(hits).items(), key=lambda item: -item[1])[:k]

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for index in self.indexes:
            out.update(index.vectors([i for i in ids if i not in out]))
        return out


class MemoryCatalog:
    """Quotes held in memory in a fixed order (evaluation's corpus); where two entries share an id, the first wins."""

    revision = 0

    def __init__(self, quotes: Iterable[Quote]) -> None:
        self.quotes = list(quotes)
        self.by_id: dict[str, Quote] = {}
        for q in self.quotes:
            self.by_id.setdefault(q.id, q)

    def get(self, ids: Sequence[str]) -> list[Quote]:
        return [self.by_id[i] for i in ids if i in self.by_id]

    def ids(self, *, author: str = "", lang: str = "", topic: str = "") -> list[str]:
        filters = Filters(author=author, lang=lang, topic=topic)
        return [q.id for q in self.by_id.values() if _passes(q, filters)]

    def iter_quotes(self) -> Iterator[Quote]:
        return iter(self.quotes)
