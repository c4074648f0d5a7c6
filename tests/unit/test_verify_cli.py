"""`quill verify`, `quill locate` and `quill sources` end to end in-process (fake embedder injected)."""

import json

import pytest


@pytest.fixture
def run(run_cli):
    return run_cli


def test_verify_reports_misquote_and_misattribution_as_json(run, tmp_path):
    quotes = tmp_path / "kb.txt"
    quotes.write_text("Imagination is more important than knowledge. — Albert Einstein\n"
                      "Be yourself; everyone else is already taken. — Oscar Wilde\n", encoding="utf-8")
    assert run("kb", "import", str(quotes), "--json")[0] == 0
    draft = tmp_path / "draft.md"
    draft.write_text('As Einstein said, "Imagination is more valuable than knowledge." '
                     "Mark Twain wrote: “Be yourself; everyone else is already taken.”", encoding="utf-8")
    code, out, _ = run("verify", "--file", str(draft), "--json")
    assert code == 0
    first, second = json.loads(out)["quotes"]
    assert (first["verdict"], first["author"], first["claimed_author"]) == ("misquoted", "Albert Einstein", "Einstein")
    assert {"op": "replace", "canonical": "important", "draft": "valuable"} in first["diff"]
    assert (second["verdict"], second["author"], second["claimed_author"]) == ("misattributed", "Oscar Wilde",
                                                                             "Mark Twain")
    text = draft.read_text(encoding="utf-8")
    assert text[second["start"] : second["end"]] == second["text"]
    code, out, _ = run("verify", "--text", "Mark Twain wrote: “Be yourself; everyone else is already taken.”")
    assert code == 0 and "MISATTRIBUTED" in out and "Oscar Wilde" in out


def test_locate_prints_spans_and_the_closest_miss(run):
    code, out, _ = run("locate", "--quote", "to be or not to be", "--text", "Hamlet: To be, or not to be!", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["spans"] == [{"start": 8, "end": 27, "score": 97.3, "matched": "To be, or not to be",
                                 "verdict": "near"}]
    code, out, _ = run("locate", "--quote", "completely different words", "--text", "Hamlet: To be", "--json")
    assert code == 0 and json.loads(out)["spans"] == [] and json.loads(out)["verdict"] == "not_found"
    code, _, err = run("locate", "--quote", "x", "--text", "y", "--threshold", "150")
    assert code == 1 and "threshold" in err


def test_sources_add_and_list(run, tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Some notes.\n\nAll we have to decide is what to do with the time that is given us.\n",
                    encoding="utf-8")
    code, out, _ = run("sources", "add", str(path), "--author", "Gandalf", "--no-index", "--json")
    assert code == 0 and json.loads(out)["name"] == "notes"
    code, out, _ = run("sources", "list", "--json")
    assert [s["name"] for s in json.loads(out)["sources"]] == ["notes"]
    code, _, err = run("sources", "add", str(tmp_path / "nope.txt"))
    assert code == 1 and "no such file" in err
