"""Importing quote files: every format, auto-detection, hostile input, idempotence and atomicity."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from quill_core._errors import ImportFormatError, InputError, NotFoundError
from quill_core._kb import KnowledgeBase, Row, detect_format, import_file, import_records
from quill_core._kb.importers import parse_text
from quill_core._kb import schema as schema_module
from quill_core._types import Quote, RejectedRow

DATA = Path(__file__).resolve().parent.parent / "data" / "kb"


@pytest.fixture
def kb() -> KnowledgeBase:
    return KnowledgeBase(":memory:", name="test")


def texts(kb: KnowledgeBase) -> list[str]:
    return [q.text for q in kb.iter_quotes()]


def test_quill_json(kb: KnowledgeBase) -> None:
    report = import_file(kb, DATA / "quill_zh.json")
    assert (report.format, report.read, report.imported, report.rejected) == ("quill", 4, 4, ())
    moon = kb.by_key("床前明月光，疑是地上霜。")[0]
    assert moon.author == "李白" and moon.work == "静夜思" and moon.lang == "zh"
    assert moon.topics == ("思乡", "月亮")
    assert (moon.ppl, moon.popularity) == (2.5, 120000.0)
    assert kb.by_key("海内存知己，天涯若比邻。")[0].topics == ("友情", "离别")  # full-width comma splits too
    assert "春眠不觉晓，处处闻啼鸟。" in texts(kb)  # curly quotes stripped
    assert moon.collections == ("quill_zh",)


def test_quotable_json(kb: KnowledgeBase) -> None:
    report = import_file(kb, DATA / "quotable.json")
    assert report.format == "quotable"
    assert (report.read, report.imported) == (4, 3)
    assert report.rejected == (RejectedRow(5, "empty quote text"),)
    assert kb.by_key("Well begun is half done.")[0].topics == ("wisdom", "famous quotes")


def test_goodreads_jsonl_with_malformed_rows(kb: KnowledgeBase) -> None:
    report = import_file(kb, DATA / "goodreads.jsonl")
    assert report.format == "goodreads"
    assert (report.read, report.imported) == (6, 4)
    assert [r.line for r in report.rejected] == [4, 6]
    assert report.rejected[0].reason.startswith("malformed JSON")
    assert "JSON object" in report.rejected[1].reason
    lincoln = kb.by_key("Whatever you are, be a good one.")[0]
    assert lincoln.author == "Abraham Lincoln"  # trailing comma gone
    assert "misattributed-abraham-lincoln" in lincoln.topics


def test_csv_with_guessed_columns_and_broken_rows(kb: KnowledgeBase) -> None:
    report = import_file(kb, DATA / "quotes.csv")
    assert report.format == "csv"
    assert report.imported == 4
    assert report.rejected == (RejectedRow(4, "expected 4 fields, found 5"),
                               RejectedRow(6, "unterminated quoted field"))
    bacon = kb.by_key("Knowledge is power.")[0]
    assert (bacon.author, bacon.work, bacon.topics) == ("Francis Bacon", "Meditationes Sacrae", ("knowledge", "power"))
    assert kb.by_key("I think therefore I am.")[0].author == "René Descartes"  # read after the broken row


def test_csv_mapping(kb: KnowledgeBase) -> None:
    with pytest.raises(ImportFormatError, match="mapping"):
        import_file(kb, DATA / "custom.csv")
    report = import_file(kb, DATA / "custom.csv", mapping={"text": "line_text", "author": "WHO"})
    assert report.imported == 1
    assert kb.by_key("Hope is a waking dream.")[0].author == "Aristotle"
    with pytest.raises(ImportFormatError, match="no column 'nope'"):
        import_file(kb, DATA / "custom.csv", mapping={"text": "nope"})
    with pytest.raises(InputError, match="unknown mapping field"):
        import_file(kb, DATA / "custom.csv", mapping={"quote": "line_text"})


def test_plain_lines(kb: KnowledgeBase) -> None:
    report = import_file(kb, DATA / "lines.txt")
    assert (report.format, report.read, report.imported, report.rejected) == ("lines", 7, 7, ())
    by_text = {q.text: q for q in kb.iter_quotes()}
    assert by_text["The only way to have a friend is to be one."].author == "Ralph Waldo Emerson"
    assert by_text["Well done is better than well said."].author == "Benjamin Franklin"
    assert by_text["Turn your wounds into wisdom."].author == "Oprah Winfrey"
    assert by_text["一寸光阴一寸金，寸金难买寸光阴。"].author == "民间谚语"
    assert by_text["Life is what happens while you are busy making other plans."].author == ""
    baldwin = by_text["Not everything that is faced can be changed."]
    assert (baldwin.author, baldwin.work) == ("James Baldwin", "As Much Truth As One Can Bear")
    heschel = [q for q in by_text.values() if q.author == "Abraham Joshua Heschel"][0]
    assert heschel.text.startswith("Self-respect is the fruit of discipline - a sense")  # the last dash splits


@pytest.mark.parametrize(
    "name, expected",
    [("quill_zh.json", "quill"), ("quotable.json", "quotable"), ("goodreads.jsonl", "goodreads"),
     ("quotes.csv", "csv"), ("lines.txt", "lines")],
)
def test_auto_detection_ignores_the_suffix(tmp_path: Path, name: str, expected: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    assert detect_format(text) == expected
    renamed = tmp_path / "upload.dat"
    shutil.copy(DATA / name, renamed)
    assert import_file(KnowledgeBase(":memory:"), renamed).format == expected


def test_generic_jsonl_and_explicit_format(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text('{"Text": "Stay hungry, stay foolish.", "By": "Stewart Brand", "lang": "en"}\n'
                    '{"Text": "Less, but better.", "By": "Dieter Rams"}\n', encoding="utf-8")
    report = import_file(kb, path)
    assert (report.format, report.imported) == ("jsonl", 2)
    assert kb.by_key("Less, but better.")[0].author == "Dieter Rams"
    with pytest.raises(ImportFormatError, match="expected JSON"):
        import_file(kb, DATA / "lines.txt", format="quill")
    with pytest.raises(InputError, match="unknown format"):
        import_file(kb, path, format="xml")


@pytest.mark.parametrize(
    "name, message",
    [("empty.txt", "empty"), ("binary.png", "binary"), ("latin1.csv", "not UTF-8 text \\(invalid byte at line 2")],
)
def test_unusable_files_raise_and_change_nothing(kb: KnowledgeBase, name: str, message: str) -> None:
    kb.upsert([Quote("Already here.", author="Someone")])
    rev = kb.revision
    with pytest.raises(ImportFormatError, match=message):
        import_file(kb, DATA / name)
    assert len(kb) == 1 and kb.revision == rev


def test_missing_file(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        import_file(kb, tmp_path / "nope.json")


def test_whitespace_only_and_broken_json_array(kb: KnowledgeBase, tmp_path: Path) -> None:
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n   \n\t\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="empty"):
        import_file(kb, blank)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"quote": "One.", "author": "A"},\n  {"quote": "Two" "author": "B"}\n]\n', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="line 3"):
        import_file(kb, broken)
    assert len(kb) == 0


def test_huge_lines_are_rejected_with_their_line_number(kb: KnowledgeBase, tmp_path: Path) -> None:
    huge = "x" * 200_000
    jsonl = tmp_path / "huge.jsonl"
    jsonl.write_text('{"quote": "Fine one.", "author": "A"}\n' f'{{"quote": "{huge}", "author": "B"}}\n'
                     '{"quote": "Fine two.", "author": "C"}\n', encoding="utf-8")
    report = import_file(kb, jsonl)
    assert report.imported == 2
    assert [(r.line, r.reason.split(" (")[0]) for r in report.rejected] == [(2, "line too long")]
    csv_path = tmp_path / "huge.csv"
    csv_path.write_text(f'quote,author\n"{huge}",B\nFine three.,C\n', encoding="utf-8")
    report = import_file(kb, csv_path)
    assert report.imported == 1 and [r.line for r in report.rejected] == [2]
    lines = tmp_path / "huge.txt"
    lines.write_text(f"Fine four. - D\n{huge}\n", encoding="utf-8")
    report = import_file(kb, lines)
    assert report.imported == 1 and [r.line for r in report.rejected] == [2]


def test_reimport_is_idempotent(kb: KnowledgeBase) -> None:
    first = import_file(kb, DATA / "goodreads.jsonl")
    rev, count = kb.revision, len(kb)
    second = import_file(kb, DATA / "goodreads.jsonl")
    assert second.imported == 0 and second.merged == first.imported
    assert kb.revision == rev and len(kb) == count


def test_near_duplicates_merge_and_keep_both_collections(kb: KnowledgeBase) -> None:
    import_records(kb, [Row("You can give without loving, but you can never love without giving.",
                            author="Robert Louis Stevenson", topics="love")], collection="first")
    report = import_records(kb, [Row("You can give without loving, but you cannot love without giving.",
                                     author="R. L. Stevenson", topics="giving")], collection="second")
    assert (report.imported, report.merged) == (0, 1)
    [quote] = kb.iter_quotes()
    assert quote.collections == ("first", "second")
    assert quote.topics == ("love", "giving")
    assert quote.text.endswith("can never love without giving.")  # the first attested text stays


def test_near_duplicates_within_one_batch_and_different_authors_stay_apart(kb: KnowledgeBase) -> None:
    report = import_records(kb, [
        Row("Be the change that you wish to see in the world.", author="Mahatma Gandhi"),
        Row("Be the change you wish to see in the world.", author="Gandhi"),
        Row("Be the change you wish to see in the world.", author="Albert Einstein"),  # a different claim
        Row("Be the change you wish to see in the world!", author="Mahatma Gandhi"),  # same key: exact repeat
    ], collection="batch")
    assert (report.read, report.imported, report.merged) == (4, 2, 2)
    assert sorted(q.author for q in kb.iter_quotes()) == ["Albert Einstein", "Mahatma Gandhi"]


def test_an_attributed_copy_replaces_an_anonymous_record(kb: KnowledgeBase) -> None:
    anonymous = "Do not follow where the path may lead. Go instead where there is no path and leave a trail."
    import_records(kb, [Row(anonymous, author="Anonymous", topics="paths")], collection="maxims")
    [before] = kb.iter_quotes()
    report = import_records(kb, [
        Row(anonymous.replace("Go instead", "Go, instead,"), author="Ralph Waldo Emerson", topics="courage"),
        Row(anonymous, author="Unknown"),  # another anonymous copy joins the attributed record
    ], collection="library")
    assert (report.imported, report.merged) == (0, 2)
    [after] = kb.iter_quotes()
    assert after.author == "Ralph Waldo Emerson" and after.id != before.id
    assert after.collections == ("maxims", "library") and after.topics == ("paths", "courage")
    assert kb.changed_since(0) == [after.id] and before.id not in kb
    # within one batch too: the anonymous copy comes first, the attributed one wins
    other = KnowledgeBase(":memory:")
    batch = import_records(other, [Row("Well done is better than well said, always.", topics="deeds"),
                                   Row("Well done is better than well said, always!", author="Benjamin Franklin")],
                           collection="x")
    assert (batch.imported, batch.merged) == (1, 1)
    [record] = other.iter_quotes()
    assert (record.author, record.topics) == ("Benjamin Franklin", ("deeds",))


def test_import_records_accepts_quotes_mappings_and_rejections(kb: KnowledgeBase) -> None:
    report = import_records(kb, [
        Quote("  “Stay curious.”  ", author="Anonymous"),
        {"text": "Simplicity is prerequisite for reliability.", "author": "Edsger Dijkstra", "line": 7},
        {"author": "no text"},
        RejectedRow(9, "parsed badly upstream"),
        42,
    ], collection="mixed")
    assert (report.read, report.imported) == (5, 2)
    assert [r.line for r in report.rejected] == [3, 9, 5]  # position in the input when no line is known
    assert kb.by_key("Stay curious.")[0].author == ""
    with pytest.raises(InputError):
        import_records(kb, [], collection=" ")


def test_failed_write_leaves_the_knowledge_base_as_it_was(kb: KnowledgeBase, monkeypatch) -> None:
    import_file(kb, DATA / "quotable.json")
    rev, before = kb.revision, texts(kb)
    calls = {"n": 0}
    real = schema_module.row_values

    def flaky(quote: Quote) -> tuple:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real(quote)

    monkeypatch.setattr(schema_module, "row_values", flaky)
    with pytest.raises(OSError):
        import_file(kb, DATA / "quotes.csv")
    assert texts(kb) == before and kb.revision == rev
    monkeypatch.setattr(schema_module, "row_values", real)
    assert import_file(kb, DATA / "quotes.csv").imported == 4  # and the next try works


def test_progress_reports_fractions(kb: KnowledgeBase) -> None:
    seen: list[tuple[float, str]] = []
    import_file(kb, DATA / "quotes.csv", progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and 0.0 <= fractions[0] and fractions[-1] == 1.0
    assert all(isinstance(m, str) and m for _, m in seen)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Be yourself; everyone else is already taken.—Oscar Wilde", ("Be yourself; everyone else is already taken.",
                                                                      "Oscar Wilde", "")),
        ("I came, I saw—I conquered", ("I came, I saw—I conquered", "", "")),  # a dash inside the quote
        ("It is what it is - nothing more", ("It is what it is - nothing more", "", "")),
        ("一万年太久，只争朝夕。――毛泽东《满江红》", ("一万年太久，只争朝夕。", "毛泽东", "满江红")),
        ("Dream big. - Martin Luther King, Jr.", ("Dream big.", "Martin Luther King, Jr.", "")),
    ],
)
def test_line_separators(line: str, expected: tuple[str, str, str]) -> None:
    [row] = list(parse_text(line, format="lines"))
    assert (row.text, row.author, row.work) == expected


def test_formats_registry_names_every_format_once_with_a_description() -> None:
    from quill_core._kb import FORMATS

    assert list(FORMATS) == ["auto", "quill", "quotable", "goodreads", "csv", "jsonl", "lines"]
    assert all(d and "\n" not in d for d in FORMATS.values())
    with pytest.raises(TypeError):
        FORMATS["new"] = "read-only"  # type: ignore[index]
