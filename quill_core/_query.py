"""The writer's paragraph as a query: split at the ``[Q]`` insertion point, with the text retrieval embeds."""

from __future__ import annotations

from dataclasses import replace

from ._errors import InputError
from ._text import detect_lang, normalize, split_sentences
from ._types import Filters, Query

MARKER = "[Q]"
MAX_PARAGRAPH_CHARS = 20_000
QUERY_CONTEXT_CHARS = 600
AUTO_LANGS = ("en", "zh")
"""The paragraph languages whose quotes "auto" picks (the starter's languages); any other paragraph sees every
language."""


def parse_query(paragraph: str, *, max_chars: int = MAX_PARAGRAPH_CHARS) -> Query:
    """Split ``paragraph`` at its ``[Q]`` marker (or its end); raise :class:`InputError` on unusable input."""
    if paragraph is None or not paragraph.strip() or paragraph.strip() == MARKER:
        raise InputError("the paragraph is empty: paste some text (mark the insertion point with [Q])")
    if len(paragraph) > max_chars:
        raise InputError(f"the paragraph has {len(paragraph):,} characters; the limit is {max_chars:,}")
    if "\x00" in paragraph:
        raise InputError("the paragraph contains binary data")
    count = paragraph.count(MARKER)
    if count > 1:
        raise InputError(f"mark one insertion point: found {count} {MARKER} markers")
    if count == 1:
        before, after = paragraph.split(MARKER)
    else:
        before, after = paragraph.rstrip(), ""
    return Query(before=before, after=after, lang=detect_lang(before + after))


def query_text(query: Query) -> str:
    """The text retrieval embeds: the last two sentences before the insertion point and the first one after it."""
    before = split_sentences(query.before)[-2:]
    after = split_sentences(query.after)[:1]
    text = " ".join(before + after) or query.text
    return normalize(text)[-QUERY_CONTEXT_CHARS:]


def language_filter(query: Query, filters: Filters | None = None, *, quote_lang: str = "auto") -> Filters:
    """``filters`` with the quotes' language decided: a language already in ``filters`` wins, then ``quote_lang``:
    ``"auto"`` (the paragraph's own language, when it is one of :data:`AUTO_LANGS`), ``"any"`` (no filter) or a
    language code."""
    filters = filters or Filters()
    if filters.lang or quote_lang == "any":
        return filters
    if quote_lang == "auto":
        return replace(filters, lang=query.lang) if query.lang in AUTO_LANGS else filters
    return replace(filters, lang=quote_lang)
