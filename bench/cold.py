"""A cold process: how long a new process takes to answer its first suggestion on a built knowledge base, and how
much memory it holds while serving.

    .venv/bin/python bench/cold.py [--json] [--runs 3] [--home DIR] [--kb starter]

Each run starts a fresh Python process that imports quill_core, opens ``Quill`` on ``--kb`` under ``--home`` (default
QUILL_HOME; the knowledge base must be built and indexed: ``quill kb build``), asks one English and one Chinese
suggestion (default ranker, 20 candidates), and reports the seconds to the first answer, the second answer's
seconds, and its peak resident memory. Baseline measured in the same run: a process that only imports torch and
transformers (the floor any LM-backed process pays). Targets (issue #12): first answer <= 20 s, peak RSS <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, resource, sys, time
started = time.perf_counter()
from quill_core import Quill, Settings
quill = Quill(Settings.load(kb=sys.argv[1]))
first = quill.suggest("We were afraid of the future, but as Roosevelt said, [Q] So we went on.", k=5)
t_first = time.perf_counter() - started
mark = time.perf_counter()
second = quill.suggest("离别的时候，朋友总说山高路远。其实只要心在一起，[Q]再远的距离也不算什么。", k=5)
t_second = time.perf_counter() - mark
print(json.dumps({"first_s": t_first, "second_s": t_second, "answers": [len(first), len(second)],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
BASELINE = "import time; s = time.perf_counter(); import torch, transformers; print(time.perf_counter() - s)"


def child(code: str, *args: str, env: dict) -> str:
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return out.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--home", help="QUILL_HOME to use (default: the usual one)")
    ap.add_argument("--kb", default="starter")
    args = ap.parse_args()
    env = {**os.environ, **({"QUILL_HOME": args.home} if args.home else {})}
    runs, floors = [], []
    for _ in range(args.runs):
        floors.append(float(child(BASELINE, env=env)))
        runs.append(json.loads(child(CHILD, args.kb, env=env)))
    first = statistics.median(r["first_s"] for r in runs)
    figures = {"kb": args.kb, "runs": args.runs, "first_answer_s": round(first, 2),
               "first_answer_max_s": round(max(r["first_s"] for r in runs), 2),
               "second_answer_s": round(statistics.median(r["second_s"] for r in runs), 2),
               "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs)),
               "import_torch_s": round(statistics.median(floors), 2),
               "first_answer_ratio_to_import": round(first / statistics.median(floors), 1)}
    if not args.json:
        print(f"first answer {first:.1f} s (median of {args.runs}; importing torch alone "
              f"{figures['import_torch_s']:.1f} s), peak RSS {figures['peak_rss_mb']} MB")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
