"""The vector store's collection settings: applied to new collections, brought up to date on old ones, kept on reopen."""

import numpy as np

from quill_core import Settings
from quill_core._store import VectorStore
from quill_core._store import EF_SEARCH


def hnsw(store: VectorStore, name: str) -> dict:
    return store.client.get_collection(name).configuration_json["hnsw"]


def test_new_collections_are_cosine_with_the_wider_search_and_keep_it_when_reopened(tmp_path):
    settings = Settings.load(home=tmp_path)
    store = VectorStore(settings)
    store.upsert("quotes.kb.test", ["a", "b"], np.eye(2, 8, dtype=np.float32))
    assert hnsw(store, "quotes.kb.test")["ef_search"] == EF_SEARCH
    reopened = VectorStore(settings)
    assert hnsw(reopened, "quotes.kb.test")["space"] == "cosine"
    assert hnsw(reopened, "quotes.kb.test")["ef_search"] == EF_SEARCH
    assert [i for i, _ in reopened.query("quotes.kb.test", np.eye(1, 8, dtype=np.float32)[0], k=2)] == ["a", "b"]


def test_a_collection_made_with_chromas_defaults_gets_the_wider_search_and_keeps_its_vectors(tmp_path):
    old = VectorStore(Settings.load(home=tmp_path))
    old.client.get_or_create_collection("quotes.kb.old", metadata={"hnsw:space": "cosine"}).upsert(
        ids=["a", "b"], embeddings=np.eye(2, 8, dtype=np.float32))
    assert hnsw(old, "quotes.kb.old")["ef_search"] != EF_SEARCH
    store = VectorStore(Settings.load(home=tmp_path))
    assert store.count("quotes.kb.old") == 2
    assert hnsw(store, "quotes.kb.old")["ef_search"] == EF_SEARCH
    hits = store.query("quotes.kb.old", np.eye(1, 8, dtype=np.float32)[0], k=1)
    assert hits[0][0] == "a" and abs(hits[0][1] - 1.0) < 1e-5  # still cosine similarity
