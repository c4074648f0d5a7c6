"""Retrieval benchmark: query latency by store size, embedding throughput, starter build time.

    .venv/bin/python bench/retrieval.py [--json] [--sizes 10000,100000,250000] [--skip-build]

- Query latency: Chroma nearest-neighbour queries (k=20) against collections of 10k, 100k and 250k unit vectors
  (random 384-dim vectors, the hardest case for HNSW), p50/p95 over 200 queries, and recall@20 against exact
  (numpy) search. Recall on random vectors is far below recall on real embeddings, so recall@20 is also measured on
  the starter KB's own vectors (probes: midpoints of random quote pairs).
  The end-to-end ``Quill.retrieve`` latency (embedding the query + search + record fetch) is measured on the starter KB.
- Embedding throughput: MiniLM over 2,000 real starter quotes, quotes/s (median of 3 runs).
- Starter build: ``Quill.build("starter")`` from an empty QUILL_HOME, seconds.
Targets (issue #2): p50 <= 10 ms at 250k, >= 300 quotes/s, starter build <= 180 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quill_core import Quill, Settings  # noqa: E402
from quill_core._store import VectorStore  # noqa: E402

K = 20


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def timed_queries(store: VectorStore, name: str, ids: list[str], vectors: np.ndarray,
                  probes: np.ndarray) -> dict[str, float]:
    """p50/p95 latency of ``store.query`` and its mean recall@K against exact cosine search over ``vectors``."""
    exact = np.argsort(-(probes @ vectors.T), axis=1)[:, :K]
    times, recalls = [], []
    for probe, truth in zip(probes, exact):
        t = time.perf_counter()
        hits = store.query(name, probe, k=K)
        times.append(time.perf_counter() - t)
        recalls.append(len({i for i, _ in hits} & {ids[j] for j in truth}) / K)
    return {"p50_ms": percentile(times, 50) * 1e3, "p95_ms": percentile(times, 95) * 1e3,
            "recall": float(np.mean(recalls))}


def query_latency(size: int, home: Path, *, queries: int = 200, dim: int = 384) -> dict[str, float]:
    rng = np.random.default_rng(size)
    store = VectorStore(Settings.load(home=home))
    name = f"bench-{size}"
    store.drop(name)
    vectors = unit(rng.standard_normal((size, dim)))
    ids = [f"q{i}" for i in range(size)]
    t0 = time.perf_counter()
    store.upsert(name, ids, vectors)
    insert_s = time.perf_counter() - t0
    result = timed_queries(store, name, ids, vectors, unit(rng.standard_normal((queries, dim))))
    store.drop(name)
    return {**result, "insert_s": insert_s}


def starter_recall(quill: Quill, *, queries: int = 200) -> dict[str, float]:
    """Latency and recall@K of the starter collection for probes between two real quotes."""
    got = quill.store.collection(quill.collection).get(include=["embeddings"])
    ids, vectors = list(got["ids"]), np.asarray(got["embeddings"], dtype=np.float32)
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, len(ids), size=(queries, 2))
    return timed_queries(quill.store, quill.collection, ids, vectors, unit(vectors[pairs[:, 0]] + vectors[pairs[:, 1]]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sizes", default="10000,100000,250000")
    parser.add_argument("--skip-build", action="store_true", help="reuse QUILL_HOME's starter KB instead of a fresh build")
    args = parser.parse_args()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for size in [int(s) for s in args.sizes.split(",") if s]:
            r = query_latency(size, home / "sizes")
            label = f"{size // 1000}k"
            figures[f"query_p50_ms_{label}"] = round(r["p50_ms"], 3)
            figures[f"query_p95_ms_{label}"] = round(r["p95_ms"], 3)
            figures[f"recall_at_{K}_random_{label}"] = round(r["recall"], 4)
            print(f"{label:>5}: p50 {r['p50_ms']:.2f} ms  p95 {r['p95_ms']:.2f} ms  recall@{K} {r['recall']:.3f} "
                  f"(random vectors; insert {r['insert_s']:.1f} s)")

        settings = Settings.load() if args.skip_build else Settings.load(home=home / "starter")
        quill = Quill(settings)
        t0 = time.perf_counter()
        if args.skip_build and len(quill.kb):
            quill.index()
        else:
            quill.build("starter")
        figures["starter_build_s"] = round(time.perf_counter() - t0, 1)
        figures["starter_quotes"] = len(quill.kb)
        print(f"starter build: {figures['starter_build_s']} s for {figures['starter_quotes']:,} quotes")

        r = starter_recall(quill)
        figures[f"recall_at_{K}_starter"] = round(r["recall"], 4)
        figures["query_p50_ms_starter"] = round(r["p50_ms"], 3)
        print(f"starter store: p50 {r['p50_ms']:.2f} ms  recall@{K} {r['recall']:.4f} (real vectors)")

        texts = [q.text for _, q in zip(range(2000), quill.kb.iter_quotes())]
        quill.embedder.embed_batch(texts[:64])  # warm up
        rates = []
        for _ in range(3):
            t = time.perf_counter()
            quill.embedder.embed_batch(texts)
            rates.append(len(texts) / (time.perf_counter() - t))
        figures["embed_quotes_per_s"] = round(statistics.median(rates), 1)
        print(f"embedding: {figures['embed_quotes_per_s']} quotes/s (MiniLM, median of 3)")

        paragraph = "When the storm came we had nothing left but hope. [Q] We rebuilt the house stone by stone."
        quill.retrieve(paragraph, k=20)
        times = []
        for i in range(50):
            t = time.perf_counter()
            quill.retrieve(paragraph.replace("storm", f"storm {i}"), k=20)
            times.append(time.perf_counter() - t)
        figures["retrieve_p50_ms_starter"] = round(percentile(times, 50) * 1e3, 2)
        figures["retrieve_p95_ms_starter"] = round(percentile(times, 95) * 1e3, 2)
        print(f"retrieve end-to-end on starter: p50 {figures['retrieve_p50_ms_starter']} ms")
    if args.json:
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
