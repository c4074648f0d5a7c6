"""TEMPORARY (replaced by helper A's split of _lm): the Scorer protocol."""

from __future__ import annotations

from typing import Protocol, Sequence

from ._lm import NLL, PassageNLL, PerplexityScorer  # noqa: F401


class Scorer(Protocol):
    """What the ranking and insertion stages ask of a language model: per-part NLLs of passages."""

    def score(self, before: str, quotes: Sequence[str], after: str = "") -> list[PassageNLL]: ...

    def quote_alone(self, quotes: Sequence[str]) -> list[PassageNLL]: ...
