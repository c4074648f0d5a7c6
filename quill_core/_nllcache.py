"""The on-disk cache of quote-alone NLLs: one small SQLite file per scoring model under ``QUILL_HOME/models``.

A quote scored on its own gives the same numbers every time for one model and one scorer configuration, so
:meth:`quill_core._scorer.PerplexityScorer.quote_alone` computes it once, ever, and keeps it here. Rows are keyed
by the SHA-1 of ``salt + text``: the salt names the model and the settings that change the numbers, so a change of
any of them simply misses. Every failure (a read-only home, a locked or corrupt file) only costs speed: the cache
then behaves as empty.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

HeadTail = tuple[float, int, float, int]
"""``(head total, head tokens, tail total, tail tokens)`` of a quote scored alone."""

_CHUNK = 500  # keys per IN (...) query


class NLLCache:
    """A SQLite table ``key -> (head total, head tokens, tail total, tail tokens)``; thread-safe."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        try:
            self._conn: Any = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._conn.execute("CREATE TABLE IF NOT EXISTS nll (key TEXT PRIMARY KEY, ht REAL, hn INT, tt REAL, tn INT)")
        except sqlite3.Error:
            self._conn = None

    @staticmethod
    def _keys(salt: str, texts: Sequence[str]) -> dict[str, str]:
        return {hashlib.sha1((salt + t).encode("utf-8")).hexdigest(): t for t in texts}

    def get(self, salt: str, texts: Sequence[str]) -> dict[str, HeadTail]:
        """``text -> row`` for the ``texts`` stored under ``salt``; missing ones are absent ({} on any failure)."""
        keys = self._keys(salt, texts)
        if self._conn is None or not keys:
            return {}
        out = {}
        with self._lock:
            try:
                for start in range(0, len(keys), _CHUNK):
                    chunk = list(keys)[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    for k, ht, hn, tt, tn in self._conn.execute(f"SELECT * FROM nll WHERE key IN ({marks})", chunk):
                        out[keys[k]] = (ht, hn, tt, tn)
            except sqlite3.Error:
                return {}
        return out

    def put(self, salt: str, rows: Mapping[str, HeadTail]) -> None:
        """Store ``text -> row`` under ``salt`` (replacing what was there); failures are ignored."""
        if self._conn is None:
            return
        values = [(k, *rows[t]) for k, t in self._keys(salt, list(rows)).items()]
        with self._lock:
            try:
                self._conn.executemany("INSERT OR REPLACE INTO nll VALUES (?, ?, ?, ?, ?)", values)
            except sqlite3.Error:
                pass

    def clear(self) -> None:
        """Forget every row (benchmarks use it to measure the cold path)."""
        if self._conn is not None:
            with self._lock:
                try:
                    self._conn.execute("DELETE FROM nll")
                except sqlite3.Error:
                    pass
