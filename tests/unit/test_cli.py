"""The CLI end to end in-process, with a fake embedder injected through ``main(make_quill=...)``."""

import json

import pytest


@pytest.fixture
def run(run_cli):
    return run_cli


@pytest.fixture
def lines_file(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("Knowledge is power. — Francis Bacon\n"
                    "The only thing we have to fear is fear itself. — Franklin D. Roosevelt\n"
                    "Courage is grace under pressure. — Ernest Hemingway\n", encoding="utf-8")
    return path


def test_import_stats_and_suggest_as_json(run, lines_file):
    code, out, _ = run("kb", "import", str(lines_file), "--json")
    assert code == 0 and json.loads(out)["imported"] == 3
    code, out, _ = run("kb", "stats", "--json")
    stats = json.loads(out)
    assert stats["quotes"] == 3 and stats["by_collection"] == {"mine": 3} and stats["authors"] == 3
    assert set(stats) >= {"quotes", "by_lang", "by_collection", "authors"}
    code, out, _ = run("suggest", "--text", "We must not fear fear itself. [Q] Then we act.", "--k", "2",
                      "--ranker", "vanilla", "--json")
    suggestions = json.loads(out)["suggestions"]
    assert code == 0 and len(suggestions) == 2
    assert suggestions[0]["author"] == "Franklin D. Roosevelt"
    assert set(suggestions[0]) >= {"id", "text", "author", "work", "lang", "score", "breakdown"}


def test_reimporting_changes_nothing(run, lines_file):
    run("kb", "import", str(lines_file))
    code, out, _ = run("kb", "import", str(lines_file), "--json")
    assert json.loads(out)["imported"] == 0
    assert json.loads(run("kb", "stats", "--json")[1])["quotes"] == 3


@pytest.mark.parametrize(
    "argv, message",
    [
        (["suggest", "--text", "   "], "empty"),
        (["suggest", "--file", "/nonexistent/para.txt"], "cannot read"),
    ],
)
def test_errors_are_one_line_and_exit_1(run, argv, message):
    code, out, err = run(*argv)
    assert code == 1 and out == ""
    assert err.startswith("quill: error:") and message in err and err.count("\n") == 1


def test_binary_and_non_utf8_files_are_refused(run, tmp_path):
    binary = tmp_path / "b.txt"
    binary.write_bytes(b"\x00\x01\x02abc")
    latin = tmp_path / "l.txt"
    latin.write_bytes("café [Q]".encode("latin-1"))
    assert "binary" in run("suggest", "--file", str(binary))[2]
    assert "UTF-8" in run("suggest", "--file", str(latin))[2]
