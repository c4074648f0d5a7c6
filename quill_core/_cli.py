"""The ``quill`` command line: thin wrappers over :class:`quill_core.Quill` that print text or JSON.

Every command accepts the global ``--home DIR`` and ``--kb NAME``. A :class:`QuillError` becomes one line on stderr
and exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from ._config import Settings
from ._errors import InputError, QuillError
from ._evaluate import write_report
from ._json import to_json
from ._kb import FORMATS, TIERS
from ._quill import Quill
from ._rank import RANKERS
from ._spans import closest_span
from ._text import decode_text
from ._types import Filters



# -- helpers shared by commands -------------------------------------------------------------------------------
def read_text(args: argparse.Namespace) -> str:
    """The text of ``--text`` or ``--file`` (UTF-8); a clear error for a missing, binary or non-UTF-8 file."""
    if getattr(args, "text", None) is not None:
        return args.text
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return decode_text(data, name=str(path))


def add_text_source(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--text", help="the text itself")
    group.add_argument("--file", help="a UTF-8 text file")


def emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    """Print ``payload`` (a result, see :func:`to_json`) as JSON with ``--json``, else the human-readable ``text``."""
    print(json.dumps(to_json(payload), ensure_ascii=False) if getattr(args, "json", False) else text)


def progress_bar(fraction: float, message: str) -> None:
    """A one-line terminal progress bar on stderr."""
    width = 30
    filled = int(width * max(0.0, min(1.0, fraction)))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {fraction:4.0%} {message[:60]:<60}")
    if fraction >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()


# -- commands -------------------------------------------------------------------------------------------------
def _kb_build(quill: Quill, args: argparse.Namespace) -> int:
    quotes = quill.stats().quotes
    if args.if_missing and quotes > 0:
        if not args.no_index:
            quill.index(progress=None if args.json else progress_bar)
        emit(args, {"built": False, "quotes": quotes}, f"knowledge base {quill.settings.kb!r} ready")
        return 0
    report = quill.build(args.tier, index=not args.no_index, progress=None if args.json else progress_bar)
    emit(args, report, "\n".join([f"{args.tier}: read {report.read:,}, imported {report.imported:,}, "
                                   f"merged {report.merged:,}, rejected {len(report.rejected):,}", *report.notes]))
    return 0


def _kb_import(quill: Quill, args: argparse.Namespace) -> int:
    report = quill.import_file(args.path, format=args.format, collection=args.collection,
                               progress=None if args.json else progress_bar)
    lines = [f"read {report.read:,}, imported {report.imported:,}, merged {report.merged:,}, "
             f"rejected {len(report.rejected):,}"]
    lines += [f"  line {r.line}: {r.reason}" for r in report.rejected[:20]]
    emit(args, report, "\n".join(lines))
    return 0


def _kb_stats(quill: Quill, args: argparse.Namespace) -> int:
    s = quill.stats()
    text = (f"{s.quotes:,} quotes by {s.authors:,} authors\n"
            f"languages: {', '.join(f'{k} {v:,}' for k, v in s.by_lang.items())}\n"
            f"collections: {', '.join(f'{k} {v:,}' for k, v in s.by_collection.items())}")
    emit(args, s, text)
    return 0


def _kb_browse(quill: Quill, args: argparse.Namespace) -> int:
    """A page of quotes matching the filters (what the app's Library table shows)."""
    page = quill.browse(search=args.search or "", author=args.author or "", lang=args.lang or "",
                        topic=args.topic or "", collection=args.collection or "", limit=args.limit,
                        offset=args.offset)
    lines = [f"{q.text} — {q.author or 'Unknown'}" + (f", {q.work}" if q.work else "") for q in page.quotes]
    lines.append(f"({args.offset + 1 if page.quotes else 0:,}-{args.offset + len(page.quotes):,} of {page.total:,})")
    emit(args, {"total": page.total, "quotes": page.quotes}, "\n".join(lines))
    return 0


def parse_weights(text: str | None) -> dict[str, float] | None:
    """``"relevance=1,novelty=0.5"`` as a mapping (criterion names are checked by the ranker)."""
    if not text:
        return None
    out = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"bad weight {part.strip()!r}: write name=number, e.g. relevance=1,novelty=0.5") from None
        if not sep:
            raise InputError(f"bad weight {part.strip()!r}: write name=number, e.g. relevance=1,novelty=0.5")
    return out


