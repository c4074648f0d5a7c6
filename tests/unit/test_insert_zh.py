"""Insertion in Chinese (issue 11, part 5) with the fake generator: the exact quote and author, Chinese punctuation
and spacing, names in the sentence's script, anonymous quotes introduced as sayings, works named only when the
quote carries them, and drafts that break these rules rejected with a reason."""

from __future__ import annotations

import pytest

from quill_core._drafts import check_draft, cited_work, template_sentence
from quill_core._insert import insert, leads
from quill_core._names import chinese_form, same_author
from quill_core._types import Quote
from quill_core._verify import verify
from tests.fakes import FakeGenerator, FakeKB, PrefillGenerator

# our own small fixtures: classical lines in Simplified script, one paragraph in Traditional
LUNYU = Quote("学而不思则罔，思而不学则殆。", "孔子", work="论语·为政", lang="zh")
WANG_BO = Quote("海内存知己，天涯若比邻。", "王勃", work="杜少府之任蜀州", lang="zh")
SHIJING = Quote("关关雎鸠，在河之洲。", "", work="诗经·国风·周南·关雎", lang="zh")
ZENGGUANG = Quote("书山有路勤为径，学海无涯苦作舟。", "", work="增广贤文", lang="zh")
SAYING = Quote("千里之行，始于足下", "", lang="zh")
LAOZI = Quote("千里之行，始于足下。", "老子", lang="zh")
CONFUCIUS_EN = Quote("Real knowledge is to know the extent of one's ignorance.", "Confucius")
BRAND = Quote("Stay hungry, stay foolish.", "Stewart Brand")

PARA_ZH = "小时候，我总觉得学习就是把书背下来。后来才发现，只背不想，知识并不会真正变成自己的。[Q]从那以后，我读书时总会停下来问自己为什么。"
PARA_TW = "畢業那年，我們幾個朋友各奔東西，有人去了北方，有人出了國。[Q]十年過去了，我們仍然每週通一次電話。"
PARA_EN = ("Every great invention starts as a picture in someone's head. The engineers spent months sketching "
           "machines that did not exist yet. [Q] Only later did they look for the facts to make them real.")


def accepted(result):
    return [d for d in result.drafts if not d.rejected and not d.fallback]


def reasons(result):
    return [d.rejected_reason for d in result.drafts if d.rejected]


def assert_chinese_sentence(result, quote, author):
    """What a Chinese writer sees: the exact quote, the author in Chinese, Chinese marks, no stray spaces."""
    s, e = result.quote_span
    assert result.paragraph[s:e] == quote.text
    sentence = result.sentence
    assert f"“{quote.text}”" in sentence and author in sentence
    outside = sentence.replace(quote.text, "")
    assert " " not in outside and not any(c in outside for c in ",:;!?\"")
    assert sentence[-1] in "。！？”"
    assert sentence in result.paragraph


