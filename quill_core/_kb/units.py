"""Quotable units of classical Chinese text: Traditional to Simplified, editorial notes out, lines into couplets and
sentences of at most :data:`MAX_UNIT_CHARS` characters.

A *unit* is what a writer would quote: a couplet or line of verse, a sentence of prose. :func:`units` turns the
paragraphs of one poem or chapter into units:

1. :func:`clean_paragraph`: editorial notes in parentheses (``(海 一作：水)``) are dropped, a space between two
   Chinese characters (弟子规 writes ``弟子規 聖人訓``) becomes ``，`` and corner brackets ``「」『』`` the quotation
   marks of Simplified text ``“”‘’``;
2. each paragraph is cut after every sentence end (``。！？`` and ``!?``, closing quotation marks included), so a
   stanza of 诗经 gives its couplets and a paragraph of prose its sentences;
3. a sentence longer than :data:`MAX_UNIT_CHARS` is cut at its semicolons (``；;``), and a part still too long at
   its clauses (``，、：``); the parts are packed back together greedily up to that length;
4. a piece with fewer than :data:`MIN_UNIT_HAN` Chinese characters (a ci line such as ``近清明。``, a four-character
   line of 千字文) is joined to the next one (with ``，`` when it has no punctuation of its own), as long as the
   result stays within the limit;
5. quotation marks left without their partner by the cuts are dropped; a unit that still holds a placeholder for
   a missing character (``□``, ``{上休下鳥}``-style descriptions), an editor's mark (an unclosed parenthesis,
   ``〖〗``, ``○``) or fewer than 4 Chinese characters is left out.

:func:`simplified` converts Traditional script with OpenCC's ``t2s`` configuration (PyPI ``opencc``; one converter
per process).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .._errors import NotFoundError
from .._text import HAN, HAN_RANGES, VARIANT_CHARS


MAX_UNIT_CHARS = 60
"""A longer sentence is cut at its clauses."""
MIN_UNIT_HAN = 6
"""A piece with fewer Chinese characters is joined to the next one."""
MIN_KEEP_HAN = 4
"""A unit with fewer Chinese characters is left out (a Chinese idiom has four)."""
OPENCC_CONFIG = "t2s"
"""The OpenCC configuration shipped in the ``opencc`` wheel that converts Traditional to Simplified."""

_NOTE = re.compile(r"[(（][^()（）]*[)）]")
_HAN_SPACE = re.compile(f"(?<=[{HAN_RANGES}])[ \u3000]+(?=[{HAN_RANGES}])")
_SENTENCE = re.compile(r"[^。！？!?]*(?:[。！？!?]+[”’」』\"']*|$)")
_SEMICOLON = re.compile(r"[^；;]*(?:[；;]+[”’」』]*|$)")
_CLAUSE = re.compile(r"[^，、：,:]*(?:[，、：,:]+[”’」』]*|$)")
_CORNERS = str.maketrans("「」『』", "“”‘’")
_PLACEHOLDER = re.compile(r"[□■{}\[\]()（）〖〗○]")
_REPEATED = re.compile(r"([。！？，；、])\1+")
_PUNCT_END = "。！？；，、：!?;,:”’」』…"
_PAIRS = {"“": "”", "「": "」", "『": "』", "‘": "’"}
_CLOSERS = {close: open_ for open_, close in _PAIRS.items()}
_QUOTE_MARK = re.compile("[“”「」『』‘’]")


@lru_cache(maxsize=1)
def _converter():  # one OpenCC converter per process: loading its dictionaries is the expensive part
    try:
        import opencc
    except ImportError:
        raise NotFoundError("the opencc package is missing: pip install opencc==1.4.2 (Traditional to Simplified "
                            "conversion of Chinese quotes)") from None
    return opencc.OpenCC(OPENCC_CONFIG)


_VARIANTS = str.maketrans(VARIANT_CHARS)


def simplified(text: str) -> str:
    """``text`` in Simplified script (OpenCC ``t2s``, then :data:`quill_core._text.VARIANT_CHARS`); Simplified and
    non-Chinese text come back unchanged."""
    return _converter().convert(text).translate(_VARIANTS) if text else text


def simplified_all(texts: Iterable[str]) -> list[str]:
    """:func:`simplified` of many short strings in one conversion call (they must not contain line breaks)."""
    items = list(texts)
    joined = simplified("\n".join(items))
    out = joined.split("\n")
    return out if len(out) == len(items) else [simplified(t) for t in items]


def han_count(text: str) -> int:
    """How many Chinese characters ``text`` holds."""
    return len(HAN.findall(text))


def clean_paragraph(text: str) -> str:
    """One paragraph without editorial notes in parentheses, spaces between Chinese characters made ``，``, corner
    brackets made quotation marks, a repeated punctuation mark (``。。``) made one."""
    previous = None
    while previous != text:  # notes may nest: (a (b) c)
        previous, text = text, _NOTE.sub("", text)
    return _REPEATED.sub(r"\1", _HAN_SPACE.sub("，", text)).translate(_CORNERS).strip()


def _pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [p.strip() for p in pattern.findall(text) if p.strip()]


def _pack(parts: list[str], limit: int) -> list[str]:
    """Consecutive parts joined greedily into strings of at most ``limit`` characters (a longer part stays whole)."""
    out: list[str] = []
    for part in parts:
        if out and len(out[-1]) + len(part) <= limit:
            out[-1] += part
        else:
            out.append(part)
    return out


def _join(a: str, b: str) -> str:
    return a + b if a.endswith(tuple(_PUNCT_END)) else f"{a}，{b}"


def balance_quotes(text: str) -> str:
    """``text`` without the quotation marks (“” 「」 『』 ‘’) whose partner a cut left in another unit."""
    if not _QUOTE_MARK.search(text):
        return text
    drop: set[int] = set()
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch in _PAIRS:
            stack.append(i)
        elif ch in _CLOSERS:
            if stack and text[stack[-1]] == _CLOSERS[ch]:
                stack.pop()
            else:
                drop.add(i)
    drop.update(stack)
    if not drop:
        return text
    return "".join(ch for i, ch in enumerate(text) if i not in drop).strip()


def _cut(text: str, limit: int, patterns: tuple[re.Pattern[str], ...]) -> list[str]:
    """``text`` cut at the first pattern's marks and packed up to ``limit``; a part still too long is cut at the
    next pattern's."""
    if len(text) <= limit or not patterns:
        return [text]
    parts = [p for piece in _pieces(text, patterns[0]) for p in _cut(piece, limit, patterns[1:])]
    return _pack(parts, limit)


