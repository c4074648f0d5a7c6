"""Checking one insertion draft: the sentence a generator wrote for the gap, made exact or rejected with a reason.

:func:`check_draft` takes the model's raw reply and returns the sentence to show and why it is rejected ('' when
it is not):

1. the first non-empty line, without a label such as ``Sentence:`` (:func:`first_line`);
2. the quote located in it (:func:`quote_span`, :func:`quill_core._spans.locate`; missing or altered beyond the
   threshold: rejected);
3. the one sentence that holds the quote (sentence ends inside the quote do not count);
4. verbatim repair: the canonical quote at the located span, inside one pair of quotation marks;
5. in a Chinese sentence, Chinese punctuation and spacing outside the quote (“…”, ，：；！？, no space beside a
   Chinese character); a dangling comma after the quote dropped, a sentence cut off mid-clause rejected;
6. terminal punctuation, then the author, anonymity, language, script, work and shape problems, in that order.

Names (:func:`writing_author`): a Chinese sentence names the author in Chinese: the knowledge base's name as
written, or for a Latin-script name the Chinese form readers know when :mod:`quill_core._zhnames` has it
("Confucius" -> 孔子, "Albert Einstein" -> 爱因斯坦); any other Latin-script name stays as written rather than be
transliterated on the spot (a made-up transliteration may name nobody the reader knows). An English sentence names the
author as the knowledge base writes it (孔子 stays 孔子; "Confucius" is accepted in a model's draft too). Latin-script
names in a Chinese sentence other than the author's own, and Chinese characters in an English sentence other than
the author's and the work's, reject the draft. An anonymous quote is introduced as a saying (俗话说, 古人云, "As the
saying goes"), never credited to 佚名 or "Unknown"; a Chinese sentence names a work in 《》 only when the quote
carries it (:func:`cited_work`).

Also here: the deterministic :func:`template_sentence` (the fallback when every draft is rejected) and
:func:`compose`, which puts the chosen sentence into the paragraph with the spacing the languages want.
"""

from __future__ import annotations

import re
from typing import Literal

