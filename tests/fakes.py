"""Deterministic fakes shared by the tests: test modules import them from here (or get them from conftest fixtures),
never from one another.

- Stand-ins for the core's Protocols (``tests/unit/test_fakes.py`` checks that they conform): :class:`FakeEmbedder`
  (``Embedder``), :class:`FakeKB` (``Catalog`` and ``QuoteRecords``), :class:`FakeScorer` (``Scorer``),
  :class:`FakeGenerator` and :class:`PrefillGenerator` (``Generator``), :class:`FakeEntailer` and
  :class:`OverlapEntailer` (``Entailer``).
- Other stand-ins: :class:`FakeStore` (a ``VectorStore``), :class:`ChatEndpoint` (an OpenAI-compatible server).
- ``SAMPLE_QUOTES`` and ``CHINESE_QUOTES`` (more Chinese lines for the app). Tiny real models are in ``tests/tinymodels.py``, test servers in ``tests/servers.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from typing import Iterable, Literal, get_args

import numpy as np

from quill_core import KBStats, Quote
from quill_core._scorer import NLL, PassageNLL
from quill_core._names import author_key
from quill_core._text import key


class FakeEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words (or CJK characters) are close; no model needed.
    ``name`` keys its vector collection (give another one to stand in for a second embedder)."""

    dim = 256

    def __init__(self, *, name: str = "fake") -> None:
        self.name = name
        self.calls = 0

    def embed_batch(self, texts):
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.lower())
            for tok in tokens or ["<empty>"]:
                h = int(hashlib.md5(tok.encode()).hexdigest(), 16)
                out[row, h % self.dim] += 1.0 if (h >> 8) % 2 else -1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out

    def embed_queries(self, texts):
        return self.embed_batch(texts)


class FakeKB:
    """An in-memory knowledge base with the calls the core and the pages make of ``KnowledgeBase``: lookups, filters,
    statistics, browsing, merging upserts (a known quote gains the collections it lacked) and cached scores."""

    name = "fake"

    def __init__(self, quotes=()) -> None:
        self.quotes: dict[str, Quote] = {}
        self.revision = 0
        self.upsert(list(quotes))

    def __len__(self) -> int:
        return len(self.quotes)

    def iter_quotes(self):
        return iter(list(self.quotes.values()))

    def get(self, ids):
        return [self.quotes[i] for i in ids if i in self.quotes]

    def by_key(self, text):
        return [q for q in self.quotes.values() if key(q.text) == key(text)]

    def ids(self, *, author="", lang="", topic=""):
        return [q.id for q in self._match("", author, lang, topic, "")]

    def upsert(self, quotes) -> int:
        new = 0
        for q in quotes:
            old = self.quotes.get(q.id)
            new += old is None
            if old is not None:
                q = replace(old, collections=tuple(dict.fromkeys(old.collections + q.collections)))
            self.quotes[q.id] = q
        self.revision += 1
        return new

    def set_scores(self, scores) -> None:
        for qid, (ppl, popularity) in scores.items():
            if qid in self.quotes:
                self.quotes[qid] = replace(self.quotes[qid], ppl=ppl, popularity=popularity)

    def stats(self) -> KBStats:
        by_lang: dict[str, int] = {}
        by_coll: dict[str, int] = {}
        for q in self.quotes.values():
            by_lang[q.lang] = by_lang.get(q.lang, 0) + 1
            for c in q.collections:
                by_coll[c] = by_coll.get(c, 0) + 1
        return KBStats(quotes=len(self.quotes), by_lang=by_lang, by_collection=by_coll,
                       authors=len({author_key(q.author) for q in self.quotes.values()}))

    def topics(self, *, limit: int = 0) -> list[str]:
        names = sorted({t for q in self.quotes.values() for t in q.topics})
        return names[:limit] if limit > 0 else names

    def authors(self, *, limit: int = 0) -> list[str]:
        names = sorted({q.author for q in self.quotes.values() if q.author})
        return names[:limit] if limit > 0 else names

    def _match(self, search, author, lang, topic, collection):
        return [q for q in self.quotes.values()
                if search.lower() in q.text.lower()
                and (not author or author_key(author) == author_key(q.author))
                and (not lang or q.lang == lang) and (not topic or topic in q.topics)
                and (not collection or collection in q.collections)]

    def browse(self, *, search="", author="", lang="", topic="", collection="", limit=50, offset=0):
        return self._match(search, author, lang, topic, collection)[offset: offset + limit]

    def count(self, *, search="", author="", lang="", topic="", collection="") -> int:
        return len(self._match(search, author, lang, topic, collection))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|[\u4e00-\u9fff]", text.lower())


ScorerMode = Literal["overlap", "flat", "first-word"]


