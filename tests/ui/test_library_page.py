"""Library page (AppTest over the fake facade): statistics, browse, import with rejected rows, build, refusals."""

from __future__ import annotations

from quill_core import Quote
from tests.ui.conftest import errors

LIBRARY = "pages/library.py"
GOOD_AND_BROKEN_CSV = (
    "quote,author\n"
    "Well done is better than well said.,Benjamin Franklin\n"
    "a row with,too,many fields\n"
    "Simplicity is the ultimate sophistication.,Leonardo da Vinci\n"
    ",\n"
).encode("utf-8")


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_statistics_and_browse_table(open_app):
    at = open_app(LIBRARY)
    assert not at.error and not at.exception
    assert metrics(at)["Quotations"] == "12" and metrics(at)["Languages"] == "2"
    assert "English: 6 · Chinese: 6" in [c.value for c in at.caption]  # counts per language
    assert len(at.get("vega_lite_chart")) == 2  # by collection, by language
    table = at.dataframe[0].value
    assert len(table) == 12 and "Knowledge is power." in set(table["quotation"])
    at.text_input(key="lib_search").input("fear").run()
    assert list(at.dataframe[0].value["author"]) == ["Franklin D. Roosevelt"]
    at.text_input(key="lib_search").input("").run()
    at.selectbox(key="lib_lang").select("zh").run()
    assert set(at.dataframe[0].value["lang"]) == {"zh"}


def test_browse_pages_through_a_large_knowledge_base(open_app, fake):
    fake.kb.upsert([Quote(f"Maxim number {i} of the archive.", author="Archivist", collections=("archive",))
                    for i in range(120)])
    at = open_app(LIBRARY)
    assert any(c.value == "Showing 1–50 of 132" for c in at.caption)
    at.button(key="lib_next").click().run()
    assert any(c.value == "Showing 51–100 of 132" for c in at.caption)
    at.selectbox(key="lib_collection").select("archive").run()  # new filters start at the first page again
    assert any(c.value == "Showing 1–50 of 120" for c in at.caption)


def test_import_reports_rejected_rows_with_line_numbers(open_app, fake):
    at = open_app(LIBRARY)
    at.file_uploader(key="import_file").upload("mine.csv", GOOD_AND_BROKEN_CSV, "text/csv")
    at.run()
    at.text_input(key="import_collection").input("my quotes")
    at.button(key="import_run").click().run()
    assert not at.error and not at.exception
    shown = metrics(at)
    assert (shown["Rows read"], shown["New quotations"], shown["Rejected rows"]) == ("4", "2", "2")
    rejected = at.dataframe[-1].value
    assert list(rejected["line"]) == [3, 5] and "expected 2 fields" in rejected["reason"][0]
    assert ("import_file", ("mine.csv", "auto", "my quotes")) in fake.calls
    assert len(fake.kb) == 14
    # the upload was written under QUILL_HOME and removed afterwards
    assert not any((fake.settings.home / "uploads").glob("*/*"))


def test_binary_or_unreadable_imports_are_refused_and_the_kb_is_untouched(open_app, fake):
    at = open_app(LIBRARY)
    at.file_uploader(key="import_file").upload("quotes.csv", b"\x00\x01\x02PK\x03\x04", "text/csv")
    at.run()
    at.button(key="import_run").click().run()
    assert errors(at) == ["quotes.csv is a binary file, not text"]
    at.file_uploader(key="import_file").set_value(("notes.txt", b"just some words\n", "text/plain"))
    at.run()
    at.button(key="import_run").click().run()
    assert errors(at) == ["notes.txt: cannot detect the format (expected a 'quote' column)"]
    assert len(fake.kb) == 12 and not at.exception


def test_build_a_tier_shows_progress_and_its_report(open_app, fake):
    at = open_app(LIBRARY)
    at.button(key="build_starter").click().run()
    assert not at.error and not at.exception
    assert ("build", ("starter", True)) in fake.calls
    assert metrics(at)["New quotations"] == "2" and metrics(at)["Quotations"] in ("12", "14")
    assert at.status and at.status[-1].label == "Starter knowledge base built"


