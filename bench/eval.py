"""Ranker quality on QUILL's dev set: every ranker per language, plus how the default weights were chosen.

    .venv/bin/python bench/eval.py [--json] [--langs en,zh] [--limit-zh N] [--limit N] [--tune] [--threads 1] [--precision int8|float32] [--kb starter] [--save PATH]

- English rows with the MiniLM embedder, Chinese rows with e5 (what the default bilingual embedder uses); the default LM
  (``QUILL_LM_MODEL``, SmolLM2-135M-Instruct unless set). Gold quotes of the whole dataset form the corpus
  (``quill eval --kb none``); 20 candidates (dense + BM25, fused) per row.
- ``--tune``: grid search of the default ranker's weights on each language's collected rows, reported in-sample
  and with 5-fold cross-validation (weights chosen on 4/5 of the rows, scored on the held-out fifth), so the gain
  over ``vanilla`` is not just fitted to these rows. ``--save PATH`` pickles each language's measured rows first
  (``PATH.<lang>.pickle``) so other weights can be tried without another LM pass.
- ``lm_only``: the default ranker with every weight 0 but quote_match: what the LM alone finds (how weak it is).
- ``--limit-zh N`` scores only the first N Chinese rows with the LM rankers (the non-LM rankers always see all).
Needs ../shared/data/eval/quill_dev.jsonl (says so and exits 2 when absent).
"""

from __future__ import annotations

import argparse
import itertools
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quill_core import RANKERS, Quill, Settings, Weights, to_json  # noqa: E402
from quill_core._embed import load_embedder  # noqa: E402
from quill_core._evaluate import collect, load_dataset, summarize  # noqa: E402
from quill_core._scorer import PerplexityScorer  # noqa: E402

DEV = ROOT.parent / "shared" / "data" / "eval" / "quill_dev.jsonl"
EMBEDDER = {"en": "minilm", "zh": "e5"}
GRID = {"quote_match": [0, 0.25, 0.5, 0.75, 1.0], "fluency": [0, 0.1, 0.2, 0.3, 0.4], "semantic_match": [0, 0.05, 0.1],
        "lexical": [0, 0.1], "novelty": [0, 0.05, 0.1]}
FIXED = {"relevance": 1.0, "authenticity": 0.1, "credibility": 0.1, "named_author": 0.5}


def mrr_hit1(results, weights: Weights) -> tuple[float, float]:
    m = summarize(results, rankers=("default",), weights=weights)["default"]
    return m.mrr, m.hit1


def grid_search(results) -> tuple[Weights, tuple[float, float]]:
    best = None
    for values in itertools.product(*GRID.values()):
        w = Weights(**FIXED, **dict(zip(GRID, values)))
        score = mrr_hit1(results, w)
        if best is None or score > best[1]:
            best = (w, score)
    return best


def cross_validate(results, folds: int = 5) -> dict:
    idx = np.random.default_rng(0).permutation(len(results))
    rr = h1 = 0.0
    chosen = []
    for part in np.array_split(idx, folds):
        held = set(part.tolist())
        w, _ = grid_search([results[i] for i in idx if i not in held])
        mrr, hit1 = mrr_hit1([results[i] for i in part], w)
        rr += mrr * len(part)
        h1 += hit1 * len(part)
        chosen.append({k: v for k, v in w.as_dict().items() if k in GRID})
    return {"mrr": round(rr / len(results), 4), "hit@1": round(h1 / len(results), 4), "weights_per_fold": chosen}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--limit-zh", type=int, default=0)
    ap.add_argument("--limit", type=int, default=0, help="only the first N rows of each language (smoke runs)")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", choices=("int8", "float32"),
                    help="LM precision for scoring (default: QUILL_LM_PRECISION, else int8)")
    ap.add_argument("--kb", help="a built knowledge base whose quotes join the gold ones, e.g. starter (its own "
                                 "embedder; default: the gold quotes alone)")
    ap.add_argument("--save", help="pickle each language's measured rows to SAVE.<lang>.pickle (re-tune offline)")
    args = ap.parse_args()
    if not DEV.is_file():
        print(f"{DEV} is absent: this benchmark needs ../shared", file=sys.stderr)
        return 2
    settings = Settings.load(threads=args.threads, lm_precision=args.precision, kb=args.kb)
    kb = Quill(settings).retriever if args.kb else None  # its quotes join the gold ones (read only)
    scorer = PerplexityScorer(settings)
    every = load_dataset(DEV)
    figures: dict = {"lm": settings.lm_model, "precision": settings.lm_precision}
    for lang in args.langs.split(","):
        rows = [r for r in every if r.lang == lang][: args.limit or None]
        embedder = load_embedder(EMBEDDER.get(lang, "use"))
        started = time.perf_counter()
        lm_rows = rows[: args.limit_zh] if lang == "zh" and args.limit_zh else rows
        measured = collect(lm_rows, embedder=embedder if kb is None else kb.embedder, scorer=scorer, kb=kb,
                           corpus_rows=every)
        if args.save:  # first: the LM pass is the expensive part
            with open(f"{args.save}.{lang}.pickle", "wb") as fh:
                pickle.dump(measured, fh)
        metrics = {k: to_json(v) for k, v in summarize(measured).items()}
        # how much the LM alone knows: the default ranker with only the quote-in-context criterion
        lm_only = Weights(**{name: 0.0 for name in Weights().as_dict()} | {"quote_match": 1.0})
        metrics["lm_only"] = to_json(summarize(measured, rankers=("default",), weights=lm_only)["default"])
        if len(lm_rows) < len(rows):  # the retrieval-only rankers on every row
            plain = collect(rows, embedder=embedder if kb is None else kb.embedder, kb=kb, corpus_rows=every)
            metrics.update({k: to_json(v) for k, v in summarize(plain, rankers=("vanilla", "bm25", "hybrid")).items()
                            if k in ("vanilla", "bm25", "hybrid")})
            metrics["lm_rows"] = len(lm_rows)
        for m in metrics.values():
            if isinstance(m, dict):
                m.pop("by_lang", None)
        figures[lang] = metrics
        if args.tune:
            w, score = grid_search(measured)
            metrics["tuned"] = {"weights": {k: v for k, v in w.as_dict().items() if k in GRID},
                                "mrr": round(score[0], 4), "hit@1": round(score[1], 4)}
            metrics["cv"] = cross_validate(measured)
        if not args.json:
            print(f"{lang}: {len(rows)} rows ({len(lm_rows)} with the LM), {time.perf_counter() - started:.0f} s")
            for name in (*RANKERS, "lm_only"):
                if name in metrics:
                    m = metrics[name]
                    print(f"  {name:<8} MRR {m['mrr']:.3f}  Hit@1 {m['hit@1']:.3f}  Hit@3 {m['hit@3']:.3f}  "
                          f"Hit@5 {m['hit@5']:.3f}  NDCG@3 {m['ndcg@3']:.3f}  (n={m['n']})")
    for lang in args.langs.split(","):
        if not args.json and "cv" in figures.get(lang, {}):
            print(f"{lang} tuned in-sample: {figures[lang]['tuned']}\n{lang} 5-fold cross-validated: {figures[lang]['cv']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
