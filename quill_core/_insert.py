"""Insert a quotation: one sentence that brings the quote and its author into the paragraph at the insertion point.

The recipe (seed paper 004, section 7.7) over a small LM:

1. **Drafts.** ``drafts`` generations whose prompts differ in how many evidence items they see (K = 1..K2: the
   quote and its author; + the work; + the source passage), in decoding (greedy / sampled) and in how the reply
   must start (:data:`LEADS`; the first draft is free). With a local model (a generator that continues prefills)
   the quote is copied by construction: the model writes up to its opening quotation mark, the exact quote is
   prefilled, the model writes the rest (a 135M model rarely copies a quote faithfully on its own).
2. **Verbatim** (:mod:`quill_core._drafts`). :func:`quill_core._spans.locate` finds the quote in each draft; an
   altered quote gets its canonical text back at the located span, a missing quote or a missing / wrong author
   rejects the draft.
3. **Fluency gate** (boolean): heuristics (language, length, repetition), then the LM's per-token NLL of the draft
   and the next sentence of the paragraph, relative to the plain template sentence
   (:func:`~quill_core._drafts.template_sentence`):
   ``fluency = min(1, exp(nll_template - nll_draft))``; below :data:`FLUENCY_GATE` the draft is rejected.
4. **Attribution**: localized entailment (:mod:`quill_core._attribution`) of each surviving draft against the quote's
   evidence; the best-attributed draft wins.

If every draft is rejected, the template sentence is used (``Draft.fallback``), so the writer always gets a sentence
that holds the exact quote and its author; :attr:`InsertResult.quote_span` points at the quote in the paragraph.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Literal, Sequence

from ._attribution import Entailer, localized_many, quote_evidence
from ._drafts import (WritingLang, check_draft, cited_work, compose, first_line, quote_span, template_sentence,
                      work_verb, writing_author, writing_lang)
from ._errors import GenerationError, InputError
from ._generate import Generator, Message
from ._text import HAN, detect_lang, normalize, split_sentences
from ._query import parse_query
from ._scorer import Scorer
from ._types import Draft, InsertResult, Progress, Quote

FLUENCY_GATE = 0.5          # draft perplexity at most ~2x the template's (per token, draft + next sentence)
SAMPLE_TEMPERATURE = 0.5    # odd-numbered drafts are sampled; SmolLM2-135M rambles above ~0.7
MAX_DRAFTS = 12
LEAD_TOKENS = 24            # forced drafts: the model's words before the quote ...
TAIL_TOKENS = 24            # ... and after it
CONTEXT_CHARS = 500         # paragraph text the prompt shows on each side of the gap

# Reply starts, cycled over the drafts; "" lets the model write the whole sentence. {a} is the author (as the
# sentence names it), {w} the quote's work as a Chinese sentence cites it, {v} the verb for it (写道 / 说).
LeadKind = Literal["author", "work", "anonymous", "anonymous work"]
LEADS: dict[tuple[WritingLang, LeadKind], tuple[str, ...]] = {
    ("en", "author"): ("", "In the words of {a}, “", "As {a} put it,", "{a} once said"),
    ("en", "anonymous"): ("", "As the saying goes, “", "As the old saying has it, “", "As people say,"),
    ("zh", "author"): ("", "正如{a}所说：“", "用{a}的话来说：“", "{a}曾说："),
    ("zh", "work"): ("", "{a}在《{w}》中{v}：“", "正如{a}所说：“", "{a}曾说："),
    ("zh", "anonymous"): ("", "俗话说：“", "常言道：“", "俗话说得好："),
    ("zh", "anonymous work"): ("", "《{w}》中{v}：“", "古人云：“", "《{w}》有云："),
}
_NO_AUTHOR = {"en": "none (an anonymous saying: introduce it as a saying and name no one)",
              "zh": "无（古语或俗语：用“俗话说”或“古人云”引出）"}
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
_OPENERS = ("“", '"', "「")
# words that can stand right before an opening quotation mark (forced drafts)
_INTRO_EN = re.compile(r"(?:[,:;—–-]|\b(?:said|says|say|wrote|writes|put it|observed|noted|remarked|declared|"
                       r"asked|told (?:us|them|me|him|her)|reminded (?:us|them|me|him|her)|believed|argued|insisted|"
                       r"claimed|warned|advised|that|words|goes|reads|quipped|once said|famously))\s*$", re.I)
_INTRO_ZH = re.compile(r"(?:[：:，,]|说|道|写道|曰|言|讲|云|说过|提到|认为|有诗为证)\s*$")


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


# -- prompting ------------------------------------------------------------------------------------------------------
def _evidence_items(quote: Quote, passage: str) -> list[str]:
    items = []
    if quote.work:
        items.append(f"Source: {quote.work}")
    if passage.strip():
        items.append("Background: " + " ".join(split_sentences(passage)[:4])[:600])
    return items


def leads(quote: Quote, lang: WritingLang) -> tuple[str, ...]:
    """The reply starts for ``quote`` in ``lang``, filled in: a named author, in Chinese also the quote's own work
    when it has one (王勃在《杜少府之任蜀州》中写道：“); an anonymous quote is introduced as a saying (俗话说：“,
    古人云：“, 《增广贤文》中写道：“), never credited to 佚名 or "unknown"."""
    author, work = writing_author(quote, lang), cited_work(quote, lang)
    kind: LeadKind = ("work" if work else "author") if author else ("anonymous work" if work else "anonymous")
    table = LEADS.get((lang, kind)) or LEADS[(lang, "author" if author else "anonymous")]
    return tuple(lead.format(a=author, w=work, v=work_verb(work)) for lead in table)


def _plans(n: int, k2: int, starts: Sequence[str]) -> list[_Plan]:
    """Draft i: K cycles K2, K2-1, .., 1; the lead-ins cycle; even drafts greedy, odd ones sampled."""
    return [_Plan(k=k2 - (i % k2), lead=starts[i % len(starts)],
                  temperature=0.0 if i % 2 == 0 else SAMPLE_TEMPERATURE, seed=i) for i in range(n)]


def _forced(generator: Generator, chat: list[Message], quote: Quote, plan: _Plan, lang: WritingLang,
            threshold: float) -> tuple[str, str]:
    """A draft whose quote is copied by construction: the model writes up to its opening quotation mark (unless
    the lead-in already ends with one), the quote is appended verbatim, and the model finishes the sentence.
    Returns the raw draft and, when the model's words cannot introduce a quotation, the reason to reject it."""
    head = chat[-1][1] if chat[-1][0] == "assistant" else ""
    context = chat[:-1] if head else chat
    if not head.endswith(_OPENERS):
        start = generator.generate(chat, temperature=plan.temperature, max_tokens=LEAD_TOKENS, seed=plan.seed,
                                   stop=_OPENERS)
        if "\n" in start.strip() or quote_span(start, quote, threshold) is not None:
            return start, ""  # no quotation opened on this line / the quote is already there: checked as it is
        start = start.rstrip()
        if start and not (_INTRO_ZH if lang == "zh" else _INTRO_EN).search(start):
            return f"{start}{'' if lang == 'zh' else ' '}“{quote.text}”", "quotation not introduced"
        head = start + ("" if lang == "zh" or not start else " ") + "“"
    prefill = head + quote.text + "”"
    return generator.generate(context + [("assistant", prefill)], temperature=plan.temperature,
                              max_tokens=TAIL_TOKENS, seed=plan.seed, stop=("\n",)), ""


