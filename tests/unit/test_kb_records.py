"""The SQLite record store: upserts that merge, filters the library page uses, revisions the index relies on."""

from __future__ import annotations

import threading

import pytest

from quill_core._config import Settings
from quill_core._errors import InputError, StoreError
from quill_core._kb import KnowledgeBase
from quill_core._types import Quote

BACON = Quote("Knowledge is power.", author="Francis Bacon", topics=("knowledge",), collections=("a",))
HAMLET = Quote("To be, or not to be, that is the question.", author="William Shakespeare", work="Hamlet",
               topics=("life",), collections=("a",))
KONGZI = Quote("学而不思则罔，思而不学则殆。", author="孔子", lang="zh", topics=("学习",), collections=("b",))


@pytest.fixture
def kb() -> KnowledgeBase:
    kb = KnowledgeBase(":memory:", name="test")
    kb.upsert([BACON, HAMLET, KONGZI])
    return kb


def test_upsert_counts_new_and_merged(kb: KnowledgeBase) -> None:
    assert len(kb) == 3
    again = Quote(BACON.text, author=BACON.author, topics=("power",), collections=("c",), popularity=7.0)
    assert kb.upsert([again]) == (0, 1)
    merged = kb.get([BACON.id])[0]
    assert merged.collections == ("a", "c")
    assert merged.topics == ("knowledge", "power")
    assert merged.popularity == 7.0
    assert merged.text == BACON.text and merged.author == BACON.author


def test_upsert_folds_repeats_within_one_batch() -> None:
    kb = KnowledgeBase(":memory:")
    twin = Quote(BACON.text, author=BACON.author, collections=("z",))
    assert kb.upsert([BACON, twin]) == (1, 1)
    assert kb.get([BACON.id])[0].collections == ("a", "z")


def test_get_keeps_order_and_skips_unknown(kb: KnowledgeBase) -> None:
    got = kb.get([KONGZI.id, "missing", BACON.id])
    assert [q.id for q in got] == [KONGZI.id, BACON.id]
    assert got[0] == KONGZI
    assert BACON.id in kb and "missing" not in kb


def test_iter_quotes_in_insertion_order_in_batches(kb: KnowledgeBase) -> None:
    assert [q.id for q in kb.iter_quotes(batch=1)] == [BACON.id, HAMLET.id, KONGZI.id]


def test_browse_filters(kb: KnowledgeBase) -> None:
    assert [q.id for q in kb.browse(search="POWER")] == [BACON.id]
    assert [q.id for q in kb.browse(search="hamlet")] == [HAMLET.id]  # the work is searched too
    assert [q.id for q in kb.browse(author="william  SHAKESPEARE.")] == [HAMLET.id]
    assert [q.id for q in kb.browse(lang="zh")] == [KONGZI.id]
    assert [q.id for q in kb.browse(topic="Life")] == [HAMLET.id]
    assert [q.id for q in kb.browse(collection="b")] == [KONGZI.id]
    assert kb.browse(topic="lif") == []  # topics match whole
    kb.upsert([Quote("Carpe diem.", author="Horace", topics=("Time",))])
    assert [q.author for q in kb.browse(topic="time")] == ["Horace"]
    assert kb.browse(search="100%_") == []  # LIKE wildcards are literal
    assert [q.id for q in kb.browse(limit=1, offset=1)] == [HAMLET.id]
    assert kb.count(collection="a") == 2 and kb.count() == 4


def test_ids_and_by_key(kb: KnowledgeBase) -> None:
    assert kb.ids(lang="en") == [BACON.id, HAMLET.id]
    assert kb.ids(topic="学习", author="孔子") == [KONGZI.id]
    assert [q.id for q in kb.by_key("“knowledge IS power”")] == [BACON.id]
    assert kb.by_key("...") == []


