"""Write page (AppTest over the fake facade): suggest, breakdown charts, insert, accept, download, bad input."""

from __future__ import annotations

from quill_core import ModelError, Quote
from quill_core._sources import SourceInfo
from tests.ui.conftest import XSS, errors, raw_markup, shown


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def suggest(at, paragraph: str):
    at.text_area(key="paragraph").input(paragraph)
    return at.button(key="suggest").click().run()


def test_suggestions_show_quote_author_badges_score_and_a_breakdown_chart(open_app, fake):
    at = suggest(open_app(), "We were afraid of the market, and fear itself ruled the room. [Q] Then we acted.")
    assert not at.error and not at.exception
    text = markdown(at)
    assert "fear is fear itself" in text and "Franklin D\\. Roosevelt" in text
    assert "5 suggestions" in [h.value for h in at.subheader]
    assert len(at.get("vega_lite_chart")) == 5  # one breakdown chart per card
    assert ":gray-badge[unverified]" in text
    assert any(m.value.startswith("0.") for m in at.metric)
    assert any("shares" in c.value for c in at.caption)  # the one-line why


def test_sidebar_filters_reach_the_core(open_app, fake):
    at = open_app()
    at.selectbox(key="f_author").select("孔子")
    at = suggest(at, "学习的时候要多想一想。[Q]")
    filters = [d for name, d in fake.calls if name == "suggest"][-1]
    assert (filters.lang, filters.author) == ("zh", "孔子")  # Chinese: the paragraph's language, by default
    assert "学而不思则罔" in markdown(at)
    assert "1 suggestion" in [h.value for h in at.subheader]


def test_the_quotes_language_follows_the_paragraph_and_any_language_is_one_click_away(open_app, fake):
    at = open_app()
    at.slider(key="k").set_value(10)
    choice = at.button_group(key="quote_lang")
    assert choice.value == "auto"
    assert choice.options == ["Same as my paragraph", "Any language", "English only", "Chinese only"]
    at = suggest(at, "Knowledge is what we lacked, and imagination too. [Q]")
    assert fake.last_suggest["quote_lang"] == "auto"
    assert {s.quote.lang for s in at.session_state["suggestions"]} == {"en"}
    at.button_group(key="quote_lang").set_value("any")
    at = at.button(key="suggest").click().run()
    assert fake.last_suggest["quote_lang"] == "any"
    assert {s.quote.lang for s in at.session_state["suggestions"]} == {"en", "zh"}
    assert ":gray-badge[Chinese]" in markdown(at)


def test_the_chinese_sample_gets_chinese_cards_charts_badges_and_a_chinese_insertion(open_app, fake):
    at = open_app()
    at.button(key="sample_zh").click().run()
    at = at.button(key="suggest").click().run()
    assert not at.error and not at.exception
    suggestions = at.session_state["suggestions"]
    assert len(suggestions) == 5 and {s.quote.lang for s in suggestions} == {"zh"}
    assert [f for name, f in fake.calls if name == "suggest"][-1].lang == "zh"
    text = shown(markdown(at))
    assert "“读书不觉已春深，一寸光阴一寸金。”" in text and "— **王贞白**, *白鹿洞二首*" in text  # the best card
    assert "盛年不重來，一日難再晨。" in text  # a Traditional-script line shows as written
    assert text.count(":gray-badge[Chinese]") == 5 and ":gray-badge[English]" not in text
    assert "5 suggestions" in [h.value for h in at.subheader]
    assert len(at.get("vega_lite_chart")) == 5 and len([m for m in at.metric if m.label == "Score"]) == 5
    at.button(key="insert-0").click().run()
    assert not at.error and not at.exception
    preview = "".join(h.value for h in at.html if "<mark" in h.value)
    assert "<mark" in preview and "读书不觉已春深，一寸光阴一寸金。" in preview
    at.button(key="accept").click().run()
    paragraph = at.text_area(key="paragraph").value
    assert "吞掉。正如王贞白所说：“读书不觉已春深，一寸光阴一寸金。”与其等待" in paragraph and "[Q]" not in paragraph


def test_no_match_is_a_friendly_note(open_app, fake):
    at = open_app()
    at.button_group(key="quote_lang").set_value("zh")
    at.selectbox(key="f_topic").select("courage")
    at = suggest(at, "Some paragraph. [Q]")
    assert not at.error
    assert any("No quotation matches" in i.value and "Any language" in i.value for i in at.info)


