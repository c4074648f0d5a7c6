"""verify(): quotations found in English and Chinese drafts, misquotes and misattributions reported as such."""

from __future__ import annotations

import json

import pytest
from rapidfuzz import fuzz

from quill_core import Candidate, InputError, Quote, to_json
from quill_core._verify import DiffOp, find_quotations, verify, word_diff
from tests.fakes import FakeKB

QUOTES = [
    Quote("Imagination is more important than knowledge.", "Albert Einstein", lang="en"),
    Quote("Be yourself; everyone else is already taken.", "Oscar Wilde", lang="en"),
    Quote("The only thing we have to fear is fear itself.", "Franklin D. Roosevelt", lang="en"),
    Quote("Stay hungry, stay foolish.", "Steve Jobs", lang="en"),
    Quote("学而时习之，不亦说乎？", "孔子", lang="zh"),
    Quote("其实地上本没有路，走的人多了，也便成了路。", "鲁迅", lang="zh"),
    Quote("一万年太久，只争朝夕。", "毛泽东", lang="zh"),
]


def fake_neighbours(text: str, k: int) -> list[Candidate]:
    """Nearest quotes by character overlap: a deterministic stand-in for embedding neighbours."""
    scored = sorted(QUOTES, key=lambda q: -fuzz.token_set_ratio(text, q.text))
    return [Candidate(q, fuzz.token_set_ratio(text, q.text) / 100) for q in scored[:k]]


def check(draft: str, **kw):
    return verify(draft, kb=FakeKB(QUOTES), neighbours=fake_neighbours, **kw)


def test_english_draft_with_a_misquote_a_misattribution_and_a_verbatim_quote() -> None:
    draft = ('As Albert Einstein once said, "Imagination is more valuable than knowledge." '
             "Mark Twain put it well: “Be yourself; everyone else is already taken.” "
             "And “Stay hungry, stay foolish,” said Steve Jobs.")
    misquote, misattribution, verbatim = check(draft)

    assert misquote.verdict == "misquoted"
    assert misquote.canonical == "Imagination is more important than knowledge."
    assert (misquote.author, misquote.claimed_author) == ("Albert Einstein", "Albert Einstein")
    assert draft[misquote.start : misquote.end] == misquote.text == "Imagination is more valuable than knowledge."
    assert [d for d in misquote.diff if d.op != "equal"] == [DiffOp("replace", "important", "valuable")]
    assert 75 <= misquote.score < 100

    assert misattribution.verdict == "misattributed"
    assert (misattribution.claimed_author, misattribution.author) == ("Mark Twain", "Oscar Wilde")
    assert misattribution.score == 100 and misattribution.diff == ()

    assert verbatim.verdict == "verbatim" and verbatim.author == "Steve Jobs"
    assert draft[verbatim.start : verbatim.end] == "Stay hungry, stay foolish"


def test_chinese_draft_with_a_misquote_and_a_misattribution() -> None:
    draft = "孔子说：“学而时习之，不亦乐乎？”后来，正如鲁迅所说，「一万年太久，只争朝夕。」"
    misquote, misattribution = check(draft)

    assert misquote.verdict == "misquoted" and misquote.claimed_author == "孔子"
    assert misquote.canonical == "学而时习之，不亦说乎？"
    assert [d for d in misquote.diff if d.op != "equal"] == [DiffOp("replace", "说", "乐")]  # character-level

    assert misattribution.verdict == "misattributed"
    assert (misattribution.claimed_author, misattribution.author) == ("鲁迅", "毛泽东")
    assert draft[misattribution.start : misattribution.end] == "一万年太久，只争朝夕。"


def test_right_words_right_author_is_verbatim_and_a_partial_quote_counts() -> None:
    [v] = check("“其实地上本没有路，走的人多了，也便成了路。”——鲁迅")
    assert v.verdict == "verbatim" and v.author == "鲁迅" and v.claimed_author == "鲁迅"
    [part] = check("Roosevelt said that “the only thing we have to fear is fear itself” in 1933.")
    assert part.verdict == "verbatim" and part.author == "Franklin D. Roosevelt"
    [excerpt] = check("He told us: “we have to fear is fear itself”.")
    assert excerpt.verdict == "verbatim" and "excerpt" in excerpt.note


