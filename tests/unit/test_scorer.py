"""PerplexityScorer on a tiny random Llama (real transformers code paths, KV cache included) and a character
tokenizer (the session's ``tiny_lm``): the fast path (prefix cache, batches) must give the naive numbers; windows,
edges, the quote-alone caches, int8 and precision settings."""

from __future__ import annotations

import math

import pytest
import torch

from quill_core import Settings
from quill_core._errors import ConfigError
from quill_core._int8 import Int8Linear, is_int8, quantize_int8
from quill_core._scorer import NLL, PerplexityScorer, right_window


class CountingModel(torch.nn.Module):
    """Wraps a model and counts forward calls."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.calls = 0

    def forward(self, **kwargs):
        self.calls += 1
        return self.model(**kwargs)


def scorer(tiny_lm, **kw):
    model, tokenizer = tiny_lm
    return PerplexityScorer(model=model, tokenizer=tokenizer, **kw)


BEFORE = "The committee argued for hours about the budget. As the chair reminded everyone,"
AFTER = " and the vote was finally taken. Everyone went home."
QUOTES = ["Knowledge is power.", "", "To be, or not to be, that is the question.", "Brevity."]


def close(a: NLL, b: NLL) -> bool:
    return a.tokens == b.tokens and math.isclose(a.total, b.total, rel_tol=1e-4, abs_tol=1e-3)


def test_fast_path_gives_the_naive_numbers(tiny_lm):
    s = scorer(tiny_lm, batch_size=3)
    fast = s.score(BEFORE, QUOTES, AFTER)
    naive = s.score_naive(BEFORE, QUOTES, AFTER)
    assert len(fast) == len(naive) == len(QUOTES)
    for f, n in zip(fast, naive):
        for part in ("prefix", "head", "tail", "after"):
            assert close(getattr(f, part), getattr(n, part)), part


def test_batch_size_does_not_change_the_numbers(tiny_lm):
    one = scorer(tiny_lm, batch_size=1).score(BEFORE, QUOTES, AFTER)
    many = scorer(tiny_lm, batch_size=16).score(BEFORE, QUOTES, AFTER)
    for a, b in zip(one, many):
        assert close(a.whole, b.whole) and close(a.after, b.after)


def test_the_quote_really_enters_the_text(tiny_lm):
    # the same text after the insertion point scores differently after different quotes (QUILL's defect 1)
    res = scorer(tiny_lm).score(BEFORE, ["Knowledge is power.", "Zebras migrate across the plains."], AFTER)
    assert res[0].after.tokens == res[1].after.tokens > 0
    assert res[0].after.total != pytest.approx(res[1].after.total)


def test_ranges_split_the_quote_after_its_first_characters(tiny_lm):
    s = scorer(tiny_lm, head_chars=5)
    res = s.score(BEFORE, ["Knowledge is power."], AFTER)[0]
    # character tokens: a space plus 5 characters form the head, the remaining characters the tail
    assert res.head.tokens == 6 and res.tail.tokens == len("Knowledge is power.") - 5
    assert res.prefix.tokens == len(BEFORE)  # the start token is never scored
    assert res.after.tokens == len(" and the vote was finally taken.")  # up to the end of the next sentence


def test_empty_quote_is_the_baseline_and_empty_after_is_empty(tiny_lm):
    s = scorer(tiny_lm)
    base, with_q = s.score(BEFORE, ["", "Knowledge is power."], "")
    assert base.quote.tokens == 0 and base.after.tokens == 0
    assert with_q.after.tokens == 0 and with_q.quote.tokens > 0
    assert all(math.isfinite(x.mean) for x in (base.prefix, with_q.quote))


def test_edges_never_give_nan(tiny_lm):
    s = scorer(tiny_lm)
    cases = [("", "Knowledge is power.", " Then silence."),      # quote at the very start
             ("He said", "Knowledge is power.", ""),              # at the very end
             ("Word", "Knowledge is power.", ""),                 # a one-word paragraph
             ("我们常说", "知识就是力量。", "这句话很有道理。"),       # Chinese, no spaces
             ("x" * 20_000, "Knowledge is power.", "y " * 10_000)]  # huge paragraph
    for before, quote, after in cases:
        for r in s.score(before, ["", quote], after):
            for part in (r.prefix, r.head, r.tail, r.after, r.whole):
                assert math.isfinite(part.total) and math.isfinite(part.mean)
            assert r.prefix.tokens <= s.max_prefix_tokens and r.after.tokens <= s.max_after_tokens


def test_chinese_quotes_get_no_spaces(tiny_lm):
    s = scorer(tiny_lm)
    s._load()
    plan = s._plan("我们常说", ["知识就是力量。"], "这句话很有道理。")
    ids, _ = plan.quotes[0]
    assert len(ids) == len("知识就是力量。")  # no separator token was added


def test_long_prefix_is_windowed(tiny_lm):
    s = scorer(tiny_lm, max_prefix_tokens=50)
    res = s.score("a" * 5000 + " The end of a long story,", ["Knowledge is power."], AFTER)[0]
    assert res.prefix.tokens == 50


def test_quote_alone_is_cached(tiny_lm):
    model, tok = tiny_lm
    counting = CountingModel(model)
    counting.get_output_embeddings = model.get_output_embeddings
    s = PerplexityScorer(model=counting, tokenizer=tok)
    first = s.quote_alone(["Knowledge is power.", "Brevity."])
    calls = counting.calls
    again = s.quote_alone(["Brevity.", "Knowledge is power."])
    assert counting.calls == calls
    assert again[1] == first[0] and first[0].quote.ppl is not None and first[0].prefix.tokens == 0


def test_quote_alone_fast_equals_naive(tiny_lm):
    s = scorer(tiny_lm, batch_size=2)
    quotes = ["Knowledge is power.", "Brevity.", "知识就是力量。"]
    for f, n in zip(s.quote_alone(quotes), s.quote_alone_naive(quotes)):
        assert close(f.head, n.head) and close(f.tail, n.tail) and f.prefix.tokens == 0


def test_quote_alone_is_remembered_on_disk_across_scorers(tiny_lm, tmp_path):
    model, tok = tiny_lm
    settings = Settings.load(home=tmp_path)
    first = PerplexityScorer(settings, model=model, tokenizer=tok).quote_alone(["Knowledge is power."])[0]
    counting = CountingModel(model)
    again = PerplexityScorer(settings, model=counting, tokenizer=tok).quote_alone(["Knowledge is power."])[0]
    assert counting.calls == 0 and close(again.tail, first.tail) and close(again.head, first.head)
    fresh = PerplexityScorer(settings, model=counting, tokenizer=tok)
    fresh.clear_cache(disk=True)
    fresh.quote_alone(["Knowledge is power."])
    assert counting.calls > 0


def test_right_window_takes_the_next_sentence_with_words():
    assert right_window(". But experts disagree. Later on", max_chars=200) == ". But experts disagree."
    assert right_window("。但专家不同意。后来", max_chars=200) == "。但专家不同意。"
    assert right_window("no end in sight", max_chars=200) == "no end in sight"
    assert len(right_window("word " * 100, max_chars=40)) <= 40


def test_int8_copy_stays_close_and_does_not_depend_on_the_batch(tiny_lm):
    model, tok = tiny_lm
    q = quantize_int8(model)
    assert isinstance(q.model.layers[0].mlp.down_proj, Int8Linear) and isinstance(q.lm_head, Int8Linear)
    assert not isinstance(q.model.layers[0].self_attn.k_proj, torch.nn.Linear)  # q, k, v fused into one product
    assert type(model.model.layers[0].mlp.down_proj) is torch.nn.Linear  # the original is untouched
    assert is_int8(q) and not is_int8(model) and not is_int8(None)
    exact = PerplexityScorer(model=model, tokenizer=tok).score(BEFORE, QUOTES, AFTER)
    batched = PerplexityScorer(model=q, tokenizer=tok, batch_size=4).score(BEFORE, QUOTES, AFTER)
    alone = PerplexityScorer(model=q, tokenizer=tok, batch_size=1).score(BEFORE, QUOTES, AFTER)
    naive = PerplexityScorer(model=q, tokenizer=tok).score_naive(BEFORE, QUOTES, AFTER)
    for e, b, a, n in zip(exact, batched, alone, naive):
        assert abs(e.whole.mean - b.whole.mean) < 0.05  # close to float32
        assert abs(b.whole.total - a.whole.total) < 1e-3 and abs(b.whole.total - n.whole.total) < 1e-3


def test_precision_follows_the_settings(tmp_path, monkeypatch):
    from quill_core._int8 import int8_is_faster

    # by default int8 only where this CPU multiplies int8 faster (without VNNI, torch's int8 product is ~100x slower)
    assert PerplexityScorer(Settings.load(home=tmp_path)).quantize is int8_is_faster()
    monkeypatch.setattr("quill_core._int8.int8_is_faster", lambda: False)
    assert not PerplexityScorer(Settings.load(home=tmp_path)).quantize
    monkeypatch.setenv("QUILL_LM_PRECISION", "int8")
    assert PerplexityScorer(Settings.load(home=tmp_path)).quantize
    monkeypatch.setenv("QUILL_LM_PRECISION", "float32")
    assert not PerplexityScorer(Settings.load(home=tmp_path)).quantize
    with pytest.raises(ConfigError, match="int8 or float32"):
        PerplexityScorer(Settings.load(home=tmp_path, lm_precision="fp8"))
