"""The shared fakes stand in for the core's Protocols: each one is an instance of the Protocol it replaces, and its
methods take the Protocol's parameters (same names, kinds and defaults), so a test written against a fake exercises
the calls the core really makes."""

from __future__ import annotations

import inspect

import pytest

from quill_core._attribution import Entailer
from quill_core._embed import Embedder
from quill_core._generate import Generator
from quill_core._rank import QuoteRecords
from quill_core._retrieve import Catalog, DenseIndex
from quill_core._scorer import Scorer
from tests.fakes import (
    SAMPLE_QUOTES,
    FakeEmbedder,
    FakeEntailer,
    FakeGenerator,
    FakeKB,
    FakeScorer,
    OverlapEntailer,
    PrefillGenerator,
)

CASES = [
    (FakeEmbedder(), Embedder),
    *[pytest.param(FakeScorer(mode=mode), Scorer, id=f"FakeScorer({mode})-Scorer")
      for mode in ("overlap", "flat", "first-word")],
    (FakeGenerator("reply"), Generator),
    (PrefillGenerator(["As Bacon said,"]), Generator),
    (FakeEntailer({"power": 0.9}), Entailer),
    (OverlapEntailer(), Entailer),
    (FakeKB(SAMPLE_QUOTES), Catalog),
    (FakeKB(SAMPLE_QUOTES), QuoteRecords),
]


def methods(protocol: type) -> dict[str, inspect.Signature]:
    """The Protocol's own methods (properties and data members are left to ``isinstance``)."""
    return {name: inspect.signature(member) for name, member in vars(protocol).items()
            if inspect.isfunction(member) and not name.startswith("_")}


def parameters(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in signature.parameters.values() if p.name != "self"]


@pytest.mark.parametrize("fake, protocol", CASES, ids=lambda x: getattr(x, "__name__", type(x).__name__))
def test_each_fake_is_an_instance_of_its_protocol_with_the_same_parameters(fake, protocol):
    assert isinstance(fake, protocol)
    assert methods(protocol), protocol
    for name, signature in methods(protocol).items():
        assert parameters(inspect.signature(getattr(fake, name))) == parameters(signature), name


def test_the_protocol_check_is_not_vacuous():
    assert not isinstance(FakeEmbedder(), Scorer)
    assert not isinstance(FakeScorer(), Generator)
    assert not isinstance(FakeKB(), DenseIndex)
    assert not isinstance(object(), Entailer)


def test_an_unknown_scorer_mode_is_refused():
    with pytest.raises(ValueError, match="unknown mode"):
        FakeScorer(mode="loud")
