"""The ``quill`` command line: thin wrappers over :class:`quill_core.Quill` that print text or JSON.

Every command accepts the global ``--home DIR`` and ``--kb NAME``. A :class:`QuillError` becomes one line on stderr
and exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

from .config import Settings
from .errors import InputError, QuillError
from .quill import Quill
from .types import Filters, Suggestion

__all__ = ["main", "build_parser"]


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
    if b"\x00" in data:
        raise InputError(f"{path} is a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start})") from exc


def add_text_source(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--text", help="the text itself")
    group.add_argument("--file", help="a UTF-8 text file")


def emit(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    """Print ``payload`` as JSON with ``--json``, else the human-readable ``text``."""
    print(json.dumps(payload, ensure_ascii=False) if getattr(args, "json", False) else text)


def progress_bar(fraction: float, message: str) -> None:
    """A one-line terminal progress bar on stderr."""
    width = 30
    filled = int(width * max(0.0, min(1.0, fraction)))
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {fraction:4.0%} {message[:60]:<60}")
    if fraction >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()


def suggestion_json(s: Suggestion) -> dict[str, Any]:
    q = s.quote
    return {
        "id": q.id, "text": q.text, "author": q.author, "work": q.work, "lang": q.lang,
        "score": round(s.score, 6),
        "breakdown": {c.name: {"value": c.value, "raw": c.raw, "weight": c.weight} for c in s.breakdown},
    }


# -- commands -------------------------------------------------------------------------------------------------
def _kb_build(quill: Quill, args: argparse.Namespace) -> int:
    if args.if_missing and len(quill.kb) > 0:
        quill.index(progress=None if args.json else progress_bar)
        emit(args, {"built": False, "quotes": len(quill.kb)}, f"knowledge base {quill.kb.name!r} ready")
        return 0
    report = quill.build(args.tier, progress=None if args.json else progress_bar)
    emit(args, asdict(report), f"{args.tier}: read {report.read:,}, imported {report.imported:,}, "
                               f"merged {report.merged:,}, rejected {len(report.rejected):,}")
    return 0


def _kb_import(quill: Quill, args: argparse.Namespace) -> int:
    report = quill.import_file(args.path, format=args.format, collection=args.collection,
                               progress=None if args.json else progress_bar)
    lines = [f"read {report.read:,}, imported {report.imported:,}, merged {report.merged:,}, "
             f"rejected {len(report.rejected):,}"]
    lines += [f"  line {r.line}: {r.reason}" for r in report.rejected[:20]]
    emit(args, asdict(report), "\n".join(lines))
    return 0


def _kb_stats(quill: Quill, args: argparse.Namespace) -> int:
    s = quill.stats()
    text = (f"{s.quotes:,} quotes by {s.authors:,} authors\n"
            f"languages: {', '.join(f'{k} {v:,}' for k, v in s.by_lang.items())}\n"
            f"collections: {', '.join(f'{k} {v:,}' for k, v in s.by_collection.items())}")
    emit(args, asdict(s), text)
    return 0


def _suggest(quill: Quill, args: argparse.Namespace) -> int:
    filters = Filters(author=args.author or "", lang=args.lang or "", topic=args.topic or "")
    suggestions = quill.suggest(read_text(args), k=args.k, filters=filters)
    lines = [f"{i}. {s.score:.3f}  “{s.quote.text}” — {s.quote.author or 'Unknown'}"
             for i, s in enumerate(suggestions, 1)]
    emit(args, {"suggestions": [suggestion_json(s) for s in suggestions]}, "\n".join(lines) or "no suggestions")
    return 0


def _locate(quill: Quill, args: argparse.Namespace) -> int:
    from .spans import closest_span

    text = read_text(args)
    spans = quill.locate(args.quote, text, threshold=args.threshold)
    payload: dict[str, Any] = {"spans": [asdict(s) for s in spans],
                               "verdict": max((s.verdict for s in spans), key=("near", "verbatim").index,
                                              default="not_found")}
    lines = [f"{s.start}-{s.end}  {s.verdict:<8} {s.score:6.2f}  {s.matched!r}" for s in spans]
    if not spans:
        best = closest_span(args.quote, text, threshold=args.threshold)
        payload["closest"] = asdict(best)
        lines = [f"not found (closest: {best.score:.2f} at {best.start}-{best.end} {best.matched!r})"]
    emit(args, payload, "\n".join(lines))
    return 0


def _verify(quill: Quill, args: argparse.Namespace) -> int:
    from .verify import verification_json

    results = quill.verify(read_text(args), threshold=args.threshold)
    lines = []
    for v in results:
        lines.append(f"{v.start}-{v.end}  {v.verdict.upper():<13} “{v.text}”"
                     + (f" (claimed: {v.claimed_author})" if v.claimed_author else ""))
        if v.canonical and v.verdict != "verbatim":
            lines.append(f"    canonical: “{v.canonical}” — {v.author or 'Unknown'}  (score {v.score:.1f})")
        elif v.author:
            lines.append(f"    by {v.author}")
        for d in v.diff:
            if d.op != "equal":
                lines.append(f"    {d.op}: {d.canonical!r} -> {d.draft!r}")
        if v.note:
            lines.append(f"    note: {v.note}")
    emit(args, {"quotes": [verification_json(v) for v in results]}, "\n".join(lines) or "no quotations found")
    return 0


def _sources_add(quill: Quill, args: argparse.Namespace) -> int:
    info = quill.add_source(args.source, author=args.author or "", title=args.title or "", index=not args.no_index,
                            progress=None if args.json else progress_bar)
    emit(args, asdict(info), f"{info.name}: {info.docs:,} documents, {info.chars:,} characters, "
                             f"{info.passages:,} passages")
    return 0


def _sources_list(quill: Quill, args: argparse.Namespace) -> int:
    infos = quill.sources.list()
    lines = [f"{i.name:<14} {i.origin:<8} {i.docs:>5,} docs {i.chars:>12,} chars  {i.title}" for i in infos]
    emit(args, {"sources": [asdict(i) for i in infos]}, "\n".join(lines) or "no sources (quill sources add NAME)")
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
    p.add_argument("--tier", choices=["starter", "large"], default="starter")
    p.add_argument("--if-missing", action="store_true", help="do nothing when the knowledge base has quotes")
    p = command(kb, "import", _kb_import, "import a quote file")
    p.add_argument("path")
    p.add_argument("--format", default="auto",
                   choices=["auto", "quill", "quotable", "goodreads", "csv", "jsonl", "lines"])
    p.add_argument("--collection", help="collection name (default: the file name)")
    command(kb, "stats", _kb_stats, "knowledge-base statistics")

    p = command(sub, "suggest", _suggest, "suggest quotes for a paragraph ([Q] marks the insertion point)")
    add_text_source(p)
    p.add_argument("--k", type=int, default=5, help="number of suggestions")
    p.add_argument("--author", help="only quotes by this author")
    p.add_argument("--lang", help="only quotes in this language (en, zh, ...)")
    p.add_argument("--topic", help="only quotes with this topic")

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
