"""Author names: the one home of cleaning a name for display, keying it for comparison, and deciding whether two
attributions name the same person."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from ._text import has_cjk, key, normalize, simplified_chars
from ._zhnames import chinese_name

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


def chinese_form(author: str | None) -> str:
    """How a Chinese sentence names ``author``: a Latin-script name with a known Chinese form takes it
    ("Confucius" -> 孔子, "Albert Einstein" -> 爱因斯坦; :mod:`quill_core._zhnames`); any other name stays as written
    (cleaned)."""
    name = clean_author(author)
    if not name or has_cjk(name):
        return name
    return chinese_name(author_key(name)) or name


# -- same author: the one home of "do these two names name one person?" -----------------------------------------
NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md"})
"""Generational and degree suffixes, which tell nobody apart ('Jr.', 'III', 'PhD'); compared case-folded, no dots."""
_NAME_SUFFIX = re.compile(f"(?:{'|'.join(sorted(NAME_SUFFIXES))})\\.?", re.I)


def is_name_suffix(word: str) -> bool:
    """``word`` is one of :data:`NAME_SUFFIXES` in any case, with or without a final dot ("Jr.", "III", "phd")."""
    return _NAME_SUFFIX.fullmatch(word) is not None


def _name_tokens(author: str) -> list[str]:
    """The words of a name: case-folded, letters and digits only, suffixes ('Jr.', 'III') dropped."""
    tokens = ["".join(ch for ch in t if ch.isalnum()) for t in author.casefold().replace(".", ". ").split()]
    return [t for t in tokens if t and t not in NAME_SUFFIXES]


def compatible_authors(a: str, b: str) -> bool:
    """Whether two records' authors can name one person (the rule for merging near-duplicate quotes).

    True for equal keys, an empty or unknown author on either side, the same surname with compatible first initials
    or one side a surname only ("Einstein" / "A. Einstein" / "Albert Einstein"), one key inside the other when the
    shorter has at least 4 letters, or a small misspelling (ratio >= 90). Names in any script go through the same
    rule, so a Chinese name contained in another counts only from 4 characters on (see :func:`same_author`).
    """
    ka, kb = author_key(a), author_key(b)
    if not ka or not kb or ka == kb:
        return True
    ta, tb = _name_tokens(a), _name_tokens(b)
    if not ta or not tb:
        return True
    if ta[-1] == tb[-1] and (len(ta) == 1 or len(tb) == 1 or ta[0][0] == tb[0][0]):
        return True
    if ka in kb or kb in ka:
        return min(len(ka), len(kb)) >= 4
    return fuzz.ratio(ka, kb) >= 90


def same_author(claimed: str, actual: str) -> bool:
    """Whether an attribution (``claimed``, e.g. what a draft says) names the author of record (``actual``).

    Nothing claimed or nothing on record: no contradiction (True). A Latin-script name with a known Chinese form
    is compared in that form (孔子 names "Confucius"). Chinese names (either key holds a Chinese character) match
    when one key contains the other ("鲁迅" / "鲁迅先生"), but a Chinese name against an unknown author does not.
    Other names follow :func:`compatible_authors`: initials and surname-only forms match ("Einstein",
    "A. Einstein", "Albert Einstein"), suffixes are ignored, small misspellings forgiven.
    """
    if not claimed or not actual:
        return True
    ka, kb = author_key(claimed), author_key(actual)
    if has_cjk(ka) != has_cjk(kb):
        ka, kb = author_key(chinese_form(claimed)), author_key(chinese_form(actual))
    if has_cjk(ka + kb):
        return bool(ka and kb) and (ka in kb or kb in ka)
    return compatible_authors(claimed, actual)


def mentions_author(text: str, author: str) -> bool:
    """Whether ``text`` names ``author`` in full: every word of the name, in order, with only non-word characters
    between them ('Albert Einstein' in 'as albert  einstein said'; case-insensitive). The name is used as given."""
    words = re.findall(r"\w+", author.lower())
    pattern = r"\W+".join(re.escape(w) for w in words)
    return bool(words) and re.search(pattern, text.lower()) is not None


def same_work(claimed: str, actual: str) -> bool:
    """Whether a work a draft names (``claimed``, e.g. 送杜少府之任蜀州 from 《送杜少府之任蜀州》) is the work of record
    (``actual``, e.g. 杜少府之任蜀州). Nothing on either side: no contradiction (True). Titles match when one key
    contains the other (any script; 论语 / 论语·学而, Hamlet / The Tragedy of Hamlet), or by a small misspelling."""
    ka, kb = simplified_chars(key(claimed)), simplified_chars(key(actual))
    if not ka or not kb:
        return True
    return ka in kb or kb in ka or fuzz.ratio(ka, kb) >= 90
