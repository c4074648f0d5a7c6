"""Retrieval over a throw-away store: the same behaviour embedded (PersistentClient) and against a Chroma server."""

import pytest

from quill_core import Filters, InputError, Quill, Quote, Settings, parse_query
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder, FakeScorer


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.slow)])
def any_quill(request, tmp_path):
    if request.param == "server":
        host, port = request.getfixturevalue("chroma_server")
        settings = Settings.load(home=tmp_path, chroma_host=host, chroma_port=port, kb=f"kb{tmp_path.name[-12:]}")
    else:
        settings = Settings.load(home=tmp_path)
    q = Quill(settings, embedder=FakeEmbedder())
    q.kb.upsert(SAMPLE_QUOTES)
    return q


def test_retrieves_the_quote_that_shares_the_paragraphs_words(any_quill):
    hits = any_quill.retrieve("Many people say fear itself is the only thing we have. [Q] And then we act.", k=3)
    assert hits[0].quote.author == "Franklin D. Roosevelt"
    assert len(hits) == 3
    assert hits[0].similarity >= hits[1].similarity >= hits[2].similarity


def test_filters_on_author_language_and_topic(any_quill):
    text = "knowledge power imagination life question fear [Q]"
    assert {c.quote.author for c in any_quill.retrieve(text, k=8, filters=Filters(author="albert einstein"))} == {
        "Albert Einstein"}
    assert {c.quote.lang for c in any_quill.retrieve(text, k=8, filters=Filters(lang="zh"))} == {"zh"}
    by_topic = any_quill.retrieve(text, k=8, filters=Filters(topic="courage"))
    assert {c.quote.text for c in by_topic} == {"The only thing we have to fear is fear itself.",
                                                "Courage is grace under pressure."}
    assert any_quill.retrieve(text, k=8, filters=Filters(topic="no such topic")) == []


def test_new_quotes_are_indexed_before_the_next_query(any_quill):
    any_quill.retrieve("warm up [Q]", k=1)
    any_quill.kb.upsert([Quote("Zebras gallop across the savanna at dawn.", author="Nobody Special")])
    assert any_quill.retrieve("zebras savanna dawn [Q]", k=1)[0].quote.author == "Nobody Special"


def test_collections_are_per_embedder(settings, tmp_path):
    a = Quill(settings, embedder=FakeEmbedder())
    a.kb.upsert(SAMPLE_QUOTES[:2])
    a.index()
    b = Quill(settings, embedder=FakeEmbedder(name="other"))
    assert a.collection != b.collection
    assert b.store.count(b.collection) == 0
    b.index()
    assert b.store.count(b.collection) == 2


def test_index_does_not_reembed_an_unchanged_kb(settings):
    emb = FakeEmbedder()
    q = Quill(settings, embedder=emb)
    q.kb.upsert(SAMPLE_QUOTES)
    assert q.index() == len(SAMPLE_QUOTES)
    calls = emb.calls
    fresh = Quill(settings, embedder=emb)  # a new process over the same home
    assert fresh.index() == 0
    assert emb.calls == calls


def test_bad_paragraph_is_a_clear_error(quill):
    with pytest.raises(InputError, match="empty"):
        quill.retrieve("   ")


def test_an_empty_collection_answers_with_no_hits(any_quill):
    empty = Quill(Settings.load(home=any_quill.settings.home, kb="empty", chroma_host=any_quill.settings.chroma_host,
                                chroma_port=any_quill.settings.chroma_port), embedder=FakeEmbedder())
    assert empty.retrieve("Anything at all. [Q]", k=5) == []
    assert empty.store.query(empty.collection, FakeEmbedder().embed_batch(["x"])[0], k=5) == []


def test_the_quote_collection_keeps_vectors_and_filter_fields_not_the_text(quill):
    quill.index()
    got = quill.store.collection(quill.collection).get(include=["documents", "metadatas"])
    assert len(got["ids"]) == len(SAMPLE_QUOTES)
    assert not any(got["documents"])  # the knowledge base holds the text
    assert {m["lang"] for m in got["metadatas"]} == {"en", "zh"}


@pytest.mark.parametrize("filters", [Filters(), Filters(lang="zh"), Filters(topic="knowledge"),
                                     Filters(author="Francis Bacon")])
def test_evaluation_retrieves_exactly_what_suggest_retrieves(quill, filters):
    """Evaluation ranks quotes held in memory; with the same quotes it must find the same candidates, with the same
    cosines, as the Chroma-backed retriever the app uses (else what we measure is not what users get)."""
    from quill_core._query import parse_query
    from quill_core._retrieve import MemoryCatalog, MemoryIndex, Retriever

    memory = Retriever(MemoryCatalog(SAMPLE_QUOTES), quill.embedder, MemoryIndex(SAMPLE_QUOTES, quill.embedder))
    query = parse_query("Knowledge is what gives us power over fear. [Q] 学习")
    app, ours = quill.retriever.pool(query, k=5, filters=filters), memory.pool(query, k=5, filters=filters)
    assert [c.quote.id for c in app.dense] == [c.quote.id for c in ours.dense]
    assert [(c.quote.id, c.similarity) for c in app.lexical] == [(c.quote.id, c.similarity) for c in ours.lexical]
    assert app.cosine.keys() == ours.cosine.keys()
    assert all(abs(app.cosine[i] - ours.cosine[i]) < 1e-5 for i in app.cosine)