def units(paragraphs: Iterable[str], *, max_chars: int = MAX_UNIT_CHARS) -> list[str]:
    """The quotable units of one poem or chapter, in order (see the module docstring for the rules)."""
    sentences: list[str] = []
    for paragraph in paragraphs:
        for sentence in _pieces(clean_paragraph(paragraph), _SENTENCE):
            sentences.extend(_cut(sentence, max_chars, (_SEMICOLON, _CLAUSE)))
    joined: list[str] = []
    pending = ""
    for sentence in sentences:
        if pending and len(pending) + 1 + len(sentence) <= max_chars:
            pending = _join(pending, sentence)
        else:
            if pending:
                joined.append(pending)
            pending = sentence
        if han_count(pending) >= MIN_UNIT_HAN:
            joined.append(pending)
            pending = ""
    if pending:  # a short last piece joins the previous unit when it fits
        if joined and len(joined[-1]) + 1 + len(pending) <= max_chars:
            joined[-1] = _join(joined[-1], pending)
        else:
            joined.append(pending)
    out = []
    for unit in joined:
        unit = balance_quotes(unit).lstrip("，、：,:;； ")
        if not _PLACEHOLDER.search(unit) and han_count(unit) >= MIN_KEEP_HAN:
            out.append(unit)
    return out


def first_phrase(paragraphs: Iterable[str]) -> str:
    """The text before the first punctuation mark of a poem (how an untitled ci is named: 水调歌头·明月几时有)."""
    for paragraph in paragraphs:
        text = clean_paragraph(paragraph)
        if text:
            return re.split(r"[，。！？；、：,.!?;:“”「」『』\s]", text, maxsplit=1)[0]
    return ""


_SPEECH = re.compile(r"^([^\s，。：“”「」『』]{1,4})曰：\s*[“「](.+)[”」]$")


def speech(paragraph: str) -> tuple[str, str] | None:
    """``(speaker, words)`` when the whole paragraph is one speech (``子曰：“……”``), else None."""
    m = _SPEECH.match(paragraph.strip())
    if not m:
        return None
    words = m.group(2)
    if balance_quotes(words) != words:  # the closing mark belongs to an inner quotation: not one speech
        return None
    return m.group(1), words