def test_insert_previews_the_highlighted_span_then_accept_replaces_the_paragraph(open_app, fake):
    at = suggest(open_app(), "We feared the market. [Q] Then we acted.")
    at.number_input(key="drafts").set_value(2)
    at.button(key="insert-0").click().run()
    assert ("insert", ("The only thing we have to fear is fear itself.", 2)) in fake.calls
    assert not at.error and not at.exception
    preview = "".join(h.value for h in at.html if "<mark" in h.value)
    assert "<mark" in preview and "The only thing we have to fear is fear itself." in preview
    assert at.get("download_button")  # Markdown and plain text downloads are offered
    result = at.session_state["insert"]["result"]
    at.button(key="regenerate").click().run()
    assert [name for name, _ in fake.calls].count("insert") == 2
    at.button(key="accept").click().run()
    assert at.text_area(key="paragraph").value == result.paragraph
    assert "[Q]" not in at.text_area(key="paragraph").value
    assert any("Inserted" in s.value for s in at.success)


def test_html_and_markdown_in_a_paragraph_render_as_text(open_app, fake):
    at = suggest(open_app(), XSS)
    assert not at.error
    at.button(key="insert-0").click().run()
    # The preview is the only HTML: every tag the writer typed is escaped there.
    html = "".join(h.value for h in at.html if "<mark" in h.value)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html
    assert "<img" not in html and "<script" not in html
    # Nothing the writer typed reaches Markdown unescaped.
    for m in at.markdown:
        assert not raw_markup(m.value), m.value


def test_empty_and_huge_paragraphs_get_one_clear_error(open_app, fake):
    at = suggest(open_app(), "   ")
    assert len(at.error) == 1 and errors(at)[0].startswith("the paragraph is empty")
    at = suggest(at, "word " * 200_000 + "[Q]")  # a 1 MB paste
    assert len(at.error) == 1 and "limit" in errors(at)[0]
    assert not at.exception


def test_core_failures_are_one_error_never_a_traceback(open_app, fake):
    fake.fail["suggest"] = ModelError("cannot load embedding model 'minilm': gone")
    at = suggest(open_app(), "Anything at all. [Q]")
    assert errors(at) == ["cannot load embedding model 'minilm': gone"]
    fake.fail["suggest"] = RuntimeError("boom")
    at = suggest(at, "Anything at all. [Q]")
    assert len(at.error) == 1 and "Something went wrong" in errors(at)[0] and "boom" not in errors(at)[0]
    assert not at.exception


def test_sample_buttons_fill_the_paragraph(open_app):
    at = open_app()
    at.button(key="sample_zh").click().run()
    assert "[Q]" in at.text_area(key="paragraph").value and "以后" in at.text_area(key="paragraph").value
    at.button(key="sample_en").click().run()
    assert at.text_area(key="paragraph").value.startswith("Every team")


def test_provenance_badges_say_where_a_quote_is_attested(open_app, fake):
    fdr = next(q for q in fake.kb.quotes.values() if q.author == "Franklin D. Roosevelt")
    fake.kb.upsert([Quote(fdr.text, author=fdr.author, collections=("speeches",))])  # now in 2 collections
    at = suggest(open_app(), "We feared the market; fear itself ruled the room. [Q]")
    text = markdown(at)
    assert "blue-badge[in 2 collections]" in text and "gray-badge[unverified]" in text
    assert "verified in source" not in text  # no source text added yet
    fake.sources.added["speeches"] = SourceInfo("speeches", "Speeches", "file", 1, 100, 1)
    fake.sources.text = "Let me assert my firm belief that the only thing we have to fear is fear itself."
    at = suggest(at, "We feared the market; fear itself ruled the room. [Q]")
    assert "green-badge[:material/verified: verified in source]" in markdown(at)


def test_ranker_and_criterion_weights_reach_the_core(open_app, fake):
    at = open_app()
    assert at.selectbox(key="ranker").value == "default"
    at.slider(key="w_relevance").set_value(0.4)
    at.slider(key="k").set_value(3)
    at = suggest(at, "We feared the market. [Q]")
    assert fake.last_suggest["ranker"] == "default" and fake.last_suggest["k"] == 3
    assert fake.last_suggest["weights"]["relevance"] == 0.4
    at.selectbox(key="ranker").select("bm25").run()
    assert "w_relevance" not in [s.key for s in at.slider]  # weights only steer the default ranker
    at = suggest(at, "We feared the market. [Q]")
    assert fake.last_suggest["ranker"] == "bm25" and fake.last_suggest["weights"] is None


def test_retrieved_quotes_are_previewed_while_the_language_model_reranks(open_app, fake):
    """The default ranker hands the page the retrieved quotes first (shown while the LM works); once the ranked
    cards are in, the preview is gone. A ranker without the LM has nothing to preview."""
    at = suggest(open_app(), "We were afraid of the market, and fear itself ruled the room. [Q] Then we acted.")
    assert len(fake.previews) == 1 and len(fake.previews[0]) == 5
    assert "reranking them" not in "\n".join(c.value for c in at.caption)  # replaced by the cards
    assert "5 suggestions" in [h.value for h in at.subheader]
    at.selectbox(key="ranker").select("bm25")
    at.button(key="suggest").click().run()
    assert len(fake.previews) == 1
