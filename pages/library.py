"""Library: knowledge-base statistics, browse, import a file, build the bundled tiers and sources
(CLI: ``quill kb stats|import|build``, ``quill sources add``)."""

from __future__ import annotations

from collections import Counter

import altair as alt
import pandas as pd
import streamlit as st

import ui
from quill_core import FORMATS, SOURCES, TIERS, ImportReport, KBStats, Quill

ANY = "Any"
PAGE_SIZE = 50
FILTERED = "filtered: "  # how a tier's quality filter marks the rows it leaves out
FORMAT_HELP = "\n\n".join(f"**{name}**: {ui.md(about)}" for name, about in FORMATS.items())
state = st.session_state


# -- statistics ------------------------------------------------------------------------------------------------
def count_chart(title: str, what: str, counts: dict[str, int]) -> None:
    if not counts:
        return
    data = pd.DataFrame({what: list(counts), "quotations": list(counts.values())}).nlargest(12, "quotations")
    chart = alt.Chart(data, title=alt.Title(title, anchor="start", fontSize=13, fontWeight=600)).mark_bar(
        cornerRadiusEnd=4).encode(
        x=alt.X("quotations:Q", title=None, axis=alt.Axis(format="~s", tickMinStep=1)),
        y=alt.Y(f"{what}:N", sort="-x", title=None, axis=alt.Axis(labelLimit=180, labelOverlap=False)),
        color=alt.value("#8c3b2f"),
        tooltip=[f"{what}:N", alt.Tooltip("quotations:Q", format=",")],
    ).properties(height=alt.Step(26))
    st.altair_chart(chart, width="stretch")


def stats_section(q: Quill) -> KBStats:
    s = q.stats()
    cols = st.columns(4)
    cols[0].metric("Quotations", f"{s.quotes:,}", border=True)
    cols[1].metric("Authors", f"{s.authors:,}", border=True)
    cols[2].metric("Languages", f"{len(s.by_lang):,}", border=True)
    cols[3].metric("Collections", f"{len(s.by_collection):,}", border=True)
    by_lang = {ui.lang_name(code): n for code, n in s.by_lang.items()}
    if by_lang:
        st.container(key="lib_by_lang").caption(" · ".join(f"{name}: {n:,}" for name, n in by_lang.items()))
    left, right = st.columns(2)
    with left:
        count_chart("Quotations by collection", "collection", s.by_collection)
    with right:
        count_chart("Quotations by language", "language", by_lang)
    return s