class FakeScorer:
    """A stand-in language model (the core's ``Scorer``). ``calls`` records the ``before`` of every ``score`` call.
    ``mode`` picks what it models:

    - ``"overlap"`` (ranking): each quote token costs 3 nats, each following token 4, both less for every word the
      quote shares with the passage: a quote that fits its context makes the passage more likely.
    - ``"flat"`` (insertion's fluency gate): every passage costs 2 nats a token, a sentence in ``bad`` 9: those are
      far less likely than anything else.
    - ``"first-word"`` (LM attribution): a claim costs 10 nats alone, 4 after a premise that holds its first word and
      12 after any other premise."""

    name = "fake-lm"

    def __init__(self, *, mode: ScorerMode = "overlap", bad: Iterable[str] = ()) -> None:
        if mode not in get_args(ScorerMode):
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.bad = set(bad)
        self.calls: list[str] = []

    def score(self, before, quotes, after=""):
        self.calls.append(before)
        if self.mode == "flat":
            return [self._flat(q, prefix=NLL(10.0, 5), after=4) for q in quotes]
        if self.mode == "first-word":
            return [PassageNLL(NLL(), NLL(1.0, 1), NLL(3.0 if before and q.split()[0] in before else 11.0, 4), NLL())
                    for q in quotes]
        ctx = set(words(before + " " + after))
        n_before, n_after = len(words(before)), len(words(after)[:12])
        out = []
        for q in quotes:
            qw = words(q)
            overlap = len(set(qw) & ctx)
            head, tail = min(1, len(qw)), max(0, len(qw) - 1)
            per_q = max(0.5, 3.0 - 0.4 * overlap)
            per_a = max(0.5, 4.0 - 0.5 * overlap) if qw else 4.0
            out.append(PassageNLL(prefix=NLL(2.0 * n_before, n_before), head=NLL(per_q * head, head),
                                  tail=NLL(per_q * tail, tail), after=NLL(per_a * n_after, n_after)))
        return out

    def quote_alone(self, quotes):
        if self.mode == "flat":
            return [self._flat(q, prefix=NLL(), after=0) for q in quotes]
        if self.mode == "first-word":
            return [PassageNLL(NLL(), NLL(2.0, 1), NLL(8.0, 4), NLL()) for _ in quotes]
        out = []
        for q in quotes:
            n = len(words(q))
            out.append(PassageNLL(prefix=NLL(), head=NLL(3.0 * min(1, n), min(1, n)),
                                  tail=NLL(3.0 * max(0, n - 1), max(0, n - 1)), after=NLL()))
        return out

    def _flat(self, text, *, prefix, after):
        mean = 9.0 if text in self.bad else 2.0
        return PassageNLL(prefix=prefix, head=NLL(mean * 2, 2), tail=NLL(mean * 8, 8), after=NLL(mean * after, after))


class FakeGenerator:
    """A remote chat model (the core's ``Generator``): replies from a list, cycled; a reply that is an exception is
    raised. ``calls`` records every call's messages and options."""

    name = "fake"

    def __init__(self, *replies) -> None:
        self.replies = list(replies)
        self.calls: list[dict] = []

    def generate(self, messages, *, temperature=0.0, max_tokens=96, seed=None, stop=()):
        self.calls.append({"messages": list(messages), "temperature": temperature, "seed": seed, "stop": stop})
        reply = self.replies[(len(self.calls) - 1) % len(self.replies)]
        if isinstance(reply, Exception):
            raise reply
        return reply


class PrefillGenerator:
    """A local model (a ``Generator`` with ``prefill = True``) that continues prefills: phase one (stopping at
    opening quotation marks) returns the scripted words before the quote, phase two the scripted ending. It never
    copies a quote itself. ``calls`` records every call's prefill and stop strings."""

    name = "fake-local"
    prefill = True

    def __init__(self, starts, tail="") -> None:
        self.starts, self.tail = list(starts), tail
        self.calls: list[dict] = []

    def generate(self, messages, *, temperature=0.0, max_tokens=96, seed=None, stop=()):
        pre = messages[-1][1] if messages[-1][0] == "assistant" else ""
        self.calls.append({"prefill": pre, "stop": stop})
        if "“" in stop:
            return pre + self.starts.pop(0)
        return pre + self.tail


class FakeEntailer:
    """An entailment model (the core's ``Entailer``) that judges by keyword: a hypothesis gets the score of the first
    key of ``scores`` it contains, else ``default``."""

    name = "fake-nli"

    def __init__(self, scores, default=0.5) -> None:
        self.scores, self.default = scores, default

    def entailment(self, premise, hypothesis):
        return next((v for k, v in self.scores.items() if k in hypothesis), self.default)


class OverlapEntailer:
    """An entailment model (an ``Entailer``) that, like real ones, is diluted by long premises: the share of the
    hypothesis' words in the premise, scaled down by how many sentences the premise has. ``premises`` records what
    it was asked about."""

    name = "overlap"

    def __init__(self) -> None:
        self.premises: list[str] = []

    def entailment(self, premise, hypothesis):
        self.premises.append(premise)
        h = set(hypothesis.lower().strip(".").split())
        p = set(premise.lower().replace(".", " ").split())
        return len(h & p) / len(h) / max(1, premise.count("."))


