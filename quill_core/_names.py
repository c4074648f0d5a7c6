"""Author names: the one home of cleaning a name for display, keying it for comparison, and deciding whether two
attributions name the same person."""

from __future__ import annotations

import re

from ._text import normalize

ANONYMOUS = frozenset({"", "anonymous", "anon", "unknown", "unknown author", "author unknown", "n/a", "na", "none",
                       "various", "佚名", "无名氏", "未知"})
"""Spellings of 'no known author' (compared case-folded); every one becomes ''."""


def clean_author(author: str | None) -> str:
    """A display author: normalized, trailing punctuation dropped, the many spellings of 'unknown' unified to ''."""
    a = normalize(author or "").strip(" ,;:.-\u2014\"'()[]")
    a = re.sub(r"^(by|—|-)\s+", "", a, flags=re.I)
    return "" if a.casefold() in ANONYMOUS else a


def author_key(author: str | None) -> str:
    """Key for comparing authors: cleaned, case-folded, letters only ('Albert  Einstein.' == 'albert einstein')."""
    return "".join(ch for ch in clean_author(author).casefold() if ch.isalnum())


NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md"})
"""Words that may follow a name without being part of it: generations and degrees ("Martin Luther King Jr.",
"John Smith, PhD"), case-folded, without their dot."""
_NAME_SUFFIX = re.compile(f"(?:{'|'.join(sorted(NAME_SUFFIXES))})\\.?", re.I)


def is_name_suffix(word: str) -> bool:
    """``word`` is one of :data:`NAME_SUFFIXES` in any case, with or without a final dot ("Jr.", "III", "phd")."""
    return _NAME_SUFFIX.fullmatch(word) is not None
