"""Insert a quotation: one sentence that brings the quote and its author into the paragraph at the insertion point.

The recipe (seed paper 004, section 7.7) over a small LM:

1. **Drafts.** ``drafts`` generations whose prompts differ in how many evidence items they see (K = 1..K2: the
   quote and its author; + the work; + the source passage), in decoding (greedy / sampled) and in how the reply
   must start (:data:`LEADS`; the first draft is free). With a local model (a generator that continues prefills)
   the quote is copied by construction: the model writes up to its opening quotation mark, the exact quote is
   prefilled, the model writes the rest (a 135M model rarely copies a quote faithfully on its own).
2. **Verbatim.** :func:`quill_core._spans.locate` finds the quote in each draft; an altered quote gets its canonical
   text back at the located span, a missing quote or a missing / wrong author rejects the draft.
3. **Fluency gate** (boolean): heuristics (language, length, repetition), then the LM's per-token NLL of the draft
   and the next sentence of the paragraph, relative to the plain template sentence (:func:`template_sentence`):
   ``fluency = min(1, exp(nll_template - nll_draft))``; below :data:`FLUENCY_GATE` the draft is rejected.
4. **Attribution**: localized entailment (:mod:`quill_core._attribution`) of each surviving draft against the quote's
   evidence; the best-attributed draft wins.

If every draft is rejected, the template sentence is used (``Draft.fallback``), so the writer always gets a sentence
that holds the exact quote and its author; :attr:`InsertResult.quote_span` points at the quote in the paragraph.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ._attribution import Entailer, localized_many, quote_evidence
from ._errors import GenerationError, InputError
from ._generate import Generator, Message
from ._text import detect_lang, normalize, split_sentences
from ._names import author_key, clean_author
from ._query import parse_query
from ._types import Draft, InsertResult, Quote, Progress



FLUENCY_GATE = 0.5          # draft perplexity at most ~2x the template's (per token, draft + next sentence)
SAMPLE_TEMPERATURE = 0.5    # odd-numbered drafts are sampled; SmolLM2-135M rambles above ~0.7
MAX_DRAFTS = 12
LEAD_TOKENS = 24            # forced drafts: the model's words before the quote ...
TAIL_TOKENS = 24            # ... and after it
CONTEXT_CHARS = 500         # paragraph text the prompt shows on each side of the gap

# Reply starts, cycled over the drafts; "" lets the model write the whole sentence. {a} is the author.
LEADS = {
    "en": ("", "In the words of {a}, “", "As {a} put it,", "{a} once said"),
    "zh": ("", "正如{a}所说：“", "用{a}的话来说：“", "{a}曾说："),
}
_SYSTEM = ("You weave quotations into paragraphs. Given a paragraph with a gap marked [GAP], a quotation and its "
           "author, you reply with exactly one sentence for the gap, in the paragraph's language and voice. The "
           "sentence names the author and contains the quotation word for word inside quotation marks.")
_EXAMPLE = {
    "en": ("Paragraph: Our grandparents saved every coin they earned. [GAP] That habit paid for my mother's "
           "education.\nQuotation: “A penny saved is a penny earned.”\nAuthor: Benjamin Franklin\nLanguage: English",
           "They lived by the words of Benjamin Franklin, “A penny saved is a penny earned.”"),
    "zh": ("Paragraph: 爷爷一辈子省吃俭用，每一分钱都舍不得乱花。[GAP]正是这份节俭，供我母亲读完了大学。\n"
           "Quotation: “静以修身，俭以养德。”\nAuthor: 诸葛亮\nLanguage: Chinese",
           "他常用诸葛亮的话教导我们：“静以修身，俭以养德。”"),
}
_LANGUAGE = {"en": "English", "zh": "Chinese"}
_OPEN, _CLOSE = "“\"'‘「『", "”\"'’」』"
_END = ".!?。！？…"
_OPENERS = ("“", '"', "「")
# words that can stand right before an opening quotation mark (forced drafts)
_INTRO_EN = re.compile(r"(?:[,:;—–-]|\b(?:said|says|say|wrote|writes|put it|observed|noted|remarked|declared|"
                       r"asked|told (?:us|them|me|him|her)|reminded (?:us|them|me|him|her)|believed|argued|insisted|"
                       r"claimed|warned|advised|that|words|goes|reads|quipped|once said|famously))\s*$", re.I)
_INTRO_ZH = re.compile(r"(?:[：:，,]|说|道|写道|曰|言|讲|云|说过|提到|认为)\s*$")
_LABEL = re.compile(r"^\s*(?:(?:here(?:'s| is) (?:the|a|my|one) (?:\w+ )?sentence[^:：]*|sentence|answer|reply|"
                    r"output|句子|答案)\s*[:：]\s*)", re.I)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_NAME_SUFFIX = {"jr", "sr", "ii", "iii", "iv"}
_NOT_NAMES = {"as", "in", "the", "and", "but", "so", "then", "when", "while", "like", "said", "wrote", "once",
              "mr", "mrs", "ms", "dr", "professor", "sir", "lady", "lord", "saint", "st"}


@dataclass(frozen=True)
class _Plan:
    k: int              # evidence items shown (1 = quote and author only)
    lead: str           # reply start ("" = none)
    temperature: float
    seed: int


@dataclass
class _Candidate:
    index: int
    text: str
    reason: str = ""
    fluency: float = 0.0
    attribution: float = 0.0
    fallback: bool = False


# -- sentences ------------------------------------------------------------------------------------------------------
def _lang(paragraph_lang: str) -> str:
    return "zh" if paragraph_lang == "zh" else "en"


def template_sentence(quote: Quote, lang: str) -> str:
    """The deterministic sentence used when no draft survives: ``As Author put it, “quote”`` /
    ``正如某某所说：“quote”`` (an anonymous quote: ``As the saying goes`` / ``俗话说``)."""
    author = clean_author(quote.author)
    text = quote.text.strip()
    if _lang(lang) == "zh":
        lead = f"正如{author}所说：" if author else "俗话说："
        return f"{lead}“{text}”" + ("" if text[-1:] in _END else "。")
    lead = f"As {author} put it, " if author else "As the saying goes, "
    return f"{lead}“{text}”" + ("" if text[-1:] in _END else ".")


def _cjkish(ch: str) -> bool:
    """A Chinese character or Chinese punctuation (“ and ” are shared with English, so they do not count)."""
    return bool(_CJK.match(ch)) or ch in "。，！？；：、「」『』（）《》…"


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


# -- prompting ------------------------------------------------------------------------------------------------------
def _evidence_items(quote: Quote, passage: str) -> list[str]:
    items = []
    if quote.work:
        items.append(f"Source: {quote.work}")
    if passage.strip():
        items.append("Background: " + " ".join(split_sentences(passage)[:4])[:600])
    return items


def _plans(n: int, k2: int, lang: str) -> list[_Plan]:
    """Draft i: K cycles K2, K2-1, .., 1; the lead-ins cycle; even drafts greedy, odd ones sampled."""
    leads = LEADS[lang]
    return [_Plan(k=k2 - (i % k2), lead=leads[i % len(leads)],
                  temperature=0.0 if i % 2 == 0 else SAMPLE_TEMPERATURE, seed=i) for i in range(n)]


def _forced(generator: Generator, chat: list[Message], quote: Quote, plan: _Plan, lang: str,
            threshold: float) -> tuple[str, str]:
    """A draft whose quote is copied by construction: the model writes up to its opening quotation mark (unless
    the lead-in already ends with one), the quote is appended verbatim, and the model finishes the sentence.
    Returns the raw draft and, when the model's words cannot introduce a quotation, the reason to reject it."""
    head = chat[-1][1] if chat[-1][0] == "assistant" else ""
    context = chat[:-1] if head else chat
    if not head.endswith(_OPENERS):
        start = generator.generate(chat, temperature=plan.temperature, max_tokens=LEAD_TOKENS, seed=plan.seed,
                                   stop=_OPENERS)
        if "\n" in start.strip() or _quote_span(start, quote, threshold) is not None:
            return start, ""  # no quotation opened on this line / the quote is already there: checked as it is
        start = start.rstrip()
        if start and not (_INTRO_ZH if lang == "zh" else _INTRO_EN).search(start):
            return f"{start} “{quote.text}”", "quotation not introduced"
        head = start + ("" if lang == "zh" or not start else " ") + "“"
    prefill = head + quote.text + "”"
    return generator.generate(context + [("assistant", prefill)], temperature=plan.temperature,
                              max_tokens=TAIL_TOKENS, seed=plan.seed, stop=("\n",)), ""


