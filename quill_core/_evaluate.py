"""Evaluate rankers on a dataset of paragraphs with a gold quote: MRR, Hit@1/3/5 and NDCG@3, overall and per language.

Dataset: JSON lines ``{"id", "context" (with one "[Q]"), "quote", "author", "lang", "graded" (optional
{quote: relevance 1-5})}``. Every gold quote of the dataset joins the searched corpus (as in a full-ranking
benchmark, they are each other's distractors) without touching the user's knowledge base: gold quotes live in an
in-memory index (their embeddings and a BM25 index) whose hits merge with the named knowledge base's retrieval.

Metrics, for the gold quote's 1-based rank r in a ranker's list (None when absent, which counts as a miss even
when the list is shorter than k): RR = 1/r, Hit@k = [r <= k]; NDCG@3 uses the graded relevances (gold = 5 unless
graded higher, unknown quotes 0) with the ideal order of the judged quotes the corpus holds.
LM features are measured once per row and shared by every ranker (so comparing rankers costs one LM pass).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ._errors import InputError, NotFoundError
from ._lexical import LexicalIndex
from ._query import query_text
from ._rank import LM_RANKERS, RANKERS, Measurement, Pool, Weights, candidates_for, measure, order
from ._text import key
from ._query import MARKER, parse_query
from ._types import Candidate, Quote, Progress


GOLD_RELEVANCE = 5


@dataclass(frozen=True)
class EvalRow:
    id: str
    context: str
    quote: str
    author: str = ""
    lang: str = "en"
    graded: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class RankerMetrics:
    mrr: float
    hit1: float
    hit3: float
    hit5: float
    ndcg3: float
    n: int
    by_lang: Mapping[str, "RankerMetrics"] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mrr": round(self.mrr, 4), "hit@1": round(self.hit1, 4), "hit@3": round(self.hit3, 4),
                               "hit@5": round(self.hit5, 4), "ndcg@3": round(self.ndcg3, 4), "n": self.n}
        if self.by_lang:
            out["by_lang"] = {lang: m.as_json() for lang, m in self.by_lang.items()}
        return out


@dataclass(frozen=True)
class EvalReport:
    """Metrics of every ranker on one dataset, with what produced them."""

    rankers: Mapping[str, RankerMetrics]
    dataset: str
    rows: int
    kb: str
    embedder: str
    lm: str
    candidates: int
    weights: Mapping[str, float]
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {"rankers": {name: m.as_json() for name, m in self.rankers.items()}, "dataset": self.dataset,
                "rows": self.rows, "kb": self.kb, "embedder": self.embedder, "lm": self.lm,
                "candidates": self.candidates, "weights": dict(self.weights), "seconds": round(self.seconds, 1)}


@dataclass(frozen=True)
class RowResult:
    """One evaluated row: its candidates per ranker family and their measurements (reusable for other weights)."""

    row: EvalRow
    gold_id: str
    relevance: Mapping[str, int]        # quote id -> graded relevance (gold included)
    ideal: tuple[int, ...]              # relevances of the judged quotes the corpus holds, best first
    lists: Mapping[str, tuple[Measurement, ...]]  # "vanilla" / "bm25" / "hybrid" -> measured candidates


# -- dataset -----------------------------------------------------------------------------------------------------
def load_dataset(path: str | Path, *, limit: int = 0, lang: str = "") -> list[EvalRow]:
    """Rows of a JSONL dataset (see the module docstring); ``lang`` keeps one language, ``limit`` the first N."""
    p = Path(path)
    if not p.is_file():
        raise NotFoundError(f"dataset {p} does not exist")
    rows: list[EvalRow] = []
    with p.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{p}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(obj, dict) or not isinstance(obj.get("context"), str) or not obj.get("quote"):
                raise InputError(f"{p}:{number}: a row needs a 'context' string and a 'quote'")
            if obj["context"].count(MARKER) != 1:
                raise InputError(f"{p}:{number}: the context must hold exactly one {MARKER} marker")
            graded = obj.get("graded") or {}
            if not isinstance(graded, dict):
                raise InputError(f"{p}:{number}: 'graded' must be an object of quote -> relevance")
            row = EvalRow(id=str(obj.get("id", number)), context=obj["context"], quote=str(obj["quote"]).strip(),
                          author=str(obj.get("author") or ""), lang=str(obj.get("lang") or "en"),
                          graded={str(k): int(v) for k, v in graded.items() if _is_number(v)})
            if lang and row.lang != lang:
                continue
            rows.append(row)
            if limit and len(rows) >= limit:
                break
    if not rows:
        raise InputError(f"{p} holds no usable rows" + (f" in language {lang!r}" if lang else ""))
    return rows


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# -- metrics -----------------------------------------------------------------------------------------------------
def reciprocal_rank(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def hit_at(rank: int | None, k: int) -> float:
    """1 when the gold item is among the first ``k`` — a list shorter than k without it is a miss."""
    return 1.0 if rank is not None and rank <= k else 0.0


def ndcg_at(relevances: Sequence[float], ideal: Sequence[float], k: int) -> float:
    """NDCG@k of a ranked list's graded ``relevances`` against the ``ideal`` relevances (0 when ideal is all 0)."""
    def dcg(values: Sequence[float]) -> float:
        return sum(v / math.log2(i + 2) for i, v in enumerate(list(values)[:k]))

    best = dcg(sorted(ideal, reverse=True))
    return dcg(relevances) / best if best > 0 else 0.0


