"""Near-duplicate detection: Jaccard similarity of character n-grams (QUILL's method), made to scale with MinHash/LSH.

Two quotes are *near duplicates* when the Jaccard similarity of the sets of character :data:`NGRAM`-grams of their
matching keys (:func:`quill_core._text.key`: case-folded letters and digits only) is at least
:data:`NEAR_DUP_THRESHOLD`, and their authors are compatible (:func:`quill_core._names.compatible_authors`). Comparing every pair of ~300k
quotes is out of the question, so each key gets a MinHash signature of :data:`BANDS` x :data:`ROWS` values
(multiply-shift hashes of the n-gram codes, numpy-vectorised over whole batches); quotes sharing any band are
*candidates* and only candidates are compared exactly. With 10 bands of 5 rows a pair at Jaccard 0.8 becomes a
candidate with probability 0.98, a pair at 0.5 with 0.27 and one at 0.3 with 0.02, so the exact check stays cheap.
Signatures are deterministic (fixed seeds), so they can be stored with the records and reused across imports.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

NGRAM = 3
NEAR_DUP_THRESHOLD = 0.75
"""Jaccard similarity of character 3-gram sets at or above which two quotes are one (when their authors agree)."""
BANDS = 10
ROWS = 5
HASHES = BANDS * ROWS
SIG_VERSION = f"minhash-{NGRAM}-{BANDS}x{ROWS}-v1"
SIG_CHARS = 400
"""Only the first this many key characters enter a signature (bounds the cost of very long texts; the exact check
that follows always compares whole keys)."""
ESTIMATE_MARGIN = 0.2
"""A candidate pair is checked exactly only when its MinHash estimate is at least threshold - margin."""
MAX_BUCKET_PEERS = 2000
"""A quote is paired with at most this many earlier members of one LSH bucket (guards against huge buckets)."""

_rng = np.random.default_rng(20240611)
_MUL = _rng.integers(0, 2**31, size=HASHES, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
_ADD = _rng.integers(0, 2**32, size=HASHES, dtype=np.uint32)
_BAND_MIX = (_rng.integers(1, 2**62, size=ROWS, dtype=np.uint64) << np.uint64(1)) | np.uint64(1)
_CHUNK = 1 << 20  # n-grams hashed per numpy step (bounds memory)


def shingles(k: str) -> frozenset[str]:
    """The set of character n-grams of a matching key (the whole key when it is shorter than n)."""
    if len(k) <= NGRAM:
        return frozenset((k,))
    return frozenset(k[i : i + NGRAM] for i in range(len(k) - NGRAM + 1))


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the n-gram sets of two matching keys."""
    if a == b:
        return 1.0
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb)


def minhashes(keys: Sequence[str]) -> np.ndarray:
    """MinHash signatures of matching keys: a uint16 array of shape ``(len(keys), BANDS * ROWS)``
    (the low 16 bits of each 32-bit minimum: two different minima agree by chance once in 65,536)."""
    n = len(keys)
    out = np.zeros((n, HASHES), dtype=np.uint16)
    if n == 0:
        return out
    padded = [k[:SIG_CHARS] if len(k) >= NGRAM else (k + "\x00" * NGRAM)[:NGRAM] for k in keys]
    lengths = np.fromiter((len(k) for k in padded), dtype=np.int64, count=n)
    counts = lengths - (NGRAM - 1)
    codes = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    # code of the n-gram starting at each position (exact: 3 code points fit in 64 bits)
    grams = codes[: len(codes) - NGRAM + 1].copy()
    for j in range(1, NGRAM):
        grams *= np.uint64(0x110000)
        grams += codes[j : len(codes) - NGRAM + 1 + j]
    # drop the n-grams that cross from one key into the next
    valid = np.ones(len(grams), dtype=bool)
    ends = np.cumsum(lengths)
    for t in range(1, NGRAM):
        valid[(ends - NGRAM + t)[:-1]] = False
    grams = grams[valid]
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    # one strong 64-bit mix per n-gram, folded to 32 bits; each of the HASHES functions is then a cheap
    # odd-multiplier permutation of that (well mixed) 32-bit value
    grams ^= grams >> np.uint64(31)
    grams *= np.uint64(0x7FB5D329728EA185)
    grams ^= grams >> np.uint64(27)
    grams *= np.uint64(0x81DADEF4BC2DD44D)
    grams ^= grams >> np.uint64(33)
    mixed = grams.astype(np.uint32)
    del grams
    buf = np.empty(min(_CHUNK + int(counts.max()), len(mixed)), dtype=np.uint32)
    lo = 0
    while lo < n:  # keys in chunks so temporaries stay small
        hi = max(int(np.searchsorted(first, first[lo] + _CHUNK, side="left")), lo + 1)
        g_lo, g_hi = int(first[lo]), int(first[hi]) if hi < n else len(mixed)
        block, tmp = mixed[g_lo:g_hi], buf[: g_hi - g_lo]
        offsets = first[lo:hi] - g_lo
        for h in range(HASHES):
            np.multiply(block, _MUL[h], out=tmp)
            tmp += _ADD[h]
            out[lo:hi, h] = np.minimum.reduceat(tmp, offsets)  # low 16 bits kept
        lo = hi
    return out


def _bands(mins: np.ndarray) -> np.ndarray:
    keys = np.empty((len(mins), BANDS), dtype=np.int64)
    wide = mins.astype(np.uint64)
    for b in range(BANDS):
        mixed = (wide[:, b * ROWS : (b + 1) * ROWS] * _BAND_MIX).sum(axis=1, dtype=np.uint64)
        keys[:, b] = mixed.view(np.int64)
    return keys


def candidate_pairs(old: np.ndarray, new: np.ndarray, *, threshold: float = NEAR_DUP_THRESHOLD) -> np.ndarray:
    """Likely near-duplicate pairs among MinHash signatures: rows ``(i, j)`` where new quote ``i`` may duplicate
    quote ``j``, indexed over ``old`` then ``new`` (``j < len(old)`` is old quote ``j``, else new quote
    ``j - len(old)``, always one before ``i``). Pairs share an LSH band and their estimated similarity is at least
    ``threshold - ESTIMATE_MARGIN``; the caller confirms them with :func:`jaccard`."""
    n_old, n_new = len(old), len(new)
    if n_new == 0:
        return np.zeros((0, 2), dtype=np.int64)
    both = np.concatenate([old, new]) if n_old else new
    bands = _bands(both)
    found = []
    for b in range(BANDS):
        col = bands[:, b]
        order = np.argsort(col, kind="stable")  # equal keys keep index order
        ranked = col[order]
        for d in range(1, MAX_BUCKET_PEERS + 1):
            same = np.flatnonzero(ranked[d:] == ranked[:-d])
            if len(same) == 0:
                break
            i, j = order[same + d], order[same]
            keep = i >= n_old
            found.append(np.stack([i[keep], j[keep]], axis=1))
    if not found:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.unique(np.concatenate(found), axis=0)
    if len(pairs) == 0:
        return pairs.astype(np.int64)
    agree = np.zeros(len(pairs), dtype=np.float64)
    for lo in range(0, len(pairs), 1 << 16):
        chunk = pairs[lo : lo + (1 << 16)]
        agree[lo : lo + len(chunk)] = (both[chunk[:, 0]] == both[chunk[:, 1]]).mean(axis=1)
    pairs = pairs[agree >= threshold - ESTIMATE_MARGIN]
    pairs[:, 0] -= n_old
    return pairs.astype(np.int64)
