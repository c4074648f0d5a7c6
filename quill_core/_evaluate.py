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
from typing import Any, Mapping, Sequence

import numpy as np

from ._criteria import Measurement, Weights, default_weights
from ._embed import Embedder
from ._errors import InputError, NotFoundError
from ._query import MARKER, SAME_LANGUAGE, parse_query, quote_filters
from ._rank import RANKERS, candidates_for, get_ranker, measure, order
from ._retrieve import DenseIndex, MemoryCatalog, MemoryIndex, MergedIndex, Retriever
from ._scorer import Scorer
from ._text import key
from ._types import Progress, Quote

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
    weights: Mapping[str, Mapping[str, float]]  # paragraph language (or "all" when given) -> criterion -> weight
    seconds: float


@dataclass(frozen=True)
class RowResult:
    """One evaluated row: its candidates per ranker family and their measurements (reusable for other weights)."""

    row: EvalRow
    gold_id: str
    relevance: Mapping[str, int]        # quote id -> graded relevance (gold included)
    ideal: tuple[int, ...]              # relevances of the judged quotes the corpus holds, best first
    lists: Mapping[str, tuple[Measurement, ...]]  # pool kind ("dense", "lexical", "fused") -> measured candidates
    lang: str = "en"                    # the paragraph's language as detected (it picks the default weights)


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
def _gold_quotes(rows: Sequence[EvalRow]) -> list[Quote]:
    seen: dict[str, Quote] = {}
    for row in rows:
        seen.setdefault(key(row.quote), Quote(text=row.quote, author=row.author, lang=row.lang,
                                              collections=("eval-gold",)))
    return list(seen.values())


def corpus(gold: Sequence[Quote], *, embedder: Embedder, kb: Retriever | None = None,
           extra: Sequence[Quote] = ()) -> Retriever:
    """The retriever evaluation ranks with: the ``gold`` quotes embedded in memory, merged with the knowledge base
    behind ``kb`` when given (read only; ``extra`` are its quotes, for BM25 and lookups)."""
    dense: DenseIndex = MemoryIndex(gold, embedder)
    if kb is not None:
        dense = MergedIndex(dense, kb.dense)
    return Retriever(MemoryCatalog([*gold, *extra]), embedder, dense)


# -- running -----------------------------------------------------------------------------------------------------
def collect(rows: Sequence[EvalRow], *, embedder: Embedder, scorer: Scorer | None = None, kb: Retriever | None = None,
            corpus_rows: Sequence[EvalRow] | None = None, candidates: int = 20,
            progress: Progress | None = None) -> list[RowResult]:
    """Retrieve and measure every row once (the LM part only when ``scorer`` is given), with the same retriever
    and measurements ``Quill.suggest`` uses, including its default of quotes in the paragraph's language (a bilingual
    embedder's languages are not comparable by cosine, so searching all of them is a different product)."""
    gold = _gold_quotes(corpus_rows or rows)
    extra = list(kb.catalog.iter_quotes()) if kb is not None else []  # read once: BM25, lookups, graded ids
    retriever = corpus(gold, embedder=embedder, kb=kb, extra=extra)
    gold_by_key = {key(q.text): q for q in gold}
    ids_by_key = {key(q.text): q.id for q in [*extra, *gold]}  # a gold quote wins over a KB quote of the same text
    langs = {q.lang for q in [*extra, *gold]}
    out = []
    for number, row in enumerate(rows):
        gold_quote = gold_by_key[key(row.quote)]
        relevance = {ids_by_key[key(t)]: r for t, r in row.graded.items() if key(t) in ids_by_key}
        relevance[gold_quote.id] = max(GOLD_RELEVANCE, relevance.get(gold_quote.id, 0))
        query = parse_query(row.context)
        filters = quote_filters(query, None, SAME_LANGUAGE, holds=langs.__contains__)  # the app's default
        pool = retriever.pool(query, k=candidates, filters=filters)
        lists = {kind: tuple(measure(query, candidates_for(kind, pool, k=candidates),
                                     scorer=scorer if kind == "fused" else None, pool=pool))
                 for kind in ("fused", "dense", "lexical")}
        out.append(RowResult(row=row, gold_id=gold_quote.id, relevance=relevance,
                             ideal=tuple(sorted(relevance.values(), reverse=True)), lists=lists, lang=query.lang))
        if progress:
            progress((number + 1) / len(rows), f"row {number + 1} of {len(rows)}")
    return out


def ranked(result: RowResult, ranker: str, weights: Weights | None = None) -> list[str]:
    """Quote ids in the order ``ranker`` gives them for one collected row (without ``weights``: the defaults of the
    paragraph's language, as in the app)."""
    return [s.quote.id for s in order(result.lists[get_ranker(ranker).pool], ranker=ranker, weights=weights,
                                      lang=result.lang)]


def summarize(results: Sequence[RowResult], *, rankers: Sequence[str] = tuple(RANKERS),
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


def evaluate(rows: Sequence[EvalRow], *, embedder: Embedder, scorer: Scorer | None = None,
             kb: Retriever | None = None, rankers: Sequence[str] = tuple(RANKERS), weights: Weights | None = None,
             candidates: int = 20, corpus_rows: Sequence[EvalRow] | None = None, dataset: str = "",
             kb_name: str = "none", lm: str = "", progress: Progress | None = None) -> EvalReport:
    """Run ``rankers`` over ``rows`` and return their metrics (see the module docstring). The LM ``scorer`` is used
    only when a ranker needs it; ``kb`` (a knowledge base's retriever) adds its quotes to the gold ones."""
    needs_lm = any(get_ranker(r).needs_lm for r in rankers)
    started = time.perf_counter()
    results = collect(rows, embedder=embedder, scorer=scorer if needs_lm else None, kb=kb,
                      corpus_rows=corpus_rows, candidates=candidates, progress=progress)
    used = {"all": weights} if weights is not None else {lang: default_weights(lang) for lang in
                                                          sorted({r.lang for r in results})}
    return EvalReport(rankers=summarize(results, rankers=rankers, weights=weights), dataset=dataset, rows=len(rows),
                      kb=kb_name, embedder=embedder.name, lm=lm if needs_lm else "", candidates=candidates,
                      weights={k: w.as_dict() for k, w in used.items()}, seconds=time.perf_counter() - started)


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
    lines += ["## Weights of the default ranker", ""]
    lines += [f"- {lang}: " + ", ".join(f"{k} {v:g}" for k, v in w.items()) for lang, w in report.weights.items()]
    lines.append("")
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
