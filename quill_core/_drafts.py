"""Checking one insertion draft: the sentence a generator wrote for the gap, made exact or rejected with a reason.

:func:`check_draft` takes the model's raw reply and returns the sentence to show and why it is rejected ('' when
it is not):

1. the first non-empty line, without a label such as ``Sentence:`` (:func:`first_line`);
2. the quote located in it (:func:`quote_span`, :func:`quill_core._spans.locate`; missing or altered beyond the
   threshold: rejected);
3. the one sentence that holds the quote (sentence ends inside the quote do not count);
4. verbatim repair: the canonical quote at the located span, inside one pair of quotation marks;
5. terminal punctuation, then the author, language and shape problems, in that order.

Also here: the deterministic :func:`template_sentence` (the fallback when every draft is rejected) and
:func:`compose`, which puts the chosen sentence into the paragraph with the spacing the languages want.
"""

from __future__ import annotations

import re
from typing import Literal

from ._names import NAME_SUFFIXES, clean_author, mentions_author
from ._text import CJK_RANGES, HAN, SENTENCE_FINAL
from ._types import Quote

WritingLang = Literal["en", "zh"]
"""The languages the insert stage writes in: Chinese for a Chinese paragraph, English for any other."""

_OPEN, _CLOSE = "“\"'‘「『", "”\"'’」』"
_LABEL = re.compile(r"^\s*(?:(?:here(?:'s| is) (?:the|a|my|one) (?:\w+ )?sentence[^:：]*|sentence|answer|reply|"
                    r"output|句子|答案)\s*[:：]\s*)", re.I)
_LATIN = re.compile(r"[A-Za-z]")
# Chinese text and the text beside it meet without a space: East Asian characters (CJK: Chinese characters and
# punctuation, kana, full-width punctuation) and the ellipsis; “ and ” are shared with English, so they do not count.
_UNSPACED = re.compile(f"[{CJK_RANGES}…]")
# Sentence boundaries for cutting out the sentence that holds the quote: like _text.SENTENCE_BREAK (before) and
# _text.SENTENCE_END (after), but a Chinese semicolon does not end that sentence, and the closing marks that may
# follow an ender differ.
_BOUNDARY_BEFORE = re.compile(r"[.!?。！？]+[\"'”’」』)]*\s+|[。！？]+[”」』）]*|\n+")
_END_AFTER = re.compile(r"[.!?。！？]+[\"'”’」』)]*(?=\s|$)|[。！？]+[”」』）]*")
_NOT_NAMES = {"as", "in", "the", "and", "but", "so", "then", "when", "while", "like", "said", "wrote", "once",
              "mr", "mrs", "ms", "dr", "professor", "sir", "lady", "lord", "saint", "st"}


def writing_lang(paragraph_lang: str) -> WritingLang:
    """The language to write in for a paragraph in ``paragraph_lang``."""
    return "zh" if paragraph_lang == "zh" else "en"


# -- the fallback sentence and the paragraph ----------------------------------------------------------------------
def template_sentence(quote: Quote, lang: str) -> str:
    """The deterministic sentence used when no draft survives: ``As Author put it, “quote”`` /
    ``正如某某所说：“quote”`` (an anonymous quote: ``As the saying goes`` / ``俗话说``)."""
    author = clean_author(quote.author)
    text = quote.text.strip()
    if writing_lang(lang) == "zh":
        lead = f"正如{author}所说：" if author else "俗话说："
        return f"{lead}“{text}”" + ("" if text[-1:] in SENTENCE_FINAL else "。")
    lead = f"As {author} put it, " if author else "As the saying goes, "
    return f"{lead}“{text}”" + ("" if text[-1:] in SENTENCE_FINAL else ".")


def _cjkish(ch: str) -> bool:
    """Whether no space is wanted beside ``ch`` (see ``_UNSPACED``)."""
    return _UNSPACED.match(ch) is not None


def compose(before: str, sentence: str, after: str) -> tuple[str, int]:
    """``before + sentence + after`` with the spacing the languages want; returns the text and the sentence's
    offset in it. Whitespace the writer left at the insertion point is kept; otherwise one space separates
    Latin-script text and nothing separates Chinese."""
    left, right = before, after
    if left and sentence and not left[-1].isspace() and not (_cjkish(left[-1]) or _cjkish(sentence[0])):
        left += " "
    if right and sentence and not right[0].isspace() and not (_cjkish(sentence[-1]) or _cjkish(right[0])):
        right = " " + right
    return left + sentence + right, len(left)


# -- checking one draft -------------------------------------------------------------------------------------------
def quote_span(text: str, quote: Quote, threshold: float) -> tuple[int, int] | None:
    """Where ``quote`` stands in ``text`` (the best located span scoring at least ``threshold``), else None."""
    from ._spans import locate

    spans = locate(quote.text, text, threshold=threshold)
    if not spans:
        return None
    best = max(spans, key=lambda s: (s.score, -s.start))
    return best.start, best.end


