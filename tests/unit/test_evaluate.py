"""The evaluation harness on a small fixture dataset, with a fake embedder and a fake LM scorer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from quill_core import InputError, NotFoundError, Quill, Settings
from quill_core._cli import main
from quill_core._evaluate import (EvalReport, RankerMetrics, evaluate, hit_at, load_dataset, ndcg_at, reciprocal_rank,
                                 write_report)
from quill_core._scorer import NLL, PassageNLL
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder

DATA = Path(__file__).resolve().parents[1] / "data" / "eval_small.jsonl"


class FakeScorer:
    """Quote and next-sentence NLLs drop with every word the quote shares with the passage."""

    name = "fake-lm"

    def score(self, before, quotes, after=""):
        ctx = set((before + " " + after).lower().split())
        out = []
        for q in quotes:
            qw = q.lower().split()
            overlap = len(set(qw) & ctx)
            n = len(qw)
            per = max(0.5, 3.0 - 0.5 * overlap)
            out.append(PassageNLL(NLL(10, 5), NLL(per * min(1, n), min(1, n)), NLL(per * max(0, n - 1), max(0, n - 1)),
                                  NLL((4.0 - 0.3 * overlap if n else 4.0) * 6, 6)))
        return out

    def quote_alone(self, quotes):
        return [PassageNLL(NLL(), NLL(3.0, 1), NLL(3.0 * len(q.split()), len(q.split())), NLL()) for q in quotes]


def test_dataset_rows_and_clear_errors(tmp_path):
    rows = load_dataset(DATA)
    assert len(rows) == 8 and {r.lang for r in rows} == {"en", "zh"}
    assert rows[0].graded["Courage is grace under pressure."] == 3
    assert len(load_dataset(DATA, lang="zh")) == 2 and len(load_dataset(DATA, limit=3)) == 3
    with pytest.raises(NotFoundError):
        load_dataset(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"context": "no marker", "quote": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:1: .*\[Q\]"):
        load_dataset(bad)
    bad.write_text('{"context": "a [Q]", "quote": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError, match="bad.jsonl:2: not JSON"):
        load_dataset(bad)


def test_hit_at_k_is_a_miss_when_the_gold_is_absent_even_from_a_short_list():
    assert hit_at(None, 5) == 0.0  # QUILL's Hit@k returned 1 whenever k exceeded the list length (defect 4)
    assert hit_at(1, 1) == 1.0 and hit_at(2, 1) == 0.0 and hit_at(3, 3) == 1.0
    assert reciprocal_rank(None) == 0.0 and reciprocal_rank(4) == 0.25


def test_ndcg_uses_graded_relevance():
    assert ndcg_at([5, 3, 0], [5, 3], 3) == pytest.approx(1.0)
    assert ndcg_at([3, 5, 0], [5, 3], 3) < 1.0
    assert ndcg_at([0, 0, 0], [5], 3) == 0.0 and ndcg_at([], [], 3) == 0.0


def run_eval(rows, **kw):
    return evaluate(rows, embedder=FakeEmbedder(), scorer=FakeScorer(), candidates=5, **kw)


def test_report_covers_every_ranker_overall_and_per_language():
    report = run_eval(load_dataset(DATA))
    assert isinstance(report, EvalReport) and set(report.rankers) == {"vanilla", "bm25", "hybrid", "quill", "default"}
    js = report.as_json()
    for name, m in js["rankers"].items():
        assert set(m) >= {"mrr", "hit@1", "hit@3", "hit@5", "ndcg@3", "n", "by_lang"}
        assert m["n"] == 8 and set(m["by_lang"]) == {"en", "zh"} and m["by_lang"]["zh"]["n"] == 2
        assert 0 <= m["hit@1"] <= m["hit@3"] <= m["hit@5"] <= 1 and 0 <= m["mrr"] <= 1
    # word-overlap fakes make this easy: the fused retrievers find most gold quotes near the top
    assert report.rankers["hybrid"].hit5 >= 0.75
    json.dumps(js)  # serializable


def test_gold_authors_never_reach_retrieval_or_ranking():
    rows = load_dataset(DATA)
    blind = [dataclasses.replace(r, author="") for r in rows]
    wrong = [dataclasses.replace(r, author="Somebody Else") for r in rows]
    a, b, c = (run_eval(x).as_json()["rankers"] for x in (rows, blind, wrong))
    assert a == b == c  # QUILL's retrieval filtered on the gold author (defect 2)


def test_the_users_knowledge_base_is_not_touched(tmp_path):
    quill = Quill(Settings.load(home=tmp_path), embedder=FakeEmbedder(), scorer=FakeScorer())
    quill.kb.upsert(SAMPLE_QUOTES[:3])
    quill.index()
    before = (len(quill.kb), quill.kb.revision, quill.store.count(quill.collection))
    report = run_eval(load_dataset(DATA), quill=quill, kb=quill.kb.name)
    assert (len(quill.kb), quill.kb.revision, quill.store.count(quill.collection)) == before
    assert report.rankers["default"].n == 8


def test_markdown_and_chart_report(tmp_path):
    report = run_eval(load_dataset(DATA), rankers=("vanilla", "default"))
    md, png = write_report(report, tmp_path / "out")
    text = md.read_text(encoding="utf-8")
    assert "| ranker | n | MRR | Hit@1 | Hit@3 | Hit@5 | NDCG@3 |" in text and "Language: zh" in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_ranker_is_refused():
    with pytest.raises(InputError, match="unknown ranker"):
        run_eval(load_dataset(DATA), rankers=("vanilla", "oracle"))


def test_cli_eval_json_and_report(tmp_path, capsys):
    code = main(["--home", str(tmp_path / "home"), "eval", "--dataset", str(DATA), "--json", "--report",
                 str(tmp_path / "rep"), "--candidates", "5"],
                make_quill=lambda s: Quill(s, embedder=FakeEmbedder(), scorer=FakeScorer()))
    out, err = capsys.readouterr()
    assert code == 0, err
    js = json.loads(out)
    assert set(js["rankers"]) == {"vanilla", "bm25", "hybrid", "quill", "default"}
    assert (tmp_path / "rep" / "report.md").exists() and (tmp_path / "rep" / "report.png").exists()


def test_cli_eval_refuses_an_empty_named_kb(tmp_path, capsys):
    code = main(["--home", str(tmp_path / "home"), "eval", "--dataset", str(DATA), "--kb", "empty", "--json"],
                make_quill=lambda s: Quill(s, embedder=FakeEmbedder(), scorer=FakeScorer()))
    assert code == 1 and "is empty" in capsys.readouterr().err


def test_cli_score_and_suggest_with_ranker(tmp_path, capsys):
    def make(s):
        q = Quill(s, embedder=FakeEmbedder(), scorer=FakeScorer())
        q.kb.upsert(SAMPLE_QUOTES)
        return q

    home = ["--home", str(tmp_path / "home")]
    code = main(home + ["score", "--text", "We feared fear itself. [Q] Then we acted.", "--quote",
                        "The only thing we have to fear is fear itself.", "--author", "Mark Twain", "--json"],
                make_quill=make)
    out, err = capsys.readouterr()
    assert code == 0, err
    breakdown = json.loads(out)["suggestion"]["breakdown"]
    assert breakdown["credibility"]["value"] == 0.0 and breakdown["authenticity"]["value"] == 1.0
    code = main(home + ["suggest", "--text", "We feared fear itself. [Q]", "--ranker", "quill", "--json", "--k", "2"],
                make_quill=make)
    out, err = capsys.readouterr()
    assert code == 0, err
    s = json.loads(out)["suggestions"]
    assert len(s) == 2 and set(s[0]) == {"id", "text", "author", "work", "lang", "score", "breakdown"}
    code = main(home + ["suggest", "--text", "x [Q]", "--weights", "relevance"], make_quill=make)
    assert code == 1 and "name=number" in capsys.readouterr().err


def test_metrics_type_is_frozen():
    m = RankerMetrics(0.5, 0.4, 0.6, 0.7, 0.5, 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.mrr = 1.0  # type: ignore[misc]


def test_facade_evaluate_as_the_app_calls_it(tmp_path):
    quill = Quill(Settings.load(home=tmp_path), embedder=FakeEmbedder(), scorer=FakeScorer())
    seen = []
    report = quill.evaluate(DATA, rankers=["vanilla", "default"], limit=4, progress=lambda f, m: seen.append(f))
    assert set(report.rankers) == {"vanilla", "default"} and report.rows == 4 and report.kb == "none"
    assert seen and seen[-1] == 1.0
