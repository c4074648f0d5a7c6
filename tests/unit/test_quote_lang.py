"""The quotes' language: by default the paragraph's (when the knowledge base holds quotes in it), "any" one option
away, in the facade and the CLI; evaluation measures the rankers without a language filter."""

from __future__ import annotations

import json

import pytest

from quill_core import Filters, InputError, Quill, Quote, Settings
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder

ZH = "我们常说知识就是力量，学习的时候也要多思考。[Q]"
EN = "Knowledge is power, they told us, and imagination matters in life. [Q]"
FR = "Nous avons toujours pensé que la connaissance était la seule vraie puissance du monde. [Q]"
MORE_ZH = [Quote("千里之行，始于足下。", author="老子", lang="zh", collections=("fixture",)),
           Quote("温故而知新，可以为师矣。", author="孔子", work="论语", lang="zh", collections=("fixture",))]


def langs(suggestions) -> set[str]:
    return {s.quote.lang for s in suggestions}


def test_a_chinese_paragraph_gets_chinese_quotes_and_any_language_is_one_option_away(quill):
    quill.kb.upsert(MORE_ZH)
    same = quill.suggest(ZH, k=8, ranker="hybrid")
    assert langs(same) == {"zh"} and len(same) == 4  # every Chinese quote, no English one
    assert "知识就是力量。" in {s.quote.text for s in same}
    assert langs(quill.suggest(ZH, k=8, ranker="hybrid", quote_lang="any")) == {"en", "zh"}


def test_an_english_paragraph_gets_english_quotes_unless_another_language_is_chosen(quill):
    assert langs(quill.suggest(EN, k=8, ranker="vanilla")) == {"en"}
    assert langs(quill.suggest(EN, k=8, ranker="vanilla", quote_lang="zh")) == {"zh"}
    assert langs(quill.suggest(EN, k=8, ranker="vanilla", quote_lang=" ZH ")) == {"zh"}  # as typed on a CLI


def test_a_language_the_knowledge_base_lacks_falls_back_to_any_language(quill, settings):
    assert langs(quill.suggest(FR, k=8, ranker="vanilla")) == {"en", "zh"}
    english_only = Quill(Settings.load(home=settings.home / "en-only"), embedder=FakeEmbedder())
    english_only.kb.upsert([q for q in SAMPLE_QUOTES if q.lang == "en"])
    assert langs(english_only.suggest(ZH, k=3, ranker="vanilla")) == {"en"}  # never empty because of the default


def test_an_explicit_language_filter_stays_and_contradictions_are_input_errors(quill):
    assert langs(quill.suggest(ZH, k=8, ranker="vanilla", filters=Filters(lang="en"))) == {"en"}
    assert langs(quill.suggest(ZH, k=8, ranker="vanilla", filters=Filters(lang="en"), quote_lang="en")) == {"en"}
    with pytest.raises(InputError, match="choose one"):
        quill.suggest(ZH, ranker="vanilla", filters=Filters(lang="en"), quote_lang="zh")
    with pytest.raises(InputError, match="choose one"):
        quill.suggest(ZH, ranker="vanilla", filters=Filters(lang="en"), quote_lang="any")
    with pytest.raises(InputError, match="no quotations in 'fr'"):
        quill.suggest(EN, ranker="vanilla", quote_lang="fr")


def test_the_cli_follows_the_paragraph_and_takes_quote_lang(run_cli, tmp_path):
    Quill(Settings.load(home=tmp_path / "home"), embedder=FakeEmbedder()).kb.upsert(SAMPLE_QUOTES)

    def suggested(*extra: str) -> set[str]:
        code, out, err = run_cli("suggest", "--text", ZH, "--k", "8", "--ranker", "vanilla", "--json", *extra)
        assert code == 0, err
        return {s["lang"] for s in json.loads(out)["suggestions"]}

    assert suggested() == {"zh"}
    assert suggested("--quote-lang", "any") == {"en", "zh"}
    assert suggested("--quote-lang", "en") == {"en"}
    assert suggested("--lang", "en") == {"en"}  # the older spelling
    code, _, err = run_cli("suggest", "--text", ZH, "--quote-lang", "fr")
    assert code == 1 and "no quotations in 'fr'" in err


def test_evaluation_ranks_what_the_app_offers_by_default(tmp_path):
    """Evaluation applies suggest's default (quotes in the paragraph's language): a Chinese paragraph's candidates
    are Chinese quotes only, an English one's English quotes only."""
    from quill_core._evaluate import EvalRow, collect

    rows = [EvalRow(id="1", context="知识就是力量，我们要读书。[Q]", quote="知识就是力量。", author="培根", lang="zh"),
            EvalRow(id="2", context="Knowledge gives us power over fear. [Q]",
                    quote="The only thing we have to fear is fear itself.", author="Franklin D. Roosevelt")]
    results = collect(rows, embedder=FakeEmbedder())
    for result, lang in zip(results, ("zh", "en")):
        assert result.lang == lang
        assert {m.quote.lang for kind in result.lists.values() for m in kind} == {lang}
