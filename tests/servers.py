"""Servers for tests: a free loopback port, and a subprocess server run until it answers (Chroma, Streamlit)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]



@contextlib.contextmanager
def serve(cmd: list[str], *, health_url: str, log_path: Path, timeout: float = 90, **popen):
    """Run a server process until ``health_url`` answers (else fail the test with its log's tail); stop it after."""
    import pytest

    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, **popen)
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(health_url, timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"{cmd[0]} did not start: {log_path.read_text(errors='replace')[-3000:]}")
                time.sleep(0.3)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()