def _one_sentence(text: str, span: tuple[int, int], lang: str) -> tuple[str, tuple[int, int]]:
    """The sentence of ``text`` that holds ``span`` (sentence ends inside the quote do not count)."""
    s, e = span
    start = 0
    for m in _BOUNDARY_BEFORE.finditer(text[:s]):
        start = m.end()
    end = len(text)
    closing = re.match(r"[\"'”’」』]*", text[e:]).end()
    rest = text[e + closing:]
    if text[e - 1 : e] in SENTENCE_FINAL and closing and (lang == "zh" or re.match(r"\s+[A-Z]", rest) or not rest.strip()):
        end = e + closing  # the quote's own full stop ends the sentence: “... knowledge.” The next one ...
    else:
        m = _END_AFTER.search(text[e:])
        if m:
            end = e + m.end()
    piece = text[start:end]
    head = len(piece) - len(piece.lstrip())
    return piece.strip(), (s - start - head, e - start - head)


def _repair(text: str, quote: Quote, span: tuple[int, int], lang: str) -> tuple[str, int]:
    """The canonical quote at ``span``, inside one pair of quotation marks, without punctuation doubled after it;
    returns the new text and the quote's offset in it."""
    s, e = span
    canonical = quote.text
    left, right = text[:s], text[e:]
    if canonical[-1:] in SENTENCE_FINAL:
        right = re.sub(r"^[.,，。]+", "", right)                      # knowledge.,  -> knowledge.
        right = re.sub(r"^([" + re.escape(_CLOSE) + r"])[.。]", r"\1", right)  # knowledge.”. -> knowledge.”
    opened = bool(left.strip()) and left.rstrip()[-1] in _OPEN
    closed = bool(right) and right[0] in _CLOSE
    if opened and closed:
        return left + canonical + right, len(left)
    if opened:
        left = left.rstrip()[:-1]
    if closed:
        right = right[1:]
    if lang != "zh":
        if left and not left[-1].isspace():
            left += " "
        if right[:1].isalnum():
            right = " " + right
    left += "“"
    return left + canonical + "”" + right, len(left)


def _finish(text: str, lang: str) -> str:
    """Terminal punctuation if the sentence has none."""
    text = text.rstrip()
    core = text.rstrip(_CLOSE + ")）")
    if core[-1:] in SENTENCE_FINAL:
        return text
    return text + ("。" if lang == "zh" else ".")


def _author_problem(text: str, span: tuple[int, int], author: str) -> str:
    """Why the sentence does not name ``author`` outside the quote ('' when it does). A Chinese name must appear
    whole; a Western one whole, or by its surname when no other first name stands before it."""
    author = clean_author(author)
    if not author:
        return ""
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    if HAN.search(author):
        return "" if author.replace("·", "") in outside.replace("·", "") else "author missing"
    if mentions_author(outside, author):
        return ""
    tokens = [t for t in re.findall(r"[^\W\d_][\w'’.-]*", author) if t.lower().strip(".") not in NAME_SUFFIXES]
    surname = tokens[-1] if len(tokens) >= 2 and len(tokens[-1]) >= 3 else ""
    if surname:
        own = {t.lower() for t in tokens}
        for m in re.finditer(rf"\b{re.escape(surname)}\b", outside, re.I):
            prev = re.search(r"([A-Z][\w'’.-]*)\s+$", outside[: m.start()])
            if prev and prev.group(1).lower() not in own and prev.group(1).lower() not in _NOT_NAMES:
                return f"wrong author ({prev.group(1)} {m.group(0)})"
            return ""
    return "author missing"


def _language_problem(text: str, span: tuple[int, int], lang: str, author: str) -> str:
    outside = (text[: span[0]] + text[span[1]:]).replace(clean_author(author), "")
    cjk, latin = len(HAN.findall(outside)), len(_LATIN.findall(outside))
    if lang == "zh" and latin > max(3, cjk):
        return "wrong language"
    if lang == "en" and cjk > latin:
        return "wrong language"
    return ""


def _shape_problem(text: str, span: tuple[int, int], lang: str) -> str:
    outside = text[: span[0]] + " " + text[span[1]:]
    if lang == "zh":
        if len(HAN.findall(outside)) > 80:
            return "too long"
    elif len(outside.split()) > 45:
        return "too long"
    words = re.findall(r"\w+", outside.lower()) if lang != "zh" else HAN.findall(outside)
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    if grams and max(grams.count(g) for g in set(grams)) >= 3:
        return "repetitive"
    return ""


def first_line(raw: str) -> str:
    """The first non-empty line of a reply, without a leading label such as 'Sentence:'."""
    lines = [ln for ln in raw.strip().splitlines() if ln.strip()]
    return _LABEL.sub("", lines[0] if lines else "").strip()


def check_draft(raw: str, quote: Quote, lang: str, threshold: float) -> tuple[str, str]:
    """``(sentence, reason)``: the cleaned, repaired sentence, and why it is rejected ('' if it is not)."""
    text = first_line(raw)
    if not text:
        return "", "empty draft"
    span = quote_span(text, quote, threshold)
    if span is None:
        return text, "quote missing or altered beyond repair"
    text, span = _one_sentence(text, span, lang)
    text, start = _repair(text, quote, span, lang)
    span = (start, start + len(quote.text))
    text = _finish(text, lang)
    problem = (_author_problem(text, span, quote.author) or _language_problem(text, span, lang, quote.author)
               or _shape_problem(text, span, lang))
    return text, problem