def _suggest(quill: Quill, args: argparse.Namespace) -> int:
    filters = Filters(author=args.author or "", topic=args.topic or "")
    suggestions = quill.suggest(read_text(args), k=args.k, filters=filters, ranker=args.ranker,
                                weights=parse_weights(args.weights), candidates=args.candidates,
                                quote_lang=args.quote_lang)
    lines = [f"{i}. {s.score:.3f}  “{s.quote.text}” — {s.quote.author or 'Unknown'}"
             + (f"\n   {s.why}" if s.why else "") for i, s in enumerate(suggestions, 1)]
    emit(args, {"suggestions": suggestions}, "\n".join(lines) or "no suggestions")
    return 0


def _score(quill: Quill, args: argparse.Namespace) -> int:
    s = quill.score(read_text(args), args.quote, author=args.author or "", weights=parse_weights(args.weights))
    lines = [f"total {s.score:.3f}  “{s.quote.text}” — {s.quote.author or 'Unknown'}"]
    for c in s.breakdown:
        raw = "-" if c.raw is None else f"{c.raw:.4g}"
        lines.append(f"  {c.name:<15} {c.value:.3f}  raw {raw:<9} weight {c.weight:g}  {c.note}")
    emit(args, {"suggestion": s, "why": s.why}, "\n".join(lines))
    return 0


def _eval(quill: Quill, args: argparse.Namespace) -> int:
    rankers = [r.strip() for r in args.rankers.split(",") if r.strip()]
    report = quill.evaluate(args.dataset, rankers=rankers, limit=args.limit, lang=args.lang or "",
                            kb=args.eval_kb or "none", candidates=args.candidates,
                            weights=parse_weights(args.weights), progress=None if args.json else progress_bar)
    lines = [f"{report.rows} rows, {report.seconds:.0f} s (embedder {report.embedder}, LM {report.lm or '-'})",
             f"{'ranker':<9} {'n':>4} {'MRR':>6} {'Hit@1':>6} {'Hit@3':>6} {'Hit@5':>6} {'NDCG@3':>7}"]
    for name, m in report.rankers.items():
        for label, mm in [(name, m)] + [(f"  {lang}", x) for lang, x in m.by_lang.items() if len(m.by_lang) > 1]:
            lines.append(f"{label:<9} {mm.n:>4} {mm.mrr:6.3f} {mm.hit1:6.3f} {mm.hit3:6.3f} {mm.hit5:6.3f} "
                         f"{mm.ndcg3:7.3f}")
    if args.report:
        md, png = write_report(report, args.report)
        lines.append(f"report: {md} and {png}")
    emit(args, report, "\n".join(lines))
    return 0


def _locate(quill: Quill, args: argparse.Namespace) -> int:
    text = read_text(args)
    spans = quill.locate(args.quote, text, threshold=args.threshold)
    payload: dict[str, Any] = {"spans": spans,
                               "verdict": max((s.verdict for s in spans), key=("near", "verbatim").index,
                                              default="not_found")}
    lines = [f"{s.start}-{s.end}  {s.verdict:<8} {s.score:6.2f}  {s.matched!r}" for s in spans]
    if not spans:
        best = closest_span(args.quote, text, threshold=args.threshold)
        payload["closest"] = best
        lines = [f"not found (closest: {best.score:.2f} at {best.start}-{best.end} {best.matched!r})"]
    emit(args, payload, "\n".join(lines))
    return 0


