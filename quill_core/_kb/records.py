"""The record store of a knowledge base: one SQLite file per knowledge base, the source of truth for quotes.

``KnowledgeBase`` holds one connection (``check_same_thread=False``) behind a re-entrant lock, in WAL mode, so the
app's threads can share it. Every write happens inside one transaction: it lands whole or not at all.
:attr:`KnowledgeBase.revision` grows with every write that adds a quote or changes one's text-side metadata
(collections, topics, work), so the vector index can tell it is stale; :meth:`changed_since` lists what changed.
Cached scores (:meth:`set_scores`) do not bump it.

Upserts are keyed by :attr:`Quote.id`. Upserting a known id *merges* instead of replacing: collections and topics
are united (first seen first), an empty work is filled, the larger popularity and the first known perplexity are
kept; text, author and language stay as first stored.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._config import Settings
from .._errors import InputError, StoreError
from .._text import key
from .._names import author_key
from .._types import KBStats, Quote
from . import dedup, schema
from .clean import cached_author_key
from .schema import CHUNK, COLUMNS, SCHEMA, SEP, finite, merge_records, pack, to_quote, unpack


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def kb_name(name: str) -> str:
    """Validate a knowledge-base name (it becomes a file name): letters, digits, ``_ . -``; at most 64."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(f"invalid knowledge-base name {name!r}: use letters, digits, '_', '.' or '-' (at most 64)")
    return name


