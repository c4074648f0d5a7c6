"""Write: paste a paragraph, get ranked quotations with their reasons, and insert one
(CLI: ``quill suggest``, ``quill insert``)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

import ui
from quill_core import MARKER, RANKERS, FilterOptions, Filters, InsertResult, Quill, Span, Suggestion, Weights


ANY = "Any"
SAME_LANGUAGE, ANY_LANGUAGE = "auto", "any"  # the quote_lang choices of Quill.suggest besides a language code
state = st.session_state


# -- callbacks (run before the script, so the page below sees their effect) ------------------------------------
def _load_sample(name: str) -> None:
    state.paragraph = ui.sample(name)
    _forget_results()


def _forget_results() -> None:
    for k in ("suggestions", "insert", "pending_insert"):
        state.pop(k, None)


def _request_insert(index: int) -> None:
    state.pending_insert = index


def _accept() -> None:
    result = state.get("insert", {}).get("result")
    if result is not None:
        state.paragraph = result.paragraph
        _forget_results()
        state.accepted = True


def language_label(choice: str) -> str:
    if choice == SAME_LANGUAGE:
        return "Same as my paragraph"
    if choice == ANY_LANGUAGE:
        return "Any language"
    return f"{ui.lang_name(choice)} only"


# -- sidebar: filters, ranking and weights ---------------------------------------------------------------------
def sidebar(choices: FilterOptions) -> tuple[Filters, dict[str, Any], dict[str, Any]]:
    """The filters, the other options of ``suggest`` (k, ranker, weights) and those of ``insert`` (drafts); the
    quotes' language is chosen by the Suggest button."""
    with st.sidebar:
        st.subheader("Filters")
        authors, topics = choices.authors, choices.topics
        author = st.selectbox("Author", [ANY, *authors], key="f_author", accept_new_options=True,
                              help="Only quotations by this author; type any name (spelling and case do not matter).")
        topic = st.selectbox("Topic", [ANY, *topics], key="f_topic", accept_new_options=True,
                             help="Only quotations tagged with this topic.")
        options: dict[str, Any] = {"k": st.slider("Suggestions", 1, 10, 5, key="k")}

        st.subheader("Ranking")
        names = list(RANKERS)
        options["ranker"] = st.selectbox("Ranker", names, index=names.index("default"), key="ranker",
                                         format_func=lambda r: RANKERS[r].label,
                                         help="\n\n".join(f"**{r.label}**: {r.description}" for r in RANKERS.values()))
        if options["ranker"] == "default":  # the weights steer only the default ranker's total
            with st.expander("Criterion weights", icon=":material/tune:"):
                st.caption("How much each criterion counts in the total score (0 leaves it out). Left as they "
                           "are, each paragraph language gets its own defaults (Chinese leaves out the language "
                           "model's criteria).")
                weights = {name: st.slider(name.replace("_", " ").capitalize(), 0.0, 1.0, float(w), 0.05,
                                           key=f"w_{name}")
                           for name, w in Weights().as_dict().items()}
                options["weights"] = weights if weights != Weights().as_dict() else None
        st.subheader("Insertion")
        drafts = st.number_input("Drafts to compare", 1, 8, 4, key="drafts",
                                 help="More drafts find a better sentence but take longer.")
    filters = Filters(author="" if author in (ANY, None) else str(author).strip(),
                      topic="" if topic in (ANY, None) else str(topic).strip())
    return filters, options, {"drafts": int(drafts)}


