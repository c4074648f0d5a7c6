"""Evaluate: run rankers on an evaluation set (uploaded, or the small bundled sample) and compare their metrics
(CLI: ``quill eval``). The set's format is one JSON object a line with ``context`` (holding one ``[Q]``),
``quote``, ``author``, ``lang`` and optionally ``graded``."""

from __future__ import annotations

import json
from typing import Any, Mapping

import altair as alt
import pandas as pd
import streamlit as st

import ui
from quill_core import RANKERS, EvalReport, Quill, to_json

state = st.session_state
SAMPLE = "eval_sample.jsonl"
BUNDLED, UPLOADED = "Bundled sample", "Upload a set"
DEFAULT_RANKERS = [r for r in ("vanilla", "quill", "default") if r in RANKERS]
METRICS = {"mrr": "MRR", "hit1": "Hit@1", "hit3": "Hit@3", "hit5": "Hit@5", "ndcg3": "NDCG@3"}


# -- report -> table and chart ---------------------------------------------------------------------------------
def metrics_table(rankers: Mapping[str, Any]) -> pd.DataFrame:
    """One row per ranker (its RankerMetrics), one column per metric, plus how many rows it ranked."""
    return pd.DataFrame([{"ranker": name, **{label: float(getattr(m, f)) for f, label in METRICS.items()},
                          "rows": int(m.n)} for name, m in rankers.items()],
                        columns=["ranker", *METRICS.values(), "rows"])


def by_language(rankers: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    langs = sorted({lang for m in rankers.values() for lang in (m.by_lang or {})})
    return {lang: metrics_table({n: m.by_lang[lang] for n, m in rankers.items() if lang in m.by_lang})
            for lang in langs}


def metrics_chart(table: pd.DataFrame) -> alt.Chart:
    long = table.melt(id_vars="ranker", value_vars=list(METRICS.values()), var_name="metric", value_name="value")
    return alt.Chart(long).mark_bar(cornerRadiusTopLeft=3, cornerRadiusTopRight=3).encode(
        x=alt.X("metric:N", title=None, sort=list(METRICS.values()), axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("ranker:N", sort=list(table["ranker"])),
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title=None),
        color=alt.Color("ranker:N", sort=list(table["ranker"]), legend=alt.Legend(orient="top", title=None)),
        tooltip=["ranker:N", "metric:N", alt.Tooltip("value:Q", format=".3f")],
    ).properties(height=320)


def run_evaluation(q: Quill, path: Any, options: dict[str, Any]) -> EvalReport:
    return ui.run_step("Ranking every row with each ranker…",
                       lambda bar: q.evaluate(path, progress=bar, **options), done="Evaluation finished")


def show_report(report: EvalReport) -> None:
    st.subheader("Results")
    st.caption(" · ".join(filter(None, [
        f"{report.rows} rows", f"knowledge base {report.kb}", f"embedder {report.embedder}",
        f"LM {report.lm}" if report.lm else "", f"{report.candidates} candidates a row", f"{report.seconds:.0f} s"])))
    table = metrics_table(report.rankers)
    number = {c: st.column_config.NumberColumn(format="%.3f") for c in METRICS.values()}
    st.dataframe(table, hide_index=True, width="stretch", key="eval_table", column_config=number)
    st.altair_chart(metrics_chart(table), width="stretch")
    per_lang = by_language(report.rankers)
    if len(per_lang) > 1:
        for tab, lang_table in zip(st.tabs([f"Language: {lang}" for lang in per_lang]), per_lang.values()):
            tab.dataframe(lang_table, hide_index=True, width="stretch", column_config=number)
    row = st.container(horizontal=True)
    row.download_button("Report (JSON)", json.dumps(to_json(report), ensure_ascii=False, indent=2),
                        file_name="quill-evaluation.json", mime="application/json", key="eval_download",
                        icon=":material/download:")
    row.download_button("Metrics (CSV)", table.to_csv(index=False), file_name="quill-evaluation.csv",
                        mime="text/csv", key="eval_download_csv", icon=":material/table:")


# -- the page --------------------------------------------------------------------------------------------------
ui.route_through_app()
ui.page_header("Evaluate", "Measure how well each ranker puts the right quotation first: MRR, Hit@k and NDCG "
                           "on an evaluation set.")
q = ui.quill()

with st.container(border=True):
    source = st.segmented_control("Evaluation set", [BUNDLED, UPLOADED], key="eval_source", default=BUNDLED)
    upload = None
    if source == UPLOADED:
        upload = st.file_uploader("Evaluation set (JSONL)", key="eval_file", type=["jsonl", "json"],
                                  help='One JSON object a line: {"id", "context" with one [Q], "quote", "author", '
                                       '"lang", optional "graded": {quote: 1-5}}.')
    else:
        with st.expander(f"{len(ui.sample(SAMPLE).splitlines())} short paragraphs in English and Chinese written "
                         "for Quill, each with the quotation that belongs in it", icon=":material/dataset:"):
            rows = [json.loads(line) for line in ui.sample(SAMPLE).splitlines()]
            st.dataframe(pd.DataFrame(rows, columns=["id", "lang", "context", "quote", "author"]),
                         hide_index=True, width="stretch")
    c1, c2, c3 = st.columns([3, 1, 1])
    rankers = c1.multiselect("Rankers", list(RANKERS), default=DEFAULT_RANKERS, key="eval_rankers",
                             format_func=lambda r: RANKERS[r].label,
                             help=", ".join(r.label for r in RANKERS.values() if r.needs_lm)
                             + ": rerank with the language model (slower).")
    lang = c2.selectbox("Language", ["all", "en", "zh"], key="eval_lang")
    limit = c3.number_input("Rows (0 = all)", min_value=0, value=0, step=10, key="eval_limit")
    with_kb = st.toggle("Rank against my knowledge base too", key="eval_with_kb",
                        help="The set's gold quotes always join the searched quotes; this adds the knowledge base's "
                             "as distractors (harder, slower). The knowledge base is only read.")
    run = st.button("Run evaluation", key="eval_run", type="primary", icon=":material/play_arrow:",
                    disabled=source == UPLOADED and upload is None)

if run:
    state.pop("eval_report", None)
    options = {"rankers": rankers or DEFAULT_RANKERS, "limit": int(limit), "lang": "" if lang == "all" else lang,
               "kb": q.settings.kb if with_kb else "none"}
    with ui.guard("evaluating"):
        if source == UPLOADED:
            with ui.saved_upload(q.settings, upload) as path:
                state.eval_report = run_evaluation(q, path, options)
        else:
            state.eval_report = run_evaluation(q, ui.ASSETS / SAMPLE, options)

if state.get("eval_report") is not None:
    with ui.guard("showing the report"):
        show_report(state.eval_report)
