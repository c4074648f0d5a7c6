"""Verification and provenance in Chinese: poems as source texts (found lexically, with offsets and a label such as
王勃《杜少府之任蜀州》), attribution phrases, misattributed and misquoted lines, Traditional-script drafts."""

from __future__ import annotations

import pytest

from quill_core import Quill, Quote, Settings, to_json
from quill_core._kb.poetry import PoemText, store_source_texts
from quill_core._quotations import find_quotations
from quill_core._sources import SourceLibrary
from quill_core._verify import DiffOp, word_diff
from tests.fakes import FakeEmbedder, FakeStore

# Small fixtures of our own: three poems and a chapter, Simplified as the chinese tier stores them.
POEMS = [
    PoemText("chinese-poetry/tang300/7", "杜少府之任蜀州", "王勃",
             "城阙辅三秦，风烟望五津。\n与君离别意，同是宦游人。\n海内存知己，天涯若比邻。\n无为在歧路，儿女共沾巾。"),
    PoemText("chinese-poetry/tang300/8", "静夜思", "李白", "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。"),
    PoemText("chinese-poetry/tang/t-9", "赋得古原草送别", "白居易",
             "离离原上草，一岁一枯荣。\n野火烧不尽，春风吹又生。"),
    PoemText("chinese-poetry/lunyu/1", "论语·为政", "", "子曰：“学而不思则罔，思而不学则殆。”"),
]
QUOTES = [
    Quote("海内存知己，天涯若比邻。", "王勃", work="杜少府之任蜀州", lang="zh"),
    Quote("举头望明月，低头思故乡。", "李白", work="静夜思", lang="zh"),
    Quote("野火烧不尽，春风吹又生。", "白居易", work="赋得古原草送别", lang="zh"),
    Quote("学而不思则罔，思而不学则殆。", "孔子", work="论语·为政", lang="zh"),
]


@pytest.fixture
def library(settings: Settings) -> SourceLibrary:
    assert store_source_texts(settings.home, POEMS) == len(POEMS)
    return SourceLibrary(settings)


@pytest.fixture
def zh_quill(settings: Settings) -> Quill:
    """A Quill over a real tmp knowledge base holding the Chinese quotes, the poems stored as source texts."""
    store_source_texts(settings.home, POEMS)
    quill = Quill(settings, embedder=FakeEmbedder())
    quill.kb.upsert(QUOTES)
    quill.index()
    return quill


def test_stored_poems_are_a_partial_source_found_with_offsets_and_a_label(library: SourceLibrary) -> None:
    [info] = library.list()
    assert (info.name, info.origin, info.docs) == ("chinese-poetry", "bundled", 4)
    assert set(info.authors) == {"王勃", "李白", "白居易"}
    found = library.find("海内存知己，天涯若比邻")
    assert found is not None and (found.author, found.title, found.doc) == ("王勃", "杜少府之任蜀州", "tang300.7")
    text = library.text(found.source, found.doc)
    assert text[found.span.start : found.span.end] == found.span.matched == "海内存知己，天涯若比邻"
    assert found.label == "王勃《杜少府之任蜀州》" and found.span.verdict == "verbatim"
    assert library.find("学而不思则罔").label == "《论语·为政》"  # a chapter without an author
    assert library.find("Imagination is more important than knowledge.") is None
    # a selection of a poet's works: a line missing from it is no evidence of a misattribution
    assert library.covers("白居易") == ""


def test_a_traditional_or_slightly_changed_line_finds_its_poem(library: SourceLibrary) -> None:
    found = library.find("海內存知己，天涯若比鄰")
    assert found is not None and found.span.matched == "海内存知己，天涯若比邻" and found.span.verdict == "verbatim"
    near = library.find("野火烧不灭，春风吹又生", threshold=80)
    assert near is not None and near.author == "白居易" and near.span.verdict == "near"


def test_poems_are_never_embedded(settings: Settings) -> None:
    store, embedder = FakeStore(), FakeEmbedder()
    store_source_texts(settings.home, POEMS)
    library = SourceLibrary(settings, store=lambda: store, embedder=lambda: embedder)
    assert library.find("举头望明月").author == "李白"
    assert embedder.calls == 0 and not any(store.rows.values())


def test_storing_again_replaces_the_poems(settings: Settings, library: SourceLibrary) -> None:
    assert library.find("床前明月光") is not None
    store_source_texts(settings.home, POEMS[:1])
    assert [i.docs for i in library.list()] == [1]
    assert library.find("床前明月光") is None and library.find("城阙辅三秦").author == "王勃"


@pytest.mark.parametrize(("draft", "text", "author", "work"), [
    ("王勃有诗云：“海内存知己，天涯若比邻。”", "海内存知己，天涯若比邻。", "王勃", ""),
    ("李白曾写道：“海内存知己，天涯若比邻。”", "海内存知己，天涯若比邻。", "李白", ""),
    ("正如李白所说，“举头望明月，低头思故乡。”", "举头望明月，低头思故乡。", "李白", ""),
    ("古人云：“学而不思则罔，思而不学则殆。”", "学而不思则罔，思而不学则殆。", "", ""),
    ("俗话说：“野火烧不尽，春风吹又生。”", "野火烧不尽，春风吹又生。", "", ""),
    ("《论语》中写道：“学而不思则罔，思而不学则殆。”", "学而不思则罔，思而不学则殆。", "", "论语"),
    ("唐代诗人王勃在《送杜少府之任蜀州》中写道：“海内存知己，天涯若比邻。”", "海内存知己，天涯若比邻。", "王勃",
     "送杜少府之任蜀州"),
    ("“海内存知己，天涯若比邻。”——王勃《送杜少府之任蜀州》", "海内存知己，天涯若比邻。", "王勃", "送杜少府之任蜀州"),
    ("论语里子曰：“学而不思则罔，思而不学则殆。”", "学而不思则罔，思而不学则殆。", "孔子", ""),
    ("李白說：「海內存知己，天涯若比鄰。」", "海內存知己，天涯若比鄰。", "李白", ""),  # Traditional: read as Simplified
    ("他望着天上的白云，“野火烧不尽，春风吹又生。”", "野火烧不尽，春风吹又生。", "", ""),  # 白云 is no citing verb
    ("古人云：学而不思则罔，思而不学则殆。我们要记住。", "学而不思则罔，思而不学则殆", "", ""),
    ("白居易有诗云，野火烧不尽，春风吹又生。", "野火烧不尽，春风吹又生", "白居易", ""),
])
def test_chinese_attribution_phrases(draft: str, text: str, author: str, work: str) -> None:
    [q] = find_quotations(draft)
    assert (q.text, q.claimed_author, q.claimed_work) == (text, author, work)
    assert draft[q.start : q.end] == q.text


