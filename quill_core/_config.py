"""Settings: one frozen object, resolved as explicit argument > ``QUILL_*`` environment variable > default.

``QUILL_HOME`` is the one data directory; everything Quill writes lives below it::

    QUILL_HOME/
      kb/<name>.sqlite        quote records of each knowledge base (the source of truth)
      chroma/                 persistent Chroma store (vectors of every (kb, embedder) pair, source passages)
      models/                 converted checkpoints (e.g. the packaged GGUF LM as a normal checkpoint)
      reports/                evaluation reports

| field           | variable               | default                                    |
|-----------------|------------------------|--------------------------------------------|
| home            | QUILL_HOME             | per-user data dir (platformdirs)           |
| kb              | QUILL_KB               | "starter"                                  |
| embedding_model | QUILL_EMBEDDING_MODEL  | "bilingual" (e5 for Chinese, minilm else)  |
| lm_model        | QUILL_LM_MODEL         | "smollm2" (packaged GGUF)                  |
| lm_precision    | QUILL_LM_PRECISION     | "auto" (int8 if faster here; int8/float32) |
| chroma_host     | QUILL_CHROMA_HOST      | "" (embedded persistent client)            |
| chroma_port     | QUILL_CHROMA_PORT      | 8000                                       |
| llm_base_url    | QUILL_LLM_BASE_URL     | "" (local generator)                       |
| llm_model       | QUILL_LLM_MODEL        | "" (local generator)                       |
| llm_api_key     | QUILL_LLM_API_KEY      | ""                                         |
| nli_model       | QUILL_NLI_MODEL        | "" (LM-based attribution)                  |
| threads         | QUILL_THREADS          | 0 (= torch default)                        |
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import ConfigError


# Never let a library reach for a model hub by default; users who want hub models unset this themselves.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _default_home() -> str:
    from platformdirs import user_data_dir

    return user_data_dir("quill", appauthor=False)


@dataclass(frozen=True)
class Settings:
    """Every knob Quill reads. Build with :meth:`Settings.load`; fields are documented in the module docstring."""

    home: Path = field(default_factory=lambda: Path(_default_home()))
    kb: str = "starter"
    embedding_model: str = "bilingual"
    lm_model: str = "smollm2"
    lm_precision: str = "auto"
    chroma_host: str = ""
    chroma_port: int = 8000
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = field(default="", repr=False)
    nli_model: str = ""
    threads: int = 0

    @classmethod
    def load(cls, **overrides: Any) -> "Settings":
        """Resolve every field: a non-None keyword argument wins, then ``QUILL_<FIELD>``, then the default."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            explicit = overrides.pop(f.name, None)
            if explicit is not None:
                raw: Any = explicit
            elif (env := os.environ.get(f"QUILL_{f.name.upper()}")) not in (None, ""):
                raw = env
            else:
                continue
            values[f.name] = _coerce(f.name, f.type, raw)
        if overrides:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(overrides))}")
        return cls(**values)

    def path(self, *parts: str) -> Path:
        """A path below ``home``; parent folders are created."""
        p = self.home.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p


def _coerce(name: str, typ: Any, raw: Any) -> Any:
    typ = str(typ)
    try:
        if "Path" in typ:
            return Path(raw).expanduser()
        if "int" in typ:
            return int(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r} must be {typ}, got {raw!r}") from exc
    return str(raw)
