"""Chroma vector store: one collection per (knowledge base, embedder), so switching models never mixes vectors.

Embedded ``PersistentClient`` under ``QUILL_HOME/chroma`` by default; ``HttpClient`` against a Chroma server when
``QUILL_CHROMA_HOST`` is set. Vectors are unit-length and compared by cosine; similarity = 1 - cosine distance.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Mapping, Sequence

import numpy as np

from ._config import Settings
from ._errors import StoreError


UPSERT_BATCH = 2000
# HNSW search breadth. Chroma's default (100) finds 97.6% of the exact top 20 on the starter KB's vectors, 150 finds
# 99.1% for about 0.4 ms more per query (bench/retrieval.py). Applied to new collections and to existing ones on open.
EF_SEARCH = 150


def collection_name(kind: str, kb: str, embedder: str) -> str:
    """A valid Chroma collection name for (kind, kb, embedder), e.g. ``quotes.starter.minilm``."""
    raw = f"{kind}.{kb}.{embedder}"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-._")
    return name[:500] if len(name) >= 3 else f"{name}-x"


class VectorStore:
    """Thin, thread-safe wrapper around a Chroma client. Pass ``client`` to inject one (tests)."""

    def __init__(self, settings: Settings | None = None, *, client: Any = None) -> None:
        self.settings = settings or Settings.load()
        self._client = client
        self._lock = threading.Lock()
        self._collections: dict[str, Any] = {}

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
        return self._client

    def _connect(self) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        try:
            if self.settings.chroma_host:
                return chromadb.HttpClient(host=self.settings.chroma_host, port=self.settings.chroma_port,
                                           settings=chroma_settings)
            path = self.settings.path("chroma", "x").parent
            return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
        except Exception as exc:  # chroma raises plain Exceptions (connection refused, bad path)
            where = f"{self.settings.chroma_host}:{self.settings.chroma_port}" if self.settings.chroma_host else "disk"
            raise StoreError(f"cannot open the Chroma store ({where}): {exc}") from exc

    def collection(self, name: str) -> Any:
        """Get or create a cosine collection searched with ``EF_SEARCH`` (set on collections made before it changed)."""
        with self._lock:
            coll = self._collections.get(name)
        if coll is None:
            try:
                coll = self.client.get_or_create_collection(
                    name=name, configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}})
                if ((coll.configuration_json or {}).get("hnsw") or {}).get("ef_search") != EF_SEARCH:
                    coll.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            except Exception as exc:
                raise StoreError(f"cannot open collection {name!r}: {exc}") from exc
            with self._lock:
                self._collections[name] = coll
        return coll

    def count(self, name: str) -> int:
        return int(self.collection(name).count())

    def ids(self, name: str) -> set[str]:
        coll = self.collection(name)
        out: set[str] = set()
        total, offset = coll.count(), 0
        while offset < total:
            out.update(coll.get(include=[], limit=UPSERT_BATCH * 5, offset=offset)["ids"])
            offset += UPSERT_BATCH * 5
        return out

    def upsert(self, name: str, ids: Sequence[str], embeddings: np.ndarray, *,
               metadatas: Sequence[Mapping[str, Any]] | None = None) -> None:
        """Write ``ids`` with their vectors (and the metadata filters search by), :data:`UPSERT_BATCH` at a time;
        no documents: the texts live in the knowledge base or the source files."""
        coll = self.collection(name)
        for start in range(0, len(ids), UPSERT_BATCH):
            end = start + UPSERT_BATCH
            coll.upsert(
                ids=list(ids[start:end]),
                embeddings=np.asarray(embeddings[start:end], dtype=np.float32),
                metadatas=[dict(m) for m in metadatas[start:end]] if metadatas is not None else None,
            )

    def delete(self, name: str, ids: Sequence[str]) -> None:
        coll = self.collection(name)
        for start in range(0, len(ids), UPSERT_BATCH):
            coll.delete(ids=list(ids[start : start + UPSERT_BATCH]))

    def drop(self, name: str) -> None:
        with self._lock:
            self._collections.pop(name, None)
        try:
            self.client.delete_collection(name)
        except Exception:  # chroma raises a plain error when the collection is absent: nothing to drop
            pass

    def query(self, name: str, embedding: np.ndarray, *, k: int = 10,
              where: Mapping[str, Any] | None = None,
              ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """The ``k`` nearest ids with their cosine similarity, best first; ``ids`` restricts the search to those."""
        coll = self.collection(name)
        if k <= 0 or (ids is not None and not ids):
            return []  # (no count() round trip: it costs more than the search on large collections; empty is fine)
        try:
            res = coll.query(query_embeddings=[np.asarray(embedding, dtype=np.float32)], n_results=k,
                             where=dict(where) if where else None, ids=list(ids) if ids is not None else None,
                             include=["distances"])
        except Exception as exc:
            raise StoreError(f"query on {name!r} failed: {exc}") from exc
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0])]

    def vectors(self, name: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``ids`` (missing ids are absent from the result)."""
        if not ids:
            return {}
        res = self.collection(name).get(ids=list(ids), include=["embeddings"])
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(res["ids"], res["embeddings"])}
