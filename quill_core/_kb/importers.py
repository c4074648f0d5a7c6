"""Importers: one small parser per file format, format auto-detection, and the shared cleaning + merging import.

Formats (:data:`FORMATS`; ``"auto"`` looks at the content):

* ``quill``: QUILL's JSON (array or one object a line) with ``quote, author, poem, topic, PPL, Search, novelty``:
  ``poem`` becomes the work, ``topic`` is split on ``,``/``，``, ``PPL`` the cached perplexity, ``Search`` (web hit
  count) the popularity.
* ``quotable``: quotable's JSON with ``_id, content, author, tags``.
* ``goodreads``: JSON lines with ``quote`` (wrapped in curly quotes), ``author`` (may end with ``,``) and ``tags``
  (every tag is kept as a topic, ``misattributed-*`` ones included: they flag doubtful attributions).
* ``csv``: a header row, delimiter sniffed among ``, ; tab |``; ``jsonl``: any JSON objects (array or lines).
  Columns come from ``mapping={"text": col, "author": col, "work": col, "topics": col, "lang": col,
  "ppl": col, "popularity": col}``; unmapped fields are guessed from :data:`GUESSES` (quote/text/content,
  author/by, ...), case-insensitively.
* ``lines``: one quote a line, ``quote — author`` (also `` - ``, `` -- ``, `` – ``, ``――``); an author may be
  followed by ``, work`` or ``《work》``; a line without a separator is a quote without author.

A malformed row is reported with its 1-based line number and skipped; an empty, binary or non-UTF-8 file raises
:class:`ImportFormatError` before anything is written. The rows then go through
:func:`quill_core._kb.merge.import_records` (cleaning, merging of duplicates, one transaction).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from .._errors import ImportFormatError, InputError, NotFoundError
from .._names import is_name_suffix
from .._text import decode_text
from .._types import ImportReport, RejectedRow, Progress
from .clean import Row
from .merge import FIELDS, import_records
from .records import KnowledgeBase



FORMATS: Mapping[str, str] = MappingProxyType({
    "auto": "detect the format from the file's content (its name breaks ties)",
    "quill": "QUILL's JSON: quote, author, poem, topic, PPL, Search",
    "quotable": "Quotable's JSON: content, author, tags",
    "goodreads": "Goodreads JSON lines: quote, author, tags",
    "csv": "a table with a header row (comma, semicolon, tab or |) and a quote column",
    "jsonl": "JSON objects (an array or one a line) with a quote field",
    "lines": "one quotation a line, optionally followed by \" — author\" and \", work\"",
})
"""The import formats, name -> what it reads (for the CLI and the Library page), in the order to offer them;
``"auto"`` stands for :func:`detect_format`'s choice."""
GUESSES: dict[str, tuple[str, ...]] = {
    "text": ("quote", "text", "content", "quotation", "sentence", "body"),
    "author": ("author", "by", "speaker", "attribution", "person", "name"),
    "work": ("work", "source", "book", "poem", "title"),
    "topics": ("topics", "tags", "topic", "tag", "category", "categories", "keywords"),
    "lang": ("lang", "language"),
    "ppl": ("ppl", "perplexity"),
    "popularity": ("popularity", "search", "likes", "hits", "count"),
}
_FIXED: dict[str, dict[str, str]] = {
    "quill": {"text": "quote", "author": "author", "work": "poem", "topics": "topic", "ppl": "PPL",
              "popularity": "Search"},
    "quotable": {"text": "content", "author": "author", "topics": "tags"},
    "goodreads": {"text": "quote", "author": "author", "topics": "tags"},
}
MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_LINE_CHARS = 100_000
"""A line (or CSV record) longer than this is rejected without being parsed."""
MAX_RECORD_LINES = 50
"""A quoted CSV field may span at most this many lines; an unterminated quote is reported, not swallowed."""
_QUILL_KEYS = {"PPL", "Search", "novelty", "poem", "topic"}


