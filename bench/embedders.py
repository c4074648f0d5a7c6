"""Which embedder retrieves best per language, and what it costs: the table behind the default (``bilingual``).

    .venv/bin/python bench/embedders.py [--json] [--embedders bilingual,minilm,use,e5] [--threads 1]

For each packaged embedder, on QUILL's dev set (gold quotes of the whole set as the corpus, quotes filtered by the
paragraph's language as the app does; no LM): MRR and Hit@5 of ``vanilla`` (dense cosine) and ``hybrid`` (dense +
BM25 fused) on the English and the Chinese rows; embedding throughput in quotes per second on the dev set's own
English and Chinese quotes (median of 3 passes after a warm-up); and the time embedding the bilingual starter
(33,490 English + 34,921 Chinese quotes) would take at those rates. Needs ../shared/data/eval/quill_dev.jsonl
(says so and exits 2 when absent).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quill_core._embed import load_embedder  # noqa: E402
from quill_core._evaluate import collect, load_dataset, summarize  # noqa: E402

DEV = ROOT.parent / "shared" / "data" / "eval" / "quill_dev.jsonl"
STARTER = {"en": 33_490, "zh": 34_921}


def throughput(embedder, texts: list[str]) -> float:
    embedder.embed_batch(texts[:16])  # load and warm up
    times = []
    for _ in range(3):
        started = time.perf_counter()
        embedder.embed_batch(texts)
        times.append(time.perf_counter() - started)
    return len(texts) / statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--embedders", default="bilingual,minilm,use,e5")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (the e5 engine uses OpenMP)")
    args = ap.parse_args()
    if not DEV.is_file():
        print(f"{DEV} is absent: this benchmark needs ../shared", file=sys.stderr)
        return 2
    import torch

    torch.set_num_threads(args.threads)
    rows = load_dataset(DEV)
    table = {}
    for name in args.embedders.split(","):
        embedder = load_embedder(name)
        metrics = summarize(collect(rows, embedder=embedder), rankers=("vanilla", "hybrid"))
        entry: dict = {}
        for lang in ("en", "zh"):
            texts = [r.quote for r in rows if r.lang == lang]
            rate = throughput(embedder, texts)
            entry[lang] = {ranker: {"mrr": round(m.by_lang[lang].mrr, 4), "hit@5": round(m.by_lang[lang].hit5, 4)}
                           for ranker, m in metrics.items()}
            entry[lang]["quotes_per_s"] = round(rate, 1)
        entry["starter_embed_s"] = round(sum(STARTER[lang] / entry[lang]["quotes_per_s"] for lang in STARTER))
        table[name] = entry
        if not args.json:
            print(f"{name:<10} " + "  ".join(
                f"{lang}: vanilla MRR {entry[lang]['vanilla']['mrr']:.3f} Hit@5 {entry[lang]['vanilla']['hit@5']:.3f}, "
                f"hybrid MRR {entry[lang]['hybrid']['mrr']:.3f}, {entry[lang]['quotes_per_s']:.0f} quotes/s"
                for lang in ("en", "zh")) + f"  starter embedding ~{entry['starter_embed_s']} s", flush=True)
    print(json.dumps(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
