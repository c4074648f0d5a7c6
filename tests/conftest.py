"""Shared fixtures: deterministic fakes (embedder, LM-free resources) and throw-away stores.

Each test gets its own QUILL_HOME under tmp_path, so nothing touches a user's data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from quill_core import Quill, Settings
from tests.fakes import SAMPLE_QUOTES, FakeEmbedder
from tests.servers import free_port, serve


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(home=tmp_path / "home")


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def quill(settings: Settings, fake_embedder: FakeEmbedder) -> Quill:
    """A Quill over a tmp knowledge base holding SAMPLE_QUOTES, a fake embedder and a throw-away Chroma store."""
    q = Quill(settings, embedder=fake_embedder)
    q.kb.upsert(SAMPLE_QUOTES)
    return q


@pytest.fixture
def run_cli(tmp_path, capsys):
    """Run ``quill ARGS`` in-process over a tmp home with the fake embedder; returns (exit code, stdout, stderr)."""
    from quill_core._cli import main

    def _run(*argv):
        code = main(["--home", str(tmp_path / "home"), *argv], make_quill=lambda s: Quill(s, embedder=FakeEmbedder()))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real Chroma server on a free loopback port (``chroma run``), stopped at the end of the session."""
    import os
    import shutil
    import sys

    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    port = free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    with serve([exe, "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
               health_url=f"http://127.0.0.1:{port}/api/v2/heartbeat", log_path=path / "server.log", timeout=60,
               env={**os.environ, "ANONYMIZED_TELEMETRY": "False"}):
        yield ("127.0.0.1", port)


@pytest.fixture(scope="session")
def tiny_lm():
    """``(model, tokenizer)`` of :func:`tests.tinymodels.tiny_causal_lm`, built once per session and shared: do not
    change the model (wrap it, or ``copy.deepcopy`` it first)."""
    from tests.tinymodels import tiny_causal_lm

    return tiny_causal_lm()
