"""Pinned npm package tarballs, offline first: a cached file checked against npm's integrity hash, else
``npm pack`` into a temporary folder under the same directory, checked, then moved into place.

Nothing is written outside the download directory the caller names (npm's own cache included: it goes to the
temporary folder, which is removed afterwards), and a failed or unverified download leaves no file behind.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .._errors import InputError, NotFoundError


FETCH_TIMEOUT_S = 900
"""How long ``npm pack`` may take (an 85 MB package on a slow line)."""


def integrity(path: Path) -> str:
    """npm's integrity string of a file: ``sha512-`` and the base64 SHA-512 digest."""
    digest = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode("ascii")


def tarball_name(name: str, version: str) -> str:
    """The file name ``npm pack`` gives a package's tarball (a scope's ``@`` dropped, ``/`` made ``-``)."""
    return f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"


def fetch_tarball(directory: Path, *, name: str, version: str, expected: str, npm: str = "npm",
                  timeout_s: float = FETCH_TIMEOUT_S) -> Path:
    """The verified tarball of ``name@version`` in ``directory``: the cached file when its integrity is
    ``expected``, else a fresh ``npm pack`` (a cached file that fails the check is replaced).

    Raises NotFoundError when npm is missing or the download fails, InputError when the downloaded file does not
    match ``expected``; either way no partial file is left."""
    directory = Path(directory)
    target = directory / tarball_name(name, version)
    if target.is_file():
        if integrity(target) == expected:
            return target
        target.unlink()  # damaged or replaced: fetch it again
    spec = f"{name}@{version}"
    exe = shutil.which(npm)
    if exe is None:
        raise NotFoundError(f"npm is not installed: cannot download {spec} (install Node.js, or put "
                            f"{target.name} into {directory})")
    directory.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".npm-pack-", dir=directory))
    try:
        env = dict(os.environ, npm_config_cache=str(work / "cache"), npm_config_update_notifier="false",
                   npm_config_fund="false", npm_config_audit="false")
        try:
            done = subprocess.run([exe, "pack", spec, "--pack-destination", str(work)], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise NotFoundError(f"downloading {spec} with npm timed out after {timeout_s:.0f} s") from None
        except OSError as exc:
            raise NotFoundError(f"npm could not be started to download {spec}: {exc}") from None
        packed = work / target.name
        if done.returncode != 0 or not packed.is_file():
            lines = [ln.strip() for ln in (done.stderr or done.stdout or "").splitlines() if ln.strip()]
            detail = next((ln for ln in reversed(lines) if "error" in ln.lower()), lines[-1] if lines else "")
            raise NotFoundError(f"npm could not download {spec} (exit code {done.returncode})"
                                + (f": {detail}" if detail else ""))
        got = integrity(packed)
        if got != expected:
            raise InputError(f"the downloaded {target.name} failed its integrity check (got {got[:24]}..., "
                             f"expected {expected[:24]}...): not used")
        os.replace(packed, target)
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)