def _verify(quill: Quill, args: argparse.Namespace) -> int:
    results = quill.verify(read_text(args), threshold=args.threshold)
    lines = []
    for v in results:
        lines.append(f"{v.start}-{v.end}  {v.verdict.upper():<13} “{v.text}”"
                     + (f" (claimed: {v.claimed_author}{f'《{v.claimed_work}》' if v.claimed_work else ''})"
                        if v.claimed_author or v.claimed_work else ""))
        if v.canonical and v.verdict != "verbatim":
            lines.append(f"    canonical: “{v.canonical}” — {v.author or 'Unknown'}  (score {v.score:.1f})")
        elif v.author:
            lines.append(f"    by {v.author}")
        for d in v.diff:
            if d.op != "equal":
                lines.append(f"    {d.op}: {d.canonical!r} -> {d.draft!r}")
        if v.note:
            lines.append(f"    note: {v.note}")
    emit(args, {"quotes": results}, "\n".join(lines) or "no quotations found")
    return 0


def _sources_add(quill: Quill, args: argparse.Namespace) -> int:
    info = quill.add_source(args.source, author=args.author or "", title=args.title or "", index=not args.no_index,
                            progress=None if args.json else progress_bar)
    emit(args, info, f"{info.name}: {info.docs:,} documents, {info.chars:,} characters, "
                             f"{info.passages:,} passages")
    return 0


def _sources_list(quill: Quill, args: argparse.Namespace) -> int:
    infos = quill.list_sources()
    lines = [f"{i.name:<14} {i.origin:<8} {i.docs:>5,} docs {i.chars:>12,} chars  {i.title}" for i in infos]
    emit(args, {"sources": infos}, "\n".join(lines) or "no sources (quill sources add NAME)")
    return 0


