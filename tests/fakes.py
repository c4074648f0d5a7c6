"""Deterministic fakes shared by the tests (import them from here; conftest provides fixtures)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from dataclasses import replace

import numpy as np

from quill_core import KBStats, Quote
from quill_core._scorer import NLL, PassageNLL
from quill_core._names import author_key
from quill_core._text import key


class FakeEmbedder:
    """Deterministic bag-of-words embedder: texts sharing words (or CJK characters) are close; no model needed."""

    name = "fake"
    dim = 256

    def __init__(self) -> None:
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


class FakeScorer:
    """A stand-in language model (the core's ``Scorer``). Each quote token costs 3 nats, each following token 4, both less for every word the quote shares with the
    passage: a quote that fits its context makes the passage more likely."""

    name = "fake-lm"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, before, quotes, after=""):
        self.calls += 1
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
        out = []
        for q in quotes:
            n = len(words(q))
            out.append(PassageNLL(prefix=NLL(), head=NLL(3.0 * min(1, n), min(1, n)),
                                  tail=NLL(3.0 * max(0, n - 1), max(0, n - 1)), after=NLL()))
        return out


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


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CharTokenizer:
    """One token per character (ids 2..vocab-1; ``<|endoftext|>`` is 0), with offsets: all the LM scorer needs,
    so a tiny randomly initialised model can stand in for a real LM."""

    is_fast = True
    unk_token_id = None
    bos_token_id = None
    eos_token_id = 1

    def __init__(self, vocab: int = 256) -> None:
        self.vocab = vocab

    def __call__(self, text, add_special_tokens=False, return_offsets_mapping=False):
        out = {"input_ids": [2 + ord(ch) % (self.vocab - 2) for ch in text]}
        if return_offsets_mapping:
            out["offset_mapping"] = [(i, i + 1) for i in range(len(text))]
        return out

    def convert_tokens_to_ids(self, token):
        return 0 if token == "<|endoftext|>" else None


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


TINY_LM_VOCAB = 260


def tiny_causal_lm(vocab: int = TINY_LM_VOCAB):
    """``(model, tokenizer)``: a tiny randomly initialised Llama (seed 0, real transformers code paths, KV cache
    included) in eval mode and a :class:`CharTokenizer`. Tests share one per session (the ``tiny_lm`` fixture);
    a test that changes the model builds its own or works on a ``copy.deepcopy``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096)
    with torch.random.fork_rng():  # the same weights every time; other tests' random streams are left alone
        torch.manual_seed(0)
        model = LlamaForCausalLM(config).eval()
    return model, CharTokenizer(vocab)
