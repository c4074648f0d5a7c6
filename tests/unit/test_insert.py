"""The insert stage with deterministic fakes: verbatim repair, rejection reasons, the fluency gate before
attribution, the template fallback, and offsets that point at the quote in the returned paragraph."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quill_core._errors import GenerationError, InputError
from quill_core._drafts import compose, template_sentence
from quill_core._insert import FLUENCY_GATE, insert
from quill_core._types import Quote
from tests.fakes import FakeEntailer, FakeGenerator, FakeScorer, PrefillGenerator

EINSTEIN = Quote("Imagination is more important than knowledge.", "Albert Einstein")
CONFUCIUS = Quote("学而不思则罔，思而不学则殆。", "孔子", work="论语", lang="zh")
PARA = ("Every great invention starts as a picture in someone's head. The engineers spent months sketching "
        "machines that did not exist yet. [Q] Only later did they look for the facts to make them real.")
PARA_ZH = "小时候，我总觉得学习就是把书背下来。后来才发现，只背不想，知识并不会真正变成自己的。[Q]从那以后，我读书时总会停下来问自己为什么。"


def check_span(result, quote):
    s, e = result.quote_span
    assert result.paragraph[s:e] == quote.text
    assert quote.text in result.sentence
    assert result.sentence in result.paragraph


def test_better_attributed_draft_wins_and_drafts_are_ordered_by_attribution():
    worse = "The engineers, like Albert Einstein in his Nobel lecture, believed “Imagination is more important than knowledge.”"
    better = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    gen = FakeGenerator(worse, better)
    ent = FakeEntailer({"Nobel": 0.2, "put it": 0.9})
    result = insert(PARA, EINSTEIN, generator=gen, scorer=FakeScorer(mode="flat"), entailer=ent, drafts=2)
    assert result.sentence == better
    assert [d.text for d in result.drafts] == [better, worse]
    assert result.drafts[0].attribution > result.drafts[1].attribution
    assert not any(d.rejected for d in result.drafts)
    check_span(result, EINSTEIN)


def test_fluency_gate_comes_before_attribution():
    fluent = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    garbled = "Albert Einstein said said said, “Imagination is more important than knowledge.” the the"
    gen = FakeGenerator(garbled, fluent)
    ent = FakeEntailer({"said said": 0.99, "put it": 0.3})  # the garbled one is better attributed ...
    result = insert(PARA, EINSTEIN, generator=gen, scorer=FakeScorer(mode="flat", bad={garbled + "."}), entailer=ent, drafts=2)
    assert result.sentence == fluent  # ... but never passes the gate
    loser = result.drafts[-1]
    assert loser.rejected_reason.startswith("disfluent") and loser.fluency < FLUENCY_GATE


def test_the_fluency_gate_is_read_when_insert_runs(monkeypatch):
    fluent = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    garbled = "Albert Einstein said said said, “Imagination is more important than knowledge.” the the"
    scorer = FakeScorer(mode="flat", bad={garbled + "."})
    monkeypatch.setattr("quill_core._insert.FLUENCY_GATE", 0.0)  # nothing is disfluent any more
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(garbled, fluent), scorer=scorer, drafts=2)
    assert not any(d.rejected for d in result.drafts)
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(garbled, fluent), scorer=scorer, drafts=2,
                    fluency_gate=0.5)  # an explicit gate wins
    assert result.drafts[-1].rejected_reason.startswith("disfluent")


def test_altered_quote_is_repaired_to_the_canonical_text():
    gen = FakeGenerator('As Albert Einstein put it, imagination is more important than knowledge')
    result = insert(PARA, EINSTEIN, generator=gen, drafts=1)
    assert result.sentence == "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    check_span(result, EINSTEIN)
    assert result.paragraph == PARA.replace("[Q]", result.sentence)


@pytest.mark.parametrize("reply", [
    "In the words of Albert Einstein, “Imagination is more important than knowledge",   # cut at the closing mark
    "In the words of Albert Einstein, Imagination is more important than knowledge.",   # no marks at all
    "In the words of Albert Einstein, “Imagination is more important than knowledge.”.",  # doubled full stop
])
def test_quotation_marks_are_balanced(reply):
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == "In the words of Albert Einstein, “Imagination is more important than knowledge.”"


def test_small_alterations_inside_the_quote_are_repaired():
    gen = FakeGenerator('Albert Einstein once said, "Imagination is much more important than knowledge," and they agreed.')
    result = insert(PARA, EINSTEIN, generator=gen, drafts=1)
    assert "“Imagination is more important than knowledge.”" in result.sentence or \
        '"Imagination is more important than knowledge."' in result.sentence
    assert result.sentence.endswith("and they agreed.")
    check_span(result, EINSTEIN)


@pytest.mark.parametrize("reply, reason", [
    ("The engineers dreamed first and measured later.", "quote missing"),
    ("As Isaac Newton put it, “Imagination is more important than knowledge.”", "author missing"),
    ("As Hans Einstein put it, “Imagination is more important than knowledge.”", "wrong author"),
    ("“Imagination is more important than knowledge.”", "author missing"),
    ("", "empty draft"),
])
def test_rejected_drafts_say_why_and_the_template_takes_over(reply, reason):
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == template_sentence(EINSTEIN, "en")
    assert result.drafts[0].fallback and not result.drafts[0].rejected
    assert result.drafts[1].rejected_reason.startswith(reason)
    check_span(result, EINSTEIN)


def test_surname_alone_names_the_author():
    reply = "As Einstein told his students, “Imagination is more important than knowledge.”"
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == reply


@pytest.mark.parametrize("author", ["Albert Einstein Jr.", "Albert Einstein, PhD", "Albert Einstein MD"])
def test_name_suffixes_are_not_surnames(author):
    quote = Quote(EINSTEIN.text, author)
    reply = "As Einstein told his students, “Imagination is more important than knowledge.”"
    assert insert(PARA, quote, generator=FakeGenerator(reply), drafts=1).sentence == reply
    reply = "As Hans Einstein put it, “Imagination is more important than knowledge.”"
    assert insert(PARA, quote, generator=FakeGenerator(reply), drafts=1).drafts[-1].rejected_reason.startswith(
        "wrong author")


def test_the_author_inside_the_quote_does_not_count():
    quote = Quote("Be yourself; everyone else is already taken, said Oscar Wilde.", "Oscar Wilde")
    reply = "Someone once wrote, “Be yourself; everyone else is already taken, said Oscar Wilde.”"
    result = insert(PARA, quote, generator=FakeGenerator(reply), drafts=1)
    assert result.drafts[-1].rejected_reason == "author missing"


def test_chinese_paragraph_gets_a_chinese_sentence_without_spaces():
    gen = FakeGenerator("正如孔子所说：“学而不思则惘，思而不学则殆。”")  # one character altered
    result = insert(PARA_ZH, CONFUCIUS, generator=gen, drafts=1)
    assert result.sentence == "正如孔子所说：“学而不思则罔，思而不学则殆。”"
    assert " " not in result.paragraph
    check_span(result, CONFUCIUS)


def test_chinese_template_and_wrong_language_draft():
    gen = FakeGenerator("As 孔子 said, “学而不思则罔，思而不学则殆。” and I agree with him completely.")
    result = insert(PARA_ZH, CONFUCIUS, generator=gen, drafts=1)
    assert result.drafts[-1].rejected_reason == "wrong language"
    assert result.sentence == "孔子在《论语》中说：“学而不思则罔，思而不学则殆。”"  # the template names the work it carries
    check_span(result, CONFUCIUS)


def test_labels_extra_lines_and_extra_sentences_are_cut():
    reply = ("Sentence: They sketched first. As Albert Einstein put it, “Imagination is more important than "
             "knowledge.” The rest came later.\nNote: I kept the quote.")
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == "As Albert Einstein put it, “Imagination is more important than knowledge.”"


def test_no_marker_appends_at_the_end():
    para = "The engineers spent months sketching machines that did not exist yet."
    result = insert(para, EINSTEIN, generator=FakeGenerator("nothing useful"), drafts=1)
    assert result.paragraph == para + " " + template_sentence(EINSTEIN, "en")
    check_span(result, EINSTEIN)


def test_duplicates_are_marked():
    reply = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(reply), drafts=2)
    assert [d.rejected_reason for d in result.drafts] == ["", "duplicate of draft 1"]


def test_drafts_vary_evidence_and_sampling():
    quote = Quote(EINSTEIN.text, EINSTEIN.author, work="The Saturday Evening Post")
    gen = FakeGenerator("nothing")
    insert(PARA, quote, generator=gen, drafts=4, passage="Einstein gave an interview in 1929. He spoke of art.")
    prompts = [c["messages"][3][1] for c in gen.calls]
    assert "Background:" in prompts[0] and "Source:" in prompts[0]           # K = 3
    assert "Source:" in prompts[1] and "Background:" not in prompts[1]       # K = 2
    assert "Source:" not in prompts[2]                                        # K = 1
    assert [c["temperature"] == 0 for c in gen.calls] == [True, False, True, False]
    assert len({c["messages"][-1][1] for c in gen.calls}) >= 3  # different reply starts


def test_generation_errors():
    with pytest.raises(GenerationError):
        insert(PARA, EINSTEIN, generator=FakeGenerator(GenerationError("endpoint down")), drafts=2)
    ok = "As Albert Einstein put it, “Imagination is more important than knowledge.”"
    result = insert(PARA, EINSTEIN, generator=FakeGenerator(GenerationError("flaky"), ok), drafts=2)
    assert result.sentence == ok
    assert result.drafts[-1].rejected_reason.startswith("generation failed")


@pytest.mark.parametrize("kwargs", [{"drafts": 0}, {"drafts": 13}])
def test_bad_arguments(kwargs):
    with pytest.raises(InputError):
        insert(PARA, EINSTEIN, generator=FakeGenerator("x"), **kwargs)
    with pytest.raises(InputError):
        insert("   ", EINSTEIN, generator=FakeGenerator("x"))
    with pytest.raises(InputError):
        insert(PARA, Quote(" ", "x"), generator=FakeGenerator("x"))


def test_anonymous_quote_template():
    quote = Quote("Where there is a will, there is a way.", "")
    result = insert(PARA, quote, generator=FakeGenerator("nothing"), drafts=1)
    assert result.sentence == "As the saying goes, “Where there is a will, there is a way.”"
    assert template_sentence(Quote("千里之行，始于足下", ""), "zh") == "俗话说：“千里之行，始于足下”。"


def test_compose_spacing():
    assert compose("One.", "Two.", "Three.") == ("One. Two. Three.", 5)
    assert compose("One. ", "Two.", " Three.") == ("One. Two. Three.", 5)
    assert compose("一。", "二。", "三。") == ("一。二。三。", 2)
    assert compose("", "Two.", "") == ("Two.", 0)
    assert compose("Line one.\n", "Two.", "\nLine three.") == ("Line one.\nTwo.\nLine three.", 10)
    # East Asian punctuation (CJK) and the ellipsis take no space; curly quotes are shared with English
    assert compose("【注】", "Two.", "【完】") == ("【注】Two.【完】", 3)
    assert compose("他说…", "Two.", "") == ("他说…Two.", 3)
    assert compose("“One.”", "Two.", "“Three.”") == ("“One.” Two. “Three.”", 7)


_text = st.text(alphabet=st.sampled_from(list("ab cd,.!?\n“”\"'。，学思") + ["Q"]), max_size=40)


@settings(max_examples=60, deadline=None)
@given(before=_text, after=_text, reply=st.sampled_from([
    "As Albert Einstein put it, “Imagination is more important than knowledge.”",
    "Albert Einstein: imagination is more important than knowledge",
    "garbage",
]))
def test_quote_span_always_points_at_the_exact_quote(before, after, reply):
    para = before + "[Q]" + after
    if not para.replace("[Q]", "").strip():
        return
    result = insert(para, EINSTEIN, generator=FakeGenerator(reply), drafts=1)
    check_span(result, EINSTEIN)
    assert "Albert Einstein" in result.sentence or "爱因斯坦" in result.sentence  # a Chinese paragraph: his Chinese name


def test_forced_drafts_copy_the_quote_by_construction():
    gen = PrefillGenerator(["As Albert Einstein told his students,"], tail=" and they listened.\nMore.")
    result = insert(PARA, EINSTEIN, generator=gen, drafts=1)
    assert result.sentence == ("As Albert Einstein told his students, “Imagination is more important than "
                               "knowledge.” and they listened.")
    assert gen.calls[1]["prefill"].endswith("“Imagination is more important than knowledge.”")
    check_span(result, EINSTEIN)


def test_forced_draft_whose_words_cannot_introduce_a_quote_is_rejected():
    gen = PrefillGenerator(["The engineers drew a machine"])
    result = insert(PARA, EINSTEIN, generator=gen, drafts=1)
    assert result.drafts[-1].rejected_reason == "quotation not introduced"
    assert result.drafts[0].fallback


def test_a_lead_in_that_opens_the_quote_skips_the_first_step():
    gen = PrefillGenerator(["Albert Einstein said:"], tail="")
    result = insert(PARA_ZH.replace("[Q]", "") + "[Q]", EINSTEIN, generator=gen, drafts=2)
    # draft 1 is free (two calls); draft 2's lead-in already ends with an opening mark (one call)
    assert [c["stop"] for c in gen.calls] == [("“", '"', "「"), ("\n",), ("\n",)]
    # a Chinese sentence names Einstein as Chinese readers know him
    assert gen.calls[2]["prefill"] == "正如爱因斯坦所说：“Imagination is more important than knowledge.”"
    check_span(result, EINSTEIN)
