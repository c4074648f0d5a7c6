"""Find the quotations in a draft and the author (and work) the draft attributes each to.

Quotations are text between “…”, "…", ‘…’, «…», „…“, 「…」 or 『…』, and unquoted clauses introduced by
"as X said/wrote," (正如某某所说，…) or a Chinese citing verb and a colon (古人云：… / 某某有诗云：… / 子曰：…).
The claimed author comes from the words around the quotation (“…” — Author; Author said, “…”; as Author wrote,
“…”; “…,” said Author; 某某说：“…”; 某某曾写道：“…”; 正如某某所说，“…”; 某某有诗云：“…”; 某某在《作品》中写道：“…”;
“…”——某某《作品》), the claimed work from a title in 《》. Chinese is read in Simplified script (a Traditional
draft reads the same), with roles and dynasties dropped from a name (唐代诗人王勃 -> 王勃); the ancients, a
saying or somebody (古人云, 俗话说, 有人说) name nobody, and 子曰 names 孔子.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._names import clean_author
from ._text import HAN_RANGES, is_cjk, key, simplified_chars


@dataclass(frozen=True)
class Quotation:
    """A quotation found in a draft: ``draft[start:end] == text`` (quote marks excluded)."""

    start: int
    end: int
    text: str
    claimed_author: str = ""
    marked: bool = True  # False for an unquoted "as X said, ..." clause
    claimed_work: str = ""  # a work the draft names (《作品》), without the brackets


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
_ZH_ROLE = re.compile(r"诗人|词人|文学家|思想家|哲学家|政治家|教育家|军事家|史学家|散文家|作家|诗圣|诗仙|诗佛")
"""What a writer is (唐代诗人王勃): the name is what follows the last of these."""
_ZH_ADVERBS = re.compile(r"(?:都|常常|常|总是|总|经常|一直|还|也|又|就|曾经|曾|早就|早已|的)+$")
_ZH_NOBODY = ("古人", "古语", "古话", "古诗", "先人", "前人", "先贤", "圣人", "俗话", "俗语", "谚语", "常言", "老话",
              "有人", "人们", "大家", "别人", "某人", "他们", "她们", "我们", "诗人", "词人", "作者", "老师", "朋友",
              "父亲", "母亲", "爸爸", "妈妈", "爷爷", "奶奶", "同学", "专家", "学者", "书上", "诗中", "书中", "文中")
"""Subjects that name nobody in particular: 古人云 / 俗话说 / 有人说 / 老师说 credit no author."""
_ZH_VERB = (r"(?:曾经|曾|也|就|又|早就|早已)?(?:说过|说道|说得好|说|曰|写道|写过|写到|指出|讲过|讲|有言|有云|"
            r"云(?=\s*[：:])|有诗云|诗云|诗曰|吟道|咏道|叹道|感叹道|提到过|提到)")
_ZH_WORK = r"《(?P<work>[^《》\n]{1,30})》"
_ZH_OPEN = r"[：:，,]?\s*$"

_BEFORE_PATTERNS = [
    re.compile(rf"(?:\b[Aa]s|\b[Ll]ike)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably|so\s+\w+))?\s+{_VERB}(?:\s+(?:it|that))?\s*[,:]?\s*$"),
    re.compile(rf"\b[Ii]n\s+the\s+words\s+of\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})\s*[,:]?\s*$"),
    re.compile(rf"(?:^|[.!?;]\s+|\s)(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably|also|rightly))?\s+{_VERB}(?:\s+that)?\s*[,:]?\s*$"),
    re.compile(rf"(?:^|\n|[.!?]\s+)(?P<name>{_NAME})\s*:\s*$"),
    re.compile(rf"正如(?P<name>{_ZH_NAME}?)?(?:在?{_ZH_WORK}(?:一诗|一词|一文|一书)?(?:中|里)?)?(?:所说|所言|说的那样|说过的那样|所讲|曾说|所写|写的那样|说)[的过]?{_ZH_OPEN}"),
    re.compile(rf"(?P<name>{_ZH_NAME}?)?(?:的|在)?{_ZH_WORK}(?:一诗|一词|一文|一书)?(?:中|里)?{_ZH_VERB}{_ZH_OPEN}"),
    re.compile(rf"(?<![孔孟老庄荀墨韩朱曾列])(?P<sage>子)曰{_ZH_OPEN}"),
    re.compile(rf"(?P<name>{_ZH_NAME}?){_ZH_VERB}{_ZH_OPEN}"),
]
_AFTER_PATTERNS = [
    re.compile(rf"^\s*[,.]?\s*(?:—|–|--|―|-|——)\s*(?P<name>{_NAME})"),
    re.compile(rf"^\s*[,]?\s*(?:said|says|wrote|writes|observed|noted|remarked|declared|asked)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})"),
    re.compile(rf"^\s*[,]?\s*(?P<name>{_NAME})\s+(?:once\s+)?(?:said|says|wrote|writes|observed|noted|remarked|declared)\b"),
    re.compile(rf"^\s*\((?P<name>{_NAME})\)"),
    re.compile(rf"^\s*[。，,.]?\s*(?:——|—|－－|--)\s*(?P<name>{_ZH_NAME}?)?(?:{_ZH_WORK}|(?=[^{HAN_RANGES}·《]|$))"),
]
_UNQUOTED = [
    re.compile(rf"(?:\b[Aa]s|\b[Ll]ike)\s+(?:the\s+(?:[a-z]+\s+){{0,3}})?(?P<name>{_NAME})(?:\s+(?:once|famously|memorably))?\s+{_VERB}\s*[,:]\s*(?P<quote>[^\"“”«»「」『』\n][^\n]*?)(?=[.!?](?:\s|$)|\n|$)"),
    re.compile(rf"正如(?P<name>{_ZH_NAME}?)?(?:在?{_ZH_WORK}(?:中|里)?)?(?:所说|所言|说的那样|说过的那样|所讲|所写)[，,：:]\s*(?P<quote>[^“”「」『』\"\n][^。！？\n]*[。！？]?)"),
    re.compile(r"(?:有诗云|诗云|有云|云|曰|写道|有言)(?:[：:]|(?<=诗云)[，,])\s*(?P<quote>[^“”「」『』\"\n][^。！？\n]*[。！？]?)"),
]
"""Quotations without quotation marks: the text after an attribution, to the end of its sentence (the last pattern
takes its author and work from the words before the verb, as for a marked quotation)."""


def _clean_name(name: str, *, zh: bool) -> str:
    name = name.strip(" ,.:;'’")
    if zh:
        for prefix in _ZH_PREFIXES:
            if name.startswith(prefix) and len(name) - len(prefix) >= 2:
                name = name[len(prefix) :]
        roles = list(_ZH_ROLE.finditer(name))
        if roles and len(name) - roles[-1].end() >= 2:
            name = name[roles[-1].end() :]
        name = _ZH_ADVERBS.sub("", name)
        cut = max(name.rfind("中"), name.rfind("里"), name.rfind("在"))
        if cut >= 0 and len(name) - cut > 2:
            name = name[cut + 1 :]
        return "" if len(name) < 2 or name.endswith(_ZH_NOBODY) else name
    words = name.split()
    while words and words[0].casefold().strip(".") in _NOT_NAMES:
        words = words[1:]
    name = " ".join(words)
    return "" if name.casefold() in _NOT_NAMES else clean_author(name)


def _credit(m: re.Match[str]) -> tuple[str, str] | None:
    """``(author, work)`` from an attribution pattern's match; None when it names neither (another pattern may),
    ``("", "")`` when it credits nobody in particular (古人云)."""
    groups = m.groupdict()
    if groups.get("sage"):
        return "孔子", ""  # 子曰: the Master of the Analects
    raw, work = groups.get("name") or "", (groups.get("work") or "").strip()
    zh = bool(re.match(_ZH_NAME, raw))
    name = _clean_name(raw, zh=zh) if raw else ""
    if name or work:
        return name, work
    return ("", "") if zh else None


def _attribution(draft: str, start: int, end: int, inner: str = "") -> tuple[str, str]:
    """The ``(author, work)`` the draft attributes the quotation at ``[start, end)`` (marks included) to; ``""``
    for what it does not name.

    A "said X" after the quotation counts only when the quoted sentence runs on (it ends with , ? or !, or a
    comma follows) and the verb does not introduce the next quotation ("... Mark Twain wrote: “...").
    """
    after = draft[end : end + 80].split("\n", 1)[0]
    runs_on = inner.rstrip()[-1:] in (",", "?", "!", "，", "？", "！") or after.lstrip().startswith(",")
    for i, pattern in enumerate(_AFTER_PATTERNS):
        m = pattern.search(after)
        if m and i in (1, 2) and (not runs_on or re.match(r"\s*[:：]", after[m.end() :])):
            continue
        credit = _credit(m) if m else None
        if credit is not None and any(credit):
            return credit
    before = draft[max(0, start - 100) : start]
    before = before.rsplit("\n", 1)[-1]
    for pattern in _BEFORE_PATTERNS:
        m = pattern.search(before)
        credit = _credit(m) if m else None
        if credit is not None:
            return credit
    return "", ""


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
    """Every quotation in ``draft`` (in order) with the author and work the draft attributes it to, if any.

    Offsets and texts index ``draft`` itself; attributions are read in Simplified script (names come out
    Simplified: 李白說 -> 李白)."""
    simple = simplified_chars(draft)  # one character for one: offsets are shared
    out: list[Quotation] = []
    for o_start, start, end, o_end in _marked(draft):
        inner = draft[start:end]
        lead = len(inner) - len(inner.lstrip())
        trail = len(inner.rstrip(" \n\t,;"))
        if trail <= lead or not _substantial(inner):
            continue
        author, work = _attribution(simple, o_start, o_end, inner)
        out.append(Quotation(start + lead, start + trail, draft[start + lead : start + trail], author,
                             claimed_work=work))
    taken = [(q.start, q.end) for q in out]
    for n, pattern in enumerate(_UNQUOTED):
        for m in pattern.finditer(simple):
            s, e = m.span("quote")
            text = draft[s:e].rstrip(" ,;。，；")
            e = s + len(text)
            if not _substantial(text) or any(s < b and a < e for a, b in taken):
                continue
            if n == len(_UNQUOTED) - 1:  # a citing verb: the words before the quotation credit it
                author, work = _attribution(simple, s, e, text)
            else:
                author, work = _credit(m) or ("", "")
            out.append(Quotation(s, e, text, author, marked=False, claimed_work=work))
            taken.append((s, e))
    return sorted(out, key=lambda q: q.start)