# -- the sentence a Chinese writer gets ------------------------------------------------------------------------------
def test_a_work_the_quote_carries_may_introduce_it():
    reply = "王勃在《杜少府之任蜀州》中写道：“海内存知己，天涯若比邻。”"
    result = insert(PARA_TW, WANG_BO, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == reply
    assert_chinese_sentence(result, WANG_BO, "王勃")
    assert result.paragraph == PARA_TW.replace("[Q]", reply)


@pytest.mark.parametrize("quote, sentence", [
    (WANG_BO, "王勃在《杜少府之任蜀州》中写道：“海内存知己，天涯若比邻。”"),
    (LUNYU, "孔子在《论语·为政》中说：“学而不思则罔，思而不学则殆。”"),      # recorded speech: 说
    (LAOZI, "正如老子所说：“千里之行，始于足下。”"),                        # no work: none is named
    (SHIJING, "《诗经·关雎》中写道：“关关雎鸠，在河之洲。”"),               # anonymous, a long path cut to book·title
    (ZENGGUANG, "《增广贤文》中写道：“书山有路勤为径，学海无涯苦作舟。”"),
    (SAYING, "俗话说：“千里之行，始于足下”。"),                             # anonymous, no work: a saying
    (CONFUCIUS_EN, "正如孔子所说：“Real knowledge is to know the extent of one's ignorance.”"),
    (BRAND, "正如Stewart Brand所说：“Stay hungry, stay foolish.”"),          # no known Chinese form: as written
])
def test_the_chinese_fallback_sentence(quote, sentence):
    assert template_sentence(quote, "zh") == sentence
    result = insert(PARA_ZH, quote, generator=FakeGenerator("没有引文的句子。"), drafts=1)
    assert result.sentence == sentence and result.drafts[0].fallback
    assert "佚名" not in result.paragraph and "  " not in result.paragraph


def test_spaces_and_ascii_punctuation_around_the_quote_become_chinese():
    reply = '正如 孔子 所说: "学而不思则罔，思而不学则殆。"'
    result = insert(PARA_ZH, LUNYU, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == "正如孔子所说：“学而不思则罔，思而不学则殆。”"
    assert_chinese_sentence(result, LUNYU, "孔子")


def test_an_english_quote_in_a_chinese_sentence_keeps_its_own_spaces():
    reply = "正如 孔子 所说, “Real knowledge is to know the extent of one's ignorance.”"
    result = insert(PARA_ZH, CONFUCIUS_EN, generator=FakeGenerator(reply), drafts=1)
    assert result.sentence == "正如孔子所说，“Real knowledge is to know the extent of one's ignorance.”"


def test_a_sentence_without_closing_punctuation_gets_a_chinese_full_stop():
    result = insert(PARA_ZH, SAYING, generator=FakeGenerator("常言道：“千里之行，始于足下”"), drafts=1)
    assert result.sentence == "常言道：“千里之行，始于足下”。"
    result = insert(PARA_ZH, LAOZI, generator=FakeGenerator("老子说：“千里之行，始于足下。”，"), drafts=1)
    assert result.sentence == "老子说：“千里之行，始于足下。”"  # a dangling comma after the quote is dropped


# -- names ------------------------------------------------------------------------------------------------------------
def test_a_latin_script_author_with_a_known_chinese_name_is_named_in_chinese():
    assert chinese_form("Confucius") == "孔子" and chinese_form("Lao-Tzu") == "老子"
    assert chinese_form("Albert Einstein") == "爱因斯坦" and chinese_form("Stewart Brand") == "Stewart Brand"
    bad = "正如Confucius所说：“Real knowledge is to know the extent of one's ignorance.”"
    good = "孔子曾说：“Real knowledge is to know the extent of one's ignorance.”"
    result = insert(PARA_ZH, CONFUCIUS_EN, generator=FakeGenerator(bad, good), drafts=2)
    assert result.sentence == good
    assert reasons(result) == ["English author name in a Chinese sentence (Confucius)"]
    gen = FakeGenerator("x")
    insert(PARA_ZH, CONFUCIUS_EN, generator=gen, drafts=2)
    assert "Author: 孔子" in gen.calls[0]["messages"][3][1] and gen.calls[1]["messages"][-1][1] == "正如孔子所说：“"


def test_a_chinese_quote_whose_kb_author_is_latin_script_reads_as_chinese():
    quote = Quote("己所不欲，勿施于人。", "Confucius", lang="zh")
    result = insert(PARA_ZH, quote, generator=FakeGenerator("孔子说：“己所不欲，勿施于人。”"), drafts=1)
    assert result.sentence == "孔子说：“己所不欲，勿施于人。”"
    assert_chinese_sentence(result, quote, "孔子")


def test_an_author_without_a_known_chinese_name_stays_as_the_kb_writes_it():
    reply = "正如Stewart Brand所说：“Stay hungry, stay foolish.”"
    assert insert(PARA_ZH, BRAND, generator=FakeGenerator(reply), drafts=1).sentence == reply


@pytest.mark.parametrize("reply, reason", [
    ("孔子和Socrates都说过：“学而不思则罔，思而不学则殆。”", "Latin-script name in a Chinese sentence (Socrates)"),
    ("正如孔子（Confucius）所说：“学而不思则罔，思而不学则殆。”", "Latin-script name in a Chinese sentence (Confucius)"),
    ("正如Confucius所说：“学而不思则罔，思而不学则殆。”", "author missing"),
    ("As Confucius said, “学而不思则罔，思而不学则殆。” and we should listen.", "author missing"),
])
def test_english_names_in_a_chinese_sentence_are_rejected(reply, reason):
    result = insert(PARA_ZH, LUNYU, generator=FakeGenerator(reply), drafts=1)
    assert reasons(result) == [reason]
    assert result.sentence == template_sentence(LUNYU, "zh")


def test_an_english_sentence_names_the_author_as_the_kb_writes_it():
    assert template_sentence(LUNYU, "en") == "As 孔子 put it, “学而不思则罔，思而不学则殆。”"
    latin = "As Confucius put it, “学而不思则罔，思而不学则殆。”"  # the name English readers know is fine too
    assert insert(PARA_EN, LUNYU, generator=FakeGenerator(latin), drafts=1).sentence == latin


@pytest.mark.parametrize("reply, reason", [
    ("As 孔子 put it, “Real knowledge is to know the extent of one's ignorance.”",
     "Chinese author name in an English sentence (孔子)"),
    ("As Confucius (孔子) put it, “Real knowledge is to know the extent of one's ignorance.”",
     "Chinese characters in an English sentence (孔子)"),
])
def test_chinese_names_in_an_english_sentence_are_rejected_unless_the_kb_writes_them(reply, reason):
    result = insert(PARA_EN, CONFUCIUS_EN, generator=FakeGenerator(reply), drafts=1)
    assert reasons(result) == [reason]
    assert result.sentence == "As Confucius put it, “Real knowledge is to know the extent of one's ignorance.”"


def test_the_inserted_sentence_verifies_under_either_script():
    kb = FakeKB([CONFUCIUS_EN, LUNYU])
    zh = insert(PARA_ZH, CONFUCIUS_EN, generator=FakeGenerator("x"), drafts=1).paragraph
    en = insert(PARA_EN, LUNYU, generator=FakeGenerator("As Confucius put it, “学而不思则罔，思而不学则殆。”"),
                drafts=1).paragraph
    for paragraph in (zh, en):
        found = verify(paragraph, kb=kb)
        assert [v.verdict for v in found] == ["verbatim"], found
    assert same_author("孔子", "Confucius") and same_author("Albert Einstein", "爱因斯坦")
    assert not same_author("老子", "Confucius") and not same_author("Lao Tzu", "孔子")


# -- anonymous quotes -------------------------------------------------------------------------------------------------
def test_anonymous_chinese_quotes_are_introduced_as_sayings_never_as_yiming():
    starts = leads(SHIJING, "zh")
    assert "古人云：“" in starts and "《诗经·关雎》中写道：“" in starts
    assert "俗话说：“" in leads(SAYING, "zh")
    assert not any("佚名" in s or "None" in s for s in starts + leads(SAYING, "zh"))
    gen = FakeGenerator("佚名说：“关关雎鸠，在河之洲。”", "古人云：“关关雎鸠，在河之洲。”")
    result = insert(PARA_ZH, SHIJING, generator=gen, drafts=2)
    assert result.sentence == "古人云：“关关雎鸠，在河之洲。”"
    assert reasons(result) == ["anonymous quote credited to “佚名”"]
    assert "Author: 佚名" not in gen.calls[0]["messages"][3][1]


def test_anonymous_english_quotes_are_not_credited_to_unknown():
    quote = Quote("Where there is a will, there is a way.", "")
    assert not any("unknown" in s.lower() for s in leads(quote, "en"))
    gen = FakeGenerator("As Unknown put it, “Where there is a will, there is a way.”",
                        "As an unknown sailor wrote, “Where there is a will, there is a way.”")
    result = insert(PARA_EN, quote, generator=gen, drafts=2)
    assert reasons(result) == ["anonymous quote credited to “As Unknown”"]
    assert result.sentence == "As an unknown sailor wrote, “Where there is a will, there is a way.”"


# -- works ------------------------------------------------------------------------------------------------------------
def test_cited_work():
    assert cited_work(WANG_BO, "zh") == "杜少府之任蜀州" and cited_work(SHIJING, "zh") == "诗经·关雎"
    assert cited_work(LAOZI, "zh") == "" and cited_work(WANG_BO, "en") == ""
    assert cited_work(Quote("Knowledge is power.", "Francis Bacon", work="Meditationes Sacrae"), "zh") == ""
    assert leads(WANG_BO, "zh")[1] == "王勃在《杜少府之任蜀州》中写道：“"
    assert not any("《" in s for s in leads(LAOZI, "zh"))  # no work: no lead names one


@pytest.mark.parametrize("quote, reply, reason", [
    (LAOZI, "老子在《道德经》中写道：“千里之行，始于足下。”", "work not in the evidence (《道德经》)"),
    (LUNYU, "孔子在《孟子》中说：“学而不思则罔，思而不学则殆。”", "work not in the evidence (《孟子》)"),
    (LUNYU, "孔子在《论语》中说：“学而不思则罔，思而不学则殆。”", ""),   # the book of 论语·为政
    (LUNYU, "《为政篇》里，孔子说：“学而不思则罔，思而不学则殆。”", ""),  # its chapter
])
def test_a_work_the_quote_does_not_carry_is_never_named(quote, reply, reason):
    sentence, problem = check_draft(reply, quote, "zh", 85)
    assert problem == reason
    if not reason:
        assert sentence == reply


# -- what check_draft rejects ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, reason", [
    ("As 孔子 said, “学而不思则罔，思而不学则殆” and that is why I stop to think.", "wrong language"),
    ("正如孔子所说：“学习不思考就迷惑，思考不学习就危险。”", "quote missing or altered beyond repair"),
    ("孔子说：“学而不思则罔，思而不学则殆”，这句话告诉我们，", "unfinished sentence (ends with “，”)"),
    ("孔子说：“学而不思则罔，思而不学则殆”，这句话告诉我们：", "unfinished sentence (ends with “：”)"),
    ("佚名说：“学而不思则罔，思而不学则殆”", "author missing"),
])
def test_check_draft_rejects_chinese_drafts(reply, reason):
    quote = Quote("学而不思则罔，思而不学则殆", "孔子", lang="zh")
    assert check_draft(reply, quote, "zh", 85)[1] == reason


