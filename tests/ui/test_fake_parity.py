"""The UI tests drive the pages through FakeQuill: these tests keep that fake honest. If the facade changes a method
the app calls (a parameter, a default, a type), or a page starts calling a method the fake lacks, they fail."""

from __future__ import annotations

import inspect
import re
import typing

from quill_core import Quill
from tests.ui.conftest import ROOT, FakeQuill


def public_methods(cls: type) -> dict[str, typing.Callable]:
    return {name: f for name, f in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def test_every_fake_method_is_a_facade_method_with_the_same_signature_and_types():
    fake, real = public_methods(FakeQuill), public_methods(Quill)
    assert set(fake) <= set(real), f"not on Quill: {sorted(set(fake) - set(real))}"
    for name, method in fake.items():
        ours, theirs = inspect.signature(method), inspect.signature(real[name])
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
               [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name
        assert typing.get_type_hints(method) == typing.get_type_hints(real[name]), name


def test_every_facade_call_of_the_app_is_faked():
    sources = [ROOT / "ui.py", ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    called = {m for path in sources for m in re.findall(r"\bq\.([a-z]\w*)\(", path.read_text(encoding="utf-8"))}
    assert called, "the pages call the facade as q.method(...)"
    assert called <= set(public_methods(Quill)), f"not on Quill: {sorted(called - set(public_methods(Quill)))}"
    assert called <= set(public_methods(FakeQuill)), f"not faked: {sorted(called - set(public_methods(FakeQuill)))}"