def test_unknown_quotes_and_scare_quotes() -> None:
    results = check("It was a “smart” move. “The weather in Paris is lovely in the spring,” she wrote.")
    assert [(r.text, r.verdict, r.canonical) for r in results] == [
        ("The weather in Paris is lovely in the spring", "unknown", "")]


def test_unquoted_as_x_said_attributions_are_checked() -> None:
    [v] = check("As Mark Twain said, the only thing we have to fear is fear itself. Then we left.")
    assert v.verdict == "misattributed"
    assert (v.claimed_author, v.author) == ("Mark Twain", "Franklin D. Roosevelt")
    [zh] = check("正如鲁迅所说，其实地上本没有路，走的人多了，也便成了路。")
    assert zh.verdict == "verbatim" and zh.claimed_author == "鲁迅"


@pytest.mark.parametrize(("draft", "text", "author"), [
    ("“Be yourself; everyone else is already taken.” — Oscar Wilde", "Be yourself; everyone else is already taken.",
     "Oscar Wilde"),
    ('"Stay hungry, stay foolish," Steve Jobs said.', "Stay hungry, stay foolish", "Steve Jobs"),
    ("In the words of the poet Maya Angelou, «We may encounter many defeats.»", "We may encounter many defeats.",
     "Maya Angelou"),
    ("Mark Twain: “Kindness is the language which the deaf can hear.”", "Kindness is the language which the deaf can hear.",
     "Mark Twain"),
    ("我记得毛泽东说过：「一万年太久，只争朝夕。」", "一万年太久，只争朝夕。", "毛泽东"),
    ("「一万年太久，只争朝夕。」——毛泽东", "一万年太久，只争朝夕。", "毛泽东"),
    ("He said “hello there, friend” to me.", "hello there, friend", ""),
    ("It wasn’t ‘a very smart move’ at all, he didn’t care.", "a very smart move", ""),
])
def test_find_quotations_and_claimed_authors(draft: str, text: str, author: str) -> None:
    [q] = find_quotations(draft)
    assert (q.text, q.claimed_author) == (text, author)
    assert draft[q.start : q.end] == q.text


def test_nested_chinese_quotes_keep_the_outer_one() -> None:
    [q] = find_quotations("他说：「老师讲过『学而时习之』这句话，值得深思。」")
    assert q.text == "老师讲过『学而时习之』这句话，值得深思。"


def test_word_diff_reports_each_side_with_punctuation() -> None:
    ops = word_diff("The only thing we have to fear is fear itself.", "The only thing to fear is fear, itself!")
    assert [d for d in ops if d.op != "equal"] == [DiffOp("delete", "we have", "")]
    assert "".join(d.canonical for d in ops if d.op == "equal").startswith("The only thing")


def test_json_shape_and_input_errors() -> None:
    [v] = check("“Stay hungry, stay foolish,” said Steve Jobs.")
    payload = json.loads(json.dumps({"quotes": [to_json(v)]}))
    assert set(payload["quotes"][0]) >= {"start", "end", "text", "verdict", "canonical", "author", "claimed_author",
                                         "score", "diff"}
    with pytest.raises(InputError):
        check("   ")
    with pytest.raises(InputError):
        check("“a b c d”", threshold=101)
    assert verify("No quotations here.", kb=FakeKB(QUOTES)) == []


def test_every_verdict_has_one_meaning_for_writers() -> None:
    from typing import get_args

    from quill_core._types import Tone, Verdict
    from quill_core._verify import VERDICT_MEANINGS, Verification

    assert set(VERDICT_MEANINGS) == set(get_args(Verdict))
    assert {m.tone for m in VERDICT_MEANINGS.values()} <= set(get_args(Tone))
    assert len({m.label for m in VERDICT_MEANINGS.values()}) == len(VERDICT_MEANINGS)
    v = Verification(0, 4, "text", "misattributed")
    assert v.meaning.tone == "error" and v.meaning.label == "misattributed" and v.meaning.explanation
    with pytest.raises(TypeError):
        VERDICT_MEANINGS["unknown"] = VERDICT_MEANINGS["verbatim"]  # type: ignore[index]


def test_provenance_has_one_home() -> None:
    from quill_core import _sources, _types

    assert _sources.Provenance is _types.Provenance
