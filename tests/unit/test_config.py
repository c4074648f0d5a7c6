from pathlib import Path

import pytest

from quill_core import ConfigError, Settings


def test_priority_argument_over_env_over_default(monkeypatch, tmp_path):
    monkeypatch.delenv("QUILL_KB", raising=False)
    assert Settings.load(home=tmp_path).kb == "starter"
    monkeypatch.setenv("QUILL_KB", "mine")
    assert Settings.load(home=tmp_path).kb == "mine"
    assert Settings.load(home=tmp_path, kb="explicit").kb == "explicit"
    assert Settings.load(home=tmp_path, kb=None).kb == "mine"  # None means "not given" (CLI flags left out)


def test_home_from_env_and_typed_fields(monkeypatch, tmp_path):
    monkeypatch.setenv("QUILL_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("QUILL_CHROMA_PORT", "9999")
    s = Settings.load()
    assert s.home == tmp_path / "data" and s.chroma_port == 9999
    p = s.path("kb", "x.sqlite")
    assert p.parent.is_dir() and p.parent.parent == tmp_path / "data"


def test_bad_values_and_unknown_settings_are_clear_errors(monkeypatch):
    monkeypatch.setenv("QUILL_CHROMA_PORT", "eighty")
    with pytest.raises(ConfigError, match="chroma_port"):
        Settings.load()
    monkeypatch.delenv("QUILL_CHROMA_PORT")
    monkeypatch.setenv("QUILL_PORT", "eighty")  # the Makefile's variable, not a setting: ignored
    assert not hasattr(Settings.load(), "port")
    with pytest.raises(ConfigError, match="colour"):
        Settings.load(colour="red")


def test_settings_are_frozen_and_hide_the_api_key(tmp_path):
    s = Settings.load(home=tmp_path, llm_api_key="sk-secret")
    with pytest.raises(AttributeError):
        s.kb = "other"  # type: ignore[misc]
    assert "sk-secret" not in repr(s)
    assert isinstance(s.home, Path)
