"""Suggestions under load: several browser sessions asking one app process at once.

    .venv/bin/python bench/concurrency.py [--json] [--clients 4] [--rounds 3] [--threads 2] [--home DIR]

One ``Quill`` (as the app shares one through ``st.cache_resource``); first every paragraph alone, one after the
other (the single-request p50), then ``--clients`` threads each asking ``Quill.suggest`` (20 candidates reranked by
the default ranker) at the same moment, ``--rounds`` times. Reported: single p50, the concurrent requests' p50 / max
latency and ``max_ratio`` = the slowest concurrent request / the single p50 (target: <= 4 with 4 clients, i.e. the
LM work is queued, not fought over by oversubscribed threads). Same knowledge base and paragraphs as
``bench/rerank.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from quill_core import Quill, Settings  # noqa: E402
from rerank import knowledge_base, paragraphs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--home", help="QUILL_HOME to use (default: the usual one)")
    args = ap.parse_args()
    settings = Settings.load(home=args.home, kb="bench-rerank", threads=args.threads)
    quill = Quill(settings)
    kb = knowledge_base(quill)
    texts, source = paragraphs(args.clients * args.rounds)
    quill.suggest(texts[0], k=5, candidates=20)  # load the models, fill the caches
    for text in texts:
        quill.suggest(text, k=5, candidates=20)
    single = []
    for text in texts:
        started = time.perf_counter()
        quill.suggest(text, k=5, candidates=20)
        single.append(time.perf_counter() - started)
    p50 = statistics.median(single)
    concurrent: list[float] = []
    lock = threading.Lock()

    def ask(text: str, gate: threading.Barrier) -> None:
        gate.wait()
        started = time.perf_counter()
        quill.suggest(text, k=5, candidates=20)
        with lock:
            concurrent.append(time.perf_counter() - started)

    for r in range(args.rounds):
        gate = threading.Barrier(args.clients)
        batch = texts[r * args.clients:(r + 1) * args.clients]
        workers = [threading.Thread(target=ask, args=(text, gate)) for text in batch]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    figures = {"kb": kb, "paragraphs": source, "clients": args.clients, "rounds": args.rounds,
               "threads": args.threads, "single_p50_s": round(p50, 3),
               "concurrent_p50_s": round(statistics.median(concurrent), 3),
               "concurrent_max_s": round(max(concurrent), 3), "max_ratio": round(max(concurrent) / p50, 2)}
    if not args.json:
        print(f"single p50 {p50:.2f} s; {args.clients} at once: p50 {figures['concurrent_p50_s']:.2f} s, "
              f"max {figures['concurrent_max_s']:.2f} s = {figures['max_ratio']:.1f}x the single p50")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
