"""Streamlit helpers shared by the pages: the one cached ``Quill``, error handling, safe text, uploads, progress.

Injection seam for tests: AppTest runs the app in this process, so a test replaces :func:`make_quill` (the factory
the cached :func:`quill` calls) and clears the resource cache before ``AppTest.from_file("app.py")``::

    monkeypatch.setattr(ui, "make_quill", lambda settings: fake)
    ui.quill.clear()

``quill_core`` never imports streamlit; everything streamlit-specific lives here and in ``pages/``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import threading
import uuid
import weakref
from pathlib import Path
from typing import Any, Callable, Iterator

import streamlit as st

from quill_core import InputError, Quill, QuillError, Settings, Span, decode_text, highlight

__all__ = [
    "ASSETS", "MAX_UPLOAD_BYTES", "MAX_IMPORT_BYTES", "TONE_COLORS", "ProgressBar", "app_started", "guard", "kb_write",
    "lang_name", "load_css", "make_quill", "md", "page_header", "prepare", "quill", "read_upload", "route_through_app",
    "run_step", "sample", "saved_upload", "show_highlight",
]

ROOT = Path(__file__).resolve().parent
ASSETS = ROOT / "assets"
MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # drafts and source texts, read into memory
MAX_IMPORT_BYTES = 25 * 1024 * 1024  # knowledge-base files and evaluation sets (= server.maxUploadSize)
log = logging.getLogger("quill.app")
TONE_COLORS = {"success": "green", "info": "blue", "warning": "orange", "error": "red", "neutral": "gray"}
"""The Streamlit colour of each tone the core gives a status (``quill_core.Badge.tone``, verdict tones)."""
LANG_NAMES = {"en": "English", "zh": "Chinese"}  # display names; any other code is shown as it is

# One knowledge-base write (first-run build, import, tier build) at a time across every session of this process.
_build_lock = threading.Lock()
_ready: "weakref.WeakSet[Quill]" = weakref.WeakSet()


# -- the shared facade ----------------------------------------------------------------------------------------
def make_quill(settings: Settings) -> Quill:
    """The factory behind :func:`quill`; tests replace it with one that returns a Quill over fakes."""
    return Quill(settings)


@st.cache_resource(show_spinner=False, max_entries=4)
def _shared_quill(home: str, kb: str, embedding_model: str) -> Quill:
    return make_quill(Settings.load(home=home, kb=kb, embedding_model=embedding_model))


def quill() -> Quill:
    """The process-wide Quill for the current settings (models and stores load once, shared by every session)."""
    s = Settings.load()
    return _shared_quill(str(s.home), s.kb, s.embedding_model)


quill.clear = _shared_quill.clear  # type: ignore[attr-defined]


# -- errors ---------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def guard(action: str = "") -> Iterator[None]:
    """Turn a QuillError into one ``st.error``; anything else into one generic error (the log keeps the traceback).

    Streamlit's own control flow (``st.rerun``/``st.stop``) derives from BaseException and passes through.
    """
    try:
        yield
    except QuillError as exc:
        st.error(md(str(exc)), icon=":material/error:")  # the message may quote the writer's input
    except Exception as exc:  # the page must never show a traceback; the server log keeps it
        log.exception("unexpected error%s", f" while {action}" if action else "")
        where = f" while {action}" if action else ""
        st.error(f"Something went wrong{where} ({type(exc).__name__}). The details are in the server log.",
                 icon=":material/error:")


# -- safe text ------------------------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=^\"'])")


def md(text: str, *, limit: int | None = None) -> str:
    """``text`` as inert Markdown: every character Markdown, HTML or Streamlit directives could act on is escaped,
    whitespace collapsed to single spaces (one line), optionally cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return _MD_SPECIAL.sub(r"\\\1", text)


def _upload_bytes(upload: Any, max_bytes: int) -> bytes:
    """The bytes of an uploaded file; an InputError for an oversized one."""
    data: bytes = upload.getvalue()
    if len(data) > max_bytes:
        raise InputError(f"{upload.name} is {len(data) / 1e6:.1f} MB; the limit is {max_bytes / 1e6:.0f} MB")
    return data


def read_upload(upload: Any, *, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """The UTF-8 text of an uploaded file; an InputError for an empty, oversized, binary or non-UTF-8 file."""
    return decode_text(_upload_bytes(upload, max_bytes), name=upload.name)


@contextlib.contextmanager
def saved_upload(settings: Settings, upload: Any, *, max_bytes: int = MAX_IMPORT_BYTES) -> Iterator[Path]:
    """The upload written to ``QUILL_HOME/uploads/<random>/<its sanitized name>`` (the name helps format
    detection), removed afterwards. An empty or binary upload is an InputError before anything is written."""
    data = _upload_bytes(upload, max_bytes)
    decode_text(data, name=upload.name)  # an empty, binary or non-UTF-8 upload fails before anything is written
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", upload.name).strip("._") or "upload.txt"
    path = settings.path("uploads", uuid.uuid4().hex, name)
    try:
        path.write_bytes(data)
        yield path
    except QuillError as exc:  # name the file as the writer knows it, not by its place on the server
        message = str(exc).replace(str(path), upload.name)
        if message == str(exc):
            raise
        raise type(exc)(message) from exc
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)


