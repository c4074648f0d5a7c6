"""Insertion with the real packaged SmolLM2-135M-Instruct (generator, fluency scorer and LM attribution).

Lean on purpose: one English and three Chinese insertions (a named poet, an anonymous line with its work, a
Latin-script author named in Chinese), plus the generator's prefill / stop handling and the LM
attribution's preference for a draft that claims nothing beyond the evidence. The model is converted once for
the module (about a minute on a busy machine)."""

from __future__ import annotations

import re

import pytest

from quill_core import Quill, Quote, Settings
from quill_core._attribution import LMEntailer, localized_many, quote_evidence
from quill_core._scorer import PerplexityScorer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lm_quill(tmp_path_factory):
    settings = Settings.load(home=tmp_path_factory.mktemp("insert-home"))
    return Quill(settings)


def test_english_insertion_keeps_the_exact_quote_and_author(lm_quill):
    quote = Quote("Imagination is more important than knowledge.", "Albert Einstein")
    para = ("The engineers spent months sketching machines that did not exist yet. [Q] Only later did they "
            "look for the facts to make them real.")
    result = lm_quill.insert(para, quote, drafts=2)
    s, e = result.quote_span
    assert result.paragraph[s:e] == quote.text
    assert quote.text in result.sentence and "Einstein" in result.sentence
    assert result.paragraph.startswith("The engineers spent months") and "[Q]" not in result.paragraph
    accepted = [d for d in result.drafts if not d.rejected]
    assert accepted and accepted[0].text == result.sentence
    assert [d.attribution for d in accepted] == sorted((d.attribution for d in accepted), reverse=True)
    assert all(0.0 <= d.fluency <= 1.0 and 0.0 <= d.attribution <= 1.0 for d in result.drafts)


def test_chinese_insertion_keeps_the_exact_quote_and_author(lm_quill):
    quote = Quote("学而不思则罔，思而不学则殆。", "孔子", work="论语", lang="zh")
    para = "小时候，我总觉得学习就是把书背下来。[Q]从那以后，我读书时总会停下来问自己为什么。"
    result = lm_quill.insert(para, quote, drafts=1)
    s, e = result.quote_span
    assert result.paragraph[s:e] == quote.text
    assert "孔子" in result.sentence
    assert result.paragraph.startswith("小时候，我总觉得学习就是把书背下来。") and " " not in result.paragraph


@pytest.mark.parametrize("quote, named", [
    (Quote("关关雎鸠，在河之洲。", "", work="诗经·国风·周南·关雎", lang="zh"), ""),
    (Quote("Real knowledge is to know the extent of one's ignorance.", "Confucius"), "孔子"),
])
def test_chinese_insertion_reads_as_chinese(lm_quill, quote, named):
    para = "毕业那年，我们几个朋友各奔东西。[Q]十年过去了，我们仍然每周通一次电话。"
    result = lm_quill.insert(para, quote, drafts=2)
    s, e = result.quote_span
    assert result.paragraph[s:e] == quote.text
    outside = result.sentence.replace(quote.text, "")
    assert named in outside and "佚名" not in outside and "Confucius" not in outside
    assert not re.search(r"[\u4e00-\u9fff，。：“”]\s+[\u4e00-\u9fff，。：“”]", outside)
    assert not re.search(r"(?<![A-Za-z])[A-Z][a-z]+", outside)
    assert result.sentence[-1] in "。！？”…"


def test_local_generator_continues_the_prefill_and_stops_at_the_line_end(lm_quill):
    out = lm_quill.generator.generate([("user", "Name one colour."), ("assistant", "One colour is")],
                                      max_tokens=12, stop=("\n",))
    assert out.startswith("One colour is") and "\n" not in out


def test_lm_attribution_prefers_the_draft_that_claims_nothing_extra(lm_quill):
    quote = Quote("Knowledge itself is power.", "Francis Bacon")
    plain = "As Francis Bacon put it, “Knowledge itself is power.”"
    padded = ("As Francis Bacon put it in his famous speech to the Royal Society in 1662, after a long dinner, "
              "“Knowledge itself is power.”")
    entailer = LMEntailer(PerplexityScorer(lm_quill.settings))
    supported, unsupported = localized_many(entailer, quote_evidence(quote), [plain, padded])
    assert supported > unsupported
