"""The one path every import takes: clean each record, merge duplicates, write everything in one transaction.

Exact duplicates share an id (:func:`quill_core._types.quote_id`: matching key of the text + author key). Near
duplicates (:mod:`quill_core._kb.dedup`: character 3-gram Jaccard >= 0.75 and compatible authors) merge into the
earliest record: a stored one first, else an earlier one of the batch. Merging keeps the first record's text and
author and unites collections and topics, so a quote attested by several collections lists them all. One
exception: an attributed copy is never folded into a record without an author; it replaces that record instead
(taking over its collections and topics), so an attribution is never lost to an anonymous duplicate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from .._errors import InputError
from .._types import ImportReport, Quote, RejectedRow, Progress
from .._names import compatible_authors
from . import dedup
from .clean import Row, make_quote, text_key
from .records import KnowledgeBase



FIELDS = ("text", "author", "work", "topics", "lang", "ppl", "popularity")
"""The fields of a record (:class:`Row`), as mapping keys too."""


def _as_quote(row: object, collection: str) -> tuple[Quote | None, str, int]:
    if isinstance(row, Row):
        quote, reason = make_quote(row.text, author=row.author, work=row.work, topics=row.topics, lang=row.lang,
                                   ppl=row.ppl, popularity=row.popularity, collections=(collection,))
        return quote, reason, row.line
    if isinstance(row, Quote):  # cleaned again; keeps the collections it already names
        quote, reason = make_quote(row.text, author=row.author, work=row.work, topics=row.topics, lang=row.lang,
                                   ppl=row.ppl, popularity=row.popularity, collections=(*row.collections, collection))
        return quote, reason, 0
    if isinstance(row, Mapping):
        fields = {f: row[f] for f in FIELDS if f in row}
        if "text" not in fields:
            return None, "no quote text (field 'text')", int(row.get("line", 0) or 0)
        return _as_quote(Row(**fields, line=int(row.get("line", 0) or 0)), collection)
    return None, f"not a record: {type(row).__name__}", 0


def import_records(kb: KnowledgeBase, rows: Iterable[Row | RejectedRow | Quote | Mapping], *, collection: str,
                   source: str = "", format: str = "records", progress: Progress | None = None,
                   total: int = 0) -> ImportReport:
    """Clean, de-duplicate (exactly and nearly, against the batch and the knowledge base) and store records.

    ``rows`` may mix :class:`Row`, :class:`RejectedRow` (reported as is), :class:`Quote` (cleaned again) and
    mappings with :data:`FIELDS` keys. Everything accepted is written in one transaction. ``total`` (optional) is
    the expected number of rows, for progress messages."""
    if not collection or not str(collection).strip():
        raise InputError("a collection name is required")
    collection = str(collection).strip()
    rejected: list[RejectedRow] = []
    accepted: list[Quote] = []
    read = 0
    for row in rows:
        read += 1
        if isinstance(row, RejectedRow):
            rejected.append(row)
            continue
        quote, reason, line = _as_quote(row, collection)
        if quote is None:
            rejected.append(RejectedRow(line or read, reason))
        else:
            accepted.append(quote)
        if progress and read % 5000 == 0:
            progress(0.6 * min(read / total, 1.0) if total else 0.3, f"cleaned {read:,} rows")
    if progress:
        progress(0.6, f"cleaned {read:,} rows: {len(accepted):,} accepted, {len(rejected):,} rejected")
    targets, adopted, keys, sigs = _plan(kb, accepted, progress=progress)
    quotes = [q if t is None else _retarget(q, t) for q, t in zip(accepted, targets)]
    new_ids = {q.id for q, t in zip(accepted, targets) if t is None} - set(adopted.values())
    order = sorted(range(len(quotes)), key=lambda n: targets[n] is not None)  # records before contributions
    if progress:
        progress(0.85, f"writing {len(new_ids):,} new quotes")
    with kb.transaction():
        new_ids -= kb.known_ids(list(new_ids))
        if adopted:
            quotes = _adopt(kb, quotes, adopted)
        kb.upsert([quotes[n] for n in order], keys=[keys[n] for n in order], signatures=sigs[order])
    imported = len(new_ids)
    if progress:
        progress(1.0, f"imported {imported:,} quotes, merged {len(accepted) - imported:,}")
    return ImportReport(source=source or collection, format=format, read=read, imported=imported,
                        merged=len(accepted) - imported, rejected=tuple(rejected))


def _adopt(kb: KnowledgeBase, quotes: list[Quote], adopted: dict[str, str]) -> list[Quote]:
    """Replace stored quotes that had no author by the attributed copies just imported (``old id -> new id``):
    the new record takes over what the old one had gathered, the old one is deleted."""
    old = {q.id: q for q in kb.get(list(adopted))}
    by_new = {new: old[old_id] for old_id, new in adopted.items() if old_id in old}
    out = []
    for q in quotes:
        prior = by_new.pop(q.id, None)
        if prior is not None:
            q = Quote(id=q.id, text=q.text, author=q.author, lang=q.lang, work=q.work or prior.work,
                      topics=tuple(dict.fromkeys(prior.topics + q.topics)),
                      collections=tuple(dict.fromkeys(prior.collections + q.collections)),
                      ppl=prior.ppl if prior.ppl is not None else q.ppl,
                      popularity=max((v for v in (prior.popularity, q.popularity) if v is not None), default=None))
        out.append(q)
    kb.delete(list(old))
    return out


def _retarget(quote: Quote, target: str) -> Quote:
    """``quote`` as a contribution to the record ``target`` (its collections, topics, work, scores)."""
    return Quote(text=quote.text, author=quote.author, work=quote.work, topics=quote.topics, lang=quote.lang,
                 collections=quote.collections, ppl=quote.ppl, popularity=quote.popularity, id=target)


def _plan(kb: KnowledgeBase, quotes: list[Quote], *,
          progress: Progress | None) -> tuple[list[str | None], dict[str, str], list[str], np.ndarray]:
    """Where each quote goes: ``targets[n]`` is the id of the record quote ``n`` merges into (an exact or near
    duplicate), None when it is a record of its own; ``adopted`` maps stored quotes without an author to the
    attributed new copy that replaces them; also the quotes' matching keys and MinHash signatures (zero rows for
    quotes that merge by id).

    Exact duplicates share an id. A new quote merges into its earliest near duplicate (see :mod:`dedup`): a stored
    quote first, else an earlier new quote of the batch; except that an attributed quote is never folded into one
    without an author: it takes that one's place instead."""
    keys = [text_key(q.text) for q in quotes]
    sigs = np.zeros((len(quotes), dedup.HASHES), dtype=np.uint16)
    targets: list[str | None] = [None] * len(quotes)
    adopted: dict[str, str] = {}
    redirect: dict[str, str] = {}  # batch record id -> the attributed batch record that replaced it
    first: dict[str, int] = {}
    for n, q in enumerate(quotes):
        first.setdefault(q.id, n)
    stored = kb.known_ids(list(first))
    fresh = [n for n in first.values() if quotes[n].id not in stored]
    for n in first.values():
        if quotes[n].id in stored:
            targets[n] = quotes[n].id
    if fresh:
        if progress:
            progress(0.65, f"looking for near duplicates among {len(fresh):,} new quotes")
        sigs[fresh] = fresh_sigs = dedup.minhashes([keys[n] for n in fresh])
        if len(kb):
            rowids, old = kb.signatures()
        else:
            rowids, old = np.zeros(0, dtype=np.int64), np.zeros((0, dedup.HASHES), dtype=np.uint16)
        pairs = dedup.candidate_pairs(old, fresh_sigs)
        if progress:
            progress(0.75, f"checking {len(pairs):,} candidate pairs")
        n_old = len(old)
        old_info = kb.keys_by_rowid(sorted({int(rowids[j]) for j in pairs[:, 1] if j < n_old}))
        peers: dict[int, list[int]] = {}
        for i, j in pairs.tolist():
            peers.setdefault(i, []).append(j)
        for i in sorted(peers):
            n = fresh[i]
            for j in sorted(peers[i]):  # stored quotes first, then earlier new ones, oldest first
                m = -1
                if j < n_old:
                    other_id, other_key, other_author = old_info[int(rowids[j])]
                else:
                    m = fresh[j - n_old]
                    if targets[m] is not None:
                        continue  # merged itself
                    other_id, other_key, other_author = quotes[m].id, keys[m], quotes[m].author
                if not (compatible_authors(quotes[n].author, other_author)
                        and dedup.jaccard(keys[n], other_key) >= dedup.NEAR_DUP_THRESHOLD):
                    continue
                if quotes[n].author and not other_author:  # the attributed copy replaces the anonymous one
                    if m >= 0:
                        targets[m] = quotes[n].id
                        redirect[other_id] = quotes[n].id
                    elif other_id in adopted:
                        targets[n] = adopted[other_id]
                    else:
                        adopted[other_id] = quotes[n].id
                else:
                    targets[n] = other_id
                break
    redirect.update(adopted)
    for n, q in enumerate(quotes):  # repeats follow their first occurrence; replaced records their successor
        if first[q.id] != n:
            targets[n] = targets[first[q.id]] or q.id
        seen = set()
        while targets[n] in redirect and targets[n] not in seen:
            seen.add(targets[n])
            targets[n] = redirect[targets[n]]
    return targets, adopted, keys, sigs
