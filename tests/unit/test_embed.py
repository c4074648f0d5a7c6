"""The embedder registry and load_embedder's name resolution (nothing is loaded: models load on first use)."""

from __future__ import annotations

import numpy as np

from quill_core._embed import (EMBEDDERS, BilingualEmbedder, E5Embedder, SentenceTransformerEmbedder, USEEmbedder,
                               load_embedder)

from tests.fakes import FakeEmbedder


def test_registry_lists_the_packaged_embedders_with_descriptions():
    assert list(EMBEDDERS) == ["bilingual", "minilm", "use", "e5"]
    assert all(isinstance(d, str) and d and "\n" not in d for d in EMBEDDERS.values())


def test_load_embedder_resolves_names():
    assert isinstance(load_embedder("use"), USEEmbedder)
    assert isinstance(load_embedder("multilingual"), USEEmbedder)  # older spellings still work
    assert isinstance(load_embedder("e5"), E5Embedder) and load_embedder("e5").name == "e5"
    embedder = load_embedder("minilm")
    assert isinstance(embedder, SentenceTransformerEmbedder) and embedder.name == "minilm"
    default = load_embedder("")
    assert isinstance(default, BilingualEmbedder) and default.name == "bilingual"
    assert isinstance(default.for_lang("zh"), E5Embedder) and default.for_lang("en").name == "minilm"
    assert load_embedder("org/Some-Model").name == "st-org-some-model"  # any sentence-transformers model


class _Constant(FakeEmbedder):
    """Every text (and query) becomes the same unit vector: shows which model embedded what."""

    def __init__(self, axis: int) -> None:
        super().__init__(name=f"axis{axis}")
        self.axis, self.queries = axis, []

    def embed_batch(self, texts):
        out = np.zeros((len(texts), 4), dtype=np.float32)
        out[:, self.axis] = 1.0
        return out

    def embed_queries(self, texts):
        self.queries += list(texts)
        return self.embed_batch(texts)


def test_bilingual_embedder_sends_chinese_text_to_its_chinese_model_and_keeps_the_order():
    other, chinese = _Constant(0), _Constant(1)
    both = BilingualEmbedder(other=other, chinese=chinese)
    vectors = both.embed_batch(["Knowledge is power.", "海内存知己，天涯若比邻。", "Carpe diem."])
    assert vectors[:, 1].tolist() == [0.0, 1.0, 0.0] and vectors[:, 0].tolist() == [1.0, 0.0, 1.0]
    both.embed_queries(["千里之行，始于足下"])
    assert chinese.queries == ["千里之行，始于足下"] and other.queries == []
    assert both.embed_batch([]).shape[0] == 0
