"""The real packaged SmolLM2-135M-Instruct: conversion into a checkpoint, reloading without the GGUF, the fast
scorer against the naive one, and the default ranker end to end. Lean: a few short passages."""

from __future__ import annotations

import math

import pytest

from quill_core import Quill, Settings
from quill_core import _lm as lm
from quill_core._lm import load_causal_lm
from quill_core._scorer import PerplexityScorer
from quill_core._rank import criteria, measure
from quill_core._query import parse_query
from quill_core._types import Candidate, Quote
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """Convert the GGUF into a fresh home (the in-process cache is set aside so the conversion really runs)."""
    settings = Settings.load(home=tmp_path_factory.mktemp("lm-home"), threads=2)
    saved = dict(lm._cache)
    lm._cache.clear()
    try:
        model, tokenizer = load_causal_lm(settings)
    finally:
        lm._cache.clear()
        lm._cache.update(saved)
        lm._cache.setdefault("smollm2", (model, tokenizer))
    return settings, model, tokenizer


def test_conversion_writes_a_complete_checkpoint(converted):
    settings, model, tokenizer = converted
    target = settings.home / "models" / "smollm2-135m-instruct"
    assert (target / "config.json").is_file() and (target / "quill-checkpoint.txt").is_file()
    assert any(p.suffix == ".safetensors" for p in target.iterdir())
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary folder left behind
    assert not model.training


def test_later_loads_use_the_checkpoint_not_the_gguf(converted, monkeypatch):
    settings, _, _ = converted

    def no_gguf():
        raise AssertionError("the GGUF was read again")

    monkeypatch.setattr(lm, "smollm2_gguf", no_gguf)
    monkeypatch.setattr(lm, "_cache", {})
    model, tokenizer = load_causal_lm(settings)
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False,
                                           add_generation_prompt=True)
    assert "Hi" in prompt and prompt.rstrip().endswith("assistant")
    assert load_causal_lm(settings)[0] is model  # cached in-process


def test_fast_scores_equal_naive_scores_on_the_real_model(converted):
    settings, model, tokenizer = converted
    s = PerplexityScorer(model=model, tokenizer=tokenizer, batch_size=2)
    before = "When the storm finally passed, the old fisherman smiled and told us,"
    after = " We went back to the boats the next morning. Nobody spoke."
    quotes = ["", "This too shall pass.", "Knowledge is power.", "The sea, once it casts its spell, holds one forever."]
    fast, naive = s.score(before, quotes, after), s.score_naive(before, quotes, after)
    for f, n in zip(fast, naive):
        for part in ("prefix", "head", "tail", "after"):
            a, b = getattr(f, part), getattr(n, part)
            assert a.tokens == b.tokens and a.total == pytest.approx(b.total, rel=1e-4, abs=1e-2), part


def test_context_makes_the_fitting_quote_likelier(converted):
    settings, model, tokenizer = converted
    s = PerplexityScorer(model=model, tokenizer=tokenizer)
    query = parse_query("The most famous line of Hamlet's soliloquy, spoken by the prince, is [Q] Every student "
                        "of Shakespeare knows it.")
    quotes = [Quote("To be, or not to be, that is the question."), Quote("Peace is a natural effect of trade.")]
    measured = measure(query, [Candidate(q, 0.5) for q in quotes], scorer=s)
    match = [next(c for c in criteria(m) if c.name == "quote_match").value for m in measured]
    assert match[0] > match[1]


def test_suggest_end_to_end_in_english_and_chinese(converted, tmp_path):
    settings, model, tokenizer = converted
    q = Quill(Settings.load(home=tmp_path), embedder=FakeEmbedder(),
              scorer=PerplexityScorer(model=model, tokenizer=tokenizer))
    q.kb.upsert(SAMPLE_QUOTES)
    for paragraph in ("We were afraid of fear itself all winter. [Q] Then spring came.",
                      "老师说知识就是力量。[Q]我们都记住了。", "Knowledge"):
        out = q.suggest(paragraph, k=3, candidates=6)
        assert out
        for s in out:
            assert 0 <= s.score <= 1 and s.why
            assert all(0 <= c.value <= 1 and (c.raw is None or math.isfinite(c.raw)) for c in s.breakdown)