def _budget(text: str) -> int:
    """New tokens a draft may take: the quote (about 4 Latin characters or 1 Chinese character per token, with
    room to spare) plus 40 for the words around it."""
    cjk = len(_CJK.findall(text))
    return 40 + 2 * cjk + (len(text) - cjk) // 3


def _messages(before: str, after: str, quote: Quote, items: Sequence[str], plan: _Plan, lang: str) -> list[Message]:
    author = clean_author(quote.author) or ("佚名" if lang == "zh" else "unknown")
    gap_before = before[-CONTEXT_CHARS:].lstrip()
    gap_after = after[:CONTEXT_CHARS].rstrip()
    sep = "" if lang == "zh" else " "
    lines = [f"Paragraph: {gap_before.rstrip()}{sep}[GAP]{sep}{gap_after.lstrip()}".rstrip(),
             f"Quotation: “{quote.text.strip()}”", f"Author: {author}"]
    lines += list(items[: plan.k - 1])
    lines.append(f"Language: {_LANGUAGE[lang]}")
    example_user, example_reply = _EXAMPLE[lang]
    chat: list[Message] = [("system", _SYSTEM), ("user", example_user), ("assistant", example_reply),
                           ("user", "\n".join(lines))]
    if plan.lead:
        chat.append(("assistant", plan.lead.format(a=author)))
    return chat


