"""UI test fixtures: a deterministic stand-in for the ``Quill`` facade, injected through ``ui.make_quill``.

AppTest runs the app in this process, so replacing the factory of the cached ``ui.quill()`` (and clearing its cache)
is enough for every page to talk to the fake. The fake returns the core's real result types and validates input with
the core's own ``parse_query``, so the pages see exactly what they would see from the real facade.
"""

from __future__ import annotations

import csv
import io
import re
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pytest

import ui
from quill_core import (
    BrowsePage,
    EvalReport,
    FilterOptions,
    Filters,
    ImportFormatError,
    ImportReport,
    IndexProgress,
    RANKERS,
    InsertResult,
    KBStats,
    Provenance,
    Query,
    Quote,
    Settings,
    SourceInfo,
    Span,
    Suggestion,
    Verification,
    Weights,
    locate,
    parse_query,
)
from quill_core._evaluate import RankerMetrics, load_dataset
from quill_core._names import author_key
from quill_core._query import quote_filters
from quill_core._types import Criterion, Draft, Progress, RejectedRow
from quill_core._verify import word_diff
from tests.fakes import CHINESE_QUOTES, SAMPLE_QUOTES, FakeKB

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
XSS = '<img src=x onerror=alert(1)> and <script>alert("x")</script> [Q] **bold** $x$ :red[red]'


def raw_markup(markdown: str) -> list[str]:
    """Markup a Markdown string would act on: '<' or '](' or ':red[' not preceded by a backslash escape."""
    return re.findall(r"(?<!\\)<|(?<!\\)\]\(|(?<!\\):red\[", markdown)


