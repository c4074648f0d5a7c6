"""Retrieval benchmark: query latency by store size, embedding throughput, starter build time.

    .venv/bin/python bench/retrieval.py [--json] [--sizes 10000,100000,250000] [--skip-build]

- Query latency: Chroma nearest-neighbour queries (k=20) against collections of 10k, 100k and 250k unit vectors
  (random 384-dim vectors: HNSW cost depends on size and dimension, not on the text), p50/p95 over 200 queries.
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
from quill_core.store import VectorStore  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def query_latency(size: int, home: Path, *, queries: int = 200, dim: int = 384) -> dict[str, float]:
    rng = np.random.default_rng(size)
    store = VectorStore(Settings.load(home=home))
    name = f"bench-{size}"
    store.drop(name)
    vectors = rng.standard_normal((size, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    t0 = time.perf_counter()
    store.upsert(name, [f"q{i}" for i in range(size)], vectors)
    insert_s = time.perf_counter() - t0
    probes = rng.standard_normal((queries, dim)).astype(np.float32)
    times = []
    for probe in probes:
        t = time.perf_counter()
        store.query(name, probe / np.linalg.norm(probe), k=20)
        times.append(time.perf_counter() - t)
    store.drop(name)
    return {"p50_ms": percentile(times, 50) * 1e3, "p95_ms": percentile(times, 95) * 1e3, "insert_s": insert_s}


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
            print(f"{label:>5}: p50 {r['p50_ms']:.2f} ms  p95 {r['p95_ms']:.2f} ms  (insert {r['insert_s']:.1f} s)")

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