class KnowledgeBase:
    """Quote records of one knowledge base in SQLite (``":memory:"`` for tests). Thread-safe."""

    def __init__(self, path: str | Path, *, name: str = "") -> None:
        self.path = str(path)
        self.name = name or (Path(self.path).stem if self.path != ":memory:" else "memory")
        self._lock = threading.RLock()
        self._depth = 0  # nesting of transaction()
        self._changed = False
        self._cache: dict[str, tuple[int, object]] = {}
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('revision', '0')")
            self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('sig_version', ?)", (dedup.SIG_VERSION,))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open knowledge base {self.path}: {exc}") from exc

    @classmethod
    def open(cls, settings: Settings, name: str | None = None) -> "KnowledgeBase":
        """The knowledge base ``name`` (default ``settings.kb``) under ``settings.home``; created when missing."""
        name = kb_name(name or settings.kb)
        return cls(settings.path("kb", f"{name}.sqlite"), name=name)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "KnowledgeBase":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"KnowledgeBase(name={self.name!r}, path={self.path!r})"

    # -- reading --------------------------------------------------------------------------------------------
    def _query(self, sql: str, params: Sequence = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def __len__(self) -> int:
        return self._query("SELECT count(*) FROM quotes")[0][0]

    @property
    def revision(self) -> int:
        """A number that grows whenever quotes are added or their collections/topics/work change."""
        return int(self._query("SELECT value FROM meta WHERE name = 'revision'")[0][0])

    def get(self, ids: Sequence[str]) -> list[Quote]:
        """The quotes with these ids, in the given order; unknown ids are skipped."""
        found: dict[str, Quote] = {}
        ids = list(ids)
        for lo in range(0, len(ids), CHUNK):
            chunk = ids[lo : lo + CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in self._query(f"SELECT {COLUMNS} FROM quotes WHERE id IN ({marks})", chunk):
                found[row[0]] = to_quote(row)
        return [found[i] for i in ids if i in found]

    def __contains__(self, quote_id: object) -> bool:
        return bool(self._query("SELECT 1 FROM quotes WHERE id = ?", (quote_id,)))

    def iter_quotes(self, *, batch: int = 2000) -> Iterator[Quote]:
        """Every quote in insertion order, read ``batch`` at a time (safe while other threads write)."""
        last = 0
        while True:
            rows = self._query(f"SELECT rowid, {COLUMNS} FROM quotes WHERE rowid > ? ORDER BY rowid LIMIT ?",
                               (last, max(1, batch)))
            if not rows:
                return
            for row in rows:
                yield to_quote(row[1:])
            last = rows[-1][0]

    def _where(self, *, search: str = "", author: str = "", lang: str = "", topic: str = "",
               collection: str = "") -> tuple[str, list]:
        clauses, params = [], []
        if search.strip():
            pattern = "%" + search.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append("(text LIKE ? ESCAPE '\\' OR author LIKE ? ESCAPE '\\' OR work LIKE ? ESCAPE '\\')")
            params += [pattern] * 3
        if author.strip():
            clauses.append("akey = ?")
            params.append(author_key(author))
        if lang.strip():
            clauses.append("lang = ?")
            params.append(lang.strip().casefold())
        if topic.strip():
            clauses.append("instr(lower(topics), lower(?)) > 0")
            params.append(SEP + topic.strip().casefold() + SEP)
        if collection.strip():
            clauses.append("instr(collections, ?) > 0")
            params.append(SEP + collection.strip() + SEP)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def browse(self, *, search: str = "", author: str = "", lang: str = "", topic: str = "", collection: str = "",
               limit: int = 50, offset: int = 0) -> list[Quote]:
        """A page of quotes matching every given filter (``search`` is a case-insensitive substring of the text,
        author or work; ``author`` compares normalized names; ``topic`` and ``collection`` must match exactly)."""
        where, params = self._where(search=search, author=author, lang=lang, topic=topic, collection=collection)
        rows = self._query(f"SELECT {COLUMNS} FROM quotes{where} ORDER BY rowid LIMIT ? OFFSET ?",
                           [*params, max(0, int(limit)), max(0, int(offset))])
        return [to_quote(r) for r in rows]

    def count(self, *, search: str = "", author: str = "", lang: str = "", topic: str = "",
              collection: str = "") -> int:
        """How many quotes :meth:`browse` would page through."""
        where, params = self._where(search=search, author=author, lang=lang, topic=topic, collection=collection)
        return self._query(f"SELECT count(*) FROM quotes{where}", params)[0][0]

    def ids(self, *, author: str = "", lang: str = "", topic: str = "") -> list[str]:
        """Ids of the quotes matching every given filter (for filtered retrieval)."""
        where, params = self._where(author=author, lang=lang, topic=topic)
        return [r[0] for r in self._query(f"SELECT id FROM quotes{where} ORDER BY rowid", params)]

    def by_key(self, text: str) -> list[Quote]:
        """Quotes whose matching key (:func:`quill_core._text.key`) equals that of ``text``: one text, any author."""
        k = key(text)
        if not k:
            return []
        return [to_quote(r) for r in self._query(f"SELECT {COLUMNS} FROM quotes WHERE tkey = ? ORDER BY rowid", (k,))]

    def changed_since(self, revision: int) -> list[str]:
        """Ids of the quotes added or changed after ``revision``."""
        return [r[0] for r in self._query("SELECT id FROM quotes WHERE rev > ? ORDER BY rowid", (revision,))]

    def _cached(self, name: str, compute):  # per-revision cache of whole-table aggregates
        rev = self.revision
        hit = self._cache.get(name)
        if hit and hit[0] == rev:
            return hit[1]
        value = compute()
        self._cache[name] = (rev, value)
        return value

    def _tally(self, column: str) -> Counter:
        counts: Counter = Counter()
        for (value,) in self._query(f"SELECT {column} FROM quotes WHERE {column} != ''"):
            counts.update(unpack(value))
        return counts

    def authors(self, *, limit: int = 0) -> list[str]:
        """Author names, most quoted first (ties by name); ``limit`` > 0 keeps the top ones."""
        def compute() -> list[str]:
            rows = self._query("SELECT author, count(*) AS n FROM quotes WHERE author != '' "
                               "GROUP BY akey ORDER BY n DESC, author")
            return [r[0] for r in rows]

        names = self._cached("authors", compute)
        return list(names[:limit] if limit > 0 else names)

    def topics(self, *, limit: int = 0) -> list[str]:
        """Topics, most used first (ties by name); ``limit`` > 0 keeps the top ones."""
        names = self._cached("topics", lambda: [t for t, _ in sorted(self._tally("topics").items(),
                                                                        key=lambda kv: (-kv[1], kv[0]))])
        return list(names[:limit] if limit > 0 else names)

    def collections(self) -> list[str]:
        """Collection names, largest first."""
        return [c for c, _ in self.stats().by_collection.items()]

    def stats(self) -> KBStats:
        """Quote counts: total, per language, per collection; number of distinct authors."""
        def compute() -> KBStats:
            total = len(self)
            by_lang = dict(self._query("SELECT lang, count(*) AS n FROM quotes GROUP BY lang ORDER BY n DESC, lang"))
            tally = self._tally("collections")
            by_collection = dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
            authors = self._query("SELECT count(DISTINCT akey) FROM quotes WHERE akey != ''")[0][0]
            return KBStats(quotes=total, by_lang=by_lang, by_collection=by_collection, authors=authors)

        stats = self._cached("stats", compute)
        return KBStats(quotes=stats.quotes, by_lang=dict(stats.by_lang), by_collection=dict(stats.by_collection),
                       authors=stats.authors)

    # -- writing --------------------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator["KnowledgeBase"]:
        """Group writes: everything inside lands together or not at all (other threads wait meanwhile)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                except sqlite3.DatabaseError as exc:
                    raise StoreError(f"cannot write knowledge base {self.path}: {exc}") from exc
                self._changed = False
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._conn.execute("ROLLBACK")
                    self._cache.clear()
                raise
            self._depth -= 1
            if outer:
                try:
                    self._conn.execute("COMMIT")
                except sqlite3.DatabaseError as exc:
                    self._conn.execute("ROLLBACK")
                    raise StoreError(f"cannot write knowledge base {self.path}: {exc}") from exc

    def _next_revision(self) -> int:
        """The revision the current transaction writes (bumped once per transaction)."""
        rev = int(self._conn.execute("SELECT value FROM meta WHERE name = 'revision'").fetchone()[0])
        if not self._changed:
            rev += 1
            self._conn.execute("UPDATE meta SET value = ? WHERE name = 'revision'", (str(rev),))
            self._changed = True
        return rev

    def upsert(self, quotes: Iterable[Quote], *, keys: Sequence[str] | None = None,
               signatures: np.ndarray | None = None) -> tuple[int, int]:
        """Insert new quotes and merge known ids (see the module docstring); return ``(new, merged)``.

        ``keys`` and ``signatures``, when the caller has already computed them (the importers do), are the matching
        keys (:func:`quill_core._text.key`) and MinHash signatures (:func:`quill_core._kb.dedup.minhashes`) of
        ``quotes``, position by position: they are stored as given instead of being computed again (ignored when
        their length differs from that of ``quotes``)."""
        quotes = list(quotes)
        if not quotes:
            return 0, 0
        # fold repeated ids of the batch into their first occurrence
        batch: dict[str, Quote] = {}
        first_pos: dict[str, int] = {}
        for pos, q in enumerate(quotes):
            if not isinstance(q, Quote):
                raise InputError(f"upsert takes Quote records, got {type(q).__name__}")
            if q.id in batch:
                batch[q.id] = merge_records(batch[q.id], q)
            else:
                batch[q.id], first_pos[q.id] = q, pos
        merged = len(quotes) - len(batch)
        with self.transaction():
            known = {q.id: q for q in self.get(list(batch))}
            fresh = [q for i, q in batch.items() if i not in known]
            changes = []
            for i, q in batch.items():
                if i in known:
                    merged += 1
                    combined = merge_records(known[i], q)
                    if combined != known[i]:
                        changes.append(combined)
            if fresh:
                if keys is not None and len(keys) == len(quotes):
                    tkeys = [keys[first_pos[q.id]] for q in fresh]
                else:
                    tkeys = [key(q.text) for q in fresh]
                if signatures is not None and len(signatures) == len(quotes):
                    sigs = signatures[[first_pos[q.id] for q in fresh]]
                else:
                    sigs = dedup.minhashes(tkeys)
                rev = self._next_revision()
                self._conn.executemany(
                    f"INSERT INTO quotes ({COLUMNS}, tkey, akey, sig, rev) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (schema.row_values(q) + (tkeys[n], cached_author_key(q.author), sigs[n].tobytes(), rev)
                     for n, q in enumerate(fresh)),
                )
            if changes:
                rev = self._next_revision()
                self._conn.executemany(
                    "UPDATE quotes SET work = ?, topics = ?, collections = ?, ppl = ?, popularity = ?, rev = ? "
                    "WHERE id = ?",
                    ((q.work, pack(q.topics), pack(q.collections), q.ppl, q.popularity, rev, q.id)
                     for q in changes),
                )
        return len(fresh), merged

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the quotes with these ids (unknown ids are ignored) in one transaction; the revision grows when
        one was removed. Imports use it when an attributed copy replaces a record that had no author."""
        ids = list(ids)
        if not ids:
            return
        with self.transaction():
            for lo in range(0, len(ids), CHUNK):
                chunk = ids[lo : lo + CHUNK]
                marks = ",".join("?" * len(chunk))
                if self._conn.execute(f"DELETE FROM quotes WHERE id IN ({marks})", chunk).rowcount:
                    self._next_revision()

    def set_scores(self, scores: Mapping[str, tuple[float | None, float | None]]) -> None:
        """Cache ``id -> (ppl, popularity)``; a ``None`` keeps the stored value. Unknown ids are ignored."""
        with self.transaction():
            self._conn.executemany(
                "UPDATE quotes SET ppl = coalesce(?, ppl), popularity = coalesce(?, popularity) WHERE id = ?",
                ((finite(p), finite(s), i) for i, (p, s) in scores.items()),
            )

    # -- near-duplicate support (used by the importers) ------------------------------------------------------
    def known_ids(self, ids: Sequence[str]) -> set[str]:
        """The ids among ``ids`` that are stored (one query per 500 ids; :meth:`__contains__` asks for one)."""
        found: set[str] = set()
        ids = list(ids)
        for lo in range(0, len(ids), CHUNK):
            chunk = ids[lo : lo + CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self._query(f"SELECT id FROM quotes WHERE id IN ({marks})", chunk))
        return found

    def signatures(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rowids, minhashes)`` of every stored quote, in storage order: the SQLite row numbers (what
        :meth:`keys_by_rowid` takes) and the MinHash signatures (:mod:`quill_core._kb.dedup`) of their matching
        keys. Missing or outdated signatures are (re)computed and stored first."""
        with self.transaction():
            row = self._conn.execute("SELECT value FROM meta WHERE name = 'sig_version'").fetchone()
            if row is None or row[0] != dedup.SIG_VERSION:
                self._conn.execute("UPDATE quotes SET sig = NULL")
                self._conn.execute("INSERT OR REPLACE INTO meta VALUES ('sig_version', ?)", (dedup.SIG_VERSION,))
            missing = self._conn.execute("SELECT rowid, tkey FROM quotes WHERE sig IS NULL").fetchall()
            if missing:
                sigs = dedup.minhashes([r[1] for r in missing])
                self._conn.executemany("UPDATE quotes SET sig = ? WHERE rowid = ?",
                                       ((sigs[n].tobytes(), r[0]) for n, r in enumerate(missing)))
            rows = self._conn.execute("SELECT rowid, sig FROM quotes ORDER BY rowid").fetchall()
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mins = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint16).reshape(len(rows), dedup.HASHES)
        return rowids, mins

    def keys_by_rowid(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
        """``rowid -> (id, matching key, author)`` of the rows :meth:`signatures` numbered (for near-duplicate
        checks); unknown row numbers are absent."""
        out: dict[int, tuple[str, str, str]] = {}
        rowids = [int(r) for r in rowids]
        for lo in range(0, len(rowids), CHUNK):
            chunk = rowids[lo : lo + CHUNK]
            marks = ",".join("?" * len(chunk))
            for r in self._query(f"SELECT rowid, id, tkey, author FROM quotes WHERE rowid IN ({marks})", chunk):
                out[r[0]] = (r[1], r[2], r[3])
        return out

