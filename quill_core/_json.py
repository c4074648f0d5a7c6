"""One JSON shape per result: :func:`to_json` is what the CLI prints with ``--json`` and what the app downloads.

A dataclass becomes an object of its fields, tuples become lists; the results whose JSON is meant for people to read
(suggestions, insertions, verifications, evaluation reports) have a shape of their own below.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from functools import singledispatch
from pathlib import Path
from typing import Any, Mapping

from ._evaluate import EvalReport, RankerMetrics
from ._types import InsertResult, Suggestion
from ._verify import Verification


@singledispatch
def to_json(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, strings, numbers, booleans, None)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


@to_json.register
def _suggestion(s: Suggestion) -> dict[str, Any]:
    q = s.quote
    return {"id": q.id, "text": q.text, "author": q.author, "work": q.work, "lang": q.lang,
            "score": round(s.score, 6),
            "breakdown": {c.name: {"value": c.value, "raw": c.raw, "weight": c.weight} for c in s.breakdown}}


@to_json.register
def _insert_result(result: InsertResult) -> dict[str, Any]:
    """``quote_span`` indexes ``paragraph``."""
    return {"paragraph": result.paragraph, "sentence": result.sentence, "quote_span": list(result.quote_span),
            "drafts": [{"text": d.text, "fluency": d.fluency, "attribution": d.attribution,
                        "rejected": d.rejected_reason or None, "fallback": d.fallback} for d in result.drafts]}


@to_json.register
def _verification(v: Verification) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": v.start, "end": v.end, "text": v.text, "verdict": v.verdict, "canonical": v.canonical,
        "author": v.author, "claimed_author": v.claimed_author, "score": v.score,
        "diff": [{"op": d.op, "canonical": d.canonical, "draft": d.draft} for d in v.diff],
    }
    if v.claimed_work:
        out["claimed_work"] = v.claimed_work
    if v.note:
        out["note"] = v.note
    if v.source is not None:
        s = v.source
        out["source"] = {"source": s.source, "doc": s.doc, "title": s.title, "author": s.author,
                         "start": s.span.start, "end": s.span.end, "location": s.location, "label": s.label}
    return out


@to_json.register
def _ranker_metrics(m: RankerMetrics) -> dict[str, Any]:
    out: dict[str, Any] = {"mrr": round(m.mrr, 4), "hit@1": round(m.hit1, 4), "hit@3": round(m.hit3, 4),
                           "hit@5": round(m.hit5, 4), "ndcg@3": round(m.ndcg3, 4), "n": m.n}
    if m.by_lang:
        out["by_lang"] = {lang: to_json(x) for lang, x in m.by_lang.items()}
    return out


@to_json.register
def _eval_report(r: EvalReport) -> dict[str, Any]:
    return {"rankers": {name: to_json(m) for name, m in r.rankers.items()}, "dataset": r.dataset, "rows": r.rows,
            "kb": r.kb, "embedder": r.embedder, "lm": r.lm, "candidates": r.candidates, "weights": dict(r.weights),
            "seconds": round(r.seconds, 1)}
