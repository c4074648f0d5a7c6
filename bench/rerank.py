"""Reranking latency: ``Quill.suggest`` with 20 candidates reranked by the default ranker, against the naive
computation of the same scores, both measured in this run on the same paragraphs.

    .venv/bin/python bench/rerank.py [--json] [--queries 8] [--threads 2] [--home DIR] [--precision int8|float32]

- fast: ``Quill.suggest(paragraph, k=5, candidates=20)``: retrieval (dense + BM25), one prefix pass whose KV cache
  every candidate reuses, candidates in batches. Measured warm: the quotes' own NLLs (novelty, the quote_match
  reference) are computed once per quote and model and cached on disk, like QUILL's precomputed KB novelty.
  ``cold_p50_s``: the same queries measured first with every cache cleared (each quote also scored alone, batched).
- naive: the same retrieval, then QUILL's way: for each candidate two separate full passes (one for PPLq, one for
  PPLm), batch 1, no prefix cache, plus one for the passage without a quote; quote-alone NLLs from the same cache.
Both produce the same breakdowns (checked: the largest difference of any total and whether the order agrees).
Wall-clock p50 / p95 over the queries, plus process CPU seconds (the machine may be shared: CPU time is the
steadier figure). Targets: p50 <= 1.0 s on 2 cores, >= 5x faster than naive.

``--long`` puts several sentences before each insertion point (QUILL's dev contexts have a median of 72
characters before it, so a prefix cache saves little there); ``prefix_tokens_p50`` reports the prefix length.

Knowledge base: ``../shared/data/kb/quotable_quotes.json`` (2,127 English quotes) imported into the knowledge base
``bench-rerank`` under ``--home`` (default QUILL_HOME), paragraphs from ``../shared/data/eval/quill_dev.jsonl``
(English rows). Without ../shared the packaged starter tier and built-in paragraphs are used (and it says so).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quill_core import Quill, Settings  # noqa: E402
from quill_core._criteria import Measurement, kb_assessment  # noqa: E402
from quill_core._rank import candidates_for, order, prepare  # noqa: E402
from quill_core._query import parse_query, quote_filters  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
PARAGRAPHS = [
    "We spent the whole winter afraid of what might go wrong with the harvest. [Q] In spring we planted anyway.",
    "The new library opened on Monday, and the children were the first through the doors. [Q] The librarians "
    "had never seen such a queue.",
    "My grandmother never finished school, yet she read every night by the stove. [Q] She said books were the "
    "cheapest way to travel.",
    "After the third failed prototype, the team wanted to give up. [Q] The fourth one flew.",
    "Leaders are tested when things fall apart, not when they go well. [Q] That is when people watch most closely.",
    "He apologised too late, and the friendship never recovered. [Q] I still think about that summer.",
    "The city council argued for hours about the new park. [Q] In the end, the vote was unanimous.",
    "She trained every morning before sunrise for six years. [Q] Her medal hangs in the school hall today.",
    "We were told that the river had always flooded and always would. [Q] So the village built a wall.",
    "Every great change starts as a rumour that someone decides to believe. [Q] Ours started in a kitchen.",
]


def paragraphs(n: int, *, long: bool = False) -> tuple[list[str], str]:
    """``n`` paragraphs; with ``long``, each is preceded by the previous one (marker removed), so the insertion
    point follows several sentences, as in a writer's paragraph (QUILL's contexts put it after ~70 characters)."""
    dev = SHARED / "eval" / "quill_dev.jsonl"
    if dev.is_file():
        rows = [json.loads(line) for line in dev.read_text(encoding="utf-8").splitlines() if line.strip()]
        texts, source = [r["context"] for r in rows if r.get("lang") == "en"][: n + 1], "quill_dev.jsonl (en)"
    else:
        print("note: ../shared is absent: built-in paragraphs are used", file=sys.stderr)
        texts, source = (PARAGRAPHS * (n // len(PARAGRAPHS) + 2))[: n + 1], "built-in paragraphs"
    if long:
        return [texts[i - 1].replace("[Q]", "").strip() + " " + texts[i] for i in range(1, n + 1)], source + ", long"
    return texts[:n], source


def knowledge_base(quill: Quill) -> str:
    if quill.stats().quotes == 0:
        source = SHARED / "kb" / "quotable_quotes.json"
        if source.is_file():
            quill.import_file(source, format="quotable")
        else:
            print("note: ../shared is absent: building the packaged starter tier", file=sys.stderr)
            quill.build("starter")
    quill.index()
    return f"{quill.kb.name} ({len(quill.kb):,} quotes)"


def naive_suggest(quill: Quill, paragraph: str, *, k: int, candidates: int) -> list:
    """The same suggestions, with every LM number computed the slow way."""
    scorer = quill.scorer
    query = parse_query(paragraph)
    filters = quote_filters(query, None, "auto", holds=lambda lang: quill.stats().by_lang.get(lang, 0) > 0)
    pool = quill.retriever.pool(query, k=candidates, filters=filters)  # what suggest retrieves
    chosen = candidates_for("fused", pool, k=candidates)
    before, after = prepare(query)
    texts = [c.quote.text for c in chosen]
    scored = scorer.score_naive(before, ["", *texts], after)
    alone = scorer.quote_alone(texts)  # precomputed per quote (as QUILL precomputes novelty), not per query
    bm25 = {c.quote.id: c.similarity for c in pool.lexical}
    top = max(bm25.values(), default=0.0)
    measured = [Measurement(quote=c.quote, cosine=pool.cosine.get(c.quote.id), bm25=bm25.get(c.quote.id, 0.0),
                            bm25_max=top, passage=p, baseline=scored[0], alone=a, own_ppl=a.quote.ppl,
                            assessment=kb_assessment(c.quote), named=pool.authors)
                for c, p, a in zip(chosen, scored[1:], alone)]
    return order(measured, ranker="default", lang=query.lang)[:k]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--queries", type=int, default=8)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--home", help="QUILL_HOME to use (default: the usual one)")
    ap.add_argument("--precision", choices=("int8", "float32"),
                    help="LM precision for scoring (default: QUILL_LM_PRECISION, else int8)")
    ap.add_argument("--long", action="store_true", help="longer text before the insertion point (see paragraphs)")
    args = ap.parse_args()

    settings = Settings.load(home=args.home, kb="bench-rerank", threads=args.threads, lm_precision=args.precision)
    quill = Quill(settings)
    kb = knowledge_base(quill)
    texts, source = paragraphs(args.queries + 1, long=args.long)
    scorer = quill.scorer
    quill.suggest(texts[0], candidates=args.candidates)  # warm-up: model load, first allocations
    cold, cold_cpu = [], []
    for text in texts[1:]:
        scorer.clear_cache(disk=True)
        _, wall, cpu = timed(lambda: quill.suggest(text, k=5, candidates=args.candidates))
        cold.append(wall)
        cold_cpu.append(cpu)
        if not args.json:
            print(f"cold: {wall:.2f} s (cpu {cpu:.2f})", flush=True)
    fast, naive, fast_cpu, naive_cpu, diffs, same_order = [], [], [], [], [], 0
    for i, text in enumerate(texts[1:], 1):
        a, wall_a, cpu_a = timed(lambda: quill.suggest(text, k=5, candidates=args.candidates))
        b, wall_b, cpu_b = timed(lambda: naive_suggest(quill, text, k=5, candidates=args.candidates))
        fast.append(wall_a)
        naive.append(wall_b)
        fast_cpu.append(cpu_a)
        naive_cpu.append(cpu_b)
        diffs.append(max((abs(x.score - y.score) for x, y in zip(a, b)), default=0.0))
        same_order += [s.quote.id for s in a] == [s.quote.id for s in b]
        if not args.json:
            print(f"query {i}: fast {wall_a:.2f} s (cpu {cpu_a:.2f}), naive {wall_b:.2f} s (cpu {cpu_b:.2f}), "
                  f"max |total diff| {diffs[-1]:.1e}", flush=True)
    prefix_tokens = [len(scorer._plan(prepare(parse_query(t))[0], [], "").prefix) - 1 for t in texts[1:]]
    p50, p95 = statistics.median(fast), float(np.percentile(fast, 95))
    naive_p50 = statistics.median(naive)
    figures = {
        "p50_s": round(p50, 3), "p95_s": round(p95, 3), "naive_p50_s": round(naive_p50, 3),
        "speedup": round(naive_p50 / p50, 2), "speedup_vs_quill": round(naive_p50 / p50, 2),
        "candidates": args.candidates,
        "cpu_p50_s": round(statistics.median(fast_cpu), 3), "naive_cpu_p50_s": round(statistics.median(naive_cpu), 3),
        "cpu_speedup": round(statistics.median(naive_cpu) / statistics.median(fast_cpu), 2),
        "cold_p50_s": round(statistics.median(cold), 3), "cold_cpu_p50_s": round(statistics.median(cold_cpu), 3),
        "max_total_diff": float(f"{max(diffs):.2e}"), "same_order": f"{same_order}/{len(fast)}",
        "prefix_tokens_p50": statistics.median(prefix_tokens), "queries": len(fast), "threads": args.threads,
        "precision": settings.lm_precision, "kb": kb, "paragraphs": source,
    }
    if not args.json:
        print(f"fast p50 {p50:.2f} s, p95 {p95:.2f} s; naive p50 {naive_p50:.2f} s; speedup {figures['speedup']}x "
              f"(cpu {figures['cpu_speedup']}x); same order {figures['same_order']}, "
              f"max |total diff| {figures['max_total_diff']}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