class FakeStore:
    """An in-memory ``VectorStore`` (the calls the source library makes): cosine similarity over what was upserted;
    ``rows`` maps collection -> id -> (vector, metadata)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, tuple[np.ndarray, dict]]] = {}

    def upsert(self, name, ids, embeddings, *, documents=None, metadatas=None, progress=None):
        coll = self.rows.setdefault(name, {})
        for i, vec, meta in zip(ids, embeddings, metadatas or [{}] * len(ids)):
            coll[i] = (np.asarray(vec, dtype=np.float32), dict(meta))

    def query(self, name, embedding, *, k=10, where=None):
        coll = self.rows.get(name, {})
        sims = sorted(((float(np.dot(v, embedding)), i) for i, (v, _) in coll.items()), reverse=True)
        return [(i, s) for s, i in sims[:k]]

    def delete(self, name, ids):
        for i in ids:
            self.rows.get(name, {}).pop(i, None)


CHAT_URL = "http://llm.test/v1"


def chat_reply(text: str):
    """A :class:`ChatEndpoint` step: a successful chat completion whose message is ``text``."""
    return (200, {"id": "x", "object": "chat.completion",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})


def no_sleep(_seconds):
    raise AssertionError("no retry was expected")


class ChatEndpoint:
    """An OpenAI-compatible chat-completions endpoint behind ``httpx.MockTransport``. ``script`` holds one step per
    request (the last repeats): ``(status, body_dict_or_text)``, ``(status, body, headers)``, or an ``httpx``
    transport exception class to raise (a timeout, a refused connection). Requests are recorded with their path,
    JSON body, headers and the timeout the client asked for."""

    def __init__(self, *script) -> None:
        import httpx

        self.script = list(script)
        self.requests: list[dict] = []
        self.transport = httpx.MockTransport(self.handle)

    def handle(self, request):
        import httpx

        self.requests.append({"path": request.url.path, "body": json.loads(request.content or b"{}"),
                              "headers": request.headers, "timeout": request.extensions.get("timeout", {})})
        step = self.script[min(len(self.requests), len(self.script)) - 1]
        if isinstance(step, type) and issubclass(step, httpx.TransportError):
            raise step("scripted failure", request=request)
        status, payload, headers = step if len(step) == 3 else (*step, {})
        if isinstance(payload, str):
            return httpx.Response(status, text=payload, headers=headers)
        return httpx.Response(status, json=payload, headers=headers)

    def generator(self, model="", **options):
        """An ``OpenAIChatGenerator`` talking to this endpoint; a retry fails the test unless ``sleep`` is given."""
        from quill_core._generate import OpenAIChatGenerator

        options.setdefault("sleep", no_sleep)
        return OpenAIChatGenerator(CHAT_URL, model, transport=self.transport, **options)


SAMPLE_QUOTES = [
    Quote("Knowledge is power.", author="Francis Bacon", topics=("knowledge",), collections=("fixture",)),
    Quote("The only thing we have to fear is fear itself.", author="Franklin D. Roosevelt", topics=("fear", "courage"),
          collections=("fixture",)),
    Quote("To be, or not to be, that is the question.", author="William Shakespeare", work="Hamlet",
          topics=("life",), collections=("fixture",)),
    Quote("Imagination is more important than knowledge.", author="Albert Einstein", topics=("imagination", "knowledge"),
          collections=("fixture",)),
    Quote("The unexamined life is not worth living.", author="Socrates", topics=("life", "philosophy"),
          collections=("fixture",)),
    Quote("Courage is grace under pressure.", author="Ernest Hemingway", topics=("courage",), collections=("fixture",)),
    Quote("知识就是力量。", author="培根", lang="zh", topics=("知识",), collections=("fixture",)),
    Quote("学而不思则罔，思而不学则殆。", author="孔子", work="论语", lang="zh", topics=("学习",), collections=("fixture",)),
]
CHINESE_QUOTES = [  # more Chinese lines for the app's Chinese flow (one in Traditional script, as some sources are)
    Quote("读书不觉已春深，一寸光阴一寸金。", author="王贞白", work="白鹿洞二首", lang="zh", topics=("时间", "读书"),
          collections=("fixture",)),
    Quote("明日复明日，明日何其多。", author="钱福", work="明日歌", lang="zh", topics=("时间",), collections=("fixture",)),
    Quote("海内存知己，天涯若比邻。", author="王勃", work="送杜少府之任蜀州", lang="zh", topics=("友情",),
          collections=("fixture",)),
    Quote("盛年不重來，一日難再晨。", author="陶淵明", work="雜詩", lang="zh", topics=("时间",), collections=("fixture",)),
]
