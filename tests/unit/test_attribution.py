"""Localized attribution: windows over the evidence, the max over windows, aggregation over claim sentences,
the three backends' plumbing (LM PMI with a fake scorer, an NLI cross-encoder built locally, an LLM judge over a
mock HTTP transport) and the labelled set's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quill_core._attribution import (
    JudgeEntailer,
    LMEntailer,
    NLIEntailer,
    evidence_windows,
    load_entailer,
    localized_entailment,
    parse_judgement,
    quote_evidence,
)
from quill_core._config import Settings
from quill_core._errors import ConfigError, ModelError
from quill_core._types import Quote
from tests.fakes import ChatEndpoint, FakeEntailer, FakeScorer, OverlapEntailer, chat_reply

DATA = Path(__file__).resolve().parents[1] / "data" / "nli_pairs.jsonl"


def test_windows_english_and_chinese():
    assert evidence_windows("A one. B two. C three.") == ["A one. B two.", "B two. C three."]
    assert evidence_windows("甲说话。乙回答！丙离开？") == ["甲说话。乙回答！", "乙回答！丙离开？"]
    assert evidence_windows("Only one.") == ["Only one."]
    assert evidence_windows("") == []
    assert evidence_windows(["He said: “One. Two.”", "Then left."], window=1) == ["He said: “One. Two.”", "Then left."]
    with pytest.raises(ValueError):
        evidence_windows("x", window=0)


def test_localized_score_is_the_best_window_and_beats_the_whole_premise():
    evidence = "The sky was grey. Rain fell all day. Bacon wrote that knowledge is power. Nobody listened."
    claim = "Bacon wrote that knowledge is power."
    nli = OverlapEntailer()
    local = localized_entailment(nli, evidence, claim)
    whole = localized_entailment(nli, [evidence], claim)
    assert local == pytest.approx(0.5)        # a 2-sentence window holding the claim
    assert whole == pytest.approx(0.25)       # diluted by the 4-sentence premise
    assert len(nli.premises) == 3 + 1         # three windows, then the whole


def test_multi_sentence_claims_are_as_supported_as_their_weakest_sentence():
    by_claim = FakeEntailer({"Supported one.": 0.9, "Unsupported two.": 0.1})
    assert localized_entailment(by_claim, "Evidence.", "Supported one. Unsupported two.") == pytest.approx(0.1)
    assert localized_entailment(by_claim, "Evidence.", "Supported one. Unsupported two.",
                                aggregate=max) == pytest.approx(0.9)
    assert localized_entailment(by_claim, "", "Supported one.") == 0.0


def test_quote_evidence():
    q = Quote("Knowledge itself is power.", "Francis Bacon", work="Meditationes Sacrae")
    assert quote_evidence(q, "He wrote in Latin. It was 1597.") == [
        "Francis Bacon wrote in Meditationes Sacrae: “Knowledge itself is power.”", "He wrote in Latin.", "It was 1597."]
    assert quote_evidence(Quote("学而不思则罔。", "孔子", work="论语", lang="zh")) == ["孔子在《论语》中写道：“学而不思则罔。”"]
    assert quote_evidence(Quote("Seize the day.", "")) == ["An unknown author said: “Seize the day.”"]


def test_lm_entailer_is_normalized_conditional_pmi_batched_by_premise():
    scorer = FakeScorer(mode="first-word")
    lm = LMEntailer(scorer)
    pairs = [("Bacon wrote it.", "Bacon said so."), ("Bacon wrote it.", "Newton said so."),
             ("Other text.", "Bacon said so.")]
    scores = lm.entailment_many(pairs)
    assert scores[0] == pytest.approx(1 - 4.0 / 10.0)   # the premise explains 60% of the claim's surprisal
    assert scores[1] == 0.0                              # the premise made it less likely: clipped
    assert scores[2] == 0.0
    assert scorer.calls == ["Bacon wrote it.", "Other text."]  # one cached pass per premise
    assert lm.entailment("Bacon wrote it.", "Bacon said so.") == pytest.approx(0.6)


def _tiny_nli(path: Path, labels: dict[int, str]) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = "[PAD] [UNK] [CLS] [SEP] [MASK] bacon wrote knowledge is power newton said the . , 孔 子 学".split()
    path.mkdir()
    (path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"))
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=len(labels),
                        id2label=labels, label2id={v: k for k, v in labels.items()})
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def test_nli_cross_encoder_plumbing(tmp_path):
    path = _tiny_nli(tmp_path / "nli", {0: "contradiction", 1: "neutral", 2: "entailment"})
    nli = NLIEntailer(str(path), batch_size=2, max_length=32)
    pairs = [("Bacon wrote knowledge is power.", "Bacon said knowledge is power."),
             ("Newton said the power.", "Bacon wrote."), ("孔子 学", "孔子")]
    batch = nli.entailment_many(pairs)
    assert all(0.0 <= s <= 1.0 for s in batch)
    assert [nli.entailment(p, h) for p, h in pairs] == pytest.approx(batch, abs=1e-5)
    assert nli.label == 2
    assert 0.0 <= localized_entailment(nli, "Bacon wrote. Knowledge is power. Newton said.", "Bacon wrote.") <= 1.0
    # longer than the model's 64 positions: truncated to fit, not a crash
    assert 0.0 <= NLIEntailer(str(path)).entailment("bacon wrote " * 80, "knowledge is power " * 10) <= 1.0


def test_nli_model_without_an_entailment_label_or_missing(tmp_path):
    path = _tiny_nli(tmp_path / "sentiment", {0: "negative", 1: "positive"})
    with pytest.raises(ModelError, match="no single entailment label"):
        NLIEntailer(str(path)).entailment("a", "b")
    with pytest.raises(ModelError, match="cannot load NLI model"):
        NLIEntailer(str(tmp_path / "nowhere")).entailment("a", "b")


@pytest.mark.parametrize("answer, score", [("8", 0.8), ("Score: 10/10", 1.0), ("0", 0.0), ("7.5 out of 10", 0.75),
                                           ("Yes.", 1.0), ("No, it is not.", 0.0), ("hmm", 0.5)])
def test_parse_judgement(answer, score):
    assert parse_judgement(answer) == pytest.approx(score)


def test_llm_judge_through_an_openai_compatible_endpoint():
    srv = ChatEndpoint(chat_reply("9"))
    judge = JudgeEntailer(srv.generator("judge-model"))
    assert judge.entailment("Bacon wrote: knowledge is power.", "Bacon said knowledge is power.") == 0.9
    seen = [r["body"] for r in srv.requests]
    prompt = seen[0]["messages"][-1]["content"]
    assert "Evidence: Bacon wrote: knowledge is power." in prompt and "Claim: Bacon said" in prompt
    assert seen[0]["temperature"] == 0.0 and seen[0]["model"] == "judge-model"


def test_load_entailer_follows_the_settings(tmp_path):
    scorer = FakeScorer(mode="first-word")
    assert isinstance(load_entailer(Settings.load(home=tmp_path), scorer=scorer), LMEntailer)
    nli = load_entailer(Settings.load(home=tmp_path, nli_model="some/xnli-model"))
    assert isinstance(nli, NLIEntailer) and not nli.loaded
    with pytest.raises(ConfigError, match="QUILL_LLM_BASE_URL"):
        load_entailer(Settings.load(home=tmp_path, nli_model="judge"))
    judge = load_entailer(Settings.load(home=tmp_path, nli_model="judge", llm_base_url="http://127.0.0.1:9/v1"))
    assert isinstance(judge, JudgeEntailer)


def test_labelled_set_is_balanced_and_bilingual():
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 60 and len({r["id"] for r in rows}) == len(rows)
    for lang in ("en", "zh"):
        for label in ("entailed", "neutral", "contradicted"):
            assert sum(r["lang"] == lang and r["label"] == label for r in rows) >= 10
    assert all(r["premise"].strip() and r["hypothesis"].strip() for r in rows)
