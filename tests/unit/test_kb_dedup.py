"""Near-duplicate detection: n-gram Jaccard, MinHash/LSH candidates, author compatibility."""

from __future__ import annotations

import numpy as np
import pytest

from quill_core._kb import dedup
from quill_core._names import compatible_authors
from quill_core._text import key

VARIANT_A = key("You can give without loving, but you can never love without giving.")
VARIANT_B = key("You can give without loving, but you cannot love without giving.")
OTHER = key("Imagination is more important than knowledge.")


def test_jaccard_of_character_ngrams() -> None:
    assert dedup.jaccard(VARIANT_A, VARIANT_A) == 1.0
    assert dedup.jaccard(VARIANT_A, VARIANT_B) >= dedup.NEAR_DUP_THRESHOLD
    assert dedup.jaccard(VARIANT_A, OTHER) < 0.2
    assert dedup.jaccard("ab", "ab") == 1.0 and dedup.jaccard("ab", "abc") == 0.0


def test_minhashes_are_deterministic_and_batch_independent(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [VARIANT_A, VARIANT_B, OTHER, "", "ab", key("一万年太久，只争朝夕。")]
    together = dedup.minhashes(keys)
    assert together.shape == (len(keys), dedup.HASHES) and together.dtype == np.uint16
    alone = np.stack([dedup.minhashes([k])[0] for k in keys])
    assert (together == alone).all()
    monkeypatch.setattr(dedup, "_CHUNK", 16)  # many chunks: same answer
    assert (dedup.minhashes(keys) == together).all()


def test_minhash_agreement_estimates_jaccard() -> None:
    sigs = dedup.minhashes([VARIANT_A, VARIANT_B, OTHER])
    assert abs((sigs[0] == sigs[1]).mean() - dedup.jaccard(VARIANT_A, VARIANT_B)) < 0.2
    assert (sigs[0] == sigs[2]).mean() < 0.2


def test_candidate_pairs_find_near_duplicates_old_and_new() -> None:
    old = dedup.minhashes([OTHER, VARIANT_A])
    new = dedup.minhashes([key("Something else entirely, about the sea and ships."), VARIANT_B, VARIANT_B])
    pairs = {tuple(p) for p in dedup.candidate_pairs(old, new).tolist()}
    assert (1, 1) in pairs  # new VARIANT_B ~ old VARIANT_A
    assert (2, 3) in pairs  # the repeat ~ the earlier new one (new ones are indexed after the old ones)
    assert not any(i == 0 for i, _ in pairs)
    assert dedup.candidate_pairs(old, new[:0]).shape == (0, 2)


def test_candidate_pairs_scale_to_many_quotes() -> None:
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    texts = ["".join(rng.choice(letters, size=60)) for _ in range(20_000)]
    texts[19_999] = texts[123][:-2] + "zz"
    pairs = dedup.candidate_pairs(np.zeros((0, dedup.HASHES), dtype=np.uint16), dedup.minhashes(texts))
    assert (19_999, 123) in {tuple(p) for p in pairs.tolist()}
    assert len(pairs) < 100


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("Albert Einstein", "albert einstein.", True),
        ("Einstein", "Albert Einstein", True),
        ("", "Anyone", True),
        ("Oscar Wilde", "O. Wilde", True),
        ("William Shakespeare", "William Shakespear", True),
        ("Martin Luther King Jr.", "Martin Luther King", True),
        ("Henry James", "William James", False),
        ("Albert Einstein", "Mark Twain", False),
    ],
)
def test_same_author(a: str, b: str, same: bool) -> None:
    assert compatible_authors(a, b) is same


def test_name_suffixes_are_one_list() -> None:
    from quill_core._names import NAME_SUFFIXES, is_name_suffix

    assert {"jr", "iii", "phd"} <= NAME_SUFFIXES
    assert all(is_name_suffix(w) for w in ("Jr.", "JR", "iii", "PhD", "md."))
    assert not any(is_name_suffix(w) for w in ("Junior", "Jr..", "ivy", "", "v"))
