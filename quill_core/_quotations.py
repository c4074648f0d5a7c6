"""Find the quotations in a draft and the author the draft attributes each to.

Quotations are text between “…”, "…", ‘…’, «…», „…“, 「…」 or 『…』, and unquoted clauses introduced by
"as X said/wrote," (正如某某所说，…). The claimed author comes from the words around the quotation
(“…” — Author; Author said, “…”; as Author wrote, “…”; “…,” said Author; 某某说：“…”; 正如某某所说，“…”).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._names import clean_author
from ._text import HAN_RANGES, is_cjk, key


@dataclass(frozen=True)
class Quotation:
    """A quotation found in a draft: ``draft[start:end] == text`` (quote marks excluded)."""

    start: int
    end: int
    text: str
    claimed_author: str = ""
    marked: bool = True  # False for an unquoted "as X said, ..." clause


_PAIRS = [("\u201c", "\u201d"), ("\u00ab", "\u00bb"), ("\u201e", "\u201c"), ("\u300c", "\u300d"),
          ("\u300e", "\u300f"), ("\u2018", "\u2019")]
_NAME = r"(?:[A-Z][\w'’.-]*)(?:\s+(?:(?:de|da|di|van|von|der|du|la|le|of|bin|ibn)\s+)*[A-Z][\w'’.-]*){0,4}"
_ZH_NAME = rf"[{HAN_RANGES}·]{{2,8}}"  # a Chinese name: 2 to 8 Chinese characters (· joins transliterations)
_VERB = (r"(?:said|says|wrote|writes|put it|puts it|noted|observed|remarked|declared|argued|reminds us|tells us|"
         r"asked)(?:\s+(?:well|best|beautifully|simply|so\s+well|it\s+best|\w+ly))?")
_NOT_NAMES = {"he", "she", "it", "they", "we", "i", "you", "someone", "somebody", "everyone", "one", "this", "that",
              "there", "the", "a", "an", "my", "his", "her", "our", "their", "who", "which", "as", "so", "and", "but",
              "mr", "mrs", "ms", "dr", "sir", "god"}
_ZH_PREFIXES = ("我们常说", "我记得", "记得", "正如", "就像", "如同", "所以", "因此", "但是", "然而", "我们", "我", "而", "但", "就", "是")

_BEFORE_PATTERNS = [
    re.compile(rf"(?:\b[Aa]s|\b[Ll]ike)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably|so\s+\w+))?\s+{_VERB}(?:\s+(?:it|that))?\s*[,:]?\s*$"),
    re.compile(rf"\b[Ii]n\s+the\s+words\s+of\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})\s*[,:]?\s*$"),
    re.compile(rf"(?:^|[.!?;]\s+|\s)(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably|also|rightly))?\s+{_VERB}(?:\s+that)?\s*[,:]?\s*$"),
    re.compile(rf"(?:^|\n|[.!?]\s+)(?P<name>{_NAME})\s*:\s*$"),
    re.compile(rf"正如(?P<name>{_ZH_NAME}?)(?:所说|所言|说的那样|说过的那样|所讲|曾说|说)[的过]?[，,：:]?\s*$"),
    re.compile(rf"(?P<name>{_ZH_NAME}?)(?:曾经|曾|也|就|又|早就)?(?:说过|说道|说|曰|写道|指出|讲过|有言|讲)[：:，,]?\s*$"),
    re.compile(rf"(?P<name>{_ZH_NAME}?)在《[^》]{{1,30}}》(?:中|里)?(?:写道|说道|说)[：:，,]?\s*$"),
]
_AFTER_PATTERNS = [
    re.compile(rf"^\s*[,.]?\s*(?:—|–|--|―|-|——)\s*(?P<name>{_NAME})"),
    re.compile(rf"^\s*[,]?\s*(?:said|says|wrote|writes|observed|noted|remarked|declared|asked)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})"),
    re.compile(rf"^\s*[,]?\s*(?P<name>{_NAME})\s+(?:once\s+)?(?:said|says|wrote|writes|observed|noted|remarked|declared)\b"),
    re.compile(rf"^\s*\((?P<name>{_NAME})\)"),
    re.compile(rf"^\s*[。，,.]?\s*(?:——|—|－－|--)\s*(?P<name>{_ZH_NAME})"),
]
_UNQUOTED = [
    re.compile(rf"(?:\b[Aa]s|\b[Ll]ike)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably))?\s+{_VERB}\s*[,:]\s*(?P<quote>[^\"“”«»「」『』\n][^\n]*?)(?=[.!?](?:\s|$)|\n|$)"),
    re.compile(rf"正如(?P<name>{_ZH_NAME}?)(?:所说|所言|说的那样|说过的那样|所讲)[，,：:]\s*(?P<quote>[^“”「」『』\"\n][^。！？\n]*[。！？]?)"),
]


def _clean_name(name: str, *, zh: bool) -> str:
    name = name.strip(" ,.:;'’")
    if zh:
        for prefix in _ZH_PREFIXES:
            if name.startswith(prefix) and len(name) - len(prefix) >= 2:
                name = name[len(prefix) :]
        return name
    words = name.split()
    while words and words[0].casefold().strip(".") in _NOT_NAMES:
        words = words[1:]
    name = " ".join(words)
    return "" if name.casefold() in _NOT_NAMES else clean_author(name)


def _claimed_author(draft: str, start: int, end: int, inner: str = "") -> str:
    """The author the draft attributes the quotation at ``[start, end)`` (marks included) to, or ''.

    A "said X" after the quotation counts only when the quoted sentence runs on (it ends with , ? or !, or a
    comma follows) and the verb does not introduce the next quotation ("... Mark Twain wrote: “...").
    """
    after = draft[end : end + 80].split("\n", 1)[0]
    runs_on = inner.rstrip()[-1:] in (",", "?", "!", "，", "？", "！") or after.lstrip().startswith(",")
    for i, pattern in enumerate(_AFTER_PATTERNS):
        m = pattern.search(after)
        if m and i in (1, 2) and (not runs_on or re.match(r"\s*[:：]", after[m.end() :])):
            continue
        if m:
            name = _clean_name(m.group("name"), zh=bool(re.match(_ZH_NAME, m.group("name"))))
            if name:
                return name
    before = draft[max(0, start - 100) : start]
    before = before.rsplit("\n", 1)[-1]
    for pattern in _BEFORE_PATTERNS:
        m = pattern.search(before)
        if m and m.group("name"):
            name = _clean_name(m.group("name"), zh=bool(re.match(_ZH_NAME, m.group("name"))))
            if name:
                return name
    return ""


def _substantial(text: str) -> bool:
    cjk = sum(1 for ch in text if is_cjk(ch))
    if cjk >= 4:
        return True
    return len(re.findall(r"\w+", text)) >= 2 and len(key(text)) >= 8


def _marked(draft: str) -> list[tuple[int, int, int, int]]:
    """(outer start, inner start, inner end, outer end) of every quote-mark pair, outermost first."""
    found: list[tuple[int, int, int, int]] = []
    for open_, close in _PAIRS:
        if open_ == "\u2018":  # single curly quotes double as apostrophes: need a word boundary on both sides
            pattern = re.compile(r"(?<![\w])\u2018(.+?)\u2019(?![\w])", re.S)
        else:
            pattern = re.compile(re.escape(open_) + r"(.+?)" + re.escape(close), re.S)
        for m in pattern.finditer(draft):
            found.append((m.start(), m.start(1), m.end(1), m.end()))
    quote = None
    for i, ch in enumerate(draft):  # straight double quotes pair up in order
        if ch == '"':
            if quote is None:
                quote = i
            else:
                found.append((quote, quote + 1, i, i + 1))
                quote = None
    found.sort(key=lambda f: (f[0], -f[3]))
    outer: list[tuple[int, int, int, int]] = []
    for f in found:
        if outer and f[0] < outer[-1][3]:
            continue  # nested (『』 inside 「」) or overlapping: the outer quotation stands
        outer.append(f)
    return outer


def find_quotations(draft: str) -> list[Quotation]:
    """Every quotation in ``draft`` (in order) with the author the draft attributes it to, if any."""
    out: list[Quotation] = []
    for o_start, start, end, o_end in _marked(draft):
        inner = draft[start:end]
        lead = len(inner) - len(inner.lstrip())
        trail = len(inner.rstrip(" \n\t,;"))
        if trail <= lead or not _substantial(inner):
            continue
        out.append(Quotation(start + lead, start + trail, draft[start + lead : start + trail],
                             _claimed_author(draft, o_start, o_end, inner)))
    taken = [(q.start, q.end) for q in out]
    for pattern in _UNQUOTED:
        for m in pattern.finditer(draft):
            s, e = m.span("quote")
            text = draft[s:e].rstrip(" ,;。")
            e = s + len(text)
            if not _substantial(text) or any(s < b and a < e for a, b in taken):
                continue
            name = _clean_name(m.group("name"), zh=bool(re.match(_ZH_NAME, m.group("name"))))
            out.append(Quotation(s, e, text, name, marked=False))
    return sorted(out, key=lambda q: q.start)