def shown(markdown: str) -> str:
    """The text a person reads from escaped Markdown (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def errors(at) -> list[str]:
    return [shown(e.value) for e in at.error]


class FakeSources:
    """The source library: bundled names become SourceInfo entries; ``text`` holds what a provenance looks in."""

    def __init__(self) -> None:
        self.added: dict[str, SourceInfo] = {}
        self.text = ""

    def list(self) -> list[SourceInfo]:
        return [self.added[n] for n in sorted(self.added)]


class FakeQuill:
    """What the pages call on ``Quill``, deterministic and instant. ``calls`` records (method, details)."""

    def __init__(self, settings: Settings, quotes: list[Quote] | None = None) -> None:
        self.settings = settings
        self.kb = FakeKB(list([*SAMPLE_QUOTES, *CHINESE_QUOTES] if quotes is None else quotes))
        self.calls: list[tuple[str, Any]] = []
        self.fail: dict[str, Exception] = {}  # method name -> exception to raise
        self.sources = FakeSources()
        self.last_suggest: dict[str, Any] = {}
        self.previews: list[list[str]] = []
        self.index_progress = IndexProgress(fraction=1.0, message="the index is up to date")  # quote ids of each retrieval preview handed to the page
        self._lock = threading.Lock()

    def _record(self, name: str, detail: Any = None) -> None:
        with self._lock:
            self.calls.append((name, detail))
        if name in self.fail:
            raise self.fail[name]

    def stats(self) -> KBStats:
        return self.kb.stats()

    def filter_options(self) -> FilterOptions:
        stats = self.kb.stats()
        return FilterOptions(langs=tuple(sorted(stats.by_lang)), authors=tuple(self.kb.authors()),
                             topics=tuple(self.kb.topics()))

    def browse(self, *, search: str = "", author: str = "", lang: str = "", topic: str = "", collection: str = "",
               limit: int = 20, offset: int = 0) -> BrowsePage:
        filters = {"search": search, "author": author, "lang": lang, "topic": topic, "collection": collection}
        return BrowsePage(quotes=tuple(self.kb.browse(**filters, limit=limit, offset=offset)),
                          total=self.kb.count(**filters), offset=offset)

    def list_sources(self) -> list[SourceInfo]:
        return self.sources.list()

    def index(self, *, progress: Progress | None = None) -> int:
        self._record("index")
        return 0

    def index_in_background(self) -> IndexProgress:
        self._record("index_in_background")
        return self.indexing()

    def indexing(self) -> IndexProgress:
        return self.index_progress

    def build(self, tier: str = "starter", *, index: bool = True, progress: Progress | None = None) -> ImportReport:
        self._record("build", (tier, index))
        extra = [Quote("Well begun is half done.", author="Aristotle", collections=(f"{tier}-tier",), topics=("work",)),
                 Quote("千里之行，始于足下。", author="老子", lang="zh", collections=(f"{tier}-tier",))]
        for i in range(4):
            if progress:
                progress((i + 1) / 4, f"step {i + 1} of 4")
        new = self.kb.upsert(extra)
        return ImportReport(source=tier, format="tier", read=len(extra), imported=new, merged=len(extra) - new)

    def import_file(self, path: str | Path, *, format: str = "auto", mapping: Mapping[str, str] | None = None,
                    collection: str | None = None, progress: Progress | None = None) -> ImportReport:
        """CSV ``quote,author`` with a header; a row without both fields is rejected with its line number."""
        self._record("import_file", (Path(path).name, format, collection))
        text = Path(path).read_text(encoding="utf-8")
        if not text.startswith("quote,"):
            raise ImportFormatError(f"{Path(path).name}: cannot detect the format (expected a 'quote' column)")
        name = collection or Path(path).stem
        good, rejected = [], []
        for line, row in enumerate(csv.reader(io.StringIO(text)), start=1):
            if line == 1:
                continue
            if len(row) != 2 or not row[0].strip():
                rejected.append(RejectedRow(line=line, reason=f"expected 2 fields, got {len(row)}"))
                continue
            good.append(Quote(row[0], author=row[1], collections=(name,)))
        if progress:
            progress(1.0, "done")
        new = self.kb.upsert(good)
        return ImportReport(source=Path(path).name, format="csv", read=len(good) + len(rejected), imported=new,
                            merged=len(good) - new, rejected=tuple(rejected))

    def suggest(self, paragraph: str | Query, *, k: int = 5, ranker: str = "default", filters: Filters | None = None,
                weights: Weights | Mapping[str, float] | None = None, candidates: int = 20,
                quote_lang: str = "auto", preview: Callable[[list[Suggestion]], None] | None = None) -> list[Suggestion]:
        """Quotes ranked by shared words (Chinese: shared characters), filtered as the core filters them (the
        quotes' language resolved by the core's own rule); ``calls`` records the filters retrieval would get."""
        query = paragraph if isinstance(paragraph, Query) else parse_query(paragraph)
        filters = quote_filters(query, filters, quote_lang, holds=lambda lang: lang in self.kb.stats().by_lang)
        self.last_suggest = {"ranker": ranker, "weights": weights, "k": k, "quote_lang": quote_lang}
        self._record("suggest", filters)
        words = _tokens(query.text)
        out = []
        for q in self.kb.quotes.values():
            if filters.lang and q.lang != filters.lang:
                continue
            if filters.author and author_key(filters.author) != author_key(q.author):
                continue
            if filters.topic and filters.topic not in q.topics:
                continue
            overlap = len(words & _tokens(q.text))
            sim = min(1.0, 0.2 + 0.15 * overlap)
            crit = (Criterion("matching", sim, raw=sim, weight=0.5, note="shared words"),
                    Criterion("fluency", 0.7, raw=12.5, weight=0.3, note="perplexity 12.5"),
                    Criterion("novelty", 0.4, raw=None, weight=0.2))
            out.append(Suggestion(quote=q, score=sum(c.value * c.weight for c in crit), breakdown=crit,
                                  similarity=sim, why=f"shares {overlap} words with your paragraph",
                                  provenance=self._provenance(q)))
        if preview is not None and RANKERS[ranker].needs_lm:  # retrieval order first, as the core does
            self.previews.append([s.quote.id for s in sorted(out, key=lambda s: s.quote.id)[:k]])
            preview(sorted(out, key=lambda s: s.quote.id)[:k])
        out.sort(key=lambda s: (-s.score, s.quote.id))
        return out[:k]

    def insert(self, paragraph: str, quote: Quote | str, *, author: str | None = None, drafts: int = 4,
               progress: Progress | None = None) -> InsertResult:
        text = quote.text if isinstance(quote, Quote) else str(quote)
        self._record("insert", (text, drafts))
        query = parse_query(paragraph)
        for i in range(drafts):
            if progress:
                progress((i + 1) / drafts, f"draft {i + 1} of {drafts}")
        chinese = query.lang == "zh"
        if chinese:
            lead = f"正如{author}所说：“" if author else "古人云：“"
        else:
            lead = f"As {author} put it, “" if author else "As the saying goes, “"
        sentence = f"{lead}{text}”"
        before = query.before.rstrip()
        space = "" if chinese else " "
        glue = space if before else ""
        new = before + glue + sentence + (space + query.after.lstrip() if query.after.strip() else "")
        start = len(before) + len(glue) + len(lead)
        return InsertResult(paragraph=new, sentence=sentence, quote_span=(start, start + len(text)),
                            drafts=(Draft(sentence, fluency=0.8, attribution=0.9),
                                    Draft("A rejected try.", fluency=0.1, rejected_reason="not fluent")))

    def verify(self, draft: str, *, threshold: float = 75.0, k: int = 8) -> list[Verification]:
        """Quotations are the text between “ and ”; exact KB text is verbatim, 3+ shared words a misquote."""
        self._record("verify", len(draft))
        out, pos = [], 0
        while (a := draft.find("“", pos)) >= 0 and (b := draft.find("”", a + 1)) > a:
            written = draft[a + 1:b]
            words = set(written.lower().split())
            best = max(self.kb.quotes.values(), key=lambda q: len(words & set(q.text.lower().split())))
            if best.text == written:
                v = Verification(a + 1, b, written, "verbatim", best.text, best.author, score=100.0, quote_id=best.id)
            elif len(words & set(best.text.lower().split())) >= 3:
                v = Verification(a + 1, b, written, "misquoted", best.text, best.author, score=80.0,
                                 diff=word_diff(best.text, written), quote_id=best.id)
            else:
                v = Verification(a + 1, b, written, "unknown", note="not in the knowledge base")
            out.append(v)
            pos = b + 1
        return out

    def locate(self, quote: str, text: str, *, threshold: float = 90) -> list[Span]:
        self._record("locate", quote)
        return locate(quote, text, threshold=threshold)

    def add_source(self, name_or_path: str | Path, *, author: str = "", title: str = "", index: bool = True,
                   progress: Progress | None = None) -> SourceInfo:
        self._record("add_source", (str(name_or_path), author, title))
        if progress:
            progress(1.0, "indexed")
        name = Path(str(name_or_path)).stem.lower()
        info = SourceInfo(name=name, title=title or name, origin="file", docs=1, chars=100, passages=1,
                          authors=(author,) if author else ())
        self.sources.added[name] = info
        return info

    def _provenance(self, quote: Quote) -> Provenance | None:
        spans = locate(quote.text, self.sources.text) if self.sources.text else []
        if not spans:
            return None
        return Provenance("speeches", "fdr", "First Inaugural Address", "Franklin D. Roosevelt", 0,
                          len(self.sources.text), spans[0], "paragraph 3")

    def evaluate(self, dataset: str | Path, *, rankers: Sequence[str] | None = None, limit: int = 0, lang: str = "",
                 kb: str = "none", candidates: int = 20, weights: Weights | Mapping[str, float] | None = None,
                 progress: Progress | None = None) -> EvalReport:
        path = dataset
        rows = load_dataset(path, limit=limit, lang=lang)  # the core's own validation of the set
        self._record("evaluate", (Path(path).name, tuple(rankers or ()), limit, lang, kb))
        names = list(rankers or ["default"])
        if progress:
            progress(1.0, "done")
        metrics = {n: RankerMetrics(mrr=0.5 + 0.1 * i, hit1=0.4 + 0.1 * i, hit3=0.6, hit5=0.7, ndcg3=0.55, n=len(rows),
                                    by_lang={"en": RankerMetrics(0.6, 0.5, 0.7, 0.8, 0.6, n=len(rows))})
                   for i, n in enumerate(names)}
        return EvalReport(rankers=metrics, dataset=str(path), rows=len(rows), kb="fake", embedder="fake", lm="",
                          candidates=20, weights={}, seconds=0.1)


def _tokens(text: str) -> set[str]:
    """The fake's words: whitespace-separated words, plus every Han character (Chinese has no spaces)."""
    return set(text.lower().replace(".", " ").split()) | set(re.findall(r"[\u4e00-\u9fff]", text))