def _budget(text: str) -> int:
    """New tokens a draft may take: the quote (about 4 Latin characters or 1 Chinese character per token, with
    room to spare) plus 40 for the words around it."""
    cjk = len(HAN.findall(text))
    return 40 + 2 * cjk + (len(text) - cjk) // 3


def _messages(before: str, after: str, quote: Quote, items: Sequence[str], plan: _Plan,
              lang: WritingLang) -> list[Message]:
    author = writing_author(quote, lang) or _NO_AUTHOR[lang]
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
        chat.append(("assistant", plan.lead))
    return chat


# -- the stage ------------------------------------------------------------------------------------------------------
def insert(paragraph: str, quote: Quote, *, generator: Generator, scorer: Scorer | None = None,
           entailer: Entailer | None = None, drafts: int = 4, passage: str = "", threshold: float = 85,
           fluency_gate: float | None = None, force_quote: bool | None = None,
           progress: Progress | None = None) -> InsertResult:
    """Write the sentence that brings ``quote`` into ``paragraph`` at its ``[Q]`` marker (else at the end).

    ``scorer`` (the LM's passage scorer) measures fluency; without one only the heuristic gate applies; drafts below
    ``fluency_gate`` (default :data:`FLUENCY_GATE`) are rejected. ``entailer`` measures attribution against the
    quote's evidence (``passage``: its source passage, when known); without one the drafts keep their generation
    order. ``threshold`` is the locate score (0-100) above which an altered quote is repaired rather than the draft
    rejected. ``force_quote`` writes each draft in two steps, the model's words up to an opening quotation mark,
    then the exact quote (prefilled) and the model's ending; the default is to force with generators that continue
    a prefill (local models), since a small model rarely copies a quote faithfully, and to let endpoints write the
    sentence in one go.

    Raises :class:`InputError` for an unusable paragraph or quote and :class:`GenerationError` when the generator
    fails for every draft.
    """
    if not quote.text or not quote.text.strip():
        raise InputError("the quote is empty")
    if not 1 <= drafts <= MAX_DRAFTS:
        raise InputError(f"drafts must be between 1 and {MAX_DRAFTS}, got {drafts}")
    gate = FLUENCY_GATE if fluency_gate is None else fluency_gate
    query = parse_query(paragraph)
    lang = writing_lang(query.lang if query.text.strip() else detect_lang(quote.text))
    quote = replace(quote, text=quote.text.strip())
    items = _evidence_items(quote, passage)
    plans = _plans(drafts, 1 + len(items), leads(quote, lang))
    force = bool(getattr(generator, "prefill", False)) if force_quote is None else force_quote
    steps = drafts + 2

    candidates = _write_drafts(generator, plans, query.before, query.after, quote, items, lang,
                               threshold=threshold, force=force, progress=progress, steps=steps)
    template = _Candidate(len(plans), template_sentence(quote, lang), fallback=True)
    alive = [c for c in candidates if not c.reason]
    if progress:
        progress(drafts / steps, "checking fluency")
    _score_fluency(scorer, query.before, query.after, alive, template, gate)
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
    if start < 0:  # pragma: no cover - check_draft guarantees the canonical text is in every surviving draft
        raise InputError("internal error: the chosen sentence lost its quote")
    text, offset = compose(query.before, best.text, query.after)
    if progress:
        progress(1.0, "done")
    return InsertResult(paragraph=text, sentence=best.text,
                        quote_span=(offset + start, offset + start + len(quote.text)),
                        drafts=tuple(Draft(text=c.text, fluency=round(c.fluency, 4),
                                           attribution=round(c.attribution, 4), rejected_reason=c.reason,
                                           fallback=c.fallback) for c in ordered))


