"""The heavy collaborators of a :class:`~quill_core.Quill`: each one given, or made once on first use by its factory.

Every resource is a :class:`Lazy` with a typed value, so a misspelt resource name is a ``TypeError`` at
construction, and building one never loads another it does not need (the LM loads only when something scores).
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

from ._attribution import Entailer, load_entailer
from ._config import Settings
from ._embed import Embedder, load_embedder
from ._generate import Generator, load_generator
from ._kb import KnowledgeBase
from ._retrieve import Retriever, StoreIndex
from ._scorer import PerplexityScorer, Scorer
from ._sources import SourceLibrary
from ._store import VectorStore

T = TypeVar("T")


class Lazy(Generic[T]):
    """A value made by ``make`` on the first :meth:`get` (thread-safe: made once however many threads ask)."""

    def __init__(self, make: Callable[[], T], value: T | None = None) -> None:
        self._make = make
        self._value = value
        self._lock = threading.Lock()

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._make()
        return self._value

    @property
    def ready(self) -> bool:
        """Whether the value exists already (asking does not make it)."""
        return self._value is not None


class Resources:
    """The knowledge base, embedder, vector store, LM scorer, generator, attribution backend and source library of
    one Quill, plus the retriever built from the first three. Pass any of them to replace the default."""

    def __init__(self, settings: Settings, *, kb: KnowledgeBase | None = None, embedder: Embedder | None = None,
                 store: VectorStore | None = None, scorer: Scorer | None = None,
                 generator: Generator | None = None, entailer: Entailer | None = None,
                 sources: SourceLibrary | None = None) -> None:
        self.settings = settings
        self.kb: Lazy[KnowledgeBase] = Lazy(lambda: KnowledgeBase.open(settings), kb)
        self.embedder: Lazy[Embedder] = Lazy(lambda: load_embedder(settings.embedding_model), embedder)
        self.store: Lazy[VectorStore] = Lazy(lambda: VectorStore(settings), store)
        self.scorer: Lazy[Scorer] = Lazy(lambda: PerplexityScorer(settings), scorer)
        self.generator: Lazy[Generator] = Lazy(lambda: load_generator(settings), generator)
        self.entailer: Lazy[Entailer] = Lazy(self._entailer, entailer)
        self.sources: Lazy[SourceLibrary] = Lazy(
            lambda: SourceLibrary(settings, store=self.store.get, embedder=self.embedder.get), sources)
        self.index: Lazy[StoreIndex] = Lazy(lambda: StoreIndex(self.kb.get(), self.store.get(), self.embedder.get()))
        self.retriever: Lazy[Retriever] = Lazy(
            lambda: Retriever(self.kb.get(), self.embedder.get(), self.index.get()))

    def _entailer(self) -> Entailer:
        s = self.settings
        return load_entailer(s, scorer=self.scorer.get() if not s.nli_model else None,
                             generator=self.generator.get() if s.llm_base_url else None)

    def has_sources(self) -> bool:
        """Whether any source text was added (checked without creating the source library's folder)."""
        if not self.sources.ready and not (self.settings.home / "sources").exists():
            return False
        return bool(self.sources.get().list())