@pytest.fixture
def fake(tmp_path, monkeypatch) -> FakeQuill:
    """The FakeQuill every page of the app will get from ``ui.quill()``."""
    settings = Settings.load(home=tmp_path / "home")
    fq = FakeQuill(settings)
    monkeypatch.setenv("QUILL_HOME", str(settings.home))
    monkeypatch.setattr(ui, "make_quill", lambda s: fq)
    ui.quill.clear()
    yield fq
    ui.quill.clear()


@pytest.fixture
def server_like_pages(monkeypatch) -> None:
    """AppTest forgets before every run that ``st.navigation`` was called (a server remembers it for the process),
    so with our ``pages/`` folder each rerun would start in Streamlit's old folder-based mode. Its reset lands on
    this subclass instead; Streamlit reads the flag from PagesManager itself."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    class ServerLikePagesManager(PagesManager):
        pass

    monkeypatch.setattr(app_test, "PagesManager", ServerLikePagesManager)


@pytest.fixture
def open_app(fake, server_like_pages):
    """``open_app("pages/verify.py")`` runs the app and switches to that page (None: the default Write page)."""
    from streamlit.testing.v1 import AppTest

    def _open(page: str | None = None):
        at = AppTest.from_file(APP, default_timeout=30)
        at.run()
        if page:
            at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return _open


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item (the browser test saves screenshots of a failed test)."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