# -- reading and detecting -----------------------------------------------------------------------------------
def _read_text(path: Path) -> str:
    if not path.exists():
        raise NotFoundError(f"no such file: {path}")
    if not path.is_file():
        raise InputError(f"not a file: {path}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(f"{path.name} is {size / 2**20:,.0f} MiB; the limit is {MAX_FILE_BYTES // 2**20} MiB")
    return decode_text(path.read_bytes(), name=path.name, error=ImportFormatError)


def _json_kind(keys: Iterable[str]) -> str:
    keys = set(keys)
    if "quote" in keys and keys & _QUILL_KEYS:
        return "quill"
    if "content" in keys and ("_id" in keys or "tags" in keys):
        return "quotable"
    if {"quote", "author", "tags"} <= keys:
        return "goodreads"
    return "jsonl"


def _first_json_object(text: str) -> dict | None:
    stripped = text.lstrip()
    if stripped.startswith("["):
        for _, obj in _json_array(text, name="", strict=False):
            if isinstance(obj, dict):
                return obj
        return None
    for line in text.splitlines()[:50]:
        if line.strip():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def _csv_dialect(text: str) -> type[csv.Dialect] | csv.Dialect | None:
    head = "\n".join(text.splitlines()[:20])
    try:
        dialect = csv.Sniffer().sniff(head, delimiters=",;\t|")
    except csv.Error:
        return None
    return dialect


def _header(text: str, dialect) -> list[str]:
    first = text.splitlines()[0] if text else ""
    try:
        return next(csv.reader([first], dialect))
    except (csv.Error, StopIteration):
        return []


def detect_format(text: str, *, suffix: str = "") -> str:
    """The format of a file's text (one of :data:`FORMATS` but ``"auto"``), by content, the suffix breaking ties."""
    stripped = text.lstrip()
    if stripped[:1] in "[{":
        obj = _first_json_object(text)
        if obj is not None:
            return _json_kind(obj)
        if stripped[:1] == "[" or suffix in (".json", ".jsonl", ".ndjson"):
            return "jsonl"
    if suffix in (".json", ".jsonl", ".ndjson"):
        return "jsonl"
    dialect = _csv_dialect(text)
    if dialect is not None or suffix in (".csv", ".tsv"):
        columns = {c.strip().casefold() for c in _header(text, dialect or csv.excel)}
        if columns & set(GUESSES["text"]) or suffix in (".csv", ".tsv"):
            return "csv"
    return "lines"


# -- parsers: text -> Row | RejectedRow ----------------------------------------------------------------------
def _line_of(text: str) -> Callable[[int], int]:
    """A function mapping an offset of ``text`` to its 1-based line (for increasing offsets, in O(total))."""
    state = {"pos": 0, "line": 1}

    def line_of(offset: int) -> int:
        if offset < state["pos"]:
            state["pos"], state["line"] = 0, 1
        state["line"] += text.count("\n", state["pos"], offset)
        state["pos"] = offset
        return state["line"]

    return line_of


def _json_array(text: str, *, name: str, strict: bool = True) -> Iterator[tuple[int, object]]:
    """``(line, element)`` of a JSON array, read element by element so each keeps its line number."""
    decoder = json.JSONDecoder()
    line_of = _line_of(text)
    ws = re.compile(r"[\s,]*")
    pos = ws.match(text, text.index("[") + 1).end()
    while pos < len(text) and text[pos] != "]":
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError as exc:
            if not strict:
                return
            line = line_of(getattr(exc, "pos", pos))
            raise ImportFormatError(f"{name}: malformed JSON at line {line}: {getattr(exc, 'msg', exc)}") from None
        yield line_of(pos), obj
        pos = ws.match(text, end).end()
    if pos >= len(text) and strict:
        raise ImportFormatError(f"{name}: malformed JSON: the array is not closed with ']'")


def _json_rows(text: str, *, name: str) -> Iterator[tuple[int, object]]:
    """``(line, value)`` of a JSON array or of JSON lines; a malformed line becomes ``(line, RejectedRow)``."""
    if text.lstrip().startswith("["):
        yield from _json_array(text, name=name)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            yield number, RejectedRow(number, f"line too long ({len(line):,} characters; at most {MAX_LINE_CHARS:,})")
            continue
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            yield number, RejectedRow(number, f"malformed JSON: {getattr(exc, 'msg', exc)}")


def _resolve(mapping: Mapping[str, str] | None, columns: Iterable[str], *, fixed: Mapping[str, str] | None,
             name: str) -> dict[str, str]:
    """Field -> column name: explicit ``mapping`` first, then the format's fixed names, then :data:`GUESSES`."""
    columns = list(columns)
    by_fold = {c.strip().casefold(): c for c in columns}
    out: dict[str, str] = {}
    for field_, column in (mapping or {}).items():
        if field_ not in FIELDS:
            raise InputError(f"unknown mapping field {field_!r}; use {', '.join(FIELDS)}")
        found = column if column in columns else by_fold.get(str(column).strip().casefold())
        if found is None:
            raise ImportFormatError(f"{name}: no column {column!r} (mapped to {field_}); "
                                    f"columns are: {', '.join(map(str, columns)) or 'none'}")
        out[field_] = found
    for field_, guesses in GUESSES.items():
        if field_ in out:
            continue
        if fixed and field_ in fixed:
            if fixed[field_] in columns:
                out[field_] = fixed[field_]
            continue
        for guess in guesses:
            if guess in by_fold and by_fold[guess] not in out.values():
                out[field_] = by_fold[guess]
                break
    if "text" not in out:
        raise ImportFormatError(f"{name}: no quote column found among {', '.join(map(str, columns)) or 'none'}; "
                                "name it with mapping={'text': COLUMN}")
    return out


def _record_rows(values: Iterable[tuple[int, object]], *, fmt: str, mapping: Mapping[str, str] | None,
                 name: str) -> Iterator[Row | RejectedRow]:
    """Rows of JSON objects (quill, quotable, goodreads, jsonl), fields found once from the first object."""
    fields: dict[str, str] | None = None
    for line, value in values:
        if isinstance(value, RejectedRow):
            yield value
            continue
        if not isinstance(value, dict):
            yield RejectedRow(line, f"expected a JSON object, found {type(value).__name__}")
            continue
        if fields is None:
            fields = _resolve(mapping, value.keys(), fixed=_FIXED.get(fmt), name=name)
        if fields["text"] not in value:
            yield RejectedRow(line, f"no quote text (field {fields['text']!r})")
            continue
        yield Row(line=line, **{f: value.get(c) for f, c in fields.items()})


def _csv_records(text: str, dialect) -> Iterator[tuple[int, list[str] | RejectedRow]]:
    """``(line, fields)`` per CSV record; quoted fields may span lines, up to :data:`MAX_RECORD_LINES`."""
    lines = text.splitlines(keepends=True)
    quote = getattr(dialect, "quotechar", '"') or '"'
    i = 0
    while i < len(lines):
        start, record = i, lines[i]
        i += 1
        while record.count(quote) % 2 and i < len(lines) and i - start < MAX_RECORD_LINES:
            record += lines[i]
            i += 1
        if not record.strip():
            continue
        if record.count(quote) % 2:
            yield start + 1, RejectedRow(start + 1, "unterminated quoted field")
            i = start + 1
            continue
        if len(record) > MAX_LINE_CHARS:
            yield start + 1, RejectedRow(start + 1, f"record too long ({len(record):,} characters; "
                                                    f"at most {MAX_LINE_CHARS:,})")
            continue
        try:
            yield start + 1, next(csv.reader([record], dialect))
        except (csv.Error, StopIteration) as exc:
            yield start + 1, RejectedRow(start + 1, f"malformed CSV: {exc}")


def _csv_rows(text: str, *, mapping: Mapping[str, str] | None, name: str) -> Iterator[Row | RejectedRow]:
    dialect = _csv_dialect(text) or csv.excel
    records = _csv_records(text, dialect)
    header: list[str] | None = None
    fields: dict[str, int] = {}
    for line, values in records:
        if isinstance(values, RejectedRow):
            if header is None:
                raise ImportFormatError(f"{name}: the header row is malformed ({values.reason})")
            yield values
            continue
        if header is None:
            header = [h.strip() for h in values]
            resolved = _resolve(mapping, header, fixed=None, name=name)
            fields = {f: header.index(c) for f, c in resolved.items()}
            continue
        if len(values) != len(header):
            yield RejectedRow(line, f"expected {len(header)} fields, found {len(values)}")
            continue
        yield Row(line=line, **{f: values[i] for f, i in fields.items()})
    if header is None:
        raise ImportFormatError(f"{name}: no header row")


# a separator between quote and author: a spaced dash of any kind (the last one counts), else an unspaced double
# dash (Chinese ――, ——), else an unspaced em dash right after the end of a sentence ("... taken.—Oscar Wilde")
_SPACED = re.compile(r"\s+(?:--|-|–|—|―|――|~)\s+")
_UNSPACED = re.compile(r"――|——|(?<=[.!?。！？\"'])[—―]")
_TAIL_WORK = re.compile(r"\s*《([^》]+)》\s*$")


def _looks_like_author(tail: str) -> bool:
    """A short name-like tail: at most 12 words, not ending a sentence, starting with a capital or a CJK letter."""
    return (0 < len(tail) <= 120 and len(tail.split()) <= 12 and not re.search(r"[!?。！？]$", tail)
            and (tail[0].isupper() or not tail[0].isascii()))


def _split_line(line: str) -> tuple[str, str, str]:
    """``(quote, author, work)`` of a plain line."""
    text, author, work = line.strip(), "", ""
    matches = list(_SPACED.finditer(text)) or list(_UNSPACED.finditer(text))
    if matches:
        m = matches[-1]
        tail = text[m.end() :].strip()
        if _looks_like_author(tail):
            text, author = text[: m.start()].strip(), tail
    if author:
        found = _TAIL_WORK.search(author)
        if found:
            work, author = found.group(1), author[: found.start()].strip()
        elif ", " in author:
            head, rest = author.split(", ", 1)
            if not is_name_suffix(rest.strip()):
                author, work = head, rest
    return text, author, work


def _line_rows(text: str) -> Iterator[Row | RejectedRow]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            yield RejectedRow(number, f"line too long ({len(line):,} characters; at most {MAX_LINE_CHARS:,})")
            continue
        quote, author, work = _split_line(line)
        yield Row(text=quote, author=author, work=work, line=number)


def parse_text(text: str, *, format: str, mapping: Mapping[str, str] | None = None,
               name: str = "input") -> Iterator[Row | RejectedRow]:
    """Rows of a file's text in a given format (not ``"auto"``: see :func:`detect_format`)."""
    if format in ("quill", "quotable", "goodreads", "jsonl"):
        if not text.lstrip()[:1] in "[{":
            raise ImportFormatError(f"{name}: expected JSON ({format} format), found text starting "
                                    f"{text.lstrip()[:20]!r}")
        return _record_rows(_json_rows(text, name=name), fmt=format, mapping=mapping, name=name)
    if format == "csv":
        return _csv_rows(text, mapping=mapping, name=name)
    if format == "lines":
        return _line_rows(text)
    raise InputError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")


def import_file(kb: KnowledgeBase, path: str | Path, *, format: str = "auto",
                mapping: Mapping[str, str] | None = None, collection: str | None = None,
                progress: Progress | None = None) -> ImportReport:
    """Import a quote file into ``kb`` (collection: ``collection`` or the file's stem); see the module docstring."""
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    path = Path(path)
    text = _read_text(path)
    fmt = detect_format(text, suffix=path.suffix.casefold()) if format == "auto" else format
    if progress:
        progress(0.0, f"reading {path.name} as {fmt}")
    rows = list(parse_text(text, format=fmt, mapping=mapping, name=path.name))
    return import_records(kb, rows, collection=collection or path.stem, source=path.name, format=fmt,
                          progress=progress, total=len(rows))