def test_a_quote_that_ends_its_sentence_drops_a_cut_off_tail():
    sentence, problem = check_draft("孔子说：“学而不思则罔，思而不学则殆。”这句话告诉我们，", LUNYU, "zh", 85)
    assert (sentence, problem) == ("孔子说：“学而不思则罔，思而不学则殆。”", "")


@pytest.mark.parametrize("reply, sentence", [
    ("正如孔子所说：“学而不思则惘，思而不学则殆。”", "正如孔子所说：“学而不思则罔，思而不学则殆。”"),  # one character
    ("正如孔子所说：「学而不思则罔，思而不学则殆。」", "正如孔子所说：「学而不思则罔，思而不学则殆。」"),  # corner marks
])
def test_the_quote_comes_back_character_for_character(reply, sentence):
    assert check_draft(reply, LUNYU, "zh", 85) == (sentence, "")


def test_a_forced_chinese_draft_copies_the_quote_and_keeps_chinese_spacing():
    gen = PrefillGenerator(["古人云 :"], tail="")
    result = insert(PARA_ZH, SHIJING, generator=gen, drafts=1)
    assert result.sentence == "古人云：“关关雎鸠，在河之洲。”"
    assert gen.calls[1]["prefill"] == "古人云 :“关关雎鸠，在河之洲。”"
