"""Ranking: the registry of rankers, measuring candidates, ordering them, and the suggest and score stages.

Rankers (:data:`RANKERS`): ``vanilla`` (dense cosine), ``bm25`` (lexical), ``hybrid`` (reciprocal-rank fusion of
both, and of the nearest quotes of each author the paragraph names: "as Einstein said, [Q]"), ``quill`` (QUILL's avg_novelty, lower is better, with the candidate inserted: (min(PPLq, 20) + min(PPLm, 20)) / 2
+ 0.05·PPL_own + 0.5·log10(popularity); reported score 1 / (1 + that)) and ``default`` (the weighted total of the
criteria, see :mod:`quill_core._criteria`). ``quill`` and ``default`` rerank the ``hybrid`` candidates. Retrieval
never sees a gold author.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Callable, Literal, Mapping, Protocol, Sequence, runtime_checkable

from ._criteria import (
    LM_CRITERIA,
    Assessment,
    Measurement,
    Weights,
    assess,
    criteria,
    default_weights,
    kb_assessment,
    quill_value,
    total,
    unweighted_lm_note,
    why,
)
from ._compute import RERANKING
from ._embed import model_for
from ._errors import InputError, QuillError
from ._names import author_key, clean_author
from ._query import query_text
from ._retrieve import Retriever
from ._scorer import PassageNLL, Scorer
from ._text import detect_lang
from ._types import Candidate, Criterion, Filters, Pool, Provenance, Query, Quote, Suggestion

RRF_K = 60
_LM_DERIVED = (*LM_CRITERIA, "novelty")
LM_SHORTLIST = 6
"""How many candidates the default ranker measures with the LM: the best by the other criteria. On QUILL's dev rows
against the starter, measuring 6, 8, 10, 12 or all 20 gave the same MRR and Hit@1 (en and zh); the LM pass is most
of suggest's time (``bench/rerank.py``: p50 2.99 s with all 20, 1.42 s with 8, 1.20 s with 6; same top 5)."""
RankerName = Literal["vanilla", "bm25", "hybrid", "quill", "default"]
PoolKind = Literal["dense", "lexical", "fused"]


@dataclass(frozen=True)
class Ranker:
    """One way of ordering candidates: which retrieved list it orders (``pool``), whether it needs the language
    model, and its score of one measured candidate (``rank`` is the candidate's place in that list)."""

    name: RankerName
    label: str
    description: str
    pool: PoolKind
    needs_lm: bool
    score: Callable[[Measurement, int, tuple[Criterion, ...]], float]


def _quill_score(m: Measurement, rank: int, breakdown: tuple[Criterion, ...]) -> float:
    value = quill_value(m)
    return 1.0 / (1.0 + value) if value is not None else 0.0


RANKERS: Mapping[str, Ranker] = MappingProxyType({r.name: r for r in (
    Ranker("vanilla", "Semantic similarity", "dense cosine similarity to the text around the insertion point",
           "dense", False, lambda m, rank, b: m.cosine if m.cosine is not None else 0.0),
    Ranker("bm25", "Keyword match (BM25)", "BM25 word overlap", "lexical", False,
           lambda m, rank, b: m.bm25 / m.bm25_max if m.bm25_max > 0 else 0.0),
    Ranker("hybrid", "Hybrid (semantic + keyword)", "reciprocal-rank fusion of the semantic and keyword lists (and of "
           "the quotes of any author the paragraph names)",
           "fused", False, lambda m, rank, b: 1.0 / (1 + rank)),
    Ranker("quill", "QUILL reranker", "QUILL's perplexity + novelty score of the fused candidates", "fused", True,
           _quill_score),
    Ranker("default", "Quill: weighted criteria", "the weighted total of every criterion of the fused candidates",
           "fused", True, lambda m, rank, b: total(b)),
)})
"""Every ranker by name, in the order the CLI and the app list them."""


def get_ranker(name: str) -> Ranker:
    """The ranker called ``name``; an :class:`InputError` naming the known ones otherwise."""
    found = RANKERS.get(name)
    if found is None:
        raise InputError(f"unknown ranker {name!r}; choose one of {', '.join(RANKERS)}")
    return found


# -- candidates ----------------------------------------------------------------------------------------------------
def fuse(pool: Pool, *, k: int = 20) -> list[Candidate]:
    """Reciprocal-rank fusion of the dense, lexical and named-author lists (1 / (RRF_K + rank) summed), best first;
    each candidate's ``similarity`` is its cosine when known."""
    scores: dict[str, float] = {}
    quotes: dict[str, Quote] = {}
    for ranking in (pool.dense, pool.lexical, pool.named):
        for rank, c in enumerate(ranking, 1):
            scores[c.quote.id] = scores.get(c.quote.id, 0.0) + 1.0 / (RRF_K + rank)
            quotes.setdefault(c.quote.id, c.quote)
    best = sorted(scores, key=lambda i: -scores[i])[:k]
    return [Candidate(quote=quotes[i], similarity=pool.cosine.get(i, 0.0), retriever="hybrid") for i in best]


