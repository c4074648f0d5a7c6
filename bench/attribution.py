"""How well each attribution backend separates supported claims from unsupported ones.

Data: tests/data/nli_pairs.jsonl (our own 72 premise/hypothesis pairs, English and Chinese, labelled entailed /
neutral / contradicted; 24 premises with one hypothesis of each label). Each backend scores every pair with the
localized scorer (best 2-sentence window of the premise); ``lm-pmi-whole`` is the same LM score over the whole
premise (no localization), and ``lexical`` (token overlap) is a floor to compare with.

Figures per backend: ROC AUC of entailed vs the rest (and vs neutral, vs contradicted), accuracy of
"score >= 0.5 means entailed", the best accuracy any threshold reaches on this set (optimistic: tuned on the test
set), and the median time per pair as a ratio to the lexical baseline's.

    .venv/bin/python bench/attribution.py [--json] [--backends lm-pmi,lm-pmi-whole,judge-local,lexical]
                                          [--nli MODEL_OR_PATH] [--threads 2]

``judge-local`` asks the packaged SmolLM2 for a 0-10 judgement through the LLM-judge backend (the same code an
OpenAI-compatible endpoint uses); ``--nli`` adds an NLI cross-encoder (a Hugging Face name or local path).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quill_core._attribution import (  # noqa: E402
    JudgeEntailer,
    LMEntailer,
    NLIEntailer,
    localized_entailment,
)
from quill_core._config import Settings  # noqa: E402
from quill_core._text import HAN_RANGES  # noqa: E402

DATA = ROOT / "tests" / "data" / "nli_pairs.jsonl"


def roc_auc(pos: list[float], neg: list[float]) -> float:
    """P(score of a random positive > score of a random negative), ties counting one half."""
    if not pos or not neg:
        return float("nan")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best_accuracy(scores: list[float], labels: list[bool]) -> tuple[float, float]:
    best, at = 0.0, 0.5
    for t in sorted(set(scores)) + [1.01]:
        acc = sum((s >= t) == y for s, y in zip(scores, labels)) / len(labels)
        if acc > best:
            best, at = acc, t
    return best, at


class Lexical:
    """Share of the hypothesis' words (Chinese: characters) found in the premise."""

    name = "lexical"

    def entailment(self, premise: str, hypothesis: str) -> float:
        def units(t: str) -> set[str]:
            return set(re.findall(f"[{HAN_RANGES}]|[a-z0-9]+", t.lower()))

        h = units(hypothesis)
        return len(h & units(premise)) / len(h) if h else 0.0


class Whole:
    """Wraps a backend so the localizer sees the premise as one unit (no windows)."""

    def __init__(self, inner: object, name: str) -> None:
        self.inner, self.name = inner, name


def evaluate(entailer: object, rows: list[dict]) -> dict:
    scores, times = [], []
    for row in rows:
        t0 = time.perf_counter()
        if isinstance(entailer, Whole):
            s = localized_entailment(entailer.inner, [row["premise"]], row["hypothesis"])
        else:
            s = localized_entailment(entailer, row["premise"], row["hypothesis"])
        times.append(time.perf_counter() - t0)
        scores.append(s)
    labels = [r["label"] == "entailed" for r in rows]
    pos = [s for s, r in zip(scores, rows) if r["label"] == "entailed"]
    out = {
        "auc": roc_auc(pos, [s for s, r in zip(scores, rows) if r["label"] != "entailed"]),
        "auc_vs_neutral": roc_auc(pos, [s for s, r in zip(scores, rows) if r["label"] == "neutral"]),
        "auc_vs_contradicted": roc_auc(pos, [s for s, r in zip(scores, rows) if r["label"] == "contradicted"]),
        "accuracy_at_0.5": sum((s >= 0.5) == y for s, y in zip(scores, labels)) / len(rows),
    }
    out["best_accuracy"], out["best_threshold"] = best_accuracy(scores, labels)
    for lang in ("en", "zh"):
        sub = [(s, r) for s, r in zip(scores, rows) if r["lang"] == lang]
        out[f"auc_{lang}"] = roc_auc([s for s, r in sub if r["label"] == "entailed"],
                                     [s for s, r in sub if r["label"] != "entailed"])
    out["mean_score"] = {lab: round(statistics.mean(s for s, r in zip(scores, rows) if r["label"] == lab), 3)
                         for lab in ("entailed", "neutral", "contradicted")}
    out["median_s_per_pair"] = statistics.median(times)
    return out


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--backends", default="lexical,lm-pmi,lm-pmi-whole,judge-local")
    parser.add_argument("--nli", default="", help="an NLI cross-encoder name or path to add")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--home", default="", help="QUILL_HOME holding the converted LM (default: the usual one)")
    args = parser.parse_args()

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    settings = Settings.load(home=args.home or None, threads=args.threads)
    wanted = [b.strip() for b in args.backends.split(",") if b.strip()]
    backends: list[object] = []
    scorer = None
    for name in wanted:
        if name == "lexical":
            backends.append(Lexical())
        elif name in ("lm-pmi", "lm-pmi-whole"):
            if scorer is None:
                from quill_core._scorer import PerplexityScorer

                scorer = PerplexityScorer(settings)
            lm = LMEntailer(scorer)
            backends.append(lm if name == "lm-pmi" else Whole(lm, "lm-pmi-whole"))
        elif name == "judge-local":
            from quill_core._generate import load_generator

            judge = JudgeEntailer(load_generator(settings))
            judge.name = "judge-local"
            backends.append(judge)
        else:
            raise SystemExit(f"unknown backend {name!r}")
    if args.nli:
        backends.append(NLIEntailer(args.nli))

    results = {}
    for b in backends:
        name = getattr(b, "name", type(b).__name__)
        if name.startswith("lm-pmi:"):
            name = "lm-pmi"
        results[name] = evaluate(b, rows)
        r = results[name]
        if not args.json:
            print(f"{name:14s} AUC {r['auc']:.3f} (en {r['auc_en']:.3f}, zh {r['auc_zh']:.3f}; vs neutral "
                  f"{r['auc_vs_neutral']:.3f}, vs contradicted {r['auc_vs_contradicted']:.3f})  "
                  f"acc@0.5 {r['accuracy_at_0.5']:.3f}  best acc {r['best_accuracy']:.3f} @ {r['best_threshold']:.3f}"
                  f"  means {r['mean_score']}  {r['median_s_per_pair'] * 1000:.1f} ms/pair")
    base = results.get("lexical", {}).get("median_s_per_pair")
    for r in results.values():
        r["time_ratio_vs_lexical"] = (r["median_s_per_pair"] / base) if base else None
    figures = {"pairs": len(rows), "labels": {lab: sum(r["label"] == lab for r in rows)
                                              for lab in ("entailed", "neutral", "contradicted")},
               "threads": args.threads, "backends": results,
               "nli": "not measured: no NLI model can be had offline; pass --nli NAME_OR_PATH" if not args.nli else args.nli}
    if args.json:
        print(json.dumps(_rounded(figures), ensure_ascii=False))


if __name__ == "__main__":
    main()
