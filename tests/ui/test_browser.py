"""The real app in a real browser: ``streamlit run app.py`` with the packaged models over a small knowledge base,
driven by Playwright through Debian's Chromium. Screenshots of every page land in ``tests/artifacts/``.

Skipped (with the reason) only when ``/usr/bin/chromium`` is absent; ``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PlaywrightTimeout = pytest.importorskip("playwright.sync_api").TimeoutError

from tests.servers import free_port, serve
from tests.ui.conftest import ROOT, XSS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SLOW_MS = 240_000  # first calls load the packaged models on a shared 2-core machine

# A small knowledge base in Quill's own JSONL format: each paragraph below has one clear best match.
QUOTES = [
    {"text": "The only thing we have to fear is fear itself.", "author": "Franklin D. Roosevelt",
     "topics": ["fear", "courage"]},
    {"text": "Knowledge is power.", "author": "Francis Bacon", "topics": ["knowledge"]},
    {"text": "A journey of a thousand miles begins with a single step.", "author": "Lao Tzu",
     "topics": ["beginnings"]},
    {"text": "The unexamined life is not worth living.", "author": "Socrates", "topics": ["life"]},
    {"text": "Music is the universal language of mankind.", "author": "Henry Wadsworth Longfellow",
     "topics": ["music"]},
    {"text": "An apple a day keeps the doctor away.", "author": "", "topics": ["health"]},
    {"text": "Time is money.", "author": "Benjamin Franklin", "topics": ["time", "work"]},
    {"text": "Courage is grace under pressure.", "author": "Ernest Hemingway", "topics": ["courage"]},
    {"text": "To be, or not to be, that is the question.", "author": "William Shakespeare", "work": "Hamlet",
     "topics": ["life"]},
    {"text": "Imagination is more important than knowledge.", "author": "Albert Einstein",
     "topics": ["imagination"]},
    {"text": "学而不思则罔，思而不学则殆。", "author": "孔子", "work": "论语", "lang": "zh",
     "topics": ["学习"]},
    {"text": "千里之行，始于足下。", "author": "老子", "lang": "zh", "topics": ["开始"]},
]
# (paragraph, the author of the quotation that must come first): four sessions ask these at once.
SESSIONS = [
    ("Everyone in the trading room was terrified, and the fear itself spread faster than the losses. [Q]",
     "Franklin D. Roosevelt"),
    ("The orchestra played and nobody needed a translator; every listener understood the melody. [Q]",
     "Henry Wadsworth Longfellow"),
    ("Eat fruit every morning and you will rarely need to see a physician. [Q]", ""),
    ("The longest trip starts with one small step out of the door. [Q]", "Lao Tzu"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on a free loopback port over a tmp QUILL_HOME holding the small knowledge base above."""
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    home = tmp_path_factory.mktemp("quill-home")
    data = home / "fixture.jsonl"
    data.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in QUOTES) + "\n", encoding="utf-8")
    env = {**os.environ, "QUILL_HOME": str(home)}
    subprocess.run([sys.executable, "-m", "quill_core", "--home", str(home), "kb", "import", str(data),
                    "--collection", "fixture"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with serve([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                "--server.address", "127.0.0.1", "--server.port", str(port)],
               health_url=f"{url}/_stcore/health", log_path=home / "streamlit.log", cwd=ROOT, env=env):
        yield url
    assert "Traceback" not in (home / "streamlit.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def open_page(browser, request):
    """``open_page(dialogs)``: a fresh browser session; every page of a failed test is saved as a screenshot."""
    pages = []

    def _open(dialogs: list[str]):
        page = browser.new_context(viewport={"width": 1360, "height": 1000}).new_page()
        page.set_default_timeout(SLOW_MS)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        pages.append(page)
        return page

    yield _open
    failed = getattr(request.node, "rep_call", None)
    for i, page in enumerate(pages):
        if failed is not None and failed.failed:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"failed-{request.node.name}-{i}.png"), full_page=True)
        page.context.close()


_STATE = "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"


def _idle(page) -> None:
    """Wait until Streamlit has finished the run an action started (and no stale element is left)."""
    try:  # the run may start a moment after the click
        page.wait_for_function(f"() => ({_STATE})() === 'running'", timeout=2_000)
    except PlaywrightTimeout:
        pass
    page.wait_for_function(f"() => ({_STATE})() === 'notRunning' && "
                           "!document.querySelector('[data-stale=\"true\"]')", timeout=SLOW_MS)
    page.wait_for_timeout(300)


def _load_sample(page, button: str, area: str, expected: str) -> None:
    """Click a sample button and wait until its text is in the text area (a click during the rerun reads it empty)."""
    page.locator(f".st-key-{button} button").click()
    _idle(page)
    page.wait_for_function(f"() => (document.querySelector('.st-key-{area} textarea') || {{}}).value?.includes("
                           f"{expected!r})", timeout=SLOW_MS)


def _shoot(page, name: str) -> None:
    """A screenshot of the whole page (Streamlit scrolls inside its main block, so grow the viewport first)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
                           "[data-testid=\"stMainBlockContainer\"]')].map(e => e.scrollHeight), 800)")
    page.set_viewport_size({"width": 1360, "height": min(int(height) + 80, 7000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": 1360, "height": 1000})


def _type(page, key: str, text: str) -> None:
    box = page.locator(f".st-key-{key} textarea")
    box.fill(text)
    box.press("Control+Enter")  # commit the value before anything else is clicked
    _idle(page)


def _suggest(page, paragraph: str) -> None:
    _type(page, "paragraph", paragraph)
    page.locator(".st-key-suggest button").click()
    page.locator(".st-key-card-0").wait_for()
    _idle(page)


def test_write_suggest_insert_and_every_page(server, open_page):
    dialogs: list[str] = []
    page = open_page(dialogs)
    # A deep link opened first must still get the app's navigation and styles.
    page.goto(f"{server}/library")
    page.get_by_role("heading", name="Library").wait_for()
    _idle(page)
    assert page.locator("[data-testid='stMetricValue']").first.inner_text() == f"{len(QUOTES)}"
    _shoot(page, "library")

    page.get_by_role("link", name="Write").click()
    page.get_by_role("heading", name="Write").wait_for()
    _suggest(page, SESSIONS[0][0])
    cards = page.locator("[class*='st-key-card-']")
    assert cards.count() >= 3
    assert "fear itself" in cards.first.inner_text()
    assert cards.first.locator("[data-testid='stVegaLiteChart'], .vega-embed").count() >= 1  # breakdown chart
    _shoot(page, "write")

    page.locator(".st-key-insert-0 button").click()
    mark = page.locator(".st-key-preview mark")
    mark.wait_for()
    _idle(page)
    assert "fear itself" in mark.inner_text()
    _shoot(page, "write_insert")

    page.get_by_role("link", name="Verify").click()
    page.get_by_role("heading", name="Verify").wait_for()
    _idle(page)
    # the check must not start before the sample reached the text area (else it reads an empty draft)
    _load_sample(page, "sample_draft", "draft", "Roosevelt")
    page.locator(".st-key-verify_run button").click()
    page.locator(".st-key-ver-0").wait_for()
    _idle(page)
    verdicts = page.locator("[class*='st-key-ver-']").all_inner_texts()
    assert "verified" in verdicts[0] and "misquoted" in verdicts[1] and "William Shakespeare" in verdicts[1]
    assert "misattributed" in verdicts[2] and "Albert Einstein" in verdicts[2]
    assert page.locator(".st-key-draft-view mark").count() == len(verdicts)
    _shoot(page, "verify")

    page.get_by_role("link", name="Evaluate").click()
    page.get_by_role("heading", name="Evaluate").wait_for()
    _idle(page)
    page.locator(".st-key-eval_limit input").fill("2")  # two rows of the bundled sample keep the LM rankers quick
    page.locator(".st-key-eval_limit input").press("Enter")
    _idle(page)
    page.locator(".st-key-eval_run button").click()
    page.get_by_role("heading", name="Results").wait_for()
    _idle(page)
    assert page.locator(".st-key-eval_download button, .st-key-eval_download a").count() == 1
    _shoot(page, "evaluate")
    assert dialogs == []


def test_chinese_sample_gives_chinese_suggestions_and_any_language_is_one_click_away(server, open_page):
    dialogs: list[str] = []
    page = open_page(dialogs)
    page.goto(f"{server}/library")
    page.get_by_role("heading", name="Library").wait_for()
    _idle(page)
    zh = sum(1 for q in QUOTES if q.get("lang") == "zh")
    assert f"Chinese: {zh}" in page.locator(".st-key-lib_by_lang").inner_text()  # counts per language

    page.get_by_role("link", name="Write").click()
    page.get_by_role("heading", name="Write").wait_for()
    _idle(page)
    _load_sample(page, "sample_zh", "paragraph", "以后")
    page.locator(".st-key-suggest button").click()
    page.locator(".st-key-card-0").wait_for()
    _idle(page)
    cards = page.locator("[class*='st-key-card-']").all_inner_texts()
    assert len(cards) == zh  # the paragraph's language by default: every Chinese quote and no English one
    assert all(re.search(r"[\u4e00-\u9fff]", card) and "Chinese" in card for card in cards), cards
    assert page.locator(".st-key-card-0 [data-testid='stVegaLiteChart'], .st-key-card-0 .vega-embed").count() >= 1
    _shoot(page, "write_zh")  # CI installs a CJK font: the cards show characters, not boxes

    page.locator(".st-key-quote_lang button", has_text="Any language").click()
    _idle(page)
    page.locator(".st-key-suggest button").click()
    _idle(page)
    page.locator(".st-key-card-0").wait_for()
    cards = page.locator("[class*='st-key-card-']").all_inner_texts()
    assert len(cards) == 5 and any("English" in card for card in cards), cards
    assert dialogs == []


def test_html_in_a_paragraph_never_runs(server, open_page):
    dialogs: list[str] = []
    page = open_page(dialogs)
    page.goto(server)
    page.get_by_role("heading", name="Write").wait_for()
    page.locator(".st-key-drafts input").fill("1")  # one draft is enough here: this test is about escaping
    page.locator(".st-key-drafts input").press("Enter")
    _idle(page)
    _suggest(page, XSS)
    page.locator(".st-key-insert-0 button").click()
    page.locator(".st-key-preview mark").wait_for()
    _idle(page)
    preview = page.locator(".st-key-preview").inner_text()
    assert "<img src=x onerror=alert(1)>" in preview and "<script>" in preview  # shown as text
    assert page.locator(".st-key-preview img, .st-key-preview script").count() == 0
    _shoot(page, "write_xss")
    assert dialogs == []


def test_four_sessions_at_once_each_get_their_own_results(server, open_page):
    dialogs: list[str] = []
    pages = [open_page(dialogs) for _ in SESSIONS]
    for page in pages:
        page.goto(server)
    for page, (paragraph, _) in zip(pages, SESSIONS):
        page.get_by_role("heading", name="Write").wait_for()
        _type(page, "paragraph", paragraph)
    for page in pages:  # four runs in flight on the one shared Quill
        page.locator(".st-key-suggest button").click()
    for page, (paragraph, author) in zip(pages, SESSIONS):
        page.locator(".st-key-card-0").wait_for()
        _idle(page)
        first = page.locator(".st-key-card-0").inner_text()
        assert (author or "Unknown author") in first, (paragraph, first)
        assert page.locator(".st-key-paragraph textarea").input_value() == paragraph
    assert dialogs == []