def test_pickers_and_stats(kb: KnowledgeBase) -> None:
    kb.upsert([Quote("Nature does not hurry, yet everything is accomplished.", author="Lao Tzu",
                     topics=("life",), collections=("a",))])
    assert kb.topics()[0] == "life"
    assert kb.topics(limit=1) == ["life"]
    assert set(kb.authors()) == {"Francis Bacon", "William Shakespeare", "孔子", "Lao Tzu"}
    stats = kb.stats()
    assert stats.quotes == 4
    assert stats.by_lang == {"en": 3, "zh": 1}
    assert stats.by_collection == {"a": 3, "b": 1}
    assert stats.authors == 4


def test_revision_moves_only_on_real_changes(kb: KnowledgeBase) -> None:
    rev = kb.revision
    kb.upsert([BACON])  # nothing new
    assert kb.revision == rev
    kb.upsert([Quote(BACON.text, author=BACON.author, collections=("new",))])
    assert kb.revision == rev + 1
    assert kb.changed_since(rev) == [BACON.id]
    kb.set_scores({HAMLET.id: (12.5, None)})  # cached scores do not make the index stale
    assert kb.revision == rev + 1


def test_delete_and_known_ids(kb: KnowledgeBase) -> None:
    rev = kb.revision
    assert kb.known_ids([BACON.id, "missing", KONGZI.id]) == {BACON.id, KONGZI.id}
    kb.delete(["missing"])  # nothing went: the revision stays
    assert kb.revision == rev
    kb.delete([BACON.id, KONGZI.id])
    assert kb.revision == rev + 1 and [q.id for q in kb.iter_quotes()] == [HAMLET.id]


def test_signatures_name_rows_that_keys_by_rowid_resolves(kb: KnowledgeBase) -> None:
    rowids, mins = kb.signatures()
    assert len(rowids) == len(mins) == 3
    info = kb.keys_by_rowid([int(r) for r in rowids])
    assert [info[int(r)][0] for r in rowids] == [BACON.id, HAMLET.id, KONGZI.id]
    assert info[int(rowids[0])][1:] == ("knowledgeispower", "Francis Bacon")


def test_set_scores_none_keeps_value(kb: KnowledgeBase) -> None:
    kb.set_scores({BACON.id: (3.0, 10.0), "unknown": (1.0, 1.0)})
    kb.set_scores({BACON.id: (None, 20.0)})
    q = kb.get([BACON.id])[0]
    assert (q.ppl, q.popularity) == (3.0, 20.0)


def test_transaction_rolls_back_everything(kb: KnowledgeBase) -> None:
    rev = kb.revision
    with pytest.raises(RuntimeError):
        with kb.transaction():
            kb.upsert([Quote("A new quote that will vanish.", author="Nobody Special")])
            kb.upsert([Quote(BACON.text, author=BACON.author, collections=("gone",))])
            raise RuntimeError("boom")
    assert len(kb) == 3
    assert kb.revision == rev
    assert kb.get([BACON.id])[0].collections == ("a",)


def test_upsert_rejects_non_quotes(kb: KnowledgeBase) -> None:
    with pytest.raises(InputError):
        kb.upsert([{"text": "dict"}])  # type: ignore[list-item]


def test_open_uses_settings_home(tmp_path) -> None:
    settings = Settings.load(home=tmp_path / "home", kb="mine")
    kb = KnowledgeBase.open(settings)
    kb.upsert([BACON])
    kb.close()
    assert (tmp_path / "home" / "kb" / "mine.sqlite").is_file()
    again = KnowledgeBase.open(settings)
    assert again.name == "mine" and len(again) == 1
    with pytest.raises(InputError):
        KnowledgeBase.open(settings, "../escape")


def test_a_file_that_is_not_a_database(tmp_path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(StoreError, match="cannot open knowledge base"):
        KnowledgeBase(bad)


def test_threads_share_one_knowledge_base(tmp_path) -> None:
    kb = KnowledgeBase(tmp_path / "shared.sqlite")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                kb.upsert([Quote(f"Thread {n} says thing number {i}.", author=f"Writer {n}")])
                kb.browse(search="says", limit=5)
                len(kb)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(kb) == 80