def test_bundled_and_uploaded_source_texts_are_added(open_app, fake):
    at = open_app(LIBRARY)
    at.button(key="source_shakespeare").click().run()
    assert not at.error and ("add_source", ("shakespeare", "", "")) in fake.calls
    assert "green-badge[:material/check: added · 1 documents]" in "\n".join(m.value for m in at.markdown)
    at.file_uploader(key="source_upload").upload("speech.txt", b"Four score and seven years ago.", "text/plain")
    at.run()
    at.text_input(key="source_author").input("Abraham Lincoln")
    at.button(key="source_add_file").click().run()
    assert not at.error
    name, author, title = [d for n, d in fake.calls if n == "add_source"][-1]
    assert name.endswith("speech.txt") and (author, title) == ("Abraham Lincoln", "speech")
    table = next(d.value for d in at.dataframe if "passages" in d.value.columns)
    assert set(table["source"]) == {"shakespeare", "speech"}


def test_the_cli_browses_like_the_library_page(tmp_path, monkeypatch, capsys, server_like_pages):
    """The real facade (real knowledge base, fake embedder) behind the page, and `quill kb browse` beside it."""
    import json

    from streamlit.testing.v1 import AppTest

    import ui
    from quill_core import Quill, Settings
    from quill_core._cli import main
    from tests.fakes import SAMPLE_QUOTES, FakeEmbedder
    from tests.ui.conftest import APP

    settings = Settings.load(home=tmp_path / "home")
    real = Quill(settings, embedder=FakeEmbedder())
    real.kb.upsert(SAMPLE_QUOTES)
    monkeypatch.setenv("QUILL_HOME", str(settings.home))
    monkeypatch.setattr(ui, "make_quill", lambda s: real)
    ui.quill.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(LIBRARY).run()
    at.text_input(key="lib_search").input("knowledge").run()
    assert not at.error and not at.exception
    shown = list(at.dataframe[0].value["quotation"])
    assert main(["--home", str(settings.home), "kb", "browse", "--search", "knowledge", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [q["text"] for q in listed["quotes"]] == shown and listed["total"] == len(shown) == 2
    ui.quill.clear()


def test_real_import_reports_bad_rows_and_a_refused_file_leaves_the_kb_as_it_was(tmp_path, monkeypatch,
                                                                                   server_like_pages):
    """The real facade (SQLite knowledge base, Chroma in tmp, fake embedder) behind the import form."""
    from streamlit.testing.v1 import AppTest

    import ui
    from quill_core import Quill, Settings
    from tests.fakes import FakeEmbedder
    from tests.ui.conftest import APP

    settings = Settings.load(home=tmp_path / "home")
    real = Quill(settings, embedder=FakeEmbedder())
    monkeypatch.setenv("QUILL_HOME", str(settings.home))
    monkeypatch.setattr(ui, "make_quill", lambda s: real)
    ui.quill.clear()
    real.kb.upsert([Quote("Knowledge is power.", author="Francis Bacon", collections=("seed",))])
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(LIBRARY).run()
    broken = b'quote,author\n"Well done is better than well said.",Benjamin Franklin\n"unclosed,Nobody\n'
    at.file_uploader(key="import_file").upload("mine.csv", broken, "text/csv")
    at.run()
    at.button(key="import_run").click().run()
    assert not errors(at) and not at.exception
    rejected = at.dataframe[-1].value
    assert list(rejected.columns) == ["line", "reason"] and len(rejected) >= 1
    assert len(real.kb) == 2 and real.store.count(real.collection) == 2  # imported and indexed
    at.file_uploader(key="import_file").set_value(("more.csv", b"quote,author\n\x00\x01", "text/csv"))
    at.run()
    at.button(key="import_run").click().run()
    assert errors(at) == ["more.csv is a binary file, not text"]
    assert len(real.kb) == 2
    ui.quill.clear()
