"""Quill's Streamlit app: routes the four pages. Run with ``streamlit run app.py`` (or ``make run``).

Every page is a thin layer over the one cached :class:`quill_core.Quill` (see ``ui.py``): widgets in, one core call,
typed results out. Everything a page does, the ``quill`` CLI can do too.
"""

from __future__ import annotations

import streamlit as st

import ui

ui.app_started()
st.set_page_config(page_title="Quill · quotations for writers", page_icon=str(ui.ASSETS / "icon.svg"),
                   layout="wide", initial_sidebar_state="expanded")
st.logo(str(ui.ASSETS / "logo.svg"), icon_image=str(ui.ASSETS / "icon.svg"), size="large")
ui.load_css()

pages = [
    st.Page("pages/write.py", title="Write", icon=":material/edit_note:", default=True),  # served at /
    st.Page("pages/verify.py", title="Verify", icon=":material/fact_check:", url_path="verify"),
    st.Page("pages/library.py", title="Library", icon=":material/local_library:", url_path="library"),
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/monitoring:", url_path="evaluate"),
]
page = st.navigation(pages, position="top")

quill = None
with ui.guard("opening Quill"):
    quill = ui.quill()
if quill is None:  # e.g. a malformed QUILL_* setting: the error above says which
    st.stop()
ui.prepare(quill)
if quill.indexing().running or quill.indexing().error:  # (the fragment refreshes itself until the next run)
    ui.indexing_status(quill)
page.run()
