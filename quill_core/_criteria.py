"""Criteria: how well a measured candidate fits the insertion point, each a value in [0, 1] with its reason.

Every criterion is a value in [0, 1] (higher is better) computed from a raw measurement, which is kept.
``σ(x) = 1 / (1 + exp(-x))``; NLLs are mean nats per token of the *windowed* passage (the last
``max_prefix_tokens`` tokens before the insertion point, the quote, the next sentence after it), scored by
:class:`quill_core._lm.PerplexityScorer` with the candidate really inserted into the text.

- ``relevance``: raw = cosine between the query window and the quote (dense retrieval); value = clip(raw, 0, 1).
- ``lexical``: raw = BM25 score; value = raw / the best BM25 score among the candidates (0 when absent).
- ``quote_match`` (PPLq): raw = exp(mean NLL of the quote after its first ``head_chars`` characters plus the
  following text, given the prefix and those characters), QUILL's ppl1. value = σ((NLL_alone − NLL_here) / TAU_Q)
  over the quote's own part of that range (after its first characters): how much the context makes the quote
  likelier than on its own (a pointwise mutual information; 0.5 = no help). The following text's part is
  ``semantic_match``'s, so it is not counted twice. Without the quote-alone NLL: σ((ln NOVELTY_CENTER − NLL_here) / TAU_Q).
- ``semantic_match`` (PPLm): raw = exp(mean NLL of the text after the quote, given prefix + quote);
  value = σ((ln PPL_without − ln PPLm) / TAU_M), PPL_without = the same text without the quote. No text after the
  insertion point: value 0.5 (neutral), raw None.
- ``fluency``: raw = PPL(passage with the quote) / PPL(passage without it); value = σ(−ln raw / TAU_F).
- ``novelty``: raw = the quote's own perplexity under the LM (``Quote.ppl``, computed lazily and cached in the
  knowledge base); value = σ((ln raw − ln NOVELTY_CENTER) / TAU_N − POPULARITY_PENALTY · log10(1 + popularity)):
  unfamiliar, rarely attested quotes score high. Never NaN: a missing PPL gives 0.5.
- ``named_author``: 1 when the paragraph names the quote's author ("as Einstein said, [Q]", 韩非提出：[Q]; see
  :mod:`quill_core._mentions`), 0 when it names someone else, 0.5 when it names nobody.
- ``authenticity``: 1 for a quote of the knowledge base (verbatim hit), the fuzzy score / 100 for a near hit,
  0 when the quote is nowhere (see :func:`assess`).
- ``credibility``: 1 when the attributed author matches the knowledge base's author (normalized names), lower for
  a partial match, 0.5 when no author is known on either side, 0 for another author or an unknown quote.

``total`` = Σ wᵢ·valueᵢ / Σ wᵢ over the criteria with a weight, so it is in [0, 1] too.

Default weights (``Weights()``): relevance 1, quote_match 0.5, fluency 0.3, authenticity 0.1, credibility 0.1,
and 0 for lexical, semantic_match and novelty. Chosen by a grid search on the 70 English rows of QUILL's dev set
with SmolLM2-135M and MiniLM (``bench/eval.py --tune``): MRR 0.371 / Hit@1 0.329 against vanilla's 0.321 / 0.271;
5-fold cross-validated (weights chosen on 4/5, scored on the rest) 0.340 / 0.286: a real but small gain on 70 rows
(every fold chose quote_match 0.25-0.75, fluency 0.3-0.4, semantic_match 0, novelty 0). With this small LM the next-sentence signal (semantic_match) and novelty did not help
pick QUILL's gold quote, so they count for nothing by default; users can raise them. The quote given its
context (quote_match, a PMI) is the LM's useful signal. authenticity / credibility are constant for knowledge-base
quotes and matter when scoring a quote a user or a generator brought (``Quill.score``).

``named_author`` 0.5: chosen against the bilingual starter (gold quotes added) by grid + 5-fold CV on both languages
(any weight >= 0.25 orders the same; en default MRR 0.561, zh 0.615 vs vanilla 0.161 / 0.144). Chinese paragraphs
(:data:`LANGUAGE_WEIGHTS`) give the LM criteria weight 0: with the English LM weights zh MRR falls to 0.608, and a
grid tuned with them reached 0.626 in-sample but 0.607 cross-validated. Numbers and commands: the README and
issue #11's note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from ._errors import InputError
from ._scorer import PassageNLL
from ._names import author_key, clean_author
from ._spans import score as span_score
from ._types import Criterion, Quote

TAU_Q = 1.0
TAU_M = 0.25
TAU_F = 0.25
TAU_N = 0.75
NOVELTY_CENTER = 60.0
POPULARITY_PENALTY = 0.5
QUILL_CAP = 20.0


@dataclass(frozen=True)
class Weights:
    """Weight of each criterion in the total (non-negative; at least one positive). The defaults were chosen on
    QUILL's English dev set (see "Default weights" in the module docstring); criteria with weight 0 are still
    measured and shown."""

    relevance: float = 1.0
    lexical: float = 0.0
    quote_match: float = 0.5
    semantic_match: float = 0.0
    fluency: float = 0.3
    novelty: float = 0.0
    authenticity: float = 0.1
    credibility: float = 0.1
    named_author: float = 0.5

    def __post_init__(self) -> None:
        values = [getattr(self, f.name) for f in fields(self)]
        if any(not math.isfinite(v) or v < 0 for v in values) or not any(v > 0 for v in values):
            raise InputError("criterion weights must be finite, non-negative, and not all zero")

    @classmethod
    def of(cls, weights: "Weights | Mapping[str, float] | None") -> "Weights":
        """``weights`` as :class:`Weights`; a mapping overrides the defaults by name (unknown names are an error)."""
        if weights is None:
            return cls()
        if isinstance(weights, Weights):
            return weights
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(weights) - names)
        if unknown:
            raise InputError(f"unknown criteria {', '.join(unknown)}; known: {', '.join(sorted(names))}")
        try:
            return replace(cls(), **{k: float(v) for k, v in weights.items()})
        except (TypeError, ValueError) as exc:
            raise InputError(f"criterion weights must be numbers: {exc}") from exc

    def as_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


LM_CRITERIA = ("quote_match", "semantic_match", "fluency")
"""The criteria the language model measures."""
LANGUAGE_WEIGHTS: Mapping[str, Weights] = MappingProxyType({
    "zh": Weights(quote_match=0.0, fluency=0.0),
})
"""Default weights per quote language where they differ from :class:`Weights` (chosen on QUILL's dev rows of that
language, see the README): the packaged LM reads classical Chinese too poorly for its criteria to help."""


def default_weights(lang: str) -> Weights:
    """The default ranker's weights for a paragraph in ``lang``."""
    return LANGUAGE_WEIGHTS.get(lang, Weights())


