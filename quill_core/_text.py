"""Text utilities shared by every stage: scripts (the one home of "is this Chinese?"), normalization, matching
keys, sentence splitting, language detection, decoding files."""

from __future__ import annotations

import re
import threading
import unicodedata
from types import MappingProxyType
from typing import Mapping

from ._errors import InputError


STRAIGHT_CHARS: Mapping[str, str] = MappingProxyType({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
    "\u300c": '"', "\u300d": '"', "\u300e": '"', "\u300f": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00a0": " ", "\u3000": " ",
})
"""The one normalization table: characters mapped one-to-one (so offsets survive) to their plain form: curly
quotes, guillemets and CJK corner brackets to straight quotes, dashes to '-', no-break and ideographic spaces to
' '. :func:`normalize` applies it; span matching (:mod:`quill_core._textview`) extends it."""
_CHAR_MAP = str.maketrans(dict(STRAIGHT_CHARS))
_WS = re.compile(r"\s+")


# -- scripts: the one definition of Chinese characters (HAN) and of East Asian script characters (CJK) -----------
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Unified ideographs (extension A, the main block, compatibility ideographs): what Chinese words are made of."""
FULLWIDTH_PUNCT_RANGES = "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
"""Full-width and half-width punctuation (，！？：；（） ...; not full-width Latin letters or digits)."""
CJK_RANGES = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff" + HAN_RANGES + FULLWIDTH_PUNCT_RANGES
"""HAN plus radicals, CJK punctuation, kana and full-width punctuation: the characters of East Asian running text
(full-width Latin letters and digits are Latin, so they do not count)."""
HAN = re.compile(f"[{HAN_RANGES}]")
CJK = re.compile(f"[{CJK_RANGES}]")


def is_cjk(ch: str) -> bool:
    """``ch`` is a Chinese character (HAN); punctuation does not count."""
    return bool(ch) and HAN.match(ch) is not None


def has_cjk(text: str) -> bool:
    """``text`` holds at least one Chinese character."""
    return HAN.search(text) is not None


_T2S_LOCK = threading.Lock()
_t2s: dict[int, str] | None = None


VARIANT_CHARS = {"隣": "邻", "鴈": "雁", "覩": "睹", "竝": "并", "畧": "略"}
"""Variant forms (异体字) that OpenCC's ``t2s`` leaves alone but the poems of chinese-poetry use (比隣 for 比邻):
folded to their standard Simplified form on import and when matching."""


def simplified_chars(text: str) -> str:
    """``text`` with every Traditional Chinese character replaced by its Simplified form, one character for one, so
    offsets survive (內 -> 内, 說 -> 说, 鄰 -> 邻): a fold for *matching* a draft in either script against Simplified
    quotes and sources. Unlike the phrase-level conversion that imports store (:func:`quill_core._kb.units.simplified`),
    it looks at single characters only. Text without Chinese characters comes back unchanged; so does everything
    when OpenCC (PyPI ``opencc``) is missing."""
    if text.isascii() or not has_cjk(text):
        return text
    return text.translate(_t2s_table())


def _t2s_table() -> dict[int, str]:
    """The character table of OpenCC's ``t2s`` configuration: every HAN character converted on its own (about
    4,200 differ), built once (~10 ms)."""
    global _t2s
    with _T2S_LOCK:
        if _t2s is None:
            try:
                import opencc
            except ImportError:  # matching then stays within one script
                _t2s = {}
                return _t2s
            chars = [chr(cp) for i in range(0, len(HAN_RANGES), 3)
                     for cp in range(ord(HAN_RANGES[i]), ord(HAN_RANGES[i + 2]) + 1)]
            converted = opencc.OpenCC("t2s").convert("\n".join(chars)).split("\n")
            _t2s = {ord(a): b for a, b in zip(chars, converted) if a != b and len(b) == 1} \
                if len(converted) == len(chars) else {}
            _t2s.update({ord(a): b for a, b in VARIANT_CHARS.items()})
        return _t2s


# -- normalization and matching keys ----------------------------------------------------------------------------
_FULLWIDTH_PUNCT = re.compile(f"([{FULLWIDTH_PUNCT_RANGES}]+)")


def normalize(text: str) -> str:
    """NFKC, straight quotes and dashes, collapsed whitespace, stripped; full-width ASCII becomes ASCII (via NFKC),
    except that Chinese text keeps its full-width punctuation (，！？：； are how Chinese is written)."""
    if has_cjk(text):
        parts = _FULLWIDTH_PUNCT.split(text)  # odd items are full-width punctuation runs, kept as they are
        text = "".join(p if i % 2 else unicodedata.normalize("NFKC", p) for i, p in enumerate(parts))
    else:
        text = unicodedata.normalize("NFKC", text)
    text = text.translate(_CHAR_MAP).replace("\u2026", "...")
    return _WS.sub(" ", text).strip()


def key(text: str) -> str:
    """Matching key: normalized, case-folded, letters and digits only (CJK kept). Two quotes with one key are one."""
    return "".join(ch for ch in normalize(text).casefold() if ch.isalnum())


# -- sentences ---------------------------------------------------------------------------------------------------
SENTENCE_BREAK = re.compile(r"""(?<=[.!?])["'”’)\]]*\s+|(?<=[。！？；])["'”’」』）]*|\n+""")
"""Where one sentence ends and the next begins (what :func:`split_sentences` splits at): after . ! ? (and any
closing quotes or brackets) followed by whitespace, after the Chinese enders 。！？； (and closing marks), or at
line breaks. A match is what lies between two sentences; the closing marks it includes are dropped by a split."""


def split_sentences(text: str) -> list[str]:
    """Split English and Chinese text into sentences (stripped, non-empty)."""
    parts = SENTENCE_BREAK.split(text)
    return [p.strip() for p in parts if p and p.strip()]


_lang_lock = threading.Lock()
_detector_ready = False


def mostly_cjk(text: str) -> bool:
    """Whether CJK characters make up more than 30% of the letters of ``text`` (cheap: no language model)."""
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(is_cjk(ch) for ch in letters) / len(letters) > 0.3


def detect_lang(text: str) -> str:
    """Language code of ``text``: 'zh' when CJK characters dominate, else langdetect (seeded, deterministic)."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    if mostly_cjk(text):
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


def slug(name: str) -> str:
    """A file-name-safe id for a name: case-folded, runs of other characters made '-', at most 80 characters."""
    out = re.sub(r"[^\w.-]+", "-", name.strip().casefold(), flags=re.UNICODE).strip("-.")
    return out[:80] or "source"


SENTENCE_END = re.compile(r"[.!?。！？；;]+[\"'”’」』)\]]*(?=\s|$)|[。！？；]+[\"'”’」』）]*")
"""The marks that end a sentence (or a clause, at a semicolon) in running text, closing quotes and brackets
included: Latin ``. ! ? ;`` when whitespace or the end follows, Chinese ``。！？；`` anywhere. Unlike the gap that
:func:`split_sentences` splits at, a match is the marks themselves and a line break is not one: the scorer's
:func:`quill_core._scorer.right_window` ends its window after the first match."""


SENTENCE_FINAL = ".!?。！？…"
"""Punctuation that closes a sentence, so no full stop is added after it (an insertion sentence, a quote ending a
sentence). Unlike :data:`SENTENCE_END` and :data:`SENTENCE_BREAK`, the Chinese semicolon does not count
and the ellipsis does."""
