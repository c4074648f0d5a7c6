"""The packaged embedders, for real (offline)."""

import numpy as np
import pytest

from quill_core import Quill, Settings
from quill_core._embed import load_embedder
from tests.fakes import SAMPLE_QUOTES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("minilm")


@pytest.fixture(scope="module")
def use():
    return load_embedder("use")


@pytest.fixture(scope="module")
def e5():
    return load_embedder("e5")


def test_minilm_gives_unit_vectors_that_rank_paraphrases_first(minilm):
    v = minilm.embed_batch(["Knowledge is power.", "Information gives you strength.", "I had soup for lunch."])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_multilingual_embedder_places_chinese_next_to_its_english_translation(use):
    v = use.embed_batch(["知识就是力量。", "Knowledge is power.", "The train leaves at noon."])
    assert v.shape == (3, 512)
    assert v[0] @ v[1] > 0.7 > v[0] @ v[2]


def test_real_retrieval_finds_the_fitting_quote(tmp_path, minilm):
    quill = Quill(Settings.load(home=tmp_path), embedder=minilm)
    quill.kb.upsert(SAMPLE_QUOTES)
    hits = quill.retrieve("A life lived without reflection or self-examination is hardly worth living. [Q]", k=3)
    assert hits[0].quote.text == "The unexamined life is not worth living."


def test_multilingual_retrieval_crosses_languages(tmp_path, use):
    quill = Quill(Settings.load(home=tmp_path, embedding_model="use"), embedder=use)
    quill.kb.upsert(SAMPLE_QUOTES)
    hits = quill.retrieve("读书和学习让我们更有力量。[Q]", k=2)
    assert "知识就是力量。" in {h.quote.text for h in hits}


def test_e5_matches_chinese_queries_to_english_quotes_and_back(e5):
    quotes = e5.embed_batch(["Knowledge is power.", "A journey of a thousand miles begins with a single step.",
                             "千里之行，始于足下。", "The train leaves at noon."])
    assert quotes.shape == (4, 384) and np.allclose(np.linalg.norm(quotes, axis=1), 1.0, atol=1e-4)
    zh, en = e5.embed_queries(["知识就是力量。", "Every long trip starts with one step."])
    assert int(np.argmax(quotes @ zh)) == 0
    assert (quotes @ en)[1] > (quotes @ en)[3] and (quotes @ en)[2] > (quotes @ en)[3]
