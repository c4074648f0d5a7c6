"""Cleaning of imported quotes: what a user sees in the library after an import."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quill_core._kb.clean import (
    MAX_TEXT_CHARS,
    clean_text,
    clean_topics,
    clean_work,
    guess_lang,
    import_author,
    looks_english,
    make_quote,
    text_key,
)
from quill_core._text import key, normalize
from quill_core._types import quote_id


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("“Be yourself; everyone else is already taken.”", "Be yourself; everyone else is already taken."),
        ('  "Knowledge   is\npower."  ', "Knowledge is power."),
        ("「天下兴亡，匹夫有责。」", '天下兴亡，匹夫有责。'),
        ("'Tis better to have loved and lost than never to have loved at all.",
         "'Tis better to have loved and lost than never to have loved at all."),
        ("‘Don’t panic.’", "Don't panic."),
        ("“Nested “quotes” stay.”", 'Nested "quotes" stay.'),
        ('"Yes," she said, "no."', '"Yes," she said, "no."'),
        ("Wait for it\u2026", "Wait for it..."),
        ("ＡＢＣ！ full width", "ABC! full width"),
        ("dash \u2014 and \u2013 dash", "dash - and - dash"),
        ("zero\u200bwidth and\x07bell", "zero width and bell"),
        ("“Unclosed opening mark", "Unclosed opening mark"),
    ],
)
def test_clean_text(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Oscar Wilde,", "Oscar Wilde"),
        ("  Albert   Einstein. ", "Albert Einstein"),
        ("Anonymous", ""),
        ("unknown", ""),
        ("", ""),
        (None, ""),
        ("by Seneca", "Seneca"),
        ("Samuel Clemens", "Mark Twain"),
        ("William Shakespear", "William Shakespeare"),
        ("“Confucius”", "Confucius"),
        ("佚名", ""),
    ],
)
def test_import_author(raw: str | None, expected: str) -> None:
    assert import_author(raw) == expected


def test_clean_work_strips_title_brackets() -> None:
    assert clean_work("《静夜思》") == "静夜思"
    assert clean_work('"Hamlet"') == "Hamlet"
    assert clean_work("The Prince, ") == "The Prince"


def test_clean_topics_split_lowercase_and_dedupe() -> None:
    assert clean_topics("思乡,月亮，思乡") == ("思乡", "月亮")
    assert clean_topics(["Famous Quotes", "#Life", "life", "", None]) == ("famous quotes", "life")
    assert clean_topics("a; b | c、d") == ("a", "b", "c", "d")
    assert clean_topics(None) == ()


def test_make_quote_rejects_with_reasons() -> None:
    assert make_quote("")[1] == "empty quote text"
    assert "too short" in make_quote("ok!")[1]
    assert "too short" in make_quote("12345 678")[1]  # no letters
    assert "too long" in make_quote("word " * MAX_TEXT_CHARS)[1]
    assert "not a string" in make_quote({"nested": "dict"})[1]
    assert "author" in make_quote("A fine quote.", author=["list"])[1]


def test_make_quote_fields_and_scores() -> None:
    quote, reason = make_quote(" “Less is more.” ", author="Ludwig Mies van der Rohe,", work="《Interview》",
                               topics="design, Architecture", ppl="3.5", popularity="nan", collections=("a", "a"))
    assert reason == ""
    assert quote.text == "Less is more."
    assert quote.author == "Ludwig Mies van der Rohe"
    assert quote.work == "Interview"
    assert quote.topics == ("design", "architecture")
    assert quote.lang == "en"
    assert quote.collections == ("a",)
    assert quote.ppl == 3.5 and quote.popularity is None  # NaN is no score


def test_make_quote_language() -> None:
    assert make_quote("知识就是力量，学习使人进步。")[0].lang == "zh"
    assert make_quote("Where there is love there is life.")[0].lang == "en"
    assert make_quote("La vie est belle quand on la partage avec ceux qu'on aime.")[0].lang == "fr"
    assert make_quote("Short text here", lang="EN-us")[0].lang == "en"


def test_looks_english_is_conservative() -> None:
    assert looks_english("You can never cross the ocean until you have the courage to lose sight of the shore.")
    assert not looks_english("Wenn man nachts nicht schläft, werden Träume wahr.")
    assert not looks_english("Sin sorpresas, aunque sean desagradables, nadie estaría dispuesto a vivir.")
    assert guess_lang("人生自古谁无死") == "zh"


@given(st.text(min_size=1, max_size=200), st.text(max_size=40))
def test_make_quote_id_is_the_stable_quote_id(text: str, author: str) -> None:
    quote, _ = make_quote(text, author=author, lang="en")
    if quote is not None:
        assert quote.id == quote_id(quote.text, quote.author)
        assert text_key(quote.text) == key(quote.text)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_fast_path_matches_normalize(text: str) -> None:
    cleaned = clean_text(text)
    assert cleaned == clean_text(normalize(text))
    assert normalize(cleaned) == cleaned
