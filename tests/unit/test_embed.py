"""The embedder registry and load_embedder's name resolution (nothing is loaded: models load on first use)."""

from __future__ import annotations

from quill_core._embed import EMBEDDERS, E5Embedder, SentenceTransformerEmbedder, USEEmbedder, load_embedder


def test_registry_lists_the_packaged_embedders_with_descriptions():
    assert list(EMBEDDERS) == ["minilm", "use", "e5"]
    assert all(isinstance(d, str) and d and "\n" not in d for d in EMBEDDERS.values())


def test_load_embedder_resolves_names():
    assert isinstance(load_embedder("use"), USEEmbedder)
    assert isinstance(load_embedder("multilingual"), USEEmbedder)  # older spellings still work
    assert isinstance(load_embedder("e5"), E5Embedder) and load_embedder("e5").name == "e5"
    for name in ("minilm", ""):
        embedder = load_embedder(name)
        assert isinstance(embedder, SentenceTransformerEmbedder) and embedder.name == "minilm"
    assert load_embedder("org/Some-Model").name == "st-org-some-model"  # any sentence-transformers model
