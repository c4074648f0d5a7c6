import pytest

from quill_core import InputError
from quill_core._text import detect_lang, key, normalize, split_sentences
from quill_core._names import author_key, clean_author
from quill_core._query import parse_query
from quill_core._types import quote_id


def test_normalize_unifies_quotes_dashes_widths_and_space():
    assert normalize("“Hello”\u00a0 — world\n\n ‘x’") == '"Hello" - world \'x\''
    assert normalize("ＡＢＣ１２３，") == "ABC123,"
    assert normalize("学而不思则罔，思而不学则殆。") == "学而不思则罔，思而不学则殆。"


def test_key_ignores_case_punctuation_and_space_but_keeps_cjk():
    assert key("Knowledge is POWER!") == key("knowledge  is power")
    assert key("知识，就是力量。") == "知识就是力量"


@pytest.mark.parametrize("raw", ["Anonymous", "unknown", "", None, "  Unknown. ", "佚名"])
def test_unknown_authors_are_unified(raw):
    assert clean_author(raw) == ""


def test_author_cleaning_and_keys():
    assert clean_author("Albert Einstein,") == "Albert Einstein"
    assert author_key("albert  einstein.") == author_key("Albert Einstein")


def test_quote_id_is_stable_under_cosmetic_changes():
    assert quote_id("“Knowledge is power.”", "Francis Bacon,") == quote_id('Knowledge is power', "francis bacon")
    assert quote_id("Knowledge is power.", "Bacon") != quote_id("Knowledge is power.", "Hobbes")


def test_sentences_in_english_and_chinese():
    assert split_sentences("One. Two? Three!") == ["One.", "Two?", "Three!"]
    assert split_sentences("天下大事。必作于细！对吗？") == ["天下大事。", "必作于细！", "对吗？"]


def test_language_detection_is_deterministic():
    assert detect_lang("知识就是力量，我们都应该学习。") == "zh"
    assert detect_lang("The quick brown fox jumps over the lazy dog near the river bank.") == "en"
    assert all(detect_lang("Ceci est une phrase en français, avec des mots.") == "fr" for _ in range(5))


def test_parse_query_splits_at_marker_or_end():
    q = parse_query("Before text. [Q] After text.")
    assert (q.before, q.after) == ("Before text. ", " After text.")
    assert q.text[q.position :] == " After text."
    q = parse_query("No marker here.  ")
    assert (q.before, q.after) == ("No marker here.", "")


@pytest.mark.parametrize("bad", ["", "   ", "[Q]", "a [Q] b [Q] c", "x" * 20_001, "bin\x00ary"])
def test_parse_query_rejects_unusable_paragraphs(bad):
    with pytest.raises(InputError):
        parse_query(bad)


def test_script_classes_han_and_cjk():
    from quill_core._text import CJK, HAN, has_cjk, is_cjk

    assert all(HAN.match(ch) for ch in "学㐀豈") and not any(HAN.match(ch) for ch in "，。あA")
    assert all(CJK.match(ch) for ch in "学，。「あア⺀") and not any(CJK.match(ch) for ch in "ＡＢ１a ")
    assert is_cjk("学") and not is_cjk("。") and not is_cjk("")
    assert has_cjk("Lu Xun 鲁迅") and not has_cjk("Ｌｕ，Ｘｕｎ。")


def test_sentence_end_is_the_gap_between_sentences():
    from quill_core._text import SENTENCE_BREAK

    assert [m.group() for m in SENTENCE_BREAK.finditer("He said “Go.” Then left.\n\n好。走吧")] == ["” ", "\n\n", ""]


def test_one_normalization_table():
    from quill_core._text import STRAIGHT_CHARS

    assert all(len(v) == 1 for v in STRAIGHT_CHARS.values())  # one-to-one: offsets survive
    assert normalize("«a» ‹b› 「c」 x\u2013y\u00a0z") == '"a" \'b\' "c" x-y z'
    with pytest.raises(TypeError):
        STRAIGHT_CHARS["x"] = "y"  # type: ignore[index]


@pytest.mark.parametrize(
    "claimed, actual, same",
    [
        ("Einstein", "Albert Einstein", True),
        ("A. Einstein", "Albert Einstein", True),
        ("Oscar Wilde", "O. Wilde", True),
        ("Martin Luther King", "Martin Luther King Jr.", True),
        ("William Shakespear", "William Shakespeare", True),
        ("", "Mark Twain", True),
        ("Mark Twain", "", True),
        ("Henry James", "William James", False),
        ("Albert Einstein", "Mark Twain", False),
        ("鲁迅", "鲁迅先生", True),
        ("鲁迅", "周树人", False),
        ("Anonymous", "鲁迅", False),  # a Chinese name is no unknown author's
    ],
)
def test_same_author(claimed, actual, same):
    from quill_core._names import same_author

    assert same_author(claimed, actual) is same


def test_merging_is_stricter_than_verifying_for_chinese_names():
    from quill_core._names import compatible_authors, same_author

    assert same_author("鲁迅", "鲁迅先生") and not compatible_authors("鲁迅", "鲁迅先生")
    assert compatible_authors("Einstein", "Albert Einstein") and same_author("Einstein", "Albert Einstein")


def test_slug_is_a_safe_file_name():
    from quill_core._text import slug

    assert slug("  My Speech (final).md ") == "my-speech-final-.md"
    assert slug("1 Kings") == "1-kings" and slug("...") == "source" and len(slug("x" * 200)) == 80