def _metrics(results: Sequence[tuple[str, int | None, float]]) -> RankerMetrics:
    """``results``: (lang, gold rank, ndcg@3) per row."""
    def agg(items: Sequence[tuple[str, int | None, float]]) -> RankerMetrics:
        n = len(items)
        if not n:
            return RankerMetrics(0.0, 0.0, 0.0, 0.0, 0.0, 0)
        return RankerMetrics(mrr=sum(reciprocal_rank(r) for _, r, _ in items) / n,
                             hit1=sum(hit_at(r, 1) for _, r, _ in items) / n,
                             hit3=sum(hit_at(r, 3) for _, r, _ in items) / n,
                             hit5=sum(hit_at(r, 5) for _, r, _ in items) / n,
                             ndcg3=sum(g for _, _, g in items) / n, n=n)

    overall = agg(results)
    langs = sorted({lang for lang, _, _ in results})
    by_lang = {lang: agg([r for r in results if r[0] == lang]) for lang in langs}
    return RankerMetrics(overall.mrr, overall.hit1, overall.hit3, overall.hit5, overall.ndcg3, overall.n, by_lang)


# -- the searchable corpus ----------------------------------------------------------------------------------------
class _Corpus:
    """Gold quotes in memory (vectors + BM25), optionally merged with a knowledge base's dense retrieval."""

    def __init__(self, quotes: Sequence[Quote], embedder: Any, *, quill: Any = None) -> None:
        self.quotes = list(quotes)
        self.embedder = embedder
        self.quill = quill
        self.vectors = embedder.embed_batch([q.text for q in self.quotes]) if self.quotes else np.zeros((0, 1))
        extra = list(quill.kb.iter_quotes()) if quill is not None else []
        self.lexical = LexicalIndex(self.quotes + extra)
        self.by_id = {q.id: q for q in extra}
        self.by_id.update({q.id: q for q in self.quotes})
        self.keys = {key(q.text) for q in self.by_id.values()}

    def pool(self, paragraph: str, *, k: int) -> tuple[Pool, Any]:
        query = parse_query(paragraph)
        text = query_text(query)
        vector = self.embedder.embed_batch([text])[0]
        sims = self.vectors @ vector if len(self.quotes) else np.zeros(0)
        dense = [(self.quotes[i].id, float(sims[i])) for i in np.argsort(-sims, kind="stable")[:k]]
        if self.quill is not None:
            dense += [(c.quote.id, c.similarity) for c in self.quill.retrieve(query, k=k)]
            dense = sorted(dict(dense).items(), key=lambda item: -item[1])[:k]
        lexical = self.lexical.search(text, k=k)
        cosine = dict(dense)
        missing = [i for i, _ in lexical if i not in cosine]
        if missing:
            vectors = self.embedder.embed_batch([self.by_id[i].text for i in missing])
            cosine.update({i: float(v @ vector) for i, v in zip(missing, vectors)})
        pool = Pool(dense=tuple(Candidate(self.by_id[i], s) for i, s in dense),
                    lexical=tuple(Candidate(self.by_id[i], s, retriever="bm25") for i, s in lexical),
                    cosine=cosine)
        return pool, query


