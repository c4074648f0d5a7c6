"""``Quill.insert`` and ``quill insert``: quote lookup in the knowledge base, injected resources, JSON output."""

from __future__ import annotations

import json

import pytest

from quill_core import Quill, Quote
from quill_core._cli import main
from quill_core._errors import InputError
from tests.fakes import SAMPLE_QUOTES, FakeEntailer, FakeGenerator, FakeScorer

PARA = "We tried everything the manuals said. [Q] So we started sketching instead."
GOOD = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
OTHER = "Albert Einstein, in a letter, said “Imagination is more important than knowledge.”"


def make(settings, *replies, entail=None):
    q = Quill(settings, generator=FakeGenerator(*replies), scorer=FakeScorer(mode="flat"),
              entailer=FakeEntailer(entail or {"put it": 0.9, "letter": 0.4}))
    q.kb.upsert(SAMPLE_QUOTES)
    return q


def test_facade_looks_the_author_up_in_the_knowledge_base(settings):
    quill = make(settings, OTHER, GOOD)
    result = quill.insert(PARA, "imagination is more important than knowledge.")
    assert result.sentence == GOOD
    s, e = result.quote_span
    assert result.paragraph[s:e] == "Imagination is more important than knowledge."  # the KB's canonical text
    assert [d.attribution for d in result.drafts[:2]] == [0.9, 0.4]
    assert [d.rejected_reason for d in result.drafts[2:]] == ["duplicate of draft 1", "duplicate of draft 2"]


def test_facade_needs_an_author_for_an_unknown_quote(settings):
    quill = make(settings, "As Ada Lovelace said, “The engine weaves algebraic patterns.”")
    with pytest.raises(InputError, match="give its author"):
        quill.insert(PARA, "The engine weaves algebraic patterns.")
    result = quill.insert(PARA, "The engine weaves algebraic patterns.", author="Ada Lovelace")
    assert result.sentence == "As Ada Lovelace said, “The engine weaves algebraic patterns.”"


def test_facade_takes_a_quote_object_and_reports_progress(settings):
    quill = make(settings, GOOD)
    seen = []
    result = quill.insert(PARA, Quote("Imagination is more important than knowledge.", "Albert Einstein"),
                          drafts=2, progress=lambda f, m: seen.append(f))
    assert result.sentence == GOOD
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_cli_insert_json(settings, capsys):
    code = main(["--home", str(settings.home), "insert", "--text", PARA, "--quote",
                 "Imagination is more important than knowledge.", "--drafts", "2", "--json"],
                make_quill=lambda s: make(s, OTHER, GOOD))
    assert code == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(out) == {"paragraph", "sentence", "quote_span", "drafts"}
    s, e = out["quote_span"]
    assert out["paragraph"][s:e] == "Imagination is more important than knowledge."
    assert out["sentence"] == GOOD
    assert out["drafts"][0] == {"text": GOOD, "fluency": 1.0, "attribution": 0.9, "rejected": None, "fallback": False}


def test_cli_insert_text_output_and_rejections(settings, capsys, tmp_path):
    path = tmp_path / "para.txt"
    path.write_text("小时候，我总觉得学习就是把书背下来。[Q]", encoding="utf-8")
    code = main(["--home", str(settings.home), "insert", "--file", str(path), "--quote", "知识就是力量。",
                 "--author", "培根", "--drafts", "1"], make_quill=lambda s: make(s, "nonsense"))
    assert code == 0
    out = capsys.readouterr().out
    assert "正如培根所说：“知识就是力量。”" in out
    assert "rejected: quote missing" in out and "[template]" in out


def test_cli_insert_unknown_quote_without_author_is_a_clean_error(settings, capsys):
    code = main(["--home", str(settings.home), "insert", "--text", PARA, "--quote", "Nobody said this."],
                make_quill=lambda s: make(s, GOOD))
    assert code == 1
    assert "give its author" in capsys.readouterr().err
