"""Evaluate page (AppTest over the fake facade): bundled sample, uploaded set, metrics table, chart, download."""

from __future__ import annotations

import json

from tests.ui.conftest import ROOT, errors

EVALUATE = "pages/evaluate.py"


def test_the_bundled_sample_is_valid_and_small():
    rows = [json.loads(line) for line in (ROOT / "assets" / "eval_sample.jsonl").read_text("utf-8").splitlines()]
    assert 8 <= len(rows) <= 12
    assert {r["lang"] for r in rows} == {"en", "zh"}
    for r in rows:
        assert r["context"].count("[Q]") == 1 and r["quote"].strip() and "id" in r
        assert all(1 <= g <= 5 for g in r.get("graded", {}).values())


def test_run_on_the_bundled_sample_shows_metrics_chart_and_downloads(open_app, fake):
    at = open_app(EVALUATE)
    at.button(key="eval_run").click().run()
    assert not at.error and not at.exception
    assert fake.calls[-1] == ("evaluate", ("eval_sample.jsonl", ("vanilla", "quill", "default"), 0, "", "none"))
    assert len(at.dataframe[0].value) == 10  # the bundled sample, previewed
    table = next(d.value for d in at.dataframe if "ranker" in d.value.columns)
    assert list(table["ranker"]) == at.multiselect(key="eval_rankers").value == ["vanilla", "quill", "default"]
    assert {"MRR", "Hit@1", "NDCG@3"} <= set(table.columns)
    assert len(at.get("vega_lite_chart")) == 1
    assert len(at.get("download_button")) == 2


def test_an_uploaded_set_is_evaluated_and_a_broken_one_is_one_error(open_app, fake):
    at = open_app(EVALUATE)
    at.segmented_control(key="eval_source").set_value("Upload a set").run()
    good = '{"id": "1", "context": "We began. [Q]", "quote": "Well begun is half done.", "author": "", "lang": "en"}\n'
    at.file_uploader(key="eval_file").upload("mine.jsonl", good.encode(), "application/json")
    at.run()
    at.button(key="eval_run").click().run()
    assert not at.error and fake.calls[-1][1][0] == "mine.jsonl"
    at.file_uploader(key="eval_file").set_value(("bad.jsonl", b'{"context": "no marker"}\n', "application/json"))
    at.run()
    at.button(key="eval_run").click().run()
    # the core's message, naming the file as uploaded (not its temporary place on the server)
    assert errors(at) == ["bad.jsonl:1: a row needs a 'context' string and a 'quote'"]
    assert not at.exception


def test_language_rows_and_knowledge_base_options_reach_the_core(open_app, fake):
    at = open_app(EVALUATE)
    at.multiselect(key="eval_rankers").set_value(["bm25"])
    at.selectbox(key="eval_lang").select("zh")
    at.number_input(key="eval_limit").set_value(2)
    at.toggle(key="eval_with_kb").set_value(True)
    at.button(key="eval_run").click().run()
    assert not at.error
    assert fake.calls[-1] == ("evaluate", ("eval_sample.jsonl", ("bm25",), 2, "zh", "starter"))
    assert list(next(d.value for d in at.dataframe if "ranker" in d.value.columns)["rows"]) == [2]