def _write_drafts(generator: Generator, plans: Sequence[_Plan], before: str, after: str, quote: Quote,
                  items: Sequence[str], lang: WritingLang, *, threshold: float, force: bool,
                  progress: Progress | None, steps: int) -> list[_Candidate]:
    """One checked candidate per plan, in plan order (rejected ones carry their reason); raises
    :class:`GenerationError` when the generator failed for every plan."""
    candidates: list[_Candidate] = []
    errors: list[str] = []
    for i, plan in enumerate(plans):
        if progress:
            progress(i / steps, f"writing draft {i + 1} of {len(plans)}")
        chat = _messages(before, after, quote, items, plan, lang)
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
        text, reason = check_draft(raw, quote, lang, threshold)
        if early:  # show the model's whole line, not the sentence cut around the appended quote
            text, reason = first_line(raw), early
        if not reason:
            dup = next((c.index for c in candidates if not c.reason and normalize(c.text) == normalize(text)), None)
            if dup is not None:
                reason = f"duplicate of draft {dup + 1}"
        candidates.append(_Candidate(i, text, reason=reason))
    if len(errors) == len(plans):
        raise GenerationError(errors[0])
    return candidates


def _score_fluency(scorer: Scorer | None, before: str, after: str, alive: list[_Candidate], template: _Candidate,
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