def candidates_for(kind: PoolKind, pool: Pool, *, k: int) -> list[Candidate]:
    """The first ``k`` candidates of one kind of list: dense, lexical, or the two fused."""
    if kind == "dense":
        return list(pool.dense[:k])
    if kind == "lexical":
        return list(pool.lexical[:k])
    return fuse(pool, k=k)


# -- measuring and ordering ------------------------------------------------------------------------------------------
def prepare(query: Query) -> tuple[str, str]:
    """The text before and after the insertion point as the LM reads it (a CJK full stop in Latin-script text,
    an artefact of some datasets, becomes '.')."""
    before, after = query.before, query.after
    if query.lang != "zh":
        before, after = before.replace("\u3002", "."), after.replace("\u3002", ".")
    return before, after


def measure(query: Query, candidates: Sequence[Candidate], *, scorer: Scorer | None = None, pool: Pool | None = None,
            assessments: Mapping[str, Assessment] | None = None) -> list[Measurement]:
    """Measure every candidate: retrieval scores from ``pool``, LM NLLs from ``scorer`` (one batched call with the
    baseline passage first) and the quote's own NLL (cached by the scorer)."""
    pool = pool or Pool()
    bm25 = {c.quote.id: c.similarity for c in pool.lexical}
    bm25_max = max(bm25.values(), default=0.0)
    passages: list[PassageNLL | None] = [None] * len(candidates)
    baseline = None
    own: list[PassageNLL | None] = [None] * len(candidates)
    if scorer is not None and candidates:
        before, after = prepare(query)
        texts = [c.quote.text for c in candidates]
        scored = scorer.score(before, ["", *texts], after)
        baseline, passages = scored[0], scored[1:]
        own = list(scorer.quote_alone(texts))
    out = []
    for c, p, a in zip(candidates, passages, own):
        cosine = pool.cosine.get(c.quote.id, c.similarity if c.retriever != "bm25" else None)
        own_ppl = a.quote.ppl if a is not None and a.quote.tokens else c.quote.ppl
        out.append(Measurement(quote=c.quote, cosine=cosine, bm25=bm25.get(c.quote.id, 0.0), bm25_max=bm25_max,
                               passage=p, baseline=baseline, alone=a, own_ppl=own_ppl,
                               named=pool.authors,
                               assessment=(assessments or {}).get(c.quote.id, kb_assessment(c.quote))))
    return out


def order(measurements: Sequence[Measurement], *, ranker: str = "default", weights: Weights | None = None,
          lang: str = "en") -> list[Suggestion]:
    """Suggestions for ``measurements`` ordered by ``ranker`` (measurements arrive in the retriever's order, which
    breaks ties); without ``weights``, the default weights of the paragraph's language ``lang``, and the breakdown
    says which criteria that language leaves out."""
    spec = get_ranker(ranker)
    w = weights or default_weights(lang)
    note = "" if weights is not None else unweighted_lm_note(lang)
    pre, short = _shortlist(measurements, w, ranker)
    keyed = []
    for rank, m in enumerate(measurements):
        breakdown = criteria(m, w)
        if note:
            breakdown = tuple(replace(c, note=f"{c.note}; {note}") if c.name in LM_CRITERIA else c for c in breakdown)
        s = Suggestion(quote=m.quote, score=float(spec.score(m, rank, breakdown)), breakdown=breakdown,
                       similarity=m.cosine or 0.0, why=why(breakdown))
        # the default ranker: the shortlist by its total, then the rest by the criteria without the LM
        keyed.append(((0, -s.score) if pre is None or m.quote.id in short else (1, -pre[m.quote.id]), s))
    keyed.sort(key=lambda item: item[0])  # stable
    return [s for _, s in keyed]


def _shortlist(measurements: Sequence[Measurement], w: Weights,
               ranker: str) -> tuple[dict[str, float], set[str]] | tuple[None, None]:
    """For the default ranker: each candidate's total of the criteria the LM does not measure, and the ids of the
    :data:`LM_SHORTLIST` best by it (the ones measured with the LM). ``(None, None)`` for another ranker or when
    those criteria carry no weight: every candidate is measured. Novelty is left out too: its perplexity may come
    from the LM or from the knowledge base's cache, and the shortlist must not depend on which."""
    if ranker != "default" or not any(getattr(w, f) > 0 for f in w.as_dict() if f not in _LM_DERIVED):
        return None, None
    pre = {m.quote.id: total(c for c in criteria(replace(m, passage=None, baseline=None), w)
                             if c.name not in _LM_DERIVED) for m in measurements}
    return pre, set(sorted(pre, key=lambda i: -pre[i])[:LM_SHORTLIST])  # stable: retrieval order breaks ties