def unweighted_lm_note(lang: str) -> str:
    """Why the LM criteria count for nothing by default in ``lang`` ("" where they count)."""
    if any(getattr(default_weights(lang), name) > 0 for name in LM_CRITERIA):
        return ""
    return "not counted by default for this language: the packaged language model reads it too poorly"


@dataclass(frozen=True)
class Assessment:
    """Authenticity and credibility of one quote: values in [0, 1] with the raw score and a note."""

    authenticity: float = 1.0
    authenticity_raw: float | None = 100.0
    authenticity_note: str = "in the knowledge base"
    credibility: float = 1.0
    credibility_raw: float | None = None
    credibility_note: str = ""


@dataclass(frozen=True)
class Measurement:
    """Everything measured for one candidate in one passage (the raw inputs of every criterion)."""

    quote: Quote
    cosine: float | None = None
    bm25: float = 0.0
    bm25_max: float = 0.0
    passage: PassageNLL | None = None     # with the quote inserted
    baseline: PassageNLL | None = None    # the same passage without any quote
    alone: PassageNLL | None = None       # the quote on its own
    own_ppl: float | None = None          # the quote's own perplexity (novelty)
    assessment: Assessment = field(default_factory=Assessment)
    named: tuple[str, ...] = ()           # the authors the paragraph names (nearest to the insertion point first)


def kb_assessment(quote: Quote) -> Assessment:
    """A quote taken from the knowledge base is authentic by construction; its author is the KB's own."""
    if clean_author(quote.author):
        return Assessment(credibility=1.0, credibility_note=f"attributed to {quote.author} in the knowledge base")
    return Assessment(credibility=0.5, credibility_note="the knowledge base knows no author")