def lang_name(code: str) -> str:
    """A language's display name (``zh`` -> Chinese; an unnamed code as it is)."""
    return LANG_NAMES.get(code, code or "unknown")


def sample(name: str) -> str:
    """A bundled sample text from ``assets/`` (e.g. ``sample_en.txt``)."""
    return (ASSETS / name).read_text(encoding="utf-8").strip()


# -- highlighting: quill_core._spans.highlight is the ONLY path by which user text becomes HTML ----------------
def show_highlight(text: str, spans: list[Span | tuple[int, int]], *, key: str) -> None:
    """``text`` in a bordered box with ``spans`` marked (escaped HTML from the core's highlighter)."""
    st.container(key=key, border=True).html(highlight(text, spans))


# -- progress -------------------------------------------------------------------------------------------------
class ProgressBar:
    """A core ``progress(fraction, message)`` callback drawing an ``st.progress`` bar (created on first call).

    Only the script's own thread draws; a call from a core worker thread is skipped (it has no session)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self._thread = threading.get_ident()

    def __call__(self, fraction: float, message: str = "") -> None:
        if threading.get_ident() != self._thread:
            return
        fraction = max(0.0, min(1.0, float(fraction)))
        text = md(f"{self.label}: {message}" if message else self.label)
        if self.bar is None:
            self.bar = st.progress(fraction, text=text)
        else:
            self.bar.progress(fraction, text=text)


@contextlib.contextmanager
def kb_write() -> Iterator[None]:
    """Hold the process-wide write lock while a page imports or builds (other sessions keep reading)."""
    with _build_lock:
        yield


def prepare(q: Quill) -> None:
    """First run: build the starter knowledge base if it is empty (import only), then index it in the background:
    the app answers at once from what is embedded so far and from keyword search (:func:`indexing_status`).

    Runs once per Quill instance; other sessions wait on the lock instead of building a second time.
    """
    if q in _ready:
        return
    with guard("preparing the knowledge base"):
        slot = st.empty()
        with kb_write():
            if q in _ready:
                return
            with slot.container():
                if q.stats().quotes == 0:
                    run_step("First run: building the starter knowledge base…",
                             lambda bar: q.build("starter", index=False, progress=bar), done="Knowledge base ready")
            q.index_in_background()
            _ready.add(q)
        slot.empty()


@st.fragment(run_every=3)
def indexing_status(q: Quill) -> None:
    """While the background index grows: its progress, refreshed every few seconds (nothing once it is done)."""
    state = q.indexing()
    if state.error:
        st.warning(f"Indexing stopped: {state.error}", icon=":material/warning:")
    elif state.running:
        st.progress(min(1.0, state.fraction), text=f"Indexing the knowledge base: {state.message}. Suggestions "
                                                    "meanwhile search what is indexed so far and every quote by words.")


# -- layout ---------------------------------------------------------------------------------------------------
_routing = threading.local()


def app_started() -> None:
    """Called by ``app.py`` at the top of every run (see :func:`route_through_app`)."""
    _routing.through_app = True


def route_through_app() -> None:
    """Make sure this page runs inside ``app.py`` (its navigation, styles and first-run build).

    Streamlit treats a ``pages/`` folder beside the main script as an old-style multipage app until some session
    has called ``st.navigation``: a deep link opened first after start-up would run the page file bare. When
    ``app.py`` did not start this run, switch the server to app.py's navigation and rerun; the URL keeps the page.
    Streamlit offers no setting for this, so this is the one place that touches its internals; the test
    ``tests/ui/test_app.py::test_the_pages_folder_patch_still_matches_streamlit`` fails when they change.
    """
    through_app = getattr(_routing, "through_app", False)
    _routing.through_app = False
    if through_app:
        return
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without the old multipage mode
        return
    PagesManager.uses_pages_directory = False
    st.rerun()


def page_header(title: str, subtitle: str) -> None:
    st.title(title)
    st.container(key="hero").markdown(subtitle)


def load_css() -> None:
    st.html(ASSETS / "style.css")


def run_step(label: str, func: Callable[[ProgressBar], Any], *, done: str = "Done") -> Any:
    """Run a long core call inside ``st.status`` with a progress bar; collapse it when finished. ``label`` and
    ``done`` may name the writer's files: they are shown escaped."""
    with st.status(md(label), expanded=True) as status:
        try:
            result = func(ProgressBar(label))
        except Exception:
            status.update(label=md(f"{label.rstrip('…')}: failed"), state="error", expanded=False)
            raise
        status.update(label=md(done), state="complete", expanded=False)
    return result
