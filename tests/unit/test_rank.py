"""Criteria, rankers and Quill.suggest / Quill.score with a fake scorer (NLLs from word overlap) and a fake
embedder; the edge cases run through a tiny real torch LM."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from quill_core import RANKERS, Candidate, Filters, InputError, Quill, Quote, Settings, Weights
from quill_core._criteria import Measurement, assess, criteria, quill_value, total
from quill_core._query import parse_query
from quill_core._rank import fuse, order, suggest
from quill_core._scorer import NLL, PassageNLL, PerplexityScorer
from quill_core._types import Pool
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder, FakeScorer


@pytest.fixture
def lm_quill(tmp_path):
    q = Quill(Settings.load(home=tmp_path), embedder=FakeEmbedder(), scorer=FakeScorer())
    q.kb.upsert(SAMPLE_QUOTES)
    return q


def measurement(**kw) -> Measurement:
    base = dict(quote=Quote("Knowledge is power.", "Francis Bacon"), cosine=0.4, bm25=1.0, bm25_max=2.0,
                passage=PassageNLL(NLL(20, 10), NLL(3, 1), NLL(6, 3), NLL(20, 5)),
                baseline=PassageNLL(NLL(20, 10), NLL(), NLL(), NLL(22, 5)),
                alone=PassageNLL(NLL(), NLL(4, 1), NLL(9, 3), NLL()), own_ppl=30.0)
    base.update(kw)
    return Measurement(**base)


# -- weights and criteria --------------------------------------------------------------------------------------------
def test_weights_validate_and_override_by_name():
    assert Weights.of({"novelty": 2}).novelty == 2 and Weights.of({"novelty": 2}).relevance == Weights().relevance
    with pytest.raises(InputError, match="unknown criteria"):
        Weights.of({"charisma": 1})
    with pytest.raises(InputError, match="non-negative"):
        Weights(relevance=-1)
    with pytest.raises(InputError):
        Weights.of({name: 0 for name in Weights().as_dict()})


def test_breakdown_names_values_raw_and_weights():
    w = Weights(novelty=0.7)
    b = criteria(measurement(), w)
    names = [c.name for c in b]
    assert names == ["relevance", "lexical", "quote_match", "semantic_match", "fluency", "novelty", "named_author",
                     "authenticity", "credibility"]
    assert dict((c.name, c.weight) for c in b) == w.as_dict()
    sm = next(c for c in b if c.name == "semantic_match")
    assert sm.raw == pytest.approx(math.exp(20 / 5)) and sm.value > 0.5  # the quote made the next sentence likelier
    assert 0 <= total(b) <= 1


def test_semantic_match_falls_below_half_when_the_quote_hurts():
    hurt = measurement(passage=PassageNLL(NLL(20, 10), NLL(3, 1), NLL(6, 3), NLL(30, 5)))
    assert next(c for c in criteria(hurt) if c.name == "semantic_match").value < 0.5


def test_nothing_after_the_quote_is_neutral_not_nan():
    m = measurement(passage=PassageNLL(NLL(20, 10), NLL(3, 1), NLL(6, 3), NLL()),
                    baseline=PassageNLL(NLL(20, 10), NLL(), NLL(), NLL()))
    sm = next(c for c in criteria(m) if c.name == "semantic_match")
    assert sm.value == 0.5 and sm.raw is None and "no text after" in sm.note


def test_novelty_prefers_unfamiliar_and_rarely_attested_quotes():
    def nov(**kw):
        return next(c for c in criteria(measurement(**kw)) if c.name == "novelty").value

    assert nov(own_ppl=200.0) > nov(own_ppl=20.0)
    popular = Quote("Knowledge is power.", "Francis Bacon", popularity=1e6)
    assert nov(quote=popular) < nov()
    assert nov(own_ppl=None) == 0.5  # unknown: neutral, never NaN
    assert nov(quote=Quote("x y z", popularity=0.0)) == nov(quote=Quote("x y z", popularity=None))  # log10(0) safe


nll = st.builds(NLL, st.floats(0, 1e6, allow_nan=False), st.integers(0, 500))


@hsettings(max_examples=200, deadline=None)
@given(p=st.builds(PassageNLL, nll, nll, nll, nll), b=st.builds(PassageNLL, nll, nll, nll, nll),
       own=st.one_of(st.none(), st.floats(0, 1e12)), cos=st.one_of(st.none(), st.floats(-1, 1)),
       pop=st.one_of(st.none(), st.floats(0, 1e12)))
def test_every_criterion_is_bounded_and_finite(p, b, own, cos, pop):
    m = measurement(passage=p, baseline=b, own_ppl=own, cosine=cos,
                    quote=Quote("Knowledge is power.", popularity=pop))
    breakdown = criteria(m)
    for c in breakdown:
        assert 0.0 <= c.value <= 1.0 and not math.isnan(c.value), c
        assert c.raw is None or not math.isnan(c.raw)
    assert 0.0 <= total(breakdown) <= 1.0
    v = quill_value(m)
    assert v is not None and math.isfinite(v)


def test_quill_value_uses_the_inserted_candidate():
    # two candidates of equal length but different fit: QUILL's reference code scored them alike (defect 1)
    fits = measurement(passage=PassageNLL(NLL(20, 10), NLL(1, 1), NLL(3, 3), NLL(5, 5)))
    clashes = measurement(passage=PassageNLL(NLL(20, 10), NLL(3, 1), NLL(9, 3), NLL(15, 5)))
    assert quill_value(fits) < quill_value(clashes)


# -- pools and ordering -----------------------------------------------------------------------------------------------
def test_fusion_merges_duplicates_and_rewards_agreement():
    a, b, c = (Quote(t) for t in ("Alpha quote here.", "Beta quote here.", "Gamma quote here."))
    pool = Pool(dense=(Candidate(a, 0.9), Candidate(b, 0.8)), lexical=(Candidate(b, 5.0, "bm25"), Candidate(c, 1.0, "bm25")),
                cosine={a.id: 0.9, b.id: 0.8, c.id: 0.1})
    fused = fuse(pool, k=10)
    assert [x.quote.id for x in fused] == [b.id, a.id, c.id]  # b is in both lists; each quote once (defect 3)
    assert fused[0].similarity == 0.8


def test_order_sorts_by_total_and_explains():
    good = measurement(quote=Quote("Good fit quote."), passage=PassageNLL(NLL(20, 10), NLL(1, 1), NLL(3, 3), NLL(5, 5)))
    bad = measurement(quote=Quote("Bad fit quote."), passage=PassageNLL(NLL(20, 10), NLL(3, 1), NLL(12, 3), NLL(30, 5)))
    ranked = order([bad, good], ranker="default")
    assert [s.quote.text for s in ranked] == ["Good fit quote.", "Bad fit quote."]
    assert ranked[0].score > ranked[1].score and ranked[0].why.startswith("strong on")
    with pytest.raises(InputError, match="unknown ranker"):
        order([good], ranker="magic")


# -- authenticity and credibility ------------------------------------------------------------------------------------
KB = [Quote("Imagination is more important than knowledge.", "Albert Einstein")]


def test_verbatim_quote_with_its_author_is_authentic_and_credible():
    found, a = assess("Imagination is more important than knowledge.", "albert  einstein.", KB)
    assert found == KB[0] and a.authenticity == 1.0 and a.credibility == 1.0


def test_near_quote_gets_its_fuzzy_score_and_partial_name_still_credible():
    _, a = assess("Imagination is much more important than knowledge.", "Einstein", KB)
    assert 0.8 <= a.authenticity < 1.0 and "near match" in a.authenticity_note
    assert a.credibility >= 0.9


def test_misattributed_and_unknown_quotes():
    _, wrong = assess("Imagination is more important than knowledge.", "Mark Twain", KB)
    assert wrong.authenticity == 1.0 and wrong.credibility == 0.0 and "Albert Einstein" in wrong.credibility_note
    _, nowhere = assess("Bananas are the true currency of the realm.", "Mark Twain", KB)
    assert nowhere.authenticity == 0.0 and nowhere.credibility == 0.0
    _, anonymous = assess("Imagination is more important than knowledge.", "", KB)
    assert anonymous.credibility == 0.5


# -- the facade ----------------------------------------------------------------------------------------------------
PARA = "We worried all winter about what might go wrong. [Q] So we stopped letting fear decide for us."


@pytest.mark.parametrize("ranker", RANKERS)
def test_suggest_with_every_ranker(lm_quill, ranker):
    out = lm_quill.suggest(PARA, k=3, ranker=ranker, candidates=6)
    assert 1 <= len(out) <= 3
    assert len({s.quote.id for s in out}) == len(out)
    for s in out:
        assert 0.0 <= s.score <= 1.0
        assert {c.name for c in s.breakdown} >= {"relevance", "novelty", "authenticity", "credibility"}
    if ranker in ("vanilla", "quill", "default"):
        assert [s.score for s in out] == sorted((s.score for s in out), reverse=True)


def test_default_ranker_picks_the_quote_that_fits_and_explains_it(lm_quill):
    best = lm_quill.suggest(PARA, k=1)[0]
    assert best.quote.author == "Franklin D. Roosevelt"
    assert {c.name for c in best.breakdown} >= {"quote_match", "semantic_match", "fluency"}
    assert best.why


def test_weights_change_the_order(lm_quill):
    para = "Knowledge and imagination matter in life. [Q] Think about it."
    by_novelty = lm_quill.suggest(para, k=8, weights={name: 0 for name in Weights().as_dict()} | {"novelty": 1})
    novelty = [s.criterion("novelty").value for s in by_novelty]
    assert novelty == sorted(novelty, reverse=True)
    assert by_novelty[0].criterion("novelty").weight == 1 and by_novelty[0].criterion("relevance").weight == 0


def test_filters_apply_to_both_retrievers(lm_quill):
    out = lm_quill.suggest("知识 力量 学 思 knowledge power [Q]", k=5, filters=Filters(lang="zh"))
    assert out and {s.quote.lang for s in out} == {"zh"}


def test_novelty_is_cached_in_the_knowledge_base(lm_quill):
    out = lm_quill.suggest(PARA, k=2)
    stored = lm_quill.kb.get([out[0].quote.id])[0]
    assert stored.ppl is not None and stored.ppl == pytest.approx(out[0].criterion("novelty").raw)


def test_unknown_ranker_and_bad_sizes_are_input_errors(lm_quill):
    with pytest.raises(InputError, match="unknown ranker"):
        lm_quill.suggest(PARA, ranker="nope")
    with pytest.raises(InputError):
        lm_quill.suggest(PARA, k=0)


def test_score_judges_a_given_quote(lm_quill):
    real = lm_quill.score(PARA, "The only thing we have to fear is fear itself.", author="Franklin D. Roosevelt")
    misattributed = lm_quill.score(PARA, "The only thing we have to fear is fear itself.", author="Mark Twain")
    invented = lm_quill.score(PARA, "Winter worries are summer regrets.", author="Mark Twain")
    assert real.criterion("authenticity").value == 1.0 and real.criterion("credibility").value == 1.0
    assert misattributed.criterion("credibility").value == 0.0
    assert invented.criterion("authenticity").value == 0.0
    assert real.score > misattributed.score and real.score > invented.score
    names = {c.name for c in real.breakdown}
    assert names >= {"authenticity", "credibility", "semantic_match", "fluency", "novelty"}


# -- edge cases through a tiny real LM --------------------------------------------------------------------------------
@pytest.fixture
def tiny_quill(tmp_path, tiny_lm):
    model, tokenizer = tiny_lm
    scorer = PerplexityScorer(model=model, tokenizer=tokenizer)
    q = Quill(Settings.load(home=tmp_path), embedder=FakeEmbedder(), scorer=scorer)
    q.kb.upsert(SAMPLE_QUOTES)
    return q


@pytest.mark.parametrize("paragraph", [
    "[Q] Knowledge changed everything for us after that.",        # quote at the very start
    "Everyone told us that knowledge is what matters. [Q]",         # at the very end
    "Knowledge",                                                    # a one-word paragraph (insertion at the end)
    "我们常说[Q]这句话很有道理，学习和思考都很重要。",                    # Chinese, no spaces
    ("Knowledge matters. " * 1000)[:19_990] + " [Q]",               # ~20,000 characters
])
def test_edge_paragraphs_never_give_nan(tiny_quill, paragraph):
    for ranker in ("quill", "default"):
        out = tiny_quill.suggest(paragraph, k=3, ranker=ranker, candidates=5)
        assert out
        for s in out:
            assert 0.0 <= s.score <= 1.0
            for c in s.breakdown:
                assert 0.0 <= c.value <= 1.0 and (c.raw is None or math.isfinite(c.raw)), (ranker, c)


def test_a_paragraph_over_the_limit_is_refused_clearly(tiny_quill):
    with pytest.raises(InputError, match="limit is 20,000"):
        tiny_quill.suggest("word " * 5000)


def test_lexical_index_follows_the_knowledge_base(lm_quill):
    assert lm_quill.retriever.lexical.search("zeppelin", k=3) == []
    lm_quill.kb.upsert([Quote("A zeppelin is a patient balloon.", "Nobody")])
    assert [i for i, _ in lm_quill.retriever.lexical.search("zeppelin", k=3)] == [Quote("A zeppelin is a patient balloon.",
                                                                              "Nobody").id]


def test_suggestions_found_in_an_added_source_say_so(lm_quill, tmp_path):
    text = tmp_path / "speech.txt"
    text.write_text("My friends, the only thing we have to fear is fear itself. Let us act.", encoding="utf-8")
    lm_quill.add_source(text, author="Franklin D. Roosevelt", title="Inaugural", index=False)
    out = lm_quill.suggest(PARA, k=8)
    notes = {s.quote.author: s.criterion("authenticity").note for s in out}
    assert "verified in the source Inaugural" in notes["Franklin D. Roosevelt"]
    assert all("verified" not in n for a, n in notes.items() if a != "Franklin D. Roosevelt")


def test_suggest_previews_the_retrieved_quotes_before_the_language_model_runs(quill):
    """``preview`` gets the retrieved quotes (retrieval order, no LM criteria) before the scorer is called once."""
    events = []
    real = FakeScorer()

    class Watched:
        def __getattr__(self, name):
            events.append(("scorer", name))
            return getattr(real, name)

    ranked = suggest(parse_query("Knowledge is what gives us power over fear. [Q]"), retriever=quill.retriever,
                     scorer=Watched(), k=3, preview=lambda found: events.append(("preview", len(found))))
    assert events[0] == ("preview", 3) and any(kind == "scorer" for kind, _ in events[1:])
    assert len(ranked) == 3


def test_a_quote_by_the_author_the_paragraph_names_is_retrieved_and_ranked_up(quill):
    """"As Einstein said, [Q]": Einstein's quotes join the candidates even when no word of the paragraph matches
    them, and the named_author criterion lifts them; a paragraph naming nobody leaves the criterion neutral."""
    query = parse_query("The harbour was quiet that morning. As Einstein once said, [Q] Then the boats went out.")
    pool = quill.retriever.pool(query, k=3)
    assert pool.authors == ("Albert Einstein",)
    assert {c.quote.author for c in pool.named} == {"Albert Einstein"}
    best = suggest(query, retriever=quill.retriever, scorer=FakeScorer(), k=3)
    assert best[0].quote.author == "Albert Einstein"
    named = next(c for c in best[0].breakdown if c.name == "named_author")
    assert (named.value, named.note) == (1.0, "the paragraph names Albert Einstein")
    plain = suggest(parse_query("The harbour was quiet that morning. [Q]"), retriever=quill.retriever, k=1)
    assert next(c for c in plain[0].breakdown if c.name == "named_author").value == 0.5
