"""Source texts on disk: the one home of their layout (the source library reads it, the chinese tier writes its
poems into it).

Layout below ``QUILL_HOME``::

    sources/sources.json            manifest: every source, its documents, titles and authors
    sources/<source>/<doc>.txt      the document text (spans index it; pages show it with highlight())
    sources/<source>/<doc>.json     optional anchors: [[offset, label], ...] (e.g. Bible verse references)

A manifest entry is ``{"title", "origin", "docs": [{"doc", "title", "author", "chars", "passages"}], "indexed"}``
plus ``"partial": true`` for a selection of an author's works (a quote missing from it says nothing about its
attribution). The parsed manifest is cached until the file changes.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from ._errors import NotFoundError
from ._text import is_cjk


PASSAGE_CHARS = 1_000
PASSAGE_OVERLAP = 200


class TextDoc(Protocol):
    """What a document to store needs (:class:`quill_core._bundled.SourceText`,
    :class:`quill_core._kb.poetry.PoemText`): ``anchors`` is optional."""

    doc: str
    title: str
    author: str
    text: str


_UNSAFE = re.compile(r"[^\w.-]+")


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


def doc_id(doc: str, source: str = "") -> str:
    """A document id that is also a file name: without a leading ``<source>/``, other separators made '.'
    (``chinese-poetry/tang300/0`` -> ``tang300.0``)."""
    if source and doc.startswith(f"{source}/"):
        doc = doc[len(source) + 1 :]
    return _UNSAFE.sub(".", doc.replace("/", ".")).strip(".") or "doc"


class SourceStore:
    """The files of the source texts under ``root`` (``QUILL_HOME/sources``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.RLock()
        self._cached: tuple[tuple[int, int, int], dict[str, Any]] | None = None

    @property
    def manifest_path(self) -> Path:
        return self.root / "sources.json"

    def stamp(self) -> tuple[int, int, int] | None:
        """The manifest file's (inode, mtime, size): it changes whenever a source is added or removed (the file is
        replaced, never written in place)."""
        try:
            st = self.manifest_path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def manifest(self) -> dict[str, Any]:
        """The parsed manifest (``{}`` when there is none); a copy of the cached one, safe to change."""
        with self._lock:
            stamp = self.stamp()
            if stamp is None:
                return {}
            if self._cached is None or self._cached[0] != stamp:
                try:
                    data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise NotFoundError(f"the source manifest {self.manifest_path} is unreadable: {exc}") from exc
                self._cached = (stamp, data)
            return dict(self._cached[1])

    def save(self, manifest: dict[str, Any]) -> None:
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.manifest_path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
            os.replace(tmp, self.manifest_path)
            self._cached = None

    def write(self, source: str, title: str, origin: str, docs: Iterable[TextDoc], *,
              partial: bool = False) -> dict[str, Any]:
        """Store a source's documents (its previous files removed first) and its manifest entry, not yet
        indexed. Returns the entry."""
        with self._lock:
            old = self.manifest().get(source)
            if old is not None:
                self.delete_files(source, old)
            folder = self.root / source
            folder.mkdir(parents=True, exist_ok=True)
            entries: list[dict[str, Any]] = []
            taken: set[str] = set()
            for d in docs:
                name = doc_id(d.doc, source)
                while name in taken:
                    name += "_"
                taken.add(name)
                (folder / f"{name}.txt").write_text(d.text, encoding="utf-8")
                anchors = getattr(d, "anchors", None)
                if anchors:
                    (folder / f"{name}.json").write_text(json.dumps(anchors, ensure_ascii=False), encoding="utf-8")
                entries.append({"doc": name, "title": d.title, "author": d.author, "chars": len(d.text),
                                "passages": len(split_passages(d.text))})
            entry: dict[str, Any] = {"title": title, "origin": origin, "docs": entries, "indexed": False}
            if partial:
                entry["partial"] = True
            manifest = self.manifest()
            manifest[source] = entry
            self.save(manifest)
            return entry

    def delete_files(self, source: str, entry: dict[str, Any]) -> None:
        """Remove a source's document files (not its manifest entry)."""
        folder = self.root / source
        for d in entry.get("docs", []):
            for suffix in (".txt", ".json"):
                (folder / f"{d['doc']}{suffix}").unlink(missing_ok=True)

    def read(self, source: str, doc: str) -> str:
        path = self.root / source / f"{doc}.txt"
        if not path.exists():
            raise NotFoundError(f"no document {doc!r} in source {source!r}")
        return path.read_text(encoding="utf-8")

    def anchors(self, source: str, doc: str) -> list:
        path = self.root / source / f"{doc}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def store_source(home: Path, source: str, docs: Iterable[TextDoc], *, title: str, origin: str = "bundled",
                 partial: bool = False) -> int:
    """Store documents as the source ``source`` of the library under ``home`` (``QUILL_HOME``), replacing it;
    they are found lexically (no embedding). Returns how many documents were stored."""
    return len(SourceStore(Path(home) / "sources").write(source, title, origin, docs, partial=partial)["docs"])
