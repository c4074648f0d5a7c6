"""Text utilities shared by every stage: normalization, matching keys, sentence splitting, language, queries."""

from __future__ import annotations

import re
import threading
import unicodedata

from .errors import InputError
from .types import Query

__all__ = [
    "MARKER",
    "MAX_PARAGRAPH_CHARS",
    "normalize",
    "key",
    "author_key",
    "clean_author",
    "split_sentences",
    "detect_lang",
    "is_cjk",
    "parse_query",
    "decode_text",
]

MARKER = "[Q]"
MAX_PARAGRAPH_CHARS = 20_000

# Characters mapped one-to-one (so offsets survive): curly quotes, guillemets, CJK brackets, dashes.
_CHAR_MAP = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
        "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
        "\u300c": '"', "\u300d": '"', "\u300e": '"', "\u300f": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
        "\u00a0": " ", "\u3000": " ",
    }
)
_WS = re.compile(r"\s+")
_WRAPPERS = '"\''
_ANONYMOUS = {"", "anonymous", "anon", "unknown", "unknown author", "author unknown", "n/a", "na", "none", "various",
              "佚名", "无名氏", "未知"}


_FULLWIDTH_PUNCT = re.compile(r"([\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+)")


def normalize(text: str) -> str:
    """NFKC, straight quotes and dashes, collapsed whitespace, stripped; full-width ASCII becomes ASCII (via NFKC),
    except that Chinese text keeps its full-width punctuation (，！？：； are how Chinese is written)."""
    if any(is_cjk(ch) for ch in text):
        parts = _FULLWIDTH_PUNCT.split(text)  # odd items are full-width punctuation runs, kept as they are
        text = "".join(p if i % 2 else unicodedata.normalize("NFKC", p) for i, p in enumerate(parts))
    else:
        text = unicodedata.normalize("NFKC", text)
    text = text.translate(_CHAR_MAP).replace("\u2026", "...")
    return _WS.sub(" ", text).strip()


def key(text: str) -> str:
    """Matching key: normalized, case-folded, letters and digits only (CJK kept). Two quotes with one key are one."""
    return "".join(ch for ch in normalize(text).casefold() if ch.isalnum())


def clean_author(author: str | None) -> str:
    """A display author: normalized, trailing punctuation dropped, the many spellings of 'unknown' unified to ''."""
    a = normalize(author or "").strip(" ,;:.-\u2014\"'()[]")
    a = re.sub(r"^(by|—|-)\s+", "", a, flags=re.I)
    return "" if a.casefold() in _ANONYMOUS else a


def author_key(author: str | None) -> str:
    """Key for comparing authors: cleaned, case-folded, letters only ('Albert  Einstein.' == 'albert einstein')."""
    return "".join(ch for ch in clean_author(author).casefold() if ch.isalnum())


def is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


# A sentence ends at . ! ? (plus closing quotes/brackets) followed by space, or at CJK enders, or at line breaks.
_SENT_END = re.compile(r"""(?<=[.!?])["'”’)\]]*\s+|(?<=[。！？；])["'”’」』）]*|\n+""")


def split_sentences(text: str) -> list[str]:
    """Split English and Chinese text into sentences (stripped, non-empty)."""
    parts = _SENT_END.split(text)
    return [p.strip() for p in parts if p and p.strip()]


_lang_lock = threading.Lock()
_detector_ready = False


def detect_lang(text: str) -> str:
    """Language code of ``text``: 'zh' when CJK characters dominate, else langdetect (seeded, deterministic)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    if sum(is_cjk(ch) for ch in letters) / len(letters) > 0.3:
        return "zh"
    if all(ord(ch) < 128 for ch in letters) and len(letters) < 12:
        return "en"
    global _detector_ready
    with _lang_lock:
        from langdetect import DetectorFactory, LangDetectException, detect

        if not _detector_ready:
            DetectorFactory.seed = 0
            _detector_ready = True
        try:
            lang = detect(text)
        except LangDetectException:
            return "en"
    return "zh" if lang.startswith("zh") else lang


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


def decode_text(data: bytes, *, name: str, error: type[InputError] = InputError) -> str:
    """The UTF-8 text of a file's bytes (a BOM is dropped); ``error`` with a clear message for an empty, binary
    (NUL bytes or many control characters) or non-UTF-8 file. Every file Quill reads goes through here."""
    if not data.strip():
        raise error(f"{name} is empty")
    head = data[:65536]
    if b"\x00" in head:
        raise error(f"{name} is a binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{name} is not UTF-8 text (invalid byte at line {line}, offset {exc.start}): "
                    "re-save it as UTF-8") from None
    sample = text[:65536]
    if sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f") > 0.05 * len(sample):
        raise error(f"{name} is a binary file, not text")
    return text