# -- the stages ----------------------------------------------------------------------------------------------------
@runtime_checkable
class QuoteRecords(Protocol):
    """What the ranking stages read from and write to the knowledge base."""

    def by_key(self, text: str) -> list[Quote]: ...

    def set_scores(self, scores: Mapping[str, tuple[float | None, float | None]]) -> None: ...


ProvenanceLookup = Callable[[Quote], Provenance | None]


def suggest(query: Query, *, retriever: Retriever, scorer: Scorer | None = None, records: QuoteRecords | None = None,
            provenance: ProvenanceLookup | None = None, k: int = 5, ranker: str = "default",
            filters: Filters | None = None, weights: Weights | Mapping[str, float] | None = None,
            candidates: int = 20, preview: Callable[[list[Suggestion]], None] | None = None) -> list[Suggestion]:
    """The ``k`` best of ``candidates`` retrieved quotes ordered by ``ranker`` (``scorer`` is used by the rankers
    that need the LM). The quotes' own perplexities are remembered in ``records``; ``provenance`` finds a suggestion
    in the added source texts. ``preview`` receives the ``k`` best in retrieval order (the ``hybrid`` ranker's,
    without provenance) as soon as retrieval returns, before a ranker that needs the LM starts."""
    spec = get_ranker(ranker)
    if k < 1 or candidates < 1:
        raise InputError("k and candidates must be at least 1")
    w = Weights.of(weights) if weights is not None else None
    n = max(k, candidates)
    pool = retriever.pool(query, k=n, filters=filters)
    chosen = candidates_for(spec.pool, pool, k=n)
    plain = measure(query, chosen, pool=pool)
    if preview is not None and spec.needs_lm and scorer is not None:
        preview(order(plain, ranker="hybrid", lang=query.lang)[:k])
    measured = plain
    if spec.needs_lm and scorer is not None:
        _, short = _shortlist(plain, w or default_weights(query.lang), ranker)
        with RERANKING:
            lm = measure(query, [c for c in chosen if short is None or c.quote.id in short], scorer=scorer,
                         pool=pool)
        by_id = {m.quote.id: m for m in lm}
        measured = [by_id.get(m.quote.id, m) for m in plain]
    if records is not None:
        _remember_novelty(records, measured)
    best = order(measured, ranker=ranker, weights=w, lang=query.lang)[:k]
    return [_with_provenance(s, provenance) for s in best] if provenance is not None else best


def _with_provenance(s: Suggestion, provenance: ProvenanceLookup) -> Suggestion:
    """The suggestion with its place in an added source text, noted on the authenticity criterion."""
    try:
        found = provenance(s.quote)
    except QuillError:
        return s
    if found is None:
        return s
    note = f"verified in the source {found.label}"
    breakdown = tuple(replace(c, note=f"{c.note}; {note}") if c.name == "authenticity" else c for c in s.breakdown)
    return replace(s, breakdown=breakdown, provenance=found)


def _remember_novelty(records: QuoteRecords, measured: Sequence[Measurement]) -> None:
    """Store the quotes' own perplexities in the knowledge base where it has none (novelty is then free)."""
    fresh = {m.quote.id: (m.own_ppl, None) for m in measured
             if m.quote.ppl is None and m.own_ppl is not None and math.isfinite(m.own_ppl)}
    if fresh:
        records.set_scores(fresh)


def score_quote(query: Query, quote: str, *, retriever: Retriever, scorer: Scorer, records: QuoteRecords,
                author: str = "", weights: Weights | Mapping[str, float] | None = None) -> Suggestion:
    """The full breakdown of ``quote`` (attributed to ``author``) inserted at the query's insertion point: the LM
    criteria, plus authenticity and credibility checked against the knowledge base."""
    text = (quote or "").strip()
    if not text:
        raise InputError("the quote is empty")
    w = Weights.of(weights) if weights is not None else default_weights(query.lang)
    matches = list(records.by_key(text)) + [c.quote for c in retriever.search(text, k=5)]
    found, assessment = assess(text, author, matches)
    if found is not None and found.text == text and (not author or author_key(author) == author_key(found.author)):
        subject = found
    else:
        subject = Quote(text=text, author=clean_author(author), lang=detect_lang(text))
    embedder = model_for(retriever.embedder, subject.lang)
    cosine = float(embedder.embed_queries([query_text(query)])[0] @ embedder.embed_batch([text])[0])
    measured = measure(query, [Candidate(subject, cosine)], scorer=scorer, pool=Pool(cosine={subject.id: cosine}),
                       assessments={subject.id: assessment})
    m = replace(measured[0], bm25=0.0, bm25_max=0.0)
    breakdown = tuple(c for c in criteria(m, w) if c.name != "lexical")
    return Suggestion(quote=subject, score=total(breakdown), breakdown=breakdown, similarity=cosine,
                      why=why(breakdown))
