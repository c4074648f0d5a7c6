"""Insertion with the default offline model: does every paragraph get a correct sentence, what gets rejected, how long.

Data: bench/data/insert_paragraphs.jsonl (our own 24 paragraphs, 10 English and 14 Chinese, each with a ``[Q]``
insertion point and a quote to bring in; the Chinese rows include anonymous lines with their work (诗经, 增广贤文),
a poem named by its title and an English quote by a Latin-script author (Confucius) in a Chinese paragraph). Each
runs the full insert stage (SmolLM2-135M-Instruct drafts, verbatim repair, fluency gate, localized LM attribution)
with ``--drafts`` drafts.

Figures: how many results hold the exact quote and name the author as the sentence's language should (and point
``quote_span`` at the quote; an anonymous quote must not be credited to 佚名 / Unknown), how many read as their
language should (``style_ok``; ``style`` counts what did not: spaces or ASCII punctuation beside Chinese, Latin-script
names in a Chinese sentence, Chinese characters in an English one, no closing punctuation), how many fell back to
the template sentence, every draft's fate (accepted / rejected, by reason), and the time per insertion (median, p90)
as seconds and as a ratio to a baseline measured in the same run: one greedy 32-token generation from a short prompt
with the same model.

    .venv/bin/python bench/insert.py [--json] [--drafts 4] [--threads 2] [--limit N] [--home DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quill_core._attribution import LMEntailer  # noqa: E402
from quill_core._config import Settings  # noqa: E402
from quill_core._drafts import writing_author  # noqa: E402
from quill_core._generate import load_generator  # noqa: E402
from quill_core._insert import insert  # noqa: E402
from quill_core._scorer import PerplexityScorer  # noqa: E402
from quill_core._text import has_cjk  # noqa: E402
from quill_core._types import Quote  # noqa: E402

DATA = ROOT / "bench" / "data" / "insert_paragraphs.jsonl"


def reason_kind(reason: str) -> str:
    """'disfluent (0.31 < 0.50)' -> 'disfluent', 'duplicate of draft 2' -> 'duplicate', ..."""
    reason = re.sub(r"\s*\(.*\)$", "", reason)
    return re.sub(r" of draft \d+$", "", reason).split(":")[0]


def names_author(sentence: str, quote: Quote, lang: str) -> bool:
    """The author named outside the quote as a sentence in ``lang`` should (孔子 for "Confucius" in Chinese); an
    anonymous quote credited to nobody."""
    outside = sentence.replace(quote.text, " ")
    author = writing_author(quote, lang)
    if not author:
        return not re.search(r"佚名|无名氏|\b(?:[Aa]s|of|by) (?:Unknown|Anonymous)\b", outside)
    if has_cjk(author):
        return author in outside
    return author.lower() in outside.lower() or author.split()[-1].lower() in outside.lower()


def style_problem(sentence: str, quote: Quote, lang: str) -> str:
    """What makes the sentence read wrong for its language, outside the quote ('' when nothing)."""
    outside = sentence.replace(quote.text, "\x00")
    if lang == "zh":
        author = writing_author(quote, lang)
        if re.search(r"[\u4e00-\u9fff，。：；！？“”]\s+|\s+[\u4e00-\u9fff，。：；！？“”]", outside):
            return "space beside Chinese"
        if re.search(r"[,:;!?]", outside):
            return "ASCII punctuation"
        if re.search(r"(?<![A-Za-z])[A-Z][a-z]+", outside.replace(author, "") if author else outside):
            return "Latin-script name"
        body = sentence.rstrip("”’」』）")
        if body[-1:] not in "。！？…" and not (body.endswith(quote.text) and body[-1:] in ".!?"):
            return "no closing punctuation"  # an English quote's own full stop may end a Chinese sentence
        return ""
    known = [k for k in (quote.author, quote.work) if k]
    rest = outside
    for k in known:
        rest = rest.replace(k, " ")
    if has_cjk(rest):
        return "Chinese characters"
    return "" if sentence.rstrip("”’\"')")[-1:] in ".!?…。！？" else "no closing punctuation"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--drafts", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="only the first N paragraphs of each language")
    parser.add_argument("--home", default=None, help="QUILL_HOME holding the converted LM (default: the usual one)")
    args = parser.parse_args()

    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.limit:
        rows = [r for lang in ("en", "zh") for r in [x for x in rows if x["lang"] == lang][: args.limit]]
    settings = Settings.load(home=args.home, threads=args.threads)
    generator = load_generator(settings)
    scorer = PerplexityScorer(settings)
    entailer = LMEntailer(scorer)

    # warm up (model load / conversion is not part of an insertion), then the baseline
    generator.generate([("user", "Say hello.")], max_tokens=2)
    scorer.score("Hello.", ["World."])
    base = []
    for _ in range(3):
        t0 = time.perf_counter()
        generator.generate([("user", "Write one sentence about the sea.")], max_tokens=32)
        base.append(time.perf_counter() - t0)
    baseline = statistics.median(base)

    per_lang: dict[str, dict] = {}
    reasons: collections.Counter = collections.Counter()
    styles: collections.Counter = collections.Counter()
    times: list[float] = []
    for row in rows:
        quote = Quote(row["quote"], row["author"], work=row.get("work", ""), lang=row["lang"])
        t0 = time.perf_counter()
        result = insert(row["paragraph"], quote, generator=generator, scorer=scorer, entailer=entailer,
                        drafts=args.drafts)
        elapsed = time.perf_counter() - t0
        times.append(elapsed)
        s, e = result.quote_span
        ok = (result.paragraph[s:e] == quote.text and quote.text in result.sentence
              and names_author(result.sentence, quote, row["lang"]))
        style = style_problem(result.sentence, quote, row["lang"])
        fallback = result.drafts[0].fallback
        stats = per_lang.setdefault(row["lang"], collections.Counter())
        stats["paragraphs"] += 1
        stats["correct"] += ok
        stats["style_ok"] += not style
        if style:
            styles[f"{row['lang']}: {style}"] += 1
        stats["fallback"] += fallback
        generated = [d for d in result.drafts if not d.fallback]
        stats["drafts"] += len(generated)
        stats["rejected"] += sum(d.rejected for d in generated)
        for d in generated:
            if d.rejected:
                reasons[f"{row['lang']}: {reason_kind(d.rejected_reason)}"] += 1
        if not args.json:
            mark = "ok " if ok and not style else "BAD"
            print(f"{mark} {row['id']} {elapsed:5.1f}s {'[template] ' if fallback else ''}{result.sentence}")
            for d in result.drafts:
                status = f"rejected ({d.rejected_reason})" if d.rejected else "template" if d.fallback else "ok"
                print(f"      f={d.fluency:.2f} a={d.attribution:.2f} {status}: {d.text[:110]}")
    p50 = statistics.median(times)
    p90 = sorted(times)[max(0, int(round(0.9 * len(times))) - 1)]
    figures = {
        "paragraphs": len(rows), "drafts_per_insertion": args.drafts, "threads": args.threads,
        "correct": sum(v["correct"] for v in per_lang.values()),
        "by_lang": {k: dict(v) for k, v in per_lang.items()},
        "style_ok": sum(v["style_ok"] for v in per_lang.values()), "style": dict(styles.most_common()),
        "rejections": dict(reasons.most_common()),
        "seconds_p50": round(p50, 2), "seconds_p90": round(p90, 2),
        "baseline_generate32_s": round(baseline, 3), "p50_ratio_to_baseline": round(p50 / baseline, 2),
        "model": generator.name,
    }
    print(json.dumps(figures, ensure_ascii=False, indent=None if args.json else 1))


if __name__ == "__main__":
    main()