# -- criteria ----------------------------------------------------------------------------------------------------
def _sigmoid(x: float) -> float:
    if not math.isfinite(x):
        return 0.5 if math.isnan(x) else (1.0 if x > 0 else 0.0)
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def _ppl(mean_nll: float) -> float:
    return math.exp(min(mean_nll, 50.0))


def quill_value(m: Measurement) -> float | None:
    """QUILL's avg_novelty (lower is better), with the candidate inserted; ``None`` without LM measurements."""
    p = m.passage
    if p is None:
        return None
    parts = []
    q_range = p.tail + p.after
    if q_range.tokens:
        parts.append(min(_ppl(q_range.mean), QUILL_CAP))
    if p.after.tokens:
        parts.append(min(_ppl(p.after.mean), QUILL_CAP))
    avg = sum(parts) / len(parts) if parts else QUILL_CAP
    own = m.own_ppl if m.own_ppl is not None and math.isfinite(m.own_ppl) else 0.0
    hits = m.quote.popularity
    popularity = math.log10(hits) if hits is not None and math.isfinite(hits) and hits >= 1 else 0.0
    return avg + 0.05 * own + 0.5 * popularity


def criteria(m: Measurement, weights: Weights | None = None) -> tuple[Criterion, ...]:
    """The breakdown of one measurement (see the module docstring for every formula)."""
    w = weights or Weights()
    out = []
    if m.cosine is not None:
        out.append(Criterion("relevance", max(0.0, min(1.0, m.cosine)), m.cosine, w.relevance,
                             "cosine similarity to the text around the insertion point"))
    else:
        out.append(Criterion("relevance", 0.0, None, w.relevance, "not retrieved by meaning"))
    out.append(Criterion("lexical", m.bm25 / m.bm25_max if m.bm25_max > 0 else 0.0, m.bm25, w.lexical,
                         "BM25 word overlap, relative to the best candidate"))
    p, base = m.passage, m.baseline
    if p is not None and base is not None:
        out.extend(_lm_criteria(m, p, base, w))
    out.append(_novelty(m, w))
    out.append(_named_author(m, w))
    a = m.assessment
    out.append(Criterion("authenticity", a.authenticity, a.authenticity_raw, w.authenticity, a.authenticity_note))
    out.append(Criterion("credibility", a.credibility, a.credibility_raw, w.credibility, a.credibility_note))
    return tuple(out)


def _lm_criteria(m: Measurement, p: PassageNLL, base: PassageNLL, w: Weights) -> list[Criterion]:
    out = []
    q_range = p.tail + p.after
    ppl_q = _ppl(q_range.mean) if q_range.tokens else None
    if p.tail.tokens and m.alone is not None and m.alone.tail.tokens:
        here, apart = _ppl(p.tail.mean), _ppl(m.alone.tail.mean)
        out.append(Criterion("quote_match", _sigmoid((m.alone.tail.mean - p.tail.mean) / TAU_Q), ppl_q, w.quote_match,
                             f"the quote reads at PPL {here:.1f} here, {apart:.1f} on its own"))
    elif p.tail.tokens:
        out.append(Criterion("quote_match", _sigmoid((math.log(NOVELTY_CENTER) - p.tail.mean) / TAU_Q), ppl_q,
                             w.quote_match, f"the quote reads at PPL {_ppl(p.tail.mean):.1f} here"))
    else:
        out.append(Criterion("quote_match", 0.5, ppl_q, w.quote_match, "quote too short to score"))
    if p.after.tokens and base.after.tokens:
        ppl_m, ppl_base = _ppl(p.after.mean), _ppl(base.after.mean)
        out.append(Criterion("semantic_match", _sigmoid((base.after.mean - p.after.mean) / TAU_M), ppl_m,
                             w.semantic_match, f"PPL of the next sentence {ppl_m:.1f} with the quote, "
                                               f"{ppl_base:.1f} without"))
    else:
        out.append(Criterion("semantic_match", 0.5, None, w.semantic_match, "no text after the insertion point"))
    with_q, without = p.whole, base.whole
    if with_q.tokens and without.tokens:
        ratio = _ppl(with_q.mean) / _ppl(without.mean)
        out.append(Criterion("fluency", _sigmoid((without.mean - with_q.mean) / TAU_F), ratio, w.fluency,
                             f"passage PPL {_ppl(with_q.mean):.1f} with the quote, {_ppl(without.mean):.1f} without"))
    else:
        out.append(Criterion("fluency", 0.5, None, w.fluency, "passage too short to score"))
    return out