# -- browse ----------------------------------------------------------------------------------------------------
def browse_section(q: Quill, stats: KBStats) -> None:
    c1, c2, c3, c4 = st.columns([3, 2, 1, 2])
    search = c1.text_input("Search", key="lib_search", placeholder="words in the quotation",
                           icon=":material/search:")
    author = c2.text_input("Author", key="lib_author", placeholder="any author")
    lang = c3.selectbox("Language", [ANY, *sorted(stats.by_lang)], key="lib_lang",
                        format_func=lambda c: c if c == ANY else ui.lang_name(c))
    collection = c4.selectbox("Collection", [ANY, *sorted(stats.by_collection)], key="lib_collection")
    page = int(state.get("lib_page", 1))
    filters = {"search": search.strip(), "author": author.strip(), "lang": "" if lang == ANY else lang,
               "collection": "" if collection == ANY else collection}
    if filters != state.get("lib_filters"):  # new filters start again at the first page
        state.lib_filters, page = filters, 1
        state.lib_page = 1
    found = q.browse(**filters, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    rows, total = found.quotes, found.total
    table = pd.DataFrame([{"quotation": r.text, "author": r.author, "work": r.work, "lang": r.lang,
                           "topics": ", ".join(r.topics), "collections": ", ".join(r.collections)} for r in rows],
                         columns=["quotation", "author", "work", "lang", "topics", "collections"])
    st.dataframe(table, hide_index=True, width="stretch", key="lib_table",
                 column_config={"quotation": st.column_config.TextColumn(width="large")})
    first = (page - 1) * PAGE_SIZE + 1 if rows else 0
    nav = st.container(horizontal=True, vertical_alignment="center")
    nav.caption(f"Showing {first:,}–{first + len(rows) - 1 if rows else 0:,} of {total:,}")
    nav.button("Previous", key="lib_prev", disabled=page <= 1, icon=":material/chevron_left:",
               on_click=lambda: state.update(lib_page=max(1, page - 1)))
    nav.button("Next", key="lib_next", disabled=page * PAGE_SIZE >= total, icon=":material/chevron_right:",
               on_click=lambda: state.update(lib_page=page + 1))


# -- import ----------------------------------------------------------------------------------------------------
def show_report(report: ImportReport, *, key: str) -> None:
    """Counts, then every rejected row with its line number (rows a tier's quality filter left out are counted)."""
    filtered = Counter(r.reason.removeprefix(FILTERED) for r in report.rejected if r.reason.startswith(FILTERED))
    rejected = [r for r in report.rejected if not r.reason.startswith(FILTERED)]
    cols = st.columns(5 if filtered else 4)
    cols[0].metric("Rows read", f"{report.read:,}")
    cols[1].metric("New quotations", f"{report.imported:,}")
    cols[2].metric("Merged duplicates", f"{report.merged:,}")
    cols[3].metric("Rejected rows", f"{len(rejected):,}")
    if filtered:
        cols[4].metric("Filtered out", f"{sum(filtered.values()):,}", help="Left out by the tier's quality filter.")
    for note in report.notes:
        st.warning(note, icon=":material/info:")
    if rejected:
        st.warning(f"{len(rejected):,} rows were rejected; everything else was imported.", icon=":material/warning:")
        st.dataframe(pd.DataFrame([{"line": r.line, "reason": r.reason} for r in rejected]),
                     hide_index=True, width="stretch", key=f"{key}_rejected")
    else:
        st.success(f"{ui.md(report.source)} ({report.format}): every usable row is in the knowledge base.",
                   icon=":material/check:")
    if filtered:
        with st.expander("Why rows were filtered out", icon=":material/filter_alt:"):
            st.dataframe(pd.DataFrame(filtered.most_common(), columns=["reason", "rows"]), hide_index=True,
                         width="stretch", key=f"{key}_filtered")


def import_section(q: Quill) -> None:
    st.markdown("Add your own quotations. Quill merges duplicates and keeps every collection that lists a quote.")
    upload = st.file_uploader("Quotation file", key="import_file",
                              type=["json", "jsonl", "ndjson", "csv", "tsv", "txt"],
                              help=FORMAT_HELP)
    c1, c2 = st.columns(2)
    fmt = c1.selectbox("Format", list(FORMATS), key="import_format", help=FORMAT_HELP)
    collection = c2.text_input("Collection name", key="import_collection", placeholder="default: the file name")
    if st.button("Import", key="import_run", type="primary", icon=":material/upload:", disabled=upload is None):
        with ui.guard("importing the file"):
            with ui.saved_upload(q.settings, upload) as path, ui.kb_write():
                state.import_report = ui.run_step(
                    f"Importing {upload.name}…",
                    lambda bar: q.import_file(path, format=fmt, collection=collection.strip() or None, progress=bar),
                    done=f"Imported {upload.name}")
    if state.get("import_report") is not None:
        show_report(state.import_report, key="import")


# -- build -----------------------------------------------------------------------------------------------------
def build_section(q: Quill) -> None:
    st.markdown("Build from the collections bundled with Quill (offline). Building again only adds what is new.")
    cols = st.columns(len(TIERS))
    for col, (tier, blurb) in zip(cols, TIERS.items()):
        title = tier.capitalize()
        with col.container(border=True):
            st.markdown(f"**{title}**")
            st.caption(blurb)
            if st.button(f"Build {title.lower()}", key=f"build_{tier}", icon=":material/construction:"):
                with ui.guard(f"building the {tier} tier"), ui.kb_write():
                    state.build_report = ui.run_step(
                        f"Building the {tier} knowledge base…", lambda bar, t=tier: q.build(t, progress=bar),
                        done=f"{title} knowledge base built")
    if state.get("build_report") is not None:
        show_report(state.build_report, key="build")
    st.divider()
    with ui.guard("listing the source texts"):
        sources_section(q)


def sources_section(q: Quill) -> None:
    st.markdown("**Source texts** · full public-domain texts that let Quill mark a quotation *verified in source* "
                "and find it in its context.")
    added = {info.name: info for info in q.list_sources()}
    cols = st.columns(len(SOURCES))
    for col, (name, title) in zip(cols, SOURCES.items()):
        with col.container(border=True):
            st.markdown(f"**{name.capitalize()}**")
            st.caption(title)
            if name in added:
                st.badge(f"added · {added[name].docs:,} documents", color="green", icon=":material/check:")
            elif st.button("Add", key=f"source_{name}", icon=":material/menu_book:"):
                with ui.guard(f"adding the {name} source"), ui.kb_write():
                    ui.run_step(f"Adding {name}…", lambda bar, n=name: q.add_source(n, progress=bar),
                                done=f"{name.capitalize()} added")
                    st.rerun()
    with st.expander("Add your own source text (.txt or .md)", icon=":material/upload_file:"):
        upload = st.file_uploader("Source text", key="source_upload", type=["txt", "md"])
        c1, c2 = st.columns(2)
        author = c1.text_input("Author", key="source_author", placeholder="who wrote it (optional)")
        title = c2.text_input("Title", key="source_title", placeholder="default: the file name")
        if st.button("Add source", key="source_add_file", disabled=upload is None, icon=":material/add:"):
            with ui.guard("adding the source"), ui.saved_upload(q.settings, upload) as path, ui.kb_write():
                info = ui.run_step(f"Adding {upload.name}…", lambda bar: q.add_source(
                    path, author=author.strip(), title=title.strip() or upload.name.rsplit(".", 1)[0],
                    progress=bar), done=f"{upload.name} added")
                st.success(f"Added {ui.md(info.title)}: {info.docs} document, {info.passages:,} passages.",
                           icon=":material/check:")
    listed = q.list_sources()  # again: the upload above may have added one
    if listed:
        st.dataframe(pd.DataFrame([{"source": i.name, "title": i.title, "origin": i.origin, "documents": i.docs,
                                    "characters": i.chars, "passages": i.passages,
                                    "authors": ", ".join(i.authors[:5])} for i in listed]),
                     hide_index=True, width="stretch", key="sources_table")


# -- the page --------------------------------------------------------------------------------------------------
ui.route_through_app()
ui.page_header("Library", "The quotations Quill draws from: what is in the knowledge base, where it came from, "
                          "and how to add more.")
q = ui.quill()
stats = None
with ui.guard("reading the knowledge base"):
    stats = stats_section(q)

browse, add, build = st.tabs(["Browse", "Import a file", "Build & sources"])
with browse:
    if stats is not None:
        with ui.guard("browsing the knowledge base"):
            browse_section(q, stats)
with add:
    import_section(q)
with build:
    build_section(q)