# -- suggestion cards ------------------------------------------------------------------------------------------
def breakdown_chart(s: Suggestion) -> alt.Chart:
    data = pd.DataFrame([{"criterion": c.name.replace("_", " "), "value": float(c.value), "weight": float(c.weight),
                          "raw": None if c.raw is None else float(c.raw), "note": c.note} for c in s.breakdown])
    base = alt.Chart(data).encode(
        y=alt.Y("criterion:N", sort=None, title=None,
                axis=alt.Axis(labelLimit=140, labelFontSize=12, ticks=False, domain=False, labelOverlap=False)),
    )
    bars = base.mark_bar(cornerRadiusEnd=4).encode(
        x=alt.X("value:Q", scale=alt.Scale(domain=[0, 1]), title=None,
                axis=alt.Axis(format=".1f", tickCount=5, grid=True, labelFontSize=10)),
        color=alt.Color("criterion:N", legend=None),
        tooltip=[alt.Tooltip("criterion:N"), alt.Tooltip("value:Q", format=".3f", title="score"),
                 alt.Tooltip("weight:Q", format=".2f"), alt.Tooltip("raw:Q", format=".3f", title="measured"),
                 alt.Tooltip("note:N")],
    )
    labels = base.mark_text(align="left", dx=4, fontSize=11, color="#5b5e66").encode(
        x=alt.X("value:Q"), text=alt.Text("value:Q", format=".2f"))
    return ((bars + labels).properties(height=alt.Step(22), background="transparent")
            .configure_scale(bandPaddingInner=0.35).configure_view(stroke=None))


def card(i: int, s: Suggestion) -> None:
    quote = s.quote
    with st.container(border=True, key=f"card-{i}"):
        left, right = st.columns([3, 2], gap="large")
        with left:
            st.container(key=f"quote-{i}").markdown(f"“{ui.md(quote.text)}”")
            byline = f"— **{ui.md(quote.author or 'Unknown author')}**"
            if quote.work:
                byline += f", *{ui.md(quote.work)}*"
            st.markdown(byline)
            badge = s.badge
            badges = st.container(horizontal=True, gap="small")
            badges.badge(badge.label, color=ui.TONE_COLORS[badge.tone],
                         icon=":material/verified:" if badge.tone == "success" else None, help=ui.md(badge.help))
            badges.badge(ui.lang_name(quote.lang), color="gray")
            for topic in quote.topics[:3]:
                badges.badge(ui.md(topic, limit=30), color="violet")
            if s.why:
                st.caption(ui.md(s.why))
            st.button("Insert into my paragraph", key=f"insert-{i}", icon=":material/input:", on_click=_request_insert,
                      args=(i,))
        with right:
            st.container(key=f"score-{i}").metric("Score", f"{s.score:.2f}")
            if s.breakdown:
                st.altair_chart(breakdown_chart(s), width="stretch")


# -- insertion -------------------------------------------------------------------------------------------------
def run_insert(q: Quill, paragraph: str, s: Suggestion, options: dict[str, Any]) -> None:
    def work(bar: ui.ProgressBar) -> InsertResult:
        return q.insert(paragraph, s.quote, author=s.quote.author or None, progress=bar, **options)

    result = ui.run_step("Writing the sentence that carries the quotation…", work, done="Sentence ready")
    state.insert = {"suggestion": s, "result": result}


def draft_status(d: Any, result: InsertResult) -> str:
    if d.rejected:
        return f"rejected: {d.rejected_reason}"
    chosen = d.text.strip() == result.sentence.strip()
    return ("chosen" if chosen else "kept") + (" (template)" if d.fallback else "")


def as_markdown(result: InsertResult, s: Suggestion) -> str:
    who = s.quote.author or "Unknown author"
    source = f"{who}, *{s.quote.work}*" if s.quote.work else who
    return f"{result.paragraph}\n\n---\n\n> {s.quote.text}\n>\n> — {source}\n"