def _novelty(m: Measurement, w: Weights) -> Criterion:
    ppl = m.own_ppl
    pop = m.quote.popularity
    pop_term = POPULARITY_PENALTY * math.log10(1.0 + pop) if pop is not None and math.isfinite(pop) and pop > 0 else 0
    if ppl is None or not math.isfinite(ppl) or ppl <= 0:
        return Criterion("novelty", 0.5, None, w.novelty, "perplexity unknown")
    value = _sigmoid((math.log(ppl) - math.log(NOVELTY_CENTER)) / TAU_N - pop_term)
    note = f"own PPL {ppl:.1f}" + (f", attested {pop:,.0f} times" if pop_term else "")
    return Criterion("novelty", value, ppl, w.novelty, note)


def _named_author(m: Measurement, w: Weights) -> Criterion:
    if not m.named:
        return Criterion("named_author", 0.5, None, w.named_author, "the paragraph names no author")
    if any(author_key(name) == author_key(m.quote.author) for name in m.named):
        return Criterion("named_author", 1.0, 1.0, w.named_author, f"the paragraph names {clean_author(m.quote.author)}")
    return Criterion("named_author", 0.0, 0.0, w.named_author, f"the paragraph names {', '.join(m.named)}, "
                                                               "not this author")


def total(breakdown: Iterable[Criterion]) -> float:
    """Σ wᵢ·valueᵢ / Σ wᵢ (0 when no criterion has a weight)."""
    items = [c for c in breakdown if c.weight > 0]
    weight = sum(c.weight for c in items)
    return sum(c.weight * c.value for c in items) / weight if weight else 0.0


def why(breakdown: Sequence[Criterion]) -> str:
    """One line: the criteria that lift this suggestion most, and the one that holds it back most."""
    scored = [c for c in breakdown if c.weight > 0 and c.name not in ("authenticity", "credibility")]
    if not scored:
        return ""
    best = sorted(scored, key=lambda c: -(c.weight * (c.value - 0.5)))[:2]
    worst = min(scored, key=lambda c: c.weight * (c.value - 0.5))
    text = "strong on " + " and ".join(f"{c.name.replace('_', ' ')} ({c.value:.2f})" for c in best)
    if worst not in best and worst.value < 0.4:
        text += f"; weak on {worst.name.replace('_', ' ')} ({worst.value:.2f})"
    return text


# -- authenticity and credibility of a given quote -----------------------------------------------------------------
def assess(quote: str, author: str, matches: Sequence[Quote], *, threshold: float = 80.0) -> tuple[Quote | None,
                                                                                                   Assessment]:
    """Authenticity and credibility of ``quote`` attributed to ``author``, against knowledge-base ``matches``
    (e.g. its nearest neighbours). Returns the best-matching KB quote (or None) and the assessment."""
    best, best_score = None, 0.0
    for candidate in matches:
        s = span_score(quote, candidate.text)
        if s > best_score:
            best, best_score = candidate, s
    if best is None or best_score < threshold:
        return None, Assessment(authenticity=0.0, authenticity_raw=best_score,
                                authenticity_note="not found in the knowledge base",
                                credibility=0.0, credibility_note="the quote is unknown, so its author cannot be checked")
    verbatim = best_score >= 100.0
    auth = Assessment(authenticity=1.0 if verbatim else best_score / 100.0, authenticity_raw=best_score,
                      authenticity_note=("verbatim in the knowledge base" if verbatim else
                                         f"near match ({best_score:.0f}/100) of a knowledge-base quote"))
    given, known = author_key(author), author_key(best.author)
    if not given and not known:
        cred = (0.5, None, "no author on either side")
    elif not given:
        cred = (0.5, None, f"no author given; the knowledge base says {best.author}")
    elif not known:
        cred = (0.5, None, "the knowledge base knows no author for it")
    elif given == known:
        cred = (1.0, 100.0, f"{best.author}, as in the knowledge base")
    else:
        ratio = fuzz.token_set_ratio(clean_author(author).casefold(), clean_author(best.author).casefold())
        if ratio >= 90:
            cred = (ratio / 100.0, ratio, f"close to the knowledge base's {best.author}")
        else:
            cred = (0.0, ratio, f"the knowledge base attributes it to {best.author}")
    return best, replace(auth, credibility=cred[0], credibility_raw=cred[1], credibility_note=cred[2])