def _insert(quill: Quill, args: argparse.Namespace) -> int:
    result = quill.insert(read_text(args), args.quote, author=args.author, drafts=args.drafts,
                          progress=None if args.json else progress_bar)
    lines = [result.paragraph, "", "drafts (best first):"]
    for d in result.drafts:
        status = f"rejected: {d.rejected_reason}" if d.rejected else ("template" if d.fallback else "ok")
        lines.append(f"  fluency {d.fluency:.2f}  attribution {d.attribution:.2f}  [{status}]  {d.text}")
    emit(args, result, "\n".join(lines))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="quill", description="Find, verify and insert quotations.")
    parser.add_argument("--home", help="data directory (default: $QUILL_HOME or a per-user data dir)")
    parser.add_argument("--kb", help="knowledge base name (default: $QUILL_KB or 'starter')")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(subparsers: Any, name: str, func: Callable[[Quill, argparse.Namespace], int], help: str,
                *, json_flag: bool = True) -> argparse.ArgumentParser:
        p = subparsers.add_parser(name, help=help, description=help)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=func)
        return p

    kb = sub.add_parser("kb", help="knowledge-base commands").add_subparsers(dest="kb_command", required=True)
    p = command(kb, "build", _kb_build, "build a bundled tier (offline)")
    p.add_argument("--tier", choices=list(TIERS), default="starter",
                   help="; ".join(f"{name}: {about}" for name, about in TIERS.items()))
    p.add_argument("--if-missing", action="store_true", help="do nothing when the knowledge base has quotes")
    p.add_argument("--no-index", action="store_true",
                   help="import only; the app (or the next command that searches) embeds the quotes")
    p = command(kb, "import", _kb_import, "import a quote file")
    p.add_argument("path")
    p.add_argument("--format", default="auto", choices=list(FORMATS),
                   help="; ".join(f"{name}: {about}" for name, about in FORMATS.items()))
    p.add_argument("--collection", help="collection name (default: the file name)")
    command(kb, "stats", _kb_stats, "knowledge-base statistics")
    p = command(kb, "browse", _kb_browse, "list quotes matching filters (search, author, lang, topic, collection)")
    for name in ("search", "author", "lang", "topic", "collection"):
        p.add_argument(f"--{name}", help=f"only quotes matching this {name}")
    p.add_argument("--limit", type=int, default=20, help="how many quotes")
    p.add_argument("--offset", type=int, default=0, help="skip this many first")

    p = command(sub, "suggest", _suggest, "suggest quotes for a paragraph ([Q] marks the insertion point)")
    add_text_source(p)
    p.add_argument("--k", type=int, default=5, help="number of suggestions")
    p.add_argument("--author", help="only quotes by this author")
    p.add_argument("--quote-lang", "--lang", dest="quote_lang", default="auto", metavar="LANG",
                   help="the quotes' language: auto (default: the paragraph's, when the knowledge base holds quotes "
                        "in it), any, or a language code (en, zh, ...)")
    p.add_argument("--topic", help="only quotes with this topic")
    p.add_argument("--ranker", default="default", choices=list(RANKERS),
                   help="; ".join(f"{r.name}: {r.description}" for r in RANKERS.values()))
    p.add_argument("--candidates", type=int, default=20, help="how many retrieved candidates are reranked")
    p.add_argument("--weights", help="criterion weights of the default ranker, e.g. relevance=1,novelty=0.5")

    p = command(sub, "score", _score, "score one quote inserted at [Q]: every criterion with its raw value")
    add_text_source(p)
    p.add_argument("--quote", required=True, help="the quote to insert")
    p.add_argument("--author", help="who the quote is attributed to")
    p.add_argument("--weights", help="criterion weights, e.g. relevance=1,novelty=0.5")

    p = command(sub, "eval", _eval, "evaluate rankers on a JSONL dataset of paragraphs with a gold quote")
    p.add_argument("--dataset", required=True, help="JSONL rows: context (with [Q]), quote, author, lang, graded")
    p.add_argument("--rankers", default=",".join(RANKERS), help="comma-separated ranker names")
    p.add_argument("--kb", dest="eval_kb", metavar="NAME", help="knowledge base whose quotes join the gold ones (default: none)")
    p.add_argument("--limit", type=int, default=0, help="evaluate only the first N rows")
    p.add_argument("--lang", help="evaluate only rows in this language")
    p.add_argument("--candidates", type=int, default=20, help="candidates per row")
    p.add_argument("--weights", help="criterion weights of the default ranker")
    p.add_argument("--report", help="write report.md and report.png into this folder")

    p = command(sub, "verify", _verify, "check every quotation of a draft: verbatim, misquoted, misattributed")
    add_text_source(p)
    p.add_argument("--threshold", type=float, default=75.0, help="fuzzy score (0-100) for a misquote")
    p = command(sub, "locate", _locate, "find a quote's exact spans in a text")
    p.add_argument("--quote", required=True, help="the quote to find")
    add_text_source(p)
    p.add_argument("--threshold", type=float, default=90.0, help="minimum score (0-100) of a near match")
    src = sub.add_parser("sources", help="source texts for provenance").add_subparsers(dest="sources_command",
                                                                                        required=True)
    p = command(src, "add", _sources_add, "add a bundled source (shakespeare, bible, sotu) or a .txt/.md file")
    p.add_argument("source", help="bundled name or file path")
    p.add_argument("--author", help="author of a file source")
    p.add_argument("--title", help="title of a file source")
    p.add_argument("--no-index", action="store_true", help="do not embed passages (lookups scan the text)")
    command(src, "list", _sources_list, "list the sources added")
    p = command(sub, "insert", _insert, "write one sentence that brings a quote into a paragraph at [Q]")
    add_text_source(p)
    p.add_argument("--quote", required=True, help="the quote (looked up in the knowledge base without --author)")
    p.add_argument("--author", help="the quote's author")
    p.add_argument("--drafts", type=int, default=4, help="how many drafts to generate (1-12)")
    return parser


def main(argv: Sequence[str] | None = None, *, make_quill: Callable[[Settings], Quill] = Quill) -> int:
    """Run one command; ``make_quill`` builds the facade from the settings (tests inject fakes through it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings.load(home=args.home, kb=args.kb)
        return int(args.func(make_quill(settings), args) or 0)
    except QuillError as exc:
        print(f"quill: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("quill: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
