"""Cleaning of imported quotes: text, author, work and topics, length bounds, language.

Every importer hands raw fields to :func:`make_quote`, which either returns a clean :class:`Quote` or the reason
the row is rejected. The rules, in order:

* **Text**: control characters dropped, :func:`quill_core._text.normalize` (NFKC, straight quotes and dashes,
  full-width punctuation folded, whitespace collapsed), then wrapping quotation marks stripped (“…”, "…", '…',
  「…」, 『…』, «…»; repeatedly, and only when the marks really wrap the whole text).
* **Length bounds**: a cleaned text must hold at least :data:`MIN_TEXT_CHARS` characters, at least two letters,
  and at most :data:`MAX_TEXT_CHARS` characters; otherwise the row is rejected with the reason.
* **Author**: :func:`import_author`: :func:`quill_core._names.clean_author` (trailing punctuation,
  "Anonymous"/"Unknown"/empty unified to ""), wrapping quotes stripped, then the small alias table :data:`AUTHOR_ALIASES` (spelling variants and pen
  names of a few very often quoted people) maps a variant onto one display name. Longer than
  :data:`MAX_AUTHOR_CHARS` means the field is not a name: rejected.
* **Work**: normalized, book-title brackets 《…》 〈…〉 and wrapping quotes stripped.
* **Topics**: split on ``,`` ``，`` ``;`` ``；`` ``、`` ``|``, normalized, lower-cased, ``#`` dropped, de-duplicated
  (order kept), at most :data:`MAX_TOPICS` of at most :data:`MAX_TOPIC_CHARS` characters each.
* **Language**: :func:`guess_lang`; a cheap English test first (ASCII letters and common English function words),
  :func:`quill_core._text.detect_lang` (seeded langdetect; CJK text is "zh") for everything else.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .._text import detect_lang, normalize

from .._names import author_key, clean_author
from .._types import Quote



@dataclass(frozen=True)
class Row:
    """One parsed, not yet cleaned record and the 1-based line it came from (0 when not from a file)."""

    text: object
    author: object = ""
    work: object = ""
    topics: object = ()
    lang: object = ""
    ppl: object = None
    popularity: object = None
    line: int = 0


MIN_TEXT_CHARS = 4
"""Shorter cleaned texts are rejected (a Chinese idiom has four characters)."""
MAX_TEXT_CHARS = 1000
"""Longer cleaned texts are rejected: a passage, not a quotation."""
MAX_AUTHOR_CHARS = 120
MAX_TOPICS = 24
MAX_TOPIC_CHARS = 48

# Variant spelling (compared by author_key: case, spaces and punctuation ignored) -> display name.
# Deliberately small: only people whose variants really occur in the bundled data or are famous pen names.
AUTHOR_ALIASES: dict[str, str] = {
    "samuelclemens": "Mark Twain",
    "samuellanghorneclemens": "Mark Twain",
    "williamshakespear": "William Shakespeare",
    "shakespeare": "William Shakespeare",
    "mohandasgandhi": "Mahatma Gandhi",
    "mohandaskgandhi": "Mahatma Gandhi",
    "mkgandhi": "Mahatma Gandhi",
    "gandhi": "Mahatma Gandhi",
    "laotse": "Lao Tzu",
    "laozi": "Lao Tzu",
    "theodorseussgeisel": "Dr. Seuss",
    "martinlutherkingjr": "Martin Luther King Jr.",
    "martinlutherking": "Martin Luther King Jr.",
    "mlk": "Martin Luther King Jr.",
    "dcotorquote": "Doctor Quote",
    "senecatheyounger": "Seneca",
    "luciusannaeusseneca": "Seneca",
    "princessofwalesdiana": "Princess Diana",
}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")
_TOPIC_SPLIT = re.compile(r"[,，;；、|]")
_LETTER = re.compile(r"[^\W\d_]")
_WORK_BRACKETS = (("《", "》"), ("〈", "〉"), ("<", ">"), ('"', '"'), ("'", "'"), ("(", ")"), ("[", "]"))
_APOSTROPHE = re.compile(r"(?<=\w)'(?=\w)")


def _nested_ok(inner: str) -> bool:
    """Whether the double quotes inside a candidate wrapped text open and close in turn ("a "b" c")."""
    opening = True
    for i, ch in enumerate(inner):
        if ch == '"':
            is_open = i == 0 or inner[i - 1] in " ([{-"
            if is_open != opening:
                return False
            opening = not opening
    return opening


def _unwrap(text: str) -> str:
    """Strip quotation marks wrapping the whole text (after normalize they are " or ')."""
    while len(text) >= 2 and text[0] in "\"'" and text[-1] == text[0]:
        inner = text[1:-1]
        if text[0] == '"' and '"' in inner and not _nested_ok(inner):
            break  # "a," she said, "b": the marks do not wrap the text
        if text[0] == "'" and "'" in _APOSTROPHE.sub("", inner):
            break  # 'a,' she said, 'b'; apostrophes (don't) do not count
        text = inner.strip()
    # an unmatched opening or closing mark alone ("Be yourself; ...) is dropped too
    if text[:1] == '"' and text.count('"') == 1:
        text = text[1:].lstrip()
    elif text[-1:] == '"' and text.count('"') == 1:
        text = text[:-1].rstrip()
    return text


def clean_text(raw: object) -> str:
    """A quotation's display text: normalized, without control characters and wrapping quote marks."""
    if raw is None:
        return ""
    text = _CONTROL.sub(" ", str(raw))
    # ASCII needs no Unicode normalization: only whitespace collapsing (the same result as normalize, faster)
    return _unwrap(" ".join(text.split()) if text.isascii() else normalize(text))


def import_author(raw: object) -> str:
    """The display author of an imported record: :func:`quill_core._names.clean_author` (what every other author
    goes through) plus what raw import data needs: any value (``None`` is no author), control characters dropped,
    wrapping quotation marks stripped, and :data:`AUTHOR_ALIASES` resolved ("Samuel Clemens" -> "Mark Twain")."""
    return "" if raw is None else _import_author(str(raw))


@lru_cache(maxsize=1 << 17)  # names repeat a lot in bulk imports
def _import_author(raw: str) -> str:
    author = clean_author(_unwrap(normalize(_CONTROL.sub(" ", raw))))
    return AUTHOR_ALIASES.get(author_key(author), author)


def clean_work(raw: object) -> str:
    """A work title without book-title brackets or wrapping quotes."""
    if raw is None:
        return ""
    work = normalize(_CONTROL.sub(" ", str(raw))).strip(" ,;:")
    changed = True
    while changed and len(work) >= 2:
        changed = False
        for left, right in _WORK_BRACKETS:
            if work.startswith(left) and work.endswith(right) and work.count(left) == (2 if left == right else 1):
                work, changed = work[len(left) : -len(right)].strip(), True
    return work


def clean_topics(raw: object) -> tuple[str, ...]:
    """Topics from a delimited string or a list: normalized, lower-cased, de-duplicated, bounded."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        items = _TOPIC_SPLIT.split(raw)
    elif isinstance(raw, Iterable):
        items = [part for item in raw if item is not None for part in _TOPIC_SPLIT.split(str(item))]
    else:
        items = [str(raw)]
    out: list[str] = []
    for item in items:
        topic = normalize(_CONTROL.sub(" ", item)).strip(" #\"'").casefold()
        if topic and len(topic) <= MAX_TOPIC_CHARS and topic not in out:
            out.append(topic)
    return tuple(out[:MAX_TOPICS])


# Function words frequent in English and rare as words of other Latin-script languages ("strong"), and short
# words English shares with them ("weak", half a point).
_EN_STRONG = frozenset(
    "the and of you that is was are were be been have has had this with what for not but they their them his her "
    "she he we our your my me will would should could can't don't it's i'm i've you're what's there when which who "
    "why how because about than then just only never every nothing something everything anything always from or "
    "if into out up all more most people life love time one yes".split()
)
_EN_WEAK = frozenset("a an in on at by so to it i is no do us as".split())
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def looks_english(text: str) -> bool:
    """A cheap, conservative English test: Latin letters (at most 3% non-ASCII), enough English function words."""
    words = _WORD.findall(text.casefold())
    if len(words) < 3:
        return False
    if not text.isascii():
        letters = sum(len(w) for w in words)
        if sum(not ch.isascii() for w in words for ch in w) > 0.03 * letters:
            return False
    strong = sum(w in _EN_STRONG for w in words)
    score = strong + 0.5 * sum(w in _EN_WEAK for w in words)
    return strong >= 1 and score >= 1.5 and score / len(words) >= 0.15


def guess_lang(text: str) -> str:
    """Language code of a quotation: 'en' when :func:`looks_english`, else :func:`quill_core._text.detect_lang`."""
    return "en" if looks_english(text) else detect_lang(text)


_NON_WORD = re.compile(r"[\W_]+")


def text_key(clean: str) -> str:
    """:func:`quill_core._text.key` of a text that is already :func:`clean_text`-ed (skips normalizing again)."""
    return _NON_WORD.sub("", clean.casefold())


@lru_cache(maxsize=1 << 17)
def cached_author_key(name: str) -> str:
    """:func:`quill_core._names.author_key` with a cache (names repeat a lot in bulk imports)."""
    return author_key(name)


def _number(raw: object) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def make_quote(text: object, *, author: object = "", work: object = "", topics: object = (), lang: object = "",
               ppl: object = None, popularity: object = None,
               collections: Sequence[str] = ()) -> tuple[Quote | None, str]:
    """Clean one record: ``(quote, "")`` or ``(None, reason)`` when it cannot be a quotation."""
    if text is not None and not isinstance(text, (str, int, float)):
        return None, f"text is a {type(text).__name__}, not a string"
    clean = clean_text(text)
    if not clean:
        return None, "empty quote text"
    if len(clean) < MIN_TEXT_CHARS or len(_LETTER.findall(clean[:64])) < 2:
        return None, f"quote text too short ({len(clean)} characters; at least {MIN_TEXT_CHARS} with 2 letters)"
    if len(clean) > MAX_TEXT_CHARS:
        return None, f"quote text too long ({len(clean):,} characters; at most {MAX_TEXT_CHARS:,})"
    if author is not None and not isinstance(author, (str, int, float)):
        return None, f"author is a {type(author).__name__}, not a string"
    name = import_author(author)
    if len(name) > MAX_AUTHOR_CHARS:
        return None, f"author too long ({len(name)} characters; at most {MAX_AUTHOR_CHARS})"
    code = re.split(r"[-_]", str(lang).strip().casefold())[0] if lang else ""
    if not (2 <= len(code) <= 3 and code.isascii() and code.isalpha()):
        code = guess_lang(clean)
    digest = hashlib.sha1(f"{text_key(clean)}\x1f{cached_author_key(name)}".encode("utf-8")).hexdigest()[:16]
    return Quote(
        id=digest,  # == quote_id(clean, name), computed without normalizing the clean text again
        text=clean,
        author=name,
        work=clean_work(work) if isinstance(work, (str, int, float)) else "",
        topics=clean_topics(topics),
        lang=code,
        collections=tuple(dict.fromkeys(c for c in collections if c)),
        ppl=_number(ppl),
        popularity=_number(popularity),
    ), ""