# -- checking one draft -------------------------------------------------------------------------------------------
def _quote_span(text: str, quote: Quote, threshold: float) -> tuple[int, int] | None:
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
    for m in re.finditer(r"[.!?。！？]+[\"'”’」』)]*\s+|[。！？]+[”」』）]*|\n+", text[:s]):
        start = m.end()
    end = len(text)
    closing = re.match(r"[\"'”’」』]*", text[e:]).end()
    rest = text[e + closing:]
    if text[e - 1 : e] in _END and closing and (lang == "zh" or re.match(r"\s+[A-Z]", rest) or not rest.strip()):
        end = e + closing  # the quote's own full stop ends the sentence: “... knowledge.” The next one ...
    else:
        m = re.search(r"[.!?。！？]+[\"'”’」』)]*(?=\s|$)|[。！？]+[”」』）]*", text[e:])
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
    if canonical[-1:] in _END:
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
    if core[-1:] in _END:
        return text
    return text + ("。" if lang == "zh" else ".")


def _author_problem(text: str, span: tuple[int, int], author: str) -> str:
    """Why the sentence does not name ``author`` outside the quote ('' when it does). A Chinese name must appear
    whole; a Western one whole, or by its surname when no other first name stands before it."""
    author = clean_author(author)
    if not author:
        return ""
    outside = text[: span[0]] + " \x00 " + text[span[1]:]
    if _CJK.search(author):
        return "" if author.replace("·", "") in outside.replace("·", "") else "author missing"
    if _tokens_in_order(author, outside):
        return ""
    tokens = [t for t in re.findall(r"[^\W\d_][\w'’.-]*", author) if t.lower().strip(".") not in _NAME_SUFFIX]
    surname = tokens[-1] if len(tokens) >= 2 and len(tokens[-1]) >= 3 else ""
    if surname:
        own = {t.lower() for t in tokens}
        for m in re.finditer(rf"\b{re.escape(surname)}\b", outside, re.I):
            prev = re.search(r"([A-Z][\w'’.-]*)\s+$", outside[: m.start()])
            if prev and prev.group(1).lower() not in own and prev.group(1).lower() not in _NOT_NAMES:
                return f"wrong author ({prev.group(1)} {m.group(0)})"
            return ""
    return "author missing"