def _gold_quotes(rows: Sequence[EvalRow]) -> list[Quote]:
    seen: dict[str, Quote] = {}
    for row in rows:
        seen.setdefault(key(row.quote), Quote(text=row.quote, author=row.author, lang=row.lang,
                                              collections=("eval-gold",)))
    return list(seen.values())


# -- running -----------------------------------------------------------------------------------------------------
def collect(rows: Sequence[EvalRow], *, embedder: Any, scorer: Any = None, quill: Any = None,
            corpus_rows: Sequence[EvalRow] | None = None, candidates: int = 20,
            progress: Progress | None = None, wrap: bool = False) -> list[RowResult]:
    """Retrieve and measure every row once (the LM part only when ``scorer`` is given)."""
    gold = _gold_quotes(corpus_rows or rows)
    corpus = _Corpus(gold, embedder, quill=quill)
    gold_by_key = {key(q.text): q for q in gold}
    ids_by_key = {key(q.text): q.id for q in corpus.by_id.values()}
    out = []
    for number, row in enumerate(rows):
        gold_quote = gold_by_key[key(row.quote)]
        relevance = {ids_by_key[key(t)]: r for t, r in row.graded.items() if key(t) in ids_by_key}
        relevance[gold_quote.id] = max(GOLD_RELEVANCE, relevance.get(gold_quote.id, 0))
        pool, query = corpus.pool(row.context, k=candidates)
        lists: dict[str, tuple[Measurement, ...]] = {}
        fused = candidates_for("hybrid", pool, k=candidates)
        lists["hybrid"] = tuple(measure(query, fused, scorer=scorer, pool=pool, wrap=wrap))
        lists["vanilla"] = tuple(measure(query, candidates_for("vanilla", pool, k=candidates), pool=pool))
        lists["bm25"] = tuple(measure(query, candidates_for("bm25", pool, k=candidates), pool=pool))
        out.append(RowResult(row=row, gold_id=gold_quote.id, relevance=relevance,
                             ideal=tuple(sorted(relevance.values(), reverse=True)), lists=lists))
        if progress:
            progress((number + 1) / len(rows), f"row {number + 1} of {len(rows)}")
    return out


def ranked(result: RowResult, ranker: str, weights: Weights | None = None) -> list[str]:
    """Quote ids in the order ``ranker`` gives them for one collected row."""
    family = "hybrid" if ranker in LM_RANKERS else ranker
    return [s.quote.id for s in order(result.lists[family], ranker=ranker, weights=weights)]


def summarize(results: Sequence[RowResult], *, rankers: Sequence[str] = RANKERS,
              weights: Weights | None = None) -> dict[str, RankerMetrics]:
    """Metrics per ranker over collected rows (cheap: no LM call)."""
    metrics = {}
    for ranker in rankers:
        per_row = []
        for r in results:
            ids = ranked(r, ranker, weights)
            rank = ids.index(r.gold_id) + 1 if r.gold_id in ids else None
            gains = [r.relevance.get(i, 0) for i in ids[:3]]
            per_row.append((r.row.lang, rank, ndcg_at(gains, r.ideal, 3)))
        metrics[ranker] = _metrics(per_row)
    return metrics


def evaluate(rows: Sequence[EvalRow], *, embedder: Any, scorer: Any = None, quill: Any = None,
             rankers: Sequence[str] = RANKERS, weights: Weights | None = None, candidates: int = 20,
             corpus_rows: Sequence[EvalRow] | None = None, dataset: str = "", kb: str = "none", lm: str = "",
             progress: Progress | None = None) -> EvalReport:
    """Run ``rankers`` over ``rows`` and return their metrics (see the module docstring)."""
    unknown = [r for r in rankers if r not in RANKERS]
    if unknown:
        raise InputError(f"unknown ranker(s) {', '.join(unknown)}; choose from {', '.join(RANKERS)}")
    needs_lm = any(r in LM_RANKERS for r in rankers)
    started = time.perf_counter()
    results = collect(rows, embedder=embedder, scorer=scorer if needs_lm else None, quill=quill,
                      corpus_rows=corpus_rows, candidates=candidates, progress=progress)
    w = weights or Weights()
    return EvalReport(rankers=summarize(results, rankers=rankers, weights=w), dataset=dataset, rows=len(rows), kb=kb,
                      embedder=getattr(embedder, "name", "?"), lm=lm if needs_lm else "", candidates=candidates,
                      weights=w.as_dict(), seconds=time.perf_counter() - started)