def insert_panel() -> None:
    done = state.get("insert")
    if not done:
        return
    result, s = done["result"], done["suggestion"]
    with st.container(border=True, key="insert-panel"):
        st.subheader("Your paragraph, with the quotation")
        start, end = result.quote_span
        ui.show_highlight(result.paragraph, [Span(start, end, 100.0, result.paragraph[start:end], "verbatim")],
                          key="preview")
        row = st.container(horizontal=True, gap="small")
        row.button("Accept", key="accept", type="primary", icon=":material/check:", on_click=_accept)
        row.button("Regenerate", key="regenerate", icon=":material/refresh:", on_click=_request_insert,
                   args=(state.get("insert_index", 0),))
        row.download_button("Markdown", as_markdown(result, s), file_name="paragraph.md", mime="text/markdown",
                            key="download_md", icon=":material/download:")
        row.download_button("Plain text", result.paragraph, file_name="paragraph.txt", mime="text/plain",
                            key="download_txt", icon=":material/download:")
        with st.expander("Copy the paragraph", icon=":material/content_copy:"):
            st.code(result.paragraph, language=None, wrap_lines=True)
        if result.drafts:
            with st.expander(f"All {len(result.drafts)} drafts", icon=":material/stacks:"):
                st.dataframe(pd.DataFrame([{"draft": d.text, "fluency": round(d.fluency, 3),
                                            "attribution": round(d.attribution, 3),
                                            "status": draft_status(d, result)} for d in result.drafts]),
                             hide_index=True, width="stretch")


# -- the page --------------------------------------------------------------------------------------------------
ui.route_through_app()
ui.page_header("Write", "Paste a paragraph and mark where a quotation belongs with **\\[Q\\]** "
                        "(without a marker, Quill suggests one for the end). Then pick a quotation and insert it.")
q = ui.quill()
choices = FilterOptions()
with ui.guard("reading the knowledge base"):
    choices = q.filter_options()
filters, suggest_options, insert_options = sidebar(choices)

samples = st.container(horizontal=True, gap="small")
samples.button("English sample", key="sample_en", icon=":material/article:", on_click=_load_sample,
               args=("sample_en.txt",), type="tertiary")
samples.button("中文示例", key="sample_zh", icon=":material/translate:", on_click=_load_sample,
               args=("sample_zh.txt",), type="tertiary")
paragraph = st.text_area("Your paragraph", key="paragraph", height=170,
                         placeholder=f"Type or paste a paragraph. Put {MARKER} where the quotation should go.")
marker_note = (f"Insertion point: the {MARKER} marker" if MARKER in paragraph
               else "No [Q] marker: the quotation goes at the end")
st.caption(f"{len(paragraph):,} characters · {marker_note}")
if state.pop("accepted", False):
    st.success("Inserted. The paragraph above now carries the quotation.", icon=":material/check_circle:")

actions = st.container(horizontal=True, gap="medium", vertical_alignment="center")
clicked = actions.button("Suggest quotations", key="suggest", type="primary", icon=":material/auto_awesome:")
quote_lang = actions.segmented_control(
    "Quotation language", [SAME_LANGUAGE, ANY_LANGUAGE, *choices.langs], default=SAME_LANGUAGE, required=True,
    key="quote_lang", format_func=language_label, label_visibility="collapsed")
if clicked:
    _forget_results()
    early = st.empty()  # the retrieved quotes, shown while the language model reranks them

    def show_retrieved(found: list[Suggestion]) -> None:
        with early.container(border=True, key="retrieved"):
            st.caption("Found by meaning and words; reranking them with the language model…")
            for s in found:
                st.markdown(f"“{ui.md(s.quote.text)}” — {ui.md(s.quote.author or 'Unknown author')}")

    with ui.guard("finding quotations"):
        with st.spinner("Reading your paragraph and ranking quotations…"):
            state.suggestions = q.suggest(paragraph, filters=filters, quote_lang=quote_lang or SAME_LANGUAGE,
                                          preview=show_retrieved, **suggest_options)
    early.empty()

if "pending_insert" in state:
    index = state.pop("pending_insert")
    suggestions = state.get("suggestions") or []
    if 0 <= index < len(suggestions):
        state.insert_index = index
        with ui.guard("inserting the quotation"):
            run_insert(q, paragraph, suggestions[index], insert_options)

insert_panel()

suggestions = state.get("suggestions")
if suggestions is not None:
    if not suggestions:
        st.info("No quotation matches these filters. Choose “Any language” by the Suggest button, or loosen the "
                "author or topic filter in the sidebar.", icon=":material/search_off:")
    else:
        st.subheader(f"{len(suggestions)} suggestion{'' if len(suggestions) == 1 else 's'}")
        for i, s in enumerate(suggestions):
            card(i, s)