def _tokens_in_order(author: str, text: str) -> bool:
    words = [w for w in re.findall(r"\w+", author.lower())]
    pattern = r"\W+".join(re.escape(w) for w in words)
    return bool(words) and re.search(pattern, text.lower()) is not None


def _language_problem(text: str, span: tuple[int, int], lang: str, author: str) -> str:
    outside = (text[: span[0]] + text[span[1]:]).replace(clean_author(author), "")
    cjk, latin = len(_CJK.findall(outside)), len(_LATIN.findall(outside))
    if lang == "zh" and latin > max(3, cjk):
        return "wrong language"
    if lang == "en" and cjk > latin:
        return "wrong language"
    return ""


def _shape_problem(text: str, span: tuple[int, int], lang: str) -> str:
    outside = text[: span[0]] + " " + text[span[1]:]
    if lang == "zh":
        if len(_CJK.findall(outside)) > 80:
            return "too long"
    elif len(outside.split()) > 45:
        return "too long"
    words = re.findall(r"\w+", outside.lower()) if lang != "zh" else _CJK.findall(outside)
    grams = [tuple(words[i : i + 3]) for i in range(len(words) - 2)]
    if grams and max(grams.count(g) for g in set(grams)) >= 3:
        return "repetitive"
    return ""


def _first_line(raw: str) -> str:
    """The first non-empty line of a reply, without a leading label such as 'Sentence:'."""
    lines = [ln for ln in raw.strip().splitlines() if ln.strip()]
    return _LABEL.sub("", lines[0] if lines else "").strip()


def _check(raw: str, quote: Quote, lang: str, threshold: float) -> tuple[str, str]:
    """``(sentence, reason)``: the cleaned, repaired sentence, and why it is rejected ('' if it is not)."""
    text = _first_line(raw)
    if not text:
        return "", "empty draft"
    span = _quote_span(text, quote, threshold)
    if span is None:
        return text, "quote missing or altered beyond repair"
    text, span = _one_sentence(text, span, lang)
    text, start = _repair(text, quote, span, lang)
    span = (start, start + len(quote.text))
    text = _finish(text, lang)
    problem = (_author_problem(text, span, quote.author) or _language_problem(text, span, lang, quote.author)
               or _shape_problem(text, span, lang))
    return text, problem


