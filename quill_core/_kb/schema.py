"""The SQLite layout of a knowledge-base file and the conversions between its rows and :class:`Quote` records.

One table ``quotes`` (a row per quote, list fields packed into one column) and a small ``meta`` table (the
revision and the version of the stored MinHash signatures). :func:`merge_records` is the rule an upsert of a known id
follows (see :mod:`quill_core._kb.records`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._types import Quote
from .clean import MAX_TOPICS

SEP = "\x1f"
"""Separates the items of a list column; cleaning removes control characters from every field, so it never occurs
in one."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS quotes (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    work TEXT NOT NULL DEFAULT '',
    topics TEXT NOT NULL DEFAULT '',
    lang TEXT NOT NULL DEFAULT '',
    collections TEXT NOT NULL DEFAULT '',
    ppl REAL,
    popularity REAL,
    tkey TEXT NOT NULL,
    akey TEXT NOT NULL,
    sig BLOB,
    rev INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS quotes_tkey ON quotes (tkey);
CREATE INDEX IF NOT EXISTS quotes_akey ON quotes (akey);
CREATE INDEX IF NOT EXISTS quotes_rev ON quotes (rev);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
COLUMNS = "id, text, author, work, topics, lang, collections, ppl, popularity"
"""The columns of a :class:`Quote`, in the order :func:`to_quote` reads and :func:`row_values` writes them."""
CHUNK = 500
"""Ids per ``IN (...)`` query."""


def pack(items: Sequence[str]) -> str:
    """A list column's value: every item framed by :data:`SEP`, so ``instr`` finds whole items."""
    return f"{SEP}{SEP.join(items)}{SEP}" if items else ""


def unpack(value: str) -> tuple[str, ...]:
    """The items of a list column's value."""
    return tuple(value.strip(SEP).split(SEP)) if value else ()


def to_quote(row: Sequence) -> Quote:
    """The :class:`Quote` of a row read as :data:`COLUMNS`."""
    return Quote(id=row[0], text=row[1], author=row[2], work=row[3], topics=unpack(row[4]), lang=row[5],
                 collections=unpack(row[6]), ppl=row[7], popularity=row[8])


def row_values(q: Quote) -> tuple:
    """The values of :data:`COLUMNS` for ``q``."""
    return (q.id, q.text, q.author, q.work, pack(q.topics), q.lang, pack(q.collections), q.ppl, q.popularity)


def merge_records(old: Quote, new: Quote) -> Quote:
    """``old`` with what ``new`` adds (collections, topics, a missing work, scores)."""
    popularity = old.popularity
    if new.popularity is not None and (popularity is None or new.popularity > popularity):
        popularity = new.popularity
    return Quote(
        id=old.id, text=old.text, author=old.author, lang=old.lang,
        work=old.work or new.work,
        topics=tuple(dict.fromkeys(old.topics + new.topics))[: max(MAX_TOPICS, len(old.topics))],
        collections=tuple(dict.fromkeys(old.collections + new.collections)),
        ppl=old.ppl if old.ppl is not None else new.ppl,
        popularity=popularity,
    )


def finite(value: float | None) -> float | None:
    """``value`` as a float, or None when it is None, NaN or infinite (what a score column may hold)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None
