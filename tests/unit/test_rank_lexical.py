"""The BM25 index behind the ``bm25`` and ``hybrid`` rankers."""

from quill_core._lexical import LexicalIndex, tokenize
from quill_core._types import Quote
from tests.fakes import SAMPLE_QUOTES


def test_tokens_words_for_latin_characters_and_pairs_for_cjk():
    assert tokenize("The Laws of Nature!") == ["law", "nature"]  # stop words out, plural folded, case-folded
    assert tokenize("知识就是力量") == ["知", "识", "就", "是", "力", "量", "知识", "识就", "就是", "是力", "力量"]
    assert tokenize("AI和知识") == ["ai", "和", "知", "识", "和知", "知识"]
    assert tokenize("Ｋｎｏｗｌｅｄｇｅ") == ["knowledge"]  # full-width letters are normalized


def test_search_ranks_word_overlap_and_honours_allowed_ids():
    index = LexicalIndex(SAMPLE_QUOTES)
    hits = index.search("what did he say about fear and courage", k=3)
    assert hits[0][0] == SAMPLE_QUOTES[1].id and all(score > 0 for _, score in hits)
    only = index.search("fear courage", k=5, allowed={SAMPLE_QUOTES[5].id})
    assert [i for i, _ in only] == [SAMPLE_QUOTES[5].id]
    assert index.search("力量", k=2)[0][0] == SAMPLE_QUOTES[6].id


def test_no_match_and_empty_index_give_nothing():
    assert LexicalIndex(SAMPLE_QUOTES).search("zzzz qqqq", k=5) == []
    assert LexicalIndex([]).search("fear", k=5) == [] and len(LexicalIndex([])) == 0
    assert LexicalIndex([Quote("!!! ???")]).search("fear", k=5) == []
