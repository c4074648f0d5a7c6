"""Verify page (AppTest over the fake facade): verdicts, canonical text, diff, highlighted draft, source lookup."""

from __future__ import annotations

from tests.ui.conftest import errors, raw_markup

VERIFY = "pages/verify.py"
DRAFT = ("He said “The only thing we have to fear is fear itself.” and later “To be or not to be, that is the "
         "problem.” and finally “Nobody ever wrote this sentence down.”")


def check(at, draft: str):
    at.text_area(key="draft").input(draft)
    return at.button(key="verify_run").click().run()


def test_every_quotation_gets_a_verdict_canonical_text_and_a_diff(open_app):
    at = check(open_app(VERIFY), DRAFT)
    assert not at.error and not at.exception
    md = "\n".join(m.value for m in at.markdown)
    assert "green-badge[:material/verified: verified]" in md
    assert "orange-badge[:material/edit_off: misquoted]" in md
    assert "gray-badge[:material/help: not in the knowledge base]" in md
    assert "William Shakespeare" in md  # the canonical author of the misquote
    assert "~~question~~ **problem**" in md  # the core's word diff of the misquote
    assert [m.value for m in at.metric][:2] == ["3", "1"]
    # the draft, with each quotation highlighted (escaped HTML from quill_core._spans.highlight)
    view = "".join(h.value for h in at.html if "<mark" in h.value)
    assert view.count("<mark") == 3
    assert 'class="quill-near">To be or not to be' in view  # coloured by verdict


def test_uploaded_draft_is_used_and_binary_upload_is_refused(open_app):
    at = open_app(VERIFY)
    at.file_uploader(key="draft_file").upload("draft.txt", DRAFT.encode("utf-8"), "text/plain")
    at.button(key="verify_run").click().run()
    assert not at.error and len(at.get("vega_lite_chart")) == 0
    assert "William Shakespeare" in "\n".join(m.value for m in at.markdown)
    at.file_uploader(key="draft_file").set_value(("photo.txt", b"\x89PNG\x00\x00binary", "text/plain"))
    at.button(key="verify_run").click().run()
    assert errors(at) == ["photo.txt is a binary file, not text"]
    assert not at.exception


def test_empty_draft_is_one_clear_error(open_app):
    at = check(open_app(VERIFY), "  ")
    assert errors(at) == ["the draft is empty: paste some text or upload a file"]


def test_quotations_are_located_in_an_uploaded_source(open_app, fake):
    at = check(open_app(VERIFY), DRAFT)
    source = ("Chapter one.\n\nSo, first of all, let me assert my firm belief that the only thing we have to fear "
              "is fear itself, nameless, unreasoning, unjustified terror.\n")
    at.file_uploader(key="source_file").upload("speech.txt", source.encode("utf-8"), "text/plain")
    at.run()
    assert not at.error
    md = "\n".join(m.value for m in at.markdown)
    assert "found · 9" in md or "found · 10" in md  # the first quotation is found (case and punctuation differ)
    assert md.count("not found in this source") == 2
    located = [h.value for h in at.html if "<mark" in h.value and "nameless" in h.value]
    assert located and "the only thing we have to fear is fear itself" in located[0]
    assert ("locate", "The only thing we have to fear is fear itself.") in fake.calls


def test_a_draft_full_of_markup_stays_text(open_app):
    at = check(open_app(VERIFY), "<script>alert(1)</script> “<img src=x onerror=alert(1)>” [link](javascript:x)")
    assert not at.exception
    view = "".join(h.value for h in at.html if "<mark" in h.value)
    assert "&lt;script&gt;" in view and "<script" not in view and "<img" not in view
    assert "\\<img" in "".join(m.value for m in at.markdown)  # the quotation is listed, escaped
    for m in at.markdown:
        assert not raw_markup(m.value), m.value


def test_a_huge_draft_is_one_clear_error(open_app, fake):
    def too_long(draft, *, threshold=75.0, k=8):  # the real limit check (quill_core._verify)
        from quill_core._verify import verify

        return verify(draft, kb=fake.kb)

    fake.verify = too_long
    at = check(open_app(VERIFY), "“quote” " * 130_000)  # about 1 MB
    assert len(at.error) == 1 and "the limit is" in errors(at)[0] and not at.exception