def test_filter_options_and_browsing_follow_the_knowledge_base(quill):
    """The Write page's filters and the Library's table come from the facade and see what was just imported."""
    before = quill.filter_options()
    assert set(before.langs) == {"en", "zh"} and "Socrates" in before.authors and "courage" in before.topics
    quill.kb.upsert([Quote("Be water, my friend.", author="Bruce Lee", topics=("water",), collections=("x",))])
    after = quill.filter_options()
    assert "Bruce Lee" in after.authors and "water" in after.topics
    page = quill.browse(search="water", limit=5)
    assert page.total == 1 and [q.author for q in page.quotes] == ["Bruce Lee"]
    assert quill.browse(lang="zh", limit=1, offset=1).total == 2 and len(quill.browse(lang="zh", limit=1).quotes) == 1


class _Rotated(FakeEmbedder):
    """Another model: the same bag of words in a permuted vector space (its cosines with the first mean nothing)."""

    def embed_batch(self, texts):
        return super().embed_batch(texts)[:, ::-1].copy()


def _bilingual():
    from quill_core._embed import BilingualEmbedder

    return BilingualEmbedder(other=FakeEmbedder(), chinese=_Rotated(name="rotated"))


@pytest.mark.parametrize("lang", ["", "zh", "en"])
def test_a_bilingual_embedder_searches_each_language_with_its_own_model(settings, lang):
    from quill_core._query import parse_query
    from quill_core._retrieve import MemoryCatalog, MemoryIndex, Retriever

    embedder = _bilingual()
    q = Quill(settings, embedder=embedder)
    q.kb.upsert(SAMPLE_QUOTES)
    query = parse_query("knowledge is power, 知识就是力量 [Q]")
    pool = q.retriever.pool(query, k=len(SAMPLE_QUOTES), filters=Filters(lang=lang))
    langs = {c.quote.lang for c in pool.dense}
    assert langs == ({"zh", "en"} if not lang else {lang})
    text = "knowledge is power, 知识就是力量"
    for c in pool.dense:  # every cosine is between vectors of one model
        model = embedder.for_lang(c.quote.lang)
        assert abs(c.similarity - float(model.embed_batch([c.quote.text])[0] @ model.embed_queries([text])[0])) < 1e-5
    memory = Retriever(MemoryCatalog(SAMPLE_QUOTES), embedder, MemoryIndex(SAMPLE_QUOTES, embedder))
    ours = memory.pool(query, k=len(SAMPLE_QUOTES), filters=Filters(lang=lang))
    assert [c.quote.id for c in pool.dense] == [c.quote.id for c in ours.dense]
    assert all(abs(pool.cosine[i] - ours.cosine[i]) < 1e-5 for i in pool.cosine)


def test_an_interrupted_index_resumes_where_its_vectors_end(settings, monkeypatch):
    """A build stopped while embedding (Ctrl-C, a crash) keeps the vectors already stored: the next run embeds only
    the rest."""
    monkeypatch.setattr("quill_core._retrieve.EMBED_BATCH", 2)

    class Interrupted(FakeEmbedder):
        def __init__(self, fail_after: int) -> None:
            super().__init__()
            self.fail_after, self.embedded = fail_after, 0

        def embed_batch(self, texts):
            if self.embedded >= self.fail_after:
                raise KeyboardInterrupt
            self.embedded += len(texts)
            return super().embed_batch(texts)

    first = Quill(settings, embedder=Interrupted(fail_after=4))
    first.kb.upsert(SAMPLE_QUOTES)
    with pytest.raises(KeyboardInterrupt):
        first.index()
    assert first.store.count(first.collection) == 4
    again = Interrupted(fail_after=len(SAMPLE_QUOTES))
    assert Quill(settings, embedder=again).index() == len(SAMPLE_QUOTES) - 4
    assert again.embedded == len(SAMPLE_QUOTES) - 4


def test_suggestions_answer_while_the_index_grows_in_the_background(settings, monkeypatch):
    """First run: the index fills in a background thread; meanwhile a suggestion does not wait for it (it searches
    the vectors stored so far and every quote by words), and the progress is there to show."""
    import threading

    monkeypatch.setattr("quill_core._retrieve.EMBED_BATCH", 2)
    release = threading.Event()

    class Slow(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.batches = 0

        def embed_batch(self, texts):
            self.batches += 1
            if self.batches == 2:  # the second batch of the index waits until the test lets it go
                assert release.wait(10)
            return super().embed_batch(texts)

    class Warming(FakeScorer):
        def __init__(self) -> None:
            super().__init__()
            self.warmed: list[str] = []

        def quote_alone(self, quotes):
            self.warmed += list(quotes)
            return super().quote_alone(quotes)

    scorer = Warming()
    q = Quill(settings, embedder=Slow(), scorer=scorer)
    q.kb.upsert(SAMPLE_QUOTES)
    assert q.index_in_background().running
    for _ in range(100):
        if q.indexing().fraction > 0:
            break
        threading.Event().wait(0.02)
    state = q.indexing()
    assert state.running and 0 < state.fraction < 1 and "embedded 2 of" in state.message
    pool = q.retriever.pool(parse_query("fear itself is the only thing we have [Q]"), k=3)
    assert pool.lexical and pool.lexical[0].quote.author == "Franklin D. Roosevelt"  # words serve meanwhile
    assert len(pool.dense) <= 2  # only what is embedded so far
    release.set()
    for _ in range(200):
        if not q.indexing().running:
            break
        threading.Event().wait(0.02)
    assert q.indexing().fraction == 1.0 and not q.indexing().error
    assert q.store.count(q.collection) == len(SAMPLE_QUOTES)
    assert scorer.warmed  # the language model was loaded before the first click, in the background