from ._names import NAME_SUFFIXES, author_key, chinese_form, clean_author, mentions_author
from ._text import CJK_RANGES, HAN, HAN_RANGES, SENTENCE_FINAL, has_cjk, normalize
from ._types import Quote
from ._zhnames import chinese_name

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
_SAYINGS_BOOKS = ("论语", "孟子", "大学", "中庸")  # recorded speech: 孔子在《论语》中说, not 写道
_WORK_SEP = re.compile(r"[·・•]")
_ZH_PUNCT = str.maketrans({",": "，", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"})
_DANGLING = ",，、:：;；—–-(（《“‘「『"  # a sentence ending in one of these was cut off mid-clause
_LATIN_WORD = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?:[\s.'’-]+[A-Z][a-z]+)*")
_NAME_RUN = re.compile(r"[A-Z][A-Za-z'’.-]*(?:\s+[A-Z][A-Za-z'’.-]*)*")
_ZH_ANONYMOUS = re.compile(r"佚名|无名氏|無名氏|缺名|阙名")
_EN_ANONYMOUS = re.compile(r"\b(?:as|of|by)\s+(?:unknown|anonymous|anon\.?)(?=\s*(?:[,:;—–-]|said|says|wrote|"
                           r"writes|put it|once|$))|\b(?:unknown|anonymous)\s+(?:once\s+)?(?:said|says|wrote|"
                           r"writes|put it)\b", re.I)


def writing_lang(paragraph_lang: str) -> WritingLang:
    """The language to write in for a paragraph in ``paragraph_lang``."""
    return "zh" if paragraph_lang == "zh" else "en"


# -- names, works and the fallback sentence -----------------------------------------------------------------------
def writing_author(quote: Quote, lang: str) -> str:
    """The name a sentence in ``lang`` gives the quote's author ('' for an anonymous quote): in Chinese its Chinese
    form (:func:`quill_core._names.chinese_form`), in English the knowledge base's name as written."""
    return chinese_form(quote.author) if writing_lang(lang) == "zh" else clean_author(quote.author)


def cited_work(quote: Quote, lang: str) -> str:
    """The work a Chinese sentence may name in 《》: the quote's own work when it is written in Chinese, a long path
    cut to book and title (诗经·国风·周南·关雎 -> 诗经·关雎); '' when the quote carries none (nothing is made up)
    and in English."""
    work = normalize(quote.work).strip("《》〈〉<> ")
    if writing_lang(lang) != "zh" or not has_cjk(work):
        return ""
    parts = [p.strip() for p in _WORK_SEP.split(work) if p.strip()]
    return "·".join(parts[:1] + parts[-1:] if len(parts) > 2 else parts)


def work_verb(work: str) -> str:
    """How a Chinese sentence says a work holds the words: 说 for recorded speech (论语, 孟子), else 写道."""
    return "说" if _WORK_SEP.split(work)[0] in _SAYINGS_BOOKS else "写道"


def template_sentence(quote: Quote, lang: str) -> str:
    """The deterministic sentence used when no draft survives: ``As Author put it, “quote”``; in Chinese
    ``某某在《作品》中写道：“quote”`` when the quote carries a work, else ``正如某某所说：“quote”``. An anonymous
    quote: ``As the saying goes`` / ``《作品》中写道`` / ``俗话说``."""
    text = quote.text.strip()
    if writing_lang(lang) == "zh":
        author, work = writing_author(quote, "zh"), cited_work(quote, "zh")
        if work:
            lead = f"{author}在《{work}》中{work_verb(work)}：" if author else f"《{work}》中{work_verb(work)}："
        else:
            lead = f"正如{author}所说：" if author else "俗话说："
        return f"{lead}“{text}”" + ("" if text[-1:] in SENTENCE_FINAL else "。")
    author = clean_author(quote.author)
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
    straight = (opened and left.rstrip()[-1] in "\"'") or (closed and right[0] in "\"'")
    if opened and closed and not (lang == "zh" and straight):  # Chinese wants “…”, not straight quotes
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


def _zhish(ch: str) -> bool:
    return _cjkish(ch) or ch in "“”"


def _chinese_marks(part: str) -> str:
    """Text outside the quote in a Chinese sentence: no space beside a Chinese character or mark, ASCII , : ; ! ?
    ( ) beside Chinese made full-width, a final ASCII full stop made 。."""
    def near(text: str, i: int, j: int) -> bool:
        return (i > 0 and _zhish(text[i - 1])) or (j < len(text) and _zhish(text[j]))

    part = re.sub(r"\s+", lambda m: "" if near(part, m.start(), m.end()) else m.group(0), part)
    part = re.sub(r"[,:;!?()]", lambda m: m.group(0).translate(_ZH_PUNCT) if near(part, m.start(), m.end())
                  else m.group(0), part)
    return re.sub(f"(?<=[{HAN_RANGES}”’」』）])\\.(?=[”’」』）]*$)", "。", part)


def _ending(text: str, span: tuple[int, int]) -> tuple[str, str]:
    """A comma or colon left dangling right after the quote is dropped; a sentence that still ends mid-clause
    (a comma, a colon, an opening bracket) was cut off: ``(text, reason)``."""
    m = re.fullmatch(r"([" + re.escape(_CLOSE) + r"]*)\s*[,，、:：;；]+\s*", text[span[1]:])
    if m:
        text = text[: span[1]] + m.group(1)
    end = text.rstrip()[-1:]
    return text, (f"unfinished sentence (ends with “{end}”)" if end and end in _DANGLING else "")


def _finish(text: str, lang: str) -> str:
    """Terminal punctuation if the sentence has none."""
    text = text.rstrip()
    core = text.rstrip(_CLOSE + ")）")
    if core[-1:] in SENTENCE_FINAL:
        return text
    return text + ("。" if lang == "zh" else ".")


def _names_in_latin(outside: str, han: str) -> bool:
    """Whether ``outside`` names the person whose Chinese name is ``han`` by a Latin-script form ("Confucius")."""
    runs = {w for m in _NAME_RUN.finditer(outside) for w in (m.group(0), *m.group(0).split())}
    return any(chinese_name(author_key(r)) == han for r in runs)


def _author_problem(text: str, span: tuple[int, int], quote: Quote, lang: str) -> str:
    """Why the sentence does not name the quote's author outside the quote ('' when it does). A Chinese sentence
    names it by :func:`writing_author`; a Chinese name must appear whole (an English sentence may also use a known
    Latin form: "Confucius" for 孔子); a Western one whole, or by its surname when no other first name stands
    before it."""
    author = clean_author(quote.author)
    if not author:
        return ""
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    written = writing_author(quote, lang)
    if has_cjk(written):
        if written.replace("·", "") in outside.replace("·", ""):
            return ""
        if lang == "zh" and not has_cjk(author) and mentions_author(outside, author):
            return f"English author name in a Chinese sentence ({author})"
        if lang != "zh" and _names_in_latin(outside, written):
            return ""
        return "author missing"
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
    han = chinese_form(author)
    if lang != "zh" and has_cjk(han) and han.replace("·", "") in outside.replace("·", ""):
        return f"Chinese author name in an English sentence ({han})"
    return "author missing"


def _anonymous_problem(text: str, span: tuple[int, int], quote: Quote, lang: str) -> str:
    """An anonymous quote credited to 'Unknown' / 佚名 as if that were a person."""
    if clean_author(quote.author):
        return ""
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    m = (_ZH_ANONYMOUS if lang == "zh" else _EN_ANONYMOUS).search(outside)
    return f"anonymous quote credited to “{m.group(0).strip()}”" if m else ""


def _script_problem(text: str, span: tuple[int, int], quote: Quote, lang: str) -> str:
    """Names in the other language's script: Latin-script names in a Chinese sentence (other than an author with no
    known Chinese form; work titles in 《》 are left to :func:`_work_problem`), Chinese characters in an English
    sentence (other than the author and work as the knowledge base writes them)."""
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    if lang == "zh":
        written = writing_author(quote, lang)
        rest = re.sub(r"《[^》]*》", "", outside.replace(written, " ") if written and not has_cjk(written) else outside)
        m = _LATIN_WORD.search(rest)
        return f"Latin-script name in a Chinese sentence ({m.group(0)})" if m else ""
    for known in (clean_author(quote.author), normalize(quote.work)):
        if known:
            outside = outside.replace(known, " ")
    m = re.search(f"[{CJK_RANGES}]+", outside)
    return f"Chinese characters in an English sentence ({m.group(0)})" if m and HAN.search(m.group(0)) else ""


def _work_problem(text: str, span: tuple[int, int], quote: Quote, lang: str) -> str:
    """A Chinese sentence that names in 《》 a work the quote does not carry (every part of a named title must be a
    part of the quote's work: 《论语》 and 《学而》 for 论语·学而)."""
    if lang != "zh":
        return ""
    own = {re.sub(r"篇$", "", p.strip()) for p in _WORK_SEP.split(normalize(quote.work).strip("《》"))} - {""}
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    for m in re.finditer(r"《([^》]*)》", outside):
        parts = {re.sub(r"篇$", "", p.strip()) for p in _WORK_SEP.split(m.group(1))} - {""}
        if not parts or not parts <= own:
            return f"work not in the evidence (《{m.group(1)}》)"
    return ""


def _language_problem(text: str, span: tuple[int, int], lang: str, author: str) -> str:
    outside = (text[: span[0]] + " " + text[span[1]:]).replace(clean_author(author) or "\x00", " ")
    cjk, latin = len(HAN.findall(outside)), len(_LATIN.findall(outside))
    if lang == "zh" and len(re.findall(r"[A-Za-z]+", outside)) > max(1, cjk // 3):  # a word against ~3 characters
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
    lang = writing_lang(lang)
    text = first_line(raw)
    if not text:
        return "", "empty draft"
    span = quote_span(text, quote, threshold)
    if span is None:
        return text, "quote missing or altered beyond repair"
    text, span = _one_sentence(text, span, lang)
    text, start = _repair(text, quote, span, lang)
    span = (start, start + len(quote.text))
    if lang == "zh":
        left, right = _chinese_marks(text[:start]), _chinese_marks(text[span[1]:])
        text, span = left + quote.text + right, (len(left), len(left) + len(quote.text))
    text, unfinished = _ending(text, span)
    if unfinished:
        return text, unfinished
    text = _finish(text, lang)
    problem = (_author_problem(text, span, quote, lang) or _anonymous_problem(text, span, quote, lang)
               or _language_problem(text, span, lang, quote.author) or _script_problem(text, span, quote, lang)
               or _work_problem(text, span, quote, lang) or _shape_problem(text, span, lang))
    return text, problem