# -- the stage ------------------------------------------------------------------------------------------------------
def insert(paragraph: str, quote: Quote, *, generator: Generator, scorer: Any = None,
           entailer: Entailer | None = None, drafts: int = 4, passage: str = "", threshold: float = 85,
           fluency_gate: float = FLUENCY_GATE, force_quote: bool | None = None,
           progress: Progress | None = None) -> InsertResult:
    """Write the sentence that brings ``quote`` into ``paragraph`` at its ``[Q]`` marker (else at the end).

    ``scorer`` (a :class:`~quill_core._scorer.PerplexityScorer`) measures fluency; without one only the heuristic gate
    applies. ``entailer`` measures attribution against the quote's evidence (``passage``: its source passage, when
    known); without one the drafts keep their generation order. ``threshold`` is the locate score (0-100) above
    which an altered quote is repaired rather than the draft rejected. ``force_quote`` writes each draft in two
    steps, the model's words up to an opening quotation mark, then the exact quote (prefilled) and the model's
    ending; the default is to force with generators that continue a prefill (local models), since a small model
    rarely copies a quote faithfully, and to let endpoints write the sentence in one go.

    Raises :class:`InputError` for an unusable paragraph or quote and :class:`GenerationError` when the generator
    fails for every draft.
    """
    if not quote.text or not quote.text.strip():
        raise InputError("the quote is empty")
    if not 1 <= drafts <= MAX_DRAFTS:
        raise InputError(f"drafts must be between 1 and {MAX_DRAFTS}, got {drafts}")
    query = parse_query(paragraph)
    lang = _lang(query.lang if query.text.strip() else detect_lang(quote.text))
    quote = Quote(text=quote.text.strip(), author=quote.author, work=quote.work, topics=quote.topics,
                  lang=quote.lang, collections=quote.collections, ppl=quote.ppl, popularity=quote.popularity,
                  id=quote.id)
    items = _evidence_items(quote, passage)
    plans = _plans(drafts, 1 + len(items), lang)
    force = bool(getattr(generator, "prefill", False)) if force_quote is None else force_quote
    steps = drafts + 2

    candidates: list[_Candidate] = []
    errors: list[str] = []
    for i, plan in enumerate(plans):
        if progress:
            progress(i / steps, f"writing draft {i + 1} of {drafts}")
        chat = _messages(query.before, query.after, quote, items, plan, lang)
        try:
            if force:
                raw, early = _forced(generator, chat, quote, plan, lang, threshold)
            else:
                raw, early = generator.generate(chat, temperature=plan.temperature, max_tokens=_budget(quote.text),
                                                seed=plan.seed, stop=("\n",)), ""
        except GenerationError as exc:
            errors.append(str(exc))
            candidates.append(_Candidate(i, "", reason=f"generation failed: {exc}"))
            continue
        text, reason = _check(raw, quote, lang, threshold)
        if early:  # show the model's whole line, not the sentence cut around the appended quote
            text, reason = _first_line(raw), early
        if not reason:
            dup = next((c.index for c in candidates if not c.reason and normalize(c.text) == normalize(text)), None)
            if dup is not None:
                reason = f"duplicate of draft {dup + 1}"
        candidates.append(_Candidate(i, text, reason=reason))
    if len(errors) == len(plans):
        raise GenerationError(errors[0])

    template = _Candidate(len(plans), template_sentence(quote, lang), fallback=True)
    alive = [c for c in candidates if not c.reason]
    if progress:
        progress(drafts / steps, "checking fluency")
    _score_fluency(scorer, query.before, query.after, alive, template, fluency_gate)
    alive = [c for c in alive if not c.reason]
    if progress:
        progress((drafts + 1) / steps, "measuring attribution")
    pool = alive or [template]
    if entailer is not None:
        scores = localized_many(entailer, quote_evidence(quote, passage), [c.text for c in pool])
        for c, a in zip(pool, scores):
            c.attribution = a
    pool.sort(key=lambda c: (-c.attribution, -c.fluency, c.index))
    rejected = [c for c in candidates if c.reason]
    ordered = pool + rejected

    best = pool[0]
    start = best.text.find(quote.text)
    if start < 0:  # pragma: no cover - _check guarantees the canonical text is in every surviving draft
        raise InputError("internal error: the chosen sentence lost its quote")
    text, offset = compose(query.before, best.text, query.after)
    if progress:
        progress(1.0, "done")
    return InsertResult(paragraph=text, sentence=best.text,
                        quote_span=(offset + start, offset + start + len(quote.text)),
                        drafts=tuple(Draft(text=c.text, fluency=round(c.fluency, 4),
                                           attribution=round(c.attribution, 4), rejected_reason=c.reason,
                                           fallback=c.fallback) for c in ordered))


def _score_fluency(scorer: Any, before: str, after: str, alive: list[_Candidate], template: _Candidate,
                   gate: float) -> None:
    """Fill ``fluency`` relative to the template and reject drafts below ``gate``."""
    if scorer is None:
        for c in alive + [template]:
            c.fluency = 1.0
        return
    everyone = alive + [template]
    nlls = scorer.score(before, [c.text for c in everyone], after)
    means = [(n.quote + n.after).mean for n in nlls]
    ref = means[-1]
    for c, m in zip(everyone, means):
        c.fluency = min(1.0, math.exp(ref - m))
        if c is not template and c.fluency < gate:
            c.reason = f"disfluent ({c.fluency:.2f} < {gate:.2f})"
