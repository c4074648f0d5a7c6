"""The ``Quill`` facade: one object that owns (lazily) the knowledge base, embedder, vector store and models, and
offers every operation the app and the CLI need. Pass any resource in to replace it (tests inject fakes)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from .config import Settings
from .embed import Embedder, load_embedder
from .store import VectorStore, collection_name
from .text import author_key, normalize, parse_query, split_sentences
from .types import Candidate, Filters, ImportReport, KBStats, Query, Quote, Suggestion

__all__ = ["Quill", "query_text"]

Progress = Callable[[float, str], None]
EMBED_BATCH = 256
QUERY_CONTEXT_CHARS = 600


def query_text(query: Query) -> str:
    """The text retrieval embeds: the last two sentences before the insertion point and the first one after it."""
    before = split_sentences(query.before)[-2:]
    after = split_sentences(query.after)[:1]
    text = " ".join(before + after) or query.text
    return normalize(text)[-QUERY_CONTEXT_CHARS:]


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
                from .kb import KnowledgeBase

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
        from .kb import import_file

        report = import_file(self.kb, path, format=format, mapping=mapping, collection=collection,
                             progress=_scaled(progress, 0.0, 0.5))
        self.index(progress=_scaled(progress, 0.5, 1.0))
        return report

    def build(self, tier: str = "starter", *, progress: Progress | None = None) -> ImportReport:
        """Build a bundled tier into this Quill's knowledge base and index it."""
        from .kb import build_tier

        report = build_tier(self.kb, tier, progress=_scaled(progress, 0.0, 0.3))
        self.index(progress=_scaled(progress, 0.3, 1.0))
        return report

    def index(self, *, progress: Progress | None = None) -> int:
        """Bring the vector collection in line with the knowledge base; return how many quotes were embedded."""
        with self._lock:
            kb, store, name = self.kb, self.store, self.collection
            if self._indexed_revision == kb.revision:
                return 0
            if store.count(name) == len(kb) and self._indexed_revision is None and _same_ids(store, name, kb):
                self._indexed_revision = kb.revision
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
                store.upsert(name, [q.id for q in batch], vectors, documents=[q.text for q in batch],
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

    def search(self, text: str, *, k: int = 10, filters: Filters | None = None) -> list[Candidate]:
        """Dense nearest neighbours of a free text (also used to look quotes up when verifying)."""
        self.index()
        filters = filters or Filters()
        where = _where(filters)
        vector = self.embedder.embed_batch([text])[0]
        allowed = self.kb.ids(topic=filters.topic, author=filters.author, lang=filters.lang) if filters.topic else None
        hits = self.store.query(self.collection, vector, k=k, where=where, ids=allowed)
        quotes = {q.id: q for q in self.kb.get([i for i, _ in hits])}
        return [Candidate(quote=quotes[i], similarity=s) for i, s in hits if i in quotes]

    def suggest(self, paragraph: str, *, k: int = 5, filters: Filters | None = None) -> list[Suggestion]:
        """Ranked suggestions for the paragraph's insertion point."""
        candidates = self.retrieve(paragraph, k=k, filters=filters)
        return [Suggestion(quote=c.quote, score=c.similarity, similarity=c.similarity) for c in candidates]


def _same_ids(store: VectorStore, name: str, kb: Any) -> bool:
    return store.ids(name) == {q.id for q in kb.iter_quotes()}


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
