"""locate / closest_span / score / highlight: exact offsets into the original text, verdicts, escaping."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from quill_core import InputError, Span, highlight, locate
from quill_core._spans import closest_span
from quill_core._spans import score
from quill_core._textview import build_view as _build_view, normalized as _norm

HAMLET = (
    "HAMLET\n"
    "To be, or not to be: that is the question:  \n"
    "Whether 'tis nobler in the mind to suffer  \n"
    "The slings and arrows of outrageous fortune,  \n"
    "Or to take arms against a sea of troubles,  \n"
    "And by opposing end them? To die: to sleep;\n"
)


def only(spans: list[Span]) -> Span:
    assert len(spans) == 1, spans
    return spans[0]


# -- examples a writer would paste ------------------------------------------------------------------------------
def test_exact_quote_is_verbatim_with_exact_offsets() -> None:
    q = "The slings and arrows of outrageous fortune"
    sp = only(locate(q, HAMLET))
    assert (sp.start, sp.end) == (HAMLET.index(q), HAMLET.index(q) + len(q))
    assert sp.matched == q and sp.score == 100 and sp.verdict == "verbatim"


def test_curly_quotes_case_dashes_and_line_breaks_are_still_verbatim() -> None:
    q = "“whether ’TIS nobler in the mind to suffer the slings”"
    sp = only(locate(q, HAMLET))
    assert sp.verdict == "verbatim"
    assert sp.matched == "Whether 'tis nobler in the mind to suffer  \nThe slings"
    assert HAMLET[sp.start : sp.end] == sp.matched
    text = "He said it -- plainly -- twice."
    assert only(locate("it — plainly — twice", text)).matched == "it -- plainly -- twice"


def test_full_width_punctuation_and_chinese_without_spaces() -> None:
    text = "子曰：“学而时习之，\n不亦说乎？有朋自远方来，不亦乐乎？”"
    sp = only(locate("学而时习之,不亦说乎?", text))
    assert sp.verdict == "verbatim"
    assert sp.matched == "学而时习之，\n不亦说乎？"
    assert text[sp.start : sp.end] == sp.matched
    traditional = only(locate("學而時習之，不亦說乎", text))  # the script does not matter, offsets stay exact
    assert traditional.verdict == "verbatim" and traditional.matched == "学而时习之，\n不亦说乎"
    near = only(locate("有朋自远方来，不亦快乎", text))
    assert near.verdict == "near" and near.matched == "有朋自远方来，不亦乐乎"


def test_inserted_or_dropped_words_neither_shift_nor_truncate_the_span() -> None:
    true = "Or to take arms against a sea of troubles"
    start = HAMLET.index(true)
    dropped = only(locate("Or to take arms against a sea of troubles".replace("take ", ""), HAMLET))
    assert (dropped.start, dropped.end, dropped.verdict) == (start, start + len(true), "near")
    added = only(locate("Or to take up arms against a sea of troubles", HAMLET))
    assert (added.start, added.end) == (start, start + len(true))
    edge = only(locate("Or take arms against a sea of troubles", HAMLET))  # word dropped next to the edge
    assert (edge.start, edge.end) == (start, start + len(true))


def test_typo_at_the_edges_keeps_the_whole_span() -> None:
    true = "And by opposing end them"
    start = HAMLET.index(true)
    sp = only(locate("Xnd by opposing end thex", HAMLET))
    assert (sp.start, sp.end) == (start, start + len(true))


def test_ellipsis_for_an_omitted_middle_spans_the_whole_passage() -> None:
    sp = only(locate("To be, or not to be … the slings and arrows of outrageous fortune", HAMLET))
    assert sp.matched.startswith("To be, or not to be") and sp.matched.endswith("outrageous fortune")
    assert sp.verdict == "verbatim"
    assert only(locate("To be, or not to be [...] outrageous fortune", HAMLET)).end == sp.end


def test_every_occurrence_is_reported_in_text_order() -> None:
    text = "Tomorrow, and tomorrow, and TOMORROW creeps in. Tomorow and tomorrow!"
    spans = locate("tomorrow, and tomorrow", text)
    assert [s.matched for s in spans] == ["Tomorrow, and tomorrow", "Tomorow and tomorrow"]
    assert [s.verdict for s in spans] == ["verbatim", "near"]


def test_a_quote_that_is_not_there_is_not_found() -> None:
    assert locate("The quick brown fox jumps over the lazy dog", HAMLET) == []
    best = closest_span("The quick brown fox jumps over the lazy dog", HAMLET)
    assert best.verdict == "not_found" and best.score < 90
    assert closest_span("to be or not to be", "") == Span(0, 0, 0.0, "", "not_found")


def test_threshold_controls_near_matches() -> None:
    q = "Whether it is nobler in the mind to suffer"
    assert locate(q, HAMLET, threshold=99) == []
    assert only(locate(q, HAMLET, threshold=80)).verdict == "near"


def test_long_texts_use_the_index_and_agree_with_short_ones() -> None:
    filler = "".join(f"Line {i} of filler text about nothing in particular.\n" for i in range(900))
    text = filler + HAMLET + filler
    q = "Whether tis nobler in the mind to sufer the slings and arows"
    first = locate(q, text)  # builds the view
    second = locate(q, text)  # uses the q-gram index
    assert first == second
    offset = len(filler)
    assert [(s.start - offset, s.end - offset) for s in second] == [
        (s.start, s.end) for s in locate(q, HAMLET)
    ]


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(InputError, match="empty"):
        locate("  ", HAMLET)
    with pytest.raises(InputError, match="threshold"):
        locate("to be", HAMLET, threshold=120)
    assert locate("to be", "") == []


# -- highlight --------------------------------------------------------------------------------------------------
def test_highlight_escapes_every_user_character() -> None:
    text = '<script>alert("x")</script> & "to be" <b>'
    spans = locate("to be", text)
    out = highlight(text, spans)
    assert "<script>" not in out and "<b>" not in out
    assert out.count("<mark") == 1 and "&lt;script&gt;" in out and "&amp;" in out
    assert re.sub(r"</?mark[^>]*>", "", out) == highlight(text, [])
    assert '<mark class="quill-verbatim">to be</mark>' in out


def test_highlight_handles_multibyte_characters_overlaps_and_bad_offsets() -> None:
    text = "😀 学而时习之 😀 é"
    sp = only(locate("学而时习之", text))
    assert highlight(text, [sp]) == '😀 <mark class="quill-verbatim">学而时习之</mark> 😀 é'
    assert highlight(text, [(0, 3), (2, 5), (50, 60), (4, 1)]) == "<mark>😀 学而时</mark>习之 😀 é"


# -- properties -------------------------------------------------------------------------------------------------
PLAIN = "abcAB ,;\n\t中文é!"
RICH = "abcAB ,.;\n\t\u3000中文。，é\u0301ß—-…\"'“”’「」ＡＢ"


@given(st.text(alphabet=PLAIN, min_size=1, max_size=80), st.data())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_an_exact_substring_is_found_with_score_100_and_exact_offsets(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    quote = text[i:j]
    assume(quote == quote.strip() and _norm(quote))
    spans = locate(quote, text)
    assert any(s.score == 100 and s.verdict == "verbatim" for s in spans)
    norm_q, norm_t = _norm(quote), _norm(text)
    occurrences = len(re.findall(f"(?={re.escape(norm_q)})", norm_t))
    if occurrences == 1:
        assert [(s.start, s.end) for s in spans if s.score == 100] == [(i, j)]
    else:
        assert all(_norm(s.matched) == norm_q for s in spans if s.score == 100)


@given(st.text(alphabet=RICH, max_size=120), st.text(alphabet=RICH, min_size=1, max_size=40),
       st.sampled_from([60, 80, 90, 100]))
@settings(max_examples=300, deadline=None)
def test_located_spans_rescore_above_threshold_and_sit_on_character_boundaries(
        text: str, quote: str, threshold: int) -> None:
    assume(quote.strip())
    for sp in locate(quote, text, threshold=threshold):
        assert 0 <= sp.start < sp.end <= len(text)
        assert text[sp.start : sp.end] == sp.matched
        assert sp.start == 0 or not unicodedata.combining(text[sp.start])  # never splits a combining sequence
        assert sp.end == len(text) or not unicodedata.combining(text[sp.end])
        assert score(quote, sp.matched) >= threshold
        assert sp.verdict in ("verbatim", "near")
    best = closest_span(quote, text, threshold=threshold)
    assert 0 <= best.start <= best.end <= len(text) and text[best.start : best.end] == best.matched


@given(st.text(alphabet=RICH, max_size=60))
@settings(max_examples=300, deadline=None)
def test_the_offset_map_points_every_normalized_character_at_its_source(text: str) -> None:
    view = _build_view(text)
    assert view.norm == _norm(text)
    assert len(view.source) == len(view.norm)
    assert all(0 <= s < len(text) for s in view.source.tolist())
    assert list(view.source) == sorted(view.source)


def _brute_force_best(q: str, t: str) -> float:
    return max((fuzz.ratio(q, t[a:b]) for a in range(len(t)) for b in range(a + 1, len(t) + 1)), default=0.0)


WORDS = ["to", "be", "or", "not", "the", "question", "whether", "nobler", "mind", "suffer", "slings", "arrows",
         "outrageous", "fortune", "sea", "troubles"]


@given(st.permutations(WORDS), st.data())
@settings(max_examples=80, deadline=None)
def test_a_dropped_interior_word_still_spans_the_whole_passage(words: list[str], data: st.DataObject) -> None:
    text = " ".join(words[: data.draw(st.integers(8, len(words)))])
    piece = text.split(" ")[data.draw(st.integers(0, 3)) :][: data.draw(st.integers(5, 8))]
    drop = data.draw(st.integers(1, len(piece) - 2))
    quote = " ".join(piece[:drop] + piece[drop + 1 :])
    truth = " ".join(piece)
    assume(fuzz.ratio(quote, truth) >= 90)
    start = text.index(truth)
    assert [(s.start, s.end) for s in locate(quote, text)] == [(start, start + len(truth))]


@given(st.permutations(WORDS), st.data())
@settings(max_examples=60, deadline=None)
def test_a_typo_keeps_the_true_span_within_one_edit_of_the_exhaustive_best(words: list[str], data: st.DataObject) -> None:
    """Slow reference comparison against the best ratio over every substring of the text.

    The ratio (indel) metric prices a substitution at two, so the best-scoring substring may shed a char next to
    a typo; locate keeps the passage the quote was taken from and scores within one substitution of the best.
    """
    text = " ".join(words[: data.draw(st.integers(8, len(words)))])
    a = data.draw(st.integers(0, len(text) - 20))
    b = data.draw(st.integers(a + 15, len(text)))
    i = data.draw(st.integers(a + 1, b - 2))
    quote = text[a:i] + ("x" if text[i] != "x" else "y") + text[i + 1 : b]
    assume(quote.strip() == quote and text[i] != " ")
    best = _brute_force_best(quote, text)
    found = closest_span(quote, text)
    assert (found.start, found.end) == (a, b)
    assert found.score >= best - 200 / (2 * len(quote)) - 0.01