# -- reports -----------------------------------------------------------------------------------------------------
def write_report(report: EvalReport, directory: str | Path) -> tuple[Path, Path]:
    """Write ``report.md`` (tables overall and per language) and ``report.png`` (a bar chart) into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    columns = ("mrr", "hit1", "hit3", "hit5", "ndcg3")
    heads = ("MRR", "Hit@1", "Hit@3", "Hit@5", "NDCG@3")
    lines = [f"# Ranker evaluation: {Path(report.dataset).name or 'dataset'}", "",
             f"{report.rows} rows; knowledge base: {report.kb}; embedder: {report.embedder}; "
             f"LM: {report.lm or '-'}; {report.candidates} candidates; {report.seconds:.0f} s.", ""]

    def table(title: str, metrics: Mapping[str, RankerMetrics]) -> None:
        lines.extend([f"## {title}", "", "| ranker | n | " + " | ".join(heads) + " |",
                      "|---|---:|" + "---:|" * len(heads)])
        for name, m in metrics.items():
            lines.append(f"| {name} | {m.n} | " + " | ".join(f"{getattr(m, c):.3f}" for c in columns) + " |")
        lines.append("")

    table("All rows", report.rankers)
    langs = sorted({lang for m in report.rankers.values() for lang in m.by_lang})
    for lang in langs:
        table(f"Language: {lang}", {name: m.by_lang[lang] for name, m in report.rankers.items() if lang in m.by_lang})
    lines += ["## Weights of the default ranker", "",
              ", ".join(f"{k} {v:g}" for k, v in report.weights.items()), ""]
    md = out / "report.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    png = out / "report.png"
    _chart(report, png, columns, heads)
    return md, png


def _chart(report: EvalReport, path: Path, columns: Sequence[str], heads: Sequence[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report.rankers)
    x = np.arange(len(heads))
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    for i, name in enumerate(names):
        m = report.rankers[name]
        ax.bar(x + i * width - 0.4 + width / 2, [getattr(m, c) for c in columns], width, label=name)
    ax.set_xticks(x, heads)
    ax.set_ylim(0, 1)
    ax.set_ylabel("score")
    ax.set_title(f"{Path(report.dataset).name or 'dataset'}: {report.rows} rows")
    ax.legend(ncols=min(5, len(names)), fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def evaluate_dataset(quill: Any, dataset: str | Path, *, rankers: Sequence[str] = RANKERS, limit: int = 0,
                     lang: str = "", kb: str = "none", candidates: int = 20, weights: Any = None,
                     progress: Progress | None = None) -> EvalReport:
    """:func:`evaluate` with ``quill``'s embedder and LM on a JSONL file (see :meth:`Quill.evaluate`).

    ``kb="none"`` ranks against the dataset's gold quotes only; a knowledge-base name adds its quotes (read-only).
    """
    from dataclasses import replace

    rows = load_dataset(dataset, limit=limit, lang=lang)
    corpus_rows = load_dataset(dataset)
    kb_quill = None
    if kb and kb != "none":
        kb_quill = type(quill)(replace(quill.settings, kb=kb), embedder=quill.embedder, scorer=quill._lm_scorer())
        if len(kb_quill.kb) == 0:
            raise InputError(f"knowledge base {kb!r} is empty: build or import it first, or use --kb none")
    needs_lm = any(r in LM_RANKERS for r in rankers)
    return evaluate(rows, embedder=quill.embedder, scorer=quill._lm_scorer() if needs_lm else None, quill=kb_quill,
                    rankers=rankers, weights=Weights.of(weights), candidates=candidates, corpus_rows=corpus_rows,
                    dataset=str(dataset), kb=kb or "none", lm=quill.settings.lm_model, progress=progress)