def test_verified_in_source_misattributed_and_misquoted(zh_quill: Quill) -> None:
    draft = ("王勃在《杜少府之任蜀州》中写道：“海内存知己，天涯若比邻。”"
             "李白说：“野火烧不尽，春风吹又生。”"
             "正如李白所说：“举头望明月，低头思故多。”")
    verified, misattributed, misquoted = zh_quill.verify(draft)

    assert verified.verdict == "verbatim" and verified.author == "王勃"
    assert "verified in source: 王勃《杜少府之任蜀州》" in verified.note
    poem = zh_quill.sources.text(verified.source.source, verified.source.doc)
    assert poem[verified.source.span.start : verified.source.span.end] == "海内存知己，天涯若比邻。"

    assert misattributed.verdict == "misattributed"
    assert (misattributed.claimed_author, misattributed.author) == ("李白", "白居易")
    assert "the knowledge base attributes it to 白居易" in misattributed.note

    assert misquoted.verdict == "misquoted" and misquoted.canonical == "举头望明月，低头思故乡。"
    assert [d for d in misquoted.diff if d.op != "equal"] == [DiffOp("replace", "乡", "多")]  # one character
    assert draft[misquoted.start : misquoted.end] == misquoted.text


def test_a_traditional_draft_matches_its_simplified_quote_with_draft_offsets(zh_quill: Quill) -> None:
    draft = "送別時，王勃有詩云：「海內存知己，天涯若比鄰。」又云：「海內有知己，天涯若比鄰。」"
    exact, changed = zh_quill.verify(draft)
    assert exact.verdict == "verbatim" and exact.claimed_author == "王勃"
    assert draft[exact.start : exact.end] == exact.text == "海內存知己，天涯若比鄰。"
    assert exact.canonical == "海内存知己，天涯若比邻。" and "Traditional" in exact.note
    assert exact.source is not None and exact.source.label == "王勃《杜少府之任蜀州》"
    assert changed.verdict == "misquoted" and draft[changed.start : changed.end] == changed.text
    assert [d for d in changed.diff if d.op != "equal"] == [DiffOp("replace", "存", "有")]  # 內 / 鄰 are no change


def test_a_wrong_work_is_a_misattribution_and_the_ancients_name_nobody(zh_quill: Quill) -> None:
    wrong, ancients = zh_quill.verify("《静夜思》中写道：“海内存知己，天涯若比邻。”古人云：学而不思则罔，思而不学则殆。")
    assert wrong.verdict == "misattributed" and wrong.claimed_work == "静夜思"
    assert "places it in 杜少府之任蜀州, not 静夜思" in wrong.note
    assert ancients.verdict == "verbatim" and (ancients.claimed_author, ancients.author) == ("", "孔子")
    payload = to_json(wrong)
    assert payload["claimed_work"] == "静夜思" and payload["source"]["label"] == "王勃《杜少府之任蜀州》"


def test_a_line_only_in_the_poems_is_found_there(zh_quill: Quill) -> None:
    [v] = zh_quill.verify("李白写道：“城阙辅三秦，风烟望五津。”")
    assert v.verdict == "misattributed" and v.author == "王勃" and v.source is not None
    assert "found in source: 王勃《杜少府之任蜀州》" in v.note and "the source attributes it to 王勃" in v.note


def test_suggestions_carry_their_poem(zh_quill: Quill) -> None:
    [s] = zh_quill.suggest("朋友要远行了，我送他到路口，心里想：[Q]", k=1, ranker="vanilla",
                           candidates=4, filters=None)
    assert s.provenance is not None and s.provenance.label == f"{s.quote.author}《{s.quote.work}》"
    assert s.badge.label == "verified in source" and s.provenance.label in s.badge.help


def test_word_diff_is_per_character_for_chinese() -> None:
    ops = word_diff("春风又绿江南岸", "春风又到江南岸")
    assert [d for d in ops if d.op != "equal"] == [DiffOp("replace", "绿", "到")]
    assert [d for d in word_diff("春風又綠江南岸", "春风又绿江南岸") if d.op != "equal"] == []


def test_variant_characters_fold_on_import_and_when_matching() -> None:
    """The package writes 比隣 where readers write 比邻 (a variant OpenCC leaves alone): imports store the standard
    form, and a draft in either form matches a quote stored with the variant."""
    from quill_core._kb.units import simplified
    from quill_core._text import simplified_chars

    assert simplified("海內存知己，天涯若比隣。") == "海内存知己，天涯若比邻。"
    assert simplified_chars("天涯若比隣") == simplified_chars("天涯若比鄰") == "天涯若比邻"
