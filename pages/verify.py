"""Verify: every quotation of a draft with its verdict, the canonical text and author, a diff for misquotes, and
where it sits in an uploaded source (CLI: ``quill verify``, ``quill locate``)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import streamlit as st

import ui
from quill_core import DiffOp, InputError, Span, Verification

state = st.session_state
CONTEXT_CHARS = 220
# what a verdict means (label, tone, explanation) comes from the core (Verification.meaning); the page only
# says how a tone looks: its colour (ui.TONE_COLORS) and its highlighter class in the draft view (none: a plain mark)
HIGHLIGHT = {"success": "verbatim", "warning": "near", "error": "not_found"}
ICONS = {"verbatim": ":material/verified:", "misquoted": ":material/edit_off:",
         "misattributed": ":material/person_off:", "unknown": ":material/help:"}


# -- pieces ----------------------------------------------------------------------------------------------------
def diff_markdown(diff: Iterable[DiffOp]) -> str:
    """Markdown of the core's word diff: the canonical words the draft dropped struck through, its own in bold."""
    pieces: list[str] = []
    for op in diff:
        if op.op == "equal":
            pieces.append(ui.md(op.canonical))
            continue
        if op.canonical.strip():
            pieces.append(f"~~{ui.md(op.canonical)}~~")
        if op.draft.strip():
            pieces.append(f"**{ui.md(op.draft)}**")
    return " ".join(p for p in pieces if p)


def context(text: str, span: Span) -> tuple[str, Span]:
    """A window of ``text`` around ``span`` and the span re-based into it."""
    lo = max(0, span.start - CONTEXT_CHARS)
    hi = min(len(text), span.end + CONTEXT_CHARS)
    prefix, suffix = ("…" if lo > 0 else ""), ("…" if hi < len(text) else "")
    shift = len(prefix) - lo
    return prefix + text[lo:hi] + suffix, Span(span.start + shift, span.end + shift, span.score, span.matched,
                                               span.verdict)


def mark(v: Verification) -> Span | tuple[int, int]:
    """The quotation's place in the draft, classed by tone for the highlighter (a bare range: no class)."""
    kind = HIGHLIGHT.get(v.meaning.tone)
    return Span(v.start, v.end, v.score, v.text, kind) if kind else (v.start, v.end)


def draft_text() -> str:
    upload = state.get("draft_file")
    return ui.read_upload(upload) if upload is not None else state.get("draft", "")


def verification_card(i: int, v: Verification) -> None:
    meaning = v.meaning
    with st.container(border=True, key=f"ver-{i}"):
        head = st.container(horizontal=True, vertical_alignment="center")
        head.badge(meaning.label, color=ui.TONE_COLORS[meaning.tone], icon=ICONS.get(v.verdict, ":material/help:"),
                   help=meaning.explanation)
        if v.source is not None:
            where = " · ".join(ui.md(x) for x in (v.source.title, v.source.location) if x)
            head.badge(f"in source: {where}" if where else "in a source text", color="green",
                       icon=":material/menu_book:")
        if v.verdict != "unknown":
            head.caption(f"match {v.score:.0f}/100")
        claimed = f" — {ui.md(v.claimed_author)}" if v.claimed_author else ""
        st.markdown(f"**As written** · “{ui.md(v.text)}”{claimed}")
        if v.canonical:
            st.markdown(f"**Canonical** · “{ui.md(v.canonical)}” — {ui.md(v.author or 'Unknown author')}")
        if v.verdict == "misquoted" and v.diff:
            st.markdown(f"**Difference** · {diff_markdown(v.diff)}")
        if v.note:
            st.caption(ui.md(v.note))


def source_section(q: Any, results: list[Verification]) -> None:
    st.subheader("Check against a source text")
    st.caption("Upload the book, speech or article a quotation comes from: Quill finds where each quotation sits "
               "in it, even when the wording drifted.")
    src = st.file_uploader("Source text (UTF-8)", key="source_file", type=["txt", "md"])
    manual = st.text_input("Quotation to find", key="locate_quote",
                           placeholder="leave empty to look up every quotation of the draft")
    if src is None:
        return
    with ui.guard("searching the source"):
        source = ui.read_upload(src, max_bytes=ui.MAX_IMPORT_BYTES)
        quotes = [manual.strip()] if manual.strip() else [v.text for v in results]
        if not quotes:
            raise InputError("type a quotation to find, or check a draft that contains quotations first")
        for i, quote in enumerate(quotes):
            spans = q.locate(quote, source)
            with st.container(border=True, key=f"loc-{i}"):
                st.markdown(f"“{ui.md(quote, limit=200)}”")
                if not spans:
                    st.badge("not found in this source", color="gray", icon=":material/search_off:")
                    continue
                best = max(spans, key=lambda s: s.score)
                st.badge(f"found · {best.score:.0f}/100 · characters {best.start:,}–{best.end:,}",
                         color="green" if best.verdict == "verbatim" else "orange", icon=":material/location_on:")
                window, local = context(source, best)
                ui.show_highlight(window, [local], key=f"loc-view-{i}")


def _load_sample() -> None:
    state.draft = ui.sample("sample_draft_en.txt")
    state.pop("verified", None)


# -- the page --------------------------------------------------------------------------------------------------
ui.route_through_app()
ui.page_header("Verify", "Paste a draft or upload it. Quill finds every quotation, checks it against the "
                         "knowledge base, and shows what was misquoted or misattributed.")
q = ui.quill()

st.button("Sample draft", key="sample_draft", icon=":material/article:", type="tertiary", on_click=_load_sample)
left, right = st.columns([3, 1])
left.text_area("Draft", key="draft", height=200, placeholder="Paste a draft that contains quotations…")
right.file_uploader("…or upload a text file", key="draft_file", type=["txt", "md"])
if st.button("Check quotations", key="verify_run", type="primary", icon=":material/fact_check:"):
    state.pop("verified", None)
    with ui.guard("checking the draft"):
        text = draft_text()
        if not text.strip():
            raise InputError("the draft is empty: paste some text or upload a file")
        with st.spinner("Finding and checking quotations…"):
            state.verified = {"text": text, "results": list(q.verify(text))}

done = state.get("verified")
results: list[Verification] = []
if done is not None:
    results = done["results"]
    if not results:
        st.info("No quotations found. Quill looks for text in quotation marks (“…”, \"…\", 「…」) and for "
                "“as … said” clauses.", icon=":material/format_quote:")
    else:
        counts = Counter(v.verdict for v in results)
        cols = st.columns(4)
        cols[0].metric("Quotations", len(results), border=True)
        cols[1].metric("Verified", counts["verbatim"], border=True)
        cols[2].metric("Misquoted / misattributed", counts["misquoted"] + counts["misattributed"], border=True)
        cols[3].metric("Unknown", counts["unknown"], border=True)
        st.markdown("**Your draft**")
        ui.show_highlight(done["text"], [mark(v) for v in results], key="draft-view")
        for i, v in enumerate(results):
            verification_card(i, v)

st.divider()
source_section(q, results)
