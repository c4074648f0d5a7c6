"""The writer's paragraph as a query: split at the ``[Q]`` insertion point, with the text retrieval embeds."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ._errors import InputError
from ._text import detect_lang, normalize, split_sentences
from ._types import Filters, Query

MARKER = "[Q]"
SAME_LANGUAGE = "auto"  # quote_lang: quotes in the paragraph's language (when the knowledge base holds some)
ANY_LANGUAGE = "any"  # quote_lang: quotes in every language
MAX_PARAGRAPH_CHARS = 20_000
QUERY_CONTEXT_CHARS = 600


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


def quote_filters(query: Query, filters: Filters | None, quote_lang: str, *,
                  holds: Callable[[str], bool]) -> Filters:
    """The retrieval filters of a suggestion request once ``quote_lang`` is applied (``holds(lang)``: whether the
    knowledge base holds quotes in ``lang``).

    ``"auto"`` keeps the quotes in the paragraph's language when the knowledge base holds some, and any language
    otherwise (a paragraph in a language the knowledge base lacks still gets suggestions); ``"any"`` keeps every
    language; a language code (``en``, ``zh``, ...) keeps that one, and is an :class:`InputError` when the knowledge
    base holds none. A language already in ``filters`` was chosen explicitly: ``"auto"`` keeps it, and any other
    choice must agree with it."""
    filters = filters or Filters()
    choice = (quote_lang or SAME_LANGUAGE).strip().lower()
    if choice == SAME_LANGUAGE:
        if filters.lang:
            return filters
        return replace(filters, lang=query.lang if query.lang and holds(query.lang) else "")
    lang = "" if choice == ANY_LANGUAGE else choice
    if filters.lang and filters.lang != lang:
        raise InputError(f"two quote languages were asked for ({filters.lang!r} and {quote_lang!r}): choose one")
    if lang and not holds(lang):
        raise InputError(f"the knowledge base holds no quotations in {lang!r}: choose a language it holds, "
                         f"{ANY_LANGUAGE!r} or {SAME_LANGUAGE!r} (the paragraph's language)")
    return replace(filters, lang=lang)
