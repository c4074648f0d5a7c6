"""SourceLibrary: user files as passages with offsets, exact spans of quotes in them, provenance in verify()."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings
from hypothesis import strategies as st

from quill_core import InputError, NotFoundError, Quill, Quote, Settings
from quill_core._sources import SourceLibrary, split_passages
from quill_core._verify import verify
from tests.fakes import FakeEmbedder, FakeKB, FakeStore

SPEECH = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in "
    "Liberty, and dedicated to the proposition that all men are created equal.\n\n"
    "Now we are engaged in a great civil war, testing whether that nation, or any nation so conceived and so "
    "dedicated, can long endure. We are met on a great battle-field of that war.\n\n"
    + "It is for us the living, rather, to be dedicated here to the unfinished work. " * 30
    + "\n\nthat government of the people, by the people, for the people, shall not perish from the earth."
)


@pytest.fixture
def speech_file(tmp_path: Path) -> Path:
    path = tmp_path / "gettysburg.md"
    path.write_text(SPEECH, encoding="utf-8")
    return path


def test_a_user_file_becomes_passages_with_offsets_under_home(settings: Settings, speech_file: Path) -> None:
    lib = SourceLibrary(settings)
    info = lib.add(speech_file, author="Abraham Lincoln", title="Gettysburg Address")
    assert (info.name, info.origin, info.docs, info.chars, info.authors) == (
        "gettysburg", "file", 1, len(SPEECH), ("Abraham Lincoln",))
    assert [i.name for i in lib.list()] == ["gettysburg"]
    assert lib.text("gettysburg", "gettysburg") == SPEECH
    assert (settings.home / "sources" / "gettysburg" / "gettysburg.txt").exists()
    passages = lib.passages("gettysburg", "gettysburg")
    assert len(passages) == info.passages > 2
    assert all(SPEECH[p.start : p.end] == p.text for p in passages)
    assert passages[0].start == 0 and passages[-1].end == len(SPEECH)


def test_provenance_gives_the_exact_span_and_its_passage(settings: Settings, speech_file: Path) -> None:
    lib = SourceLibrary(settings)
    lib.add(speech_file, author="Abraham Lincoln")
    quote = Quote("Government of the people, by the people, for the people, shall not perish from the Earth",
                  author="Lincoln")
    found = lib.provenance(quote)
    assert found is not None and found.author == "Abraham Lincoln"
    assert found.span.verdict == "verbatim"
    text = lib.text(found.source, found.doc)
    assert text[found.span.start : found.span.end] == found.span.matched
    assert found.span.matched.startswith("government of the people")
    assert found.passage_start <= found.span.start < found.span.end <= found.passage_end
    assert lib.find("A house divided against itself cannot stand.", author="Abraham Lincoln") is None
    assert lib.covers("Lincoln") == "the gettysburg source" and lib.covers("Oscar Wilde") == ""


def test_dense_passages_are_embedded_and_searched(settings: Settings, speech_file: Path) -> None:
    store, embedder = FakeStore(), FakeEmbedder()
    lib = SourceLibrary(settings, store=lambda: store, embedder=lambda: embedder)
    info = lib.add(speech_file)
    [coll] = store.rows
    assert coll == "sources.library.fake" and len(store.rows[coll]) == info.passages
    meta = next(iter(store.rows[coll].values()))[1]
    assert set(meta) == {"source", "doc", "start", "end", "author"}
    found = lib.find("we are engaged in a great civil war testing whether that nation can long endure",
                     threshold=80)
    assert found is not None and found.span.verdict == "near"
    lib.remove("gettysburg")
    assert store.rows[coll] == {} and lib.list() == []


def test_bad_sources_are_refused_clearly(settings: Settings, tmp_path: Path) -> None:
    lib = SourceLibrary(settings)
    with pytest.raises(NotFoundError, match="bundled"):
        lib.add(tmp_path / "missing.txt")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    with pytest.raises(InputError, match=".txt and .md"):
        lib.add(pdf)
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"ab\x00cd")
    with pytest.raises(InputError, match="binary"):
        lib.add(binary)
    with pytest.raises(NotFoundError):
        lib.remove("nothing")


@given(st.text(alphabet="ab cd\n中文", max_size=3000), st.integers(50, 400))
@hsettings(max_examples=100, deadline=None)
def test_passages_cover_the_text_in_bounds(text: str, size: int) -> None:
    spans = split_passages(text, size=size, overlap=size // 5)
    for s, e in spans:
        assert 0 <= s < e <= len(text)
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_verify_uses_sources_for_provenance_and_misattribution_signals(settings: Settings,
                                                                       speech_file: Path) -> None:
    lib = SourceLibrary(settings)
    lib.add(speech_file, author="Abraham Lincoln")
    kb = FakeKB([Quote("All men are created equal.", "Abraham Lincoln")])
    draft = ("“All men are created equal,” wrote Lincoln. "
             "“We are met on a great battlefield of that war,” said Winston Churchill. "
             "“A house divided against itself cannot stand,” said Lincoln.")
    known, from_source, missing = verify(draft, kb=kb, sources=lib)
    assert known.verdict == "verbatim" and known.source is not None and "verified in" in known.note
    assert from_source.verdict == "misattributed" and from_source.author == "Abraham Lincoln"
    assert from_source.canonical == "We are met on a great battle-field of that war"
    assert missing.verdict == "unknown" and "not found in the gettysburg source" in missing.note


def test_quill_facade_adds_sources_and_verifies(quill: Quill, speech_file: Path) -> None:
    quill.add_source(speech_file, author="Abraham Lincoln", index=False)
    found = quill.provenance("four score and seven years ago")
    assert found is not None and found.span.start == 0
    [v] = quill.verify("As Socrates said, “The unexamined life is not worth living.”")
    assert v.verdict == "verbatim" and v.author == "Socrates"
    assert [s.verdict for s in quill.locate("to be, or NOT to be", "“To be, or not to be!”")] == ["verbatim"]
