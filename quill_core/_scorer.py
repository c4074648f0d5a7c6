"""Perplexity scoring: token NLLs of passages ``before + quote + after``, batched, with the prefix computed once.

:class:`PerplexityScorer` is what ranking, insertion and attribution measure fluency with; :class:`NLL` and
:class:`PassageNLL` are its results. The model comes from :func:`quill_core._lm.load_causal_lm` (or is injected),
int8 copies from :mod:`quill_core._int8`, and quote-alone results are remembered on disk by
:mod:`quill_core._nllcache`.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

from ._config import Settings
from ._compute import COMPUTE
from ._errors import ConfigError, ModelError
from ._lm import load_causal_lm
from ._nllcache import HeadTail, NLLCache
from ._text import CJK, SENTENCE_END


@dataclass(frozen=True)
class NLL:
    """Summed negative log-likelihood (nats) of ``tokens`` tokens; :attr:`mean` is 0.0 for an empty range."""

    total: float = 0.0
    tokens: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.tokens if self.tokens else 0.0

    @property
    def ppl(self) -> float | None:
        """exp(mean NLL), or ``None`` for an empty range (never NaN)."""
        return math.exp(min(self.mean, 50.0)) if self.tokens else None

    def __add__(self, other: "NLL") -> "NLL":
        return NLL(self.total + other.total, self.tokens + other.tokens)


@dataclass(frozen=True)
class PassageNLL:
    """Token NLLs of one passage ``prefix + quote + after``, split by range.

    ``head`` is the quote's first ``head_chars`` characters (the tokens that end inside them), ``tail`` the rest
    of the quote; ``after`` is the right-context window. ``prefix`` excludes the start token (never scored).
    """

    prefix: NLL
    head: NLL
    tail: NLL
    after: NLL

    @property
    def quote(self) -> NLL:
        return self.head + self.tail

    @property
    def whole(self) -> NLL:
        return self.prefix + self.head + self.tail + self.after


@dataclass(frozen=True)
class _Plan:
    prefix: list[int]                       # start token + windowed prefix
    quotes: list[tuple[list[int], int]]     # (token ids of the inserted quote, how many belong to the head)
    after: list[int]


_WORD = re.compile(r"[^\W_]")


def right_window(after: str, *, max_chars: int) -> str:
    """The text after the insertion point up to the end of the first sentence that holds a word (at most
    ``max_chars`` characters, cut at a space where possible)."""
    start = 0
    for m in SENTENCE_END.finditer(after):
        if _WORD.search(after, start, m.start()):
            after = after[: m.end()]
            break
    if len(after) > max_chars:
        cut = after.rfind(" ", 0, max_chars)
        after = after[: cut if cut > max_chars // 2 else max_chars]
    return after


@runtime_checkable
class Scorer(Protocol):
    """What the ranking and insertion stages ask of a language model: per-part NLLs of passages
    (:class:`PerplexityScorer` is the real one)."""

    def score(self, before: str, quotes: Sequence[str], after: str = "") -> list[PassageNLL]: ...

    def quote_alone(self, quotes: Sequence[str]) -> list[PassageNLL]: ...


class PerplexityScorer:
    """Token NLLs of many passages that share a prefix, in one batched pass per candidate.

    ``score(before, quotes, after)`` scores ``before + quote + after`` for every quote: the prefix (``before``,
    windowed to its last ``max_prefix_tokens`` tokens) runs once and its KV cache is reused by every candidate;
    candidates run in batches of ``batch_size``. ``after`` is cut by :func:`right_window` (the next sentence, at most
    ``max_after_tokens`` tokens). An empty quote scores the passage without any quote (the baseline).
    ``score_naive`` computes the same numbers the slow way (two full passes per candidate, batch 1, no cache).

    Limits (so a 20,000-character paragraph costs what a short one does): the last 128 tokens before the insertion
    point, at most 64 tokens of a quote, at most 32 tokens after it. Separators: a space between Latin-script
    text and the quote, none next to CJK. Every sequence starts with the document separator token, so the first
    real token is scored too (no NaN for a quote at the very start). Ranges never mix: a token belongs to the
    quote's head when it ends within its first ``head_chars`` characters.

    ``quantize`` runs an int8 copy of the model (:func:`quill_core._int8.quantize_int8`); by default it
    follows ``settings.lm_precision`` (``"auto"``, the default: int8 where this CPU multiplies int8 faster than
    float32, see :func:`quill_core._int8.int8_is_faster`; or ``"int8"``, or ``"float32"``) for the model the scorer
    loads itself, and is off for an injected model. In int8 the fast and naive paths agree to about 0.01 on a ranking total
    (an occasional rounding flip); in float32, to float tolerance. The model is loaded lazily from ``settings``
    unless ``model`` and ``tokenizer`` are given.
    """

    def __init__(self, settings: Settings | None = None, *, model: Any = None, tokenizer: Any = None,
                 head_chars: int = 5, max_prefix_tokens: int = 128, max_after_tokens: int = 32,
                 max_quote_tokens: int = 64, batch_size: int = 8, quantize: bool | None = None,
                 cache_size: int = 50_000) -> None:
        self.settings = settings
        self._model = model
        self._tokenizer = tokenizer
        self.head_chars = head_chars
        self.max_prefix_tokens = max_prefix_tokens
        self.max_after_tokens = max_after_tokens
        self.max_quote_tokens = max_quote_tokens
        self.batch_size = max(1, batch_size)
        precision = settings.lm_precision if settings else "float32"
        if precision not in ("auto", "int8", "float32"):
            raise ConfigError(f"QUILL_LM_PRECISION must be auto, int8 or float32, got {precision!r}")
        if quantize is None:  # an injected model is used as given
            from ._int8 import int8_is_faster

            quantize = model is None and (precision == "int8" or (precision == "auto" and int8_is_faster()))
        self.quantize = quantize
        self.name = (settings.lm_model if settings else getattr(getattr(model, "config", None), "_name_or_path", "lm"))
        self._lock = COMPUTE  # (also guards the caches below)
        self._alone: OrderedDict[str, PassageNLL] = OrderedDict()
        self._cache_size = cache_size
        self._start: int | None = None
        self._store: NLLCache | None = None

    # -- resources ---------------------------------------------------------------------------------------------
    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None or self._tokenizer is None:
                if self.settings is None:
                    raise ModelError("PerplexityScorer needs settings or a model and a tokenizer")
                model, tokenizer = load_causal_lm(self.settings, int8=self.quantize and self._model is None)
                self._model = self._model or model
                self._tokenizer = self._tokenizer or tokenizer
            if self.quantize:
                from ._int8 import is_int8, quantize_int8

                if not is_int8(self._model):
                    self._model = quantize_int8(self._model)
            if self._start is None:
                self._start = _start_token(self._tokenizer)
            return self._model, self._tokenizer

    def _encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        if not text:
            return [], []
        tokenizer = self._tokenizer
        if getattr(tokenizer, "is_fast", False):
            enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
        ids = list(tokenizer(text, add_special_tokens=False)["input_ids"])
        return ids, [(0, len(text))] * len(ids)  # no offsets: every token counts as reaching the end

    # -- planning ----------------------------------------------------------------------------------------------
    def _plan(self, before: str, quotes: Sequence[str], after: str, *, lead: bool = False) -> _Plan:
        before = before.rstrip()
        prefix_ids, _ = self._encode(before[-self.max_prefix_tokens * 8:])
        prefix = [self._start] + prefix_ids[-self.max_prefix_tokens:]
        window = right_window(after.lstrip(), max_chars=self.max_after_tokens * 8)
        gap = " " if window and after[:1].isspace() or (window and _WORD.match(window) and not CJK.match(window[0])) else ""
        after_ids = self._encode(gap + window)[0][: self.max_after_tokens] if window.strip() else []
        planned = []
        for quote in quotes:
            quote = quote.strip()
            if not quote:
                planned.append(([], 0))
                continue
            sep = " " if (before or lead) and not (CJK.match(quote[0]) or (before and CJK.match(before[-1]))) else ""
            ids, offsets = self._encode(sep + quote)
            ids, offsets = ids[: self.max_quote_tokens], offsets[: self.max_quote_tokens]
            head_end = len(sep) + self.head_chars
            planned.append((ids, sum(1 for _, end in offsets if end <= head_end)))
        return _Plan(prefix=prefix, quotes=planned, after=after_ids)

    # -- scoring -----------------------------------------------------------------------------------------------
    def score(self, before: str, quotes: Sequence[str], after: str = "") -> list[PassageNLL]:
        """NLLs of ``before + quote + after`` for each quote (prefix computed once, candidates batched)."""
        import torch

        with self._lock:
            model, _ = self._load()
            plan = self._plan(before, quotes, after)
            with torch.inference_mode():
                return self._fast(model, plan)

    def score_naive(self, before: str, quotes: Sequence[str], after: str = "") -> list[PassageNLL]:
        """The same numbers as :meth:`score`, computed the slow way QUILL does: for each quote, one full pass for
        PPLq and another for PPLm, batch 1, no prefix cache. Kept as the reference for tests and benchmarks."""
        import torch

        with self._lock:
            model, _ = self._load()
            plan = self._plan(before, quotes, after)
            results = []
            with torch.inference_mode():
                for ids, n_head in plan.quotes:
                    first = _token_nlls(model, plan.prefix + ids + plan.after)
                    second = _token_nlls(model, plan.prefix + ids + plan.after)
                    results.append(_split(first, second, len(plan.prefix), len(ids), n_head))
            return results

    def quote_alone(self, quotes: Sequence[str]) -> list[PassageNLL]:
        """NLLs of each quote on its own (after the start token, with the leading space it has in running text).
        The quote's own perplexity is ``result.quote.ppl``. Cached per quote text in-process and, when the scorer
        has settings, on disk under ``QUILL_HOME/models`` (a quote is scored alone once per model, ever: the
        knowledge-base precomputation QUILL does for novelty, done lazily)."""
        import torch

        with self._lock:
            found = {q: self._alone[q] for q in quotes if q in self._alone}
            missing = [q for q in dict.fromkeys(quotes) if q not in found]
            if missing and self.settings is not None:
                stored = self._disk().get(self._disk_salt(), missing)
                found.update((text, _from_row(row)) for text, row in stored.items())
                missing = [q for q in missing if q not in found]
            if missing:
                model, _ = self._load()
                plan = self._plan("", missing, "", lead=True)
                with torch.inference_mode():
                    fresh = dict(zip(missing, self._fast(model, plan)))
                found.update(fresh)
                if self.settings is not None:
                    self._disk().put(self._disk_salt(), {text: _to_row(r) for text, r in fresh.items()})
            for q in quotes:
                self._alone[q] = found[q]
                self._alone.move_to_end(q)
            while len(self._alone) > self._cache_size:
                self._alone.popitem(last=False)
            return [found[q] for q in quotes]

    def _disk_salt(self) -> str:
        """What the on-disk rows depend on besides the quote: the model, the head size, the quote window, int8."""
        precision = "int8-per-token" if self.quantize else 0  # 0: what float32 keys always held
        return f"{self.name}\x1f{self.head_chars}\x1f{self.max_quote_tokens}\x1f{precision}\x1f"

    def _disk(self) -> NLLCache:
        if self._store is None:
            slug = re.sub(r"[^a-z0-9]+", "-", str(self.name).lower()).strip("-") or "lm"
            self._store = NLLCache(self.settings.path("models", f"{slug}-quote-nll.sqlite"))
        return self._store

    def quote_alone_naive(self, quotes: Sequence[str]) -> list[PassageNLL]:
        """:meth:`quote_alone` the slow way (one full pass per quote, no cache): the reference for benchmarks."""
        import torch

        with self._lock:
            model, _ = self._load()
            plan = self._plan("", quotes, "", lead=True)
            with torch.inference_mode():
                return [_split(nlls, nlls, 1, len(ids), n_head)
                        for ids, n_head in plan.quotes for nlls in [_token_nlls(model, plan.prefix + ids)]]

    def clear_cache(self, *, disk: bool = False) -> None:
        """Forget the cached quote-alone NLLs (in-process; also on disk with ``disk``): benchmarks use it to
        measure the cold path."""
        with self._lock:
            self._alone.clear()
            if disk and self.settings is not None:
                self._disk().clear()

    def _fast(self, model: Any, plan: _Plan) -> list[PassageNLL]:
        import copy

        import torch

        device = _device(model)
        prefix = torch.tensor([plan.prefix], device=device)
        out = model(input_ids=prefix, use_cache=True)
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)
        targets = prefix[0, 1:]
        prefix_nll = -logp[:-1].gather(1, targets[:, None])[:, 0] if len(targets) else torch.zeros(0)
        prefix_total = NLL(float(prefix_nll.sum()), int(len(targets)))
        last = logp[-1]
        cache = out.past_key_values
        P = len(plan.prefix)
        seqs = [ids + plan.after for ids, _ in plan.quotes]
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        nlls: list[list[float]] = [[] for _ in seqs]
        for start in range(0, len(order), self.batch_size):
            chunk = [i for i in order[start : start + self.batch_size] if seqs[i]]
            if not chunk:
                continue
            L = max(len(seqs[i]) for i in chunk)
            ids = torch.full((len(chunk), L), plan.prefix[0], dtype=torch.long, device=device)
            mask = torch.zeros((len(chunk), P + L), dtype=torch.long, device=device)
            mask[:, :P] = 1
            for row, i in enumerate(chunk):
                ids[row, : len(seqs[i])] = torch.tensor(seqs[i], device=device)
                mask[row, P : P + len(seqs[i])] = 1
            past = copy.deepcopy(cache)
            past.batch_repeat_interleave(len(chunk))
            lengths = torch.tensor([len(seqs[i]) for i in chunk], device=device)
            keep = torch.arange(L, device=device)[None, :] < (lengths - 1)[:, None]  # positions that predict a token
            logits = _logits(model, ids, mask, past, keep)
            targets = ids.roll(-1, dims=1)[keep]
            rest = (torch.logsumexp(logits, dim=-1) - logits.gather(-1, targets[:, None])[:, 0]).tolist()
            first = (-last[ids[:, 0]]).tolist()
            offset = 0
            for row, i in enumerate(chunk):
                n = len(seqs[i]) - 1
                nlls[i] = [first[row]] + rest[offset : offset + n]
                offset += n
        results = []
        for (ids, n_head), values in zip(plan.quotes, nlls):
            q = len(ids)
            results.append(PassageNLL(prefix=prefix_total, head=_sum(values[:n_head]), tail=_sum(values[n_head:q]),
                                      after=_sum(values[q:])))
        return results


def _logits(model: Any, ids: Any, mask: Any, past: Any, keep: Any) -> Any:
    """Float logits of the ``keep`` positions, flattened to ``(keep.sum(), vocab)``; the vocabulary projection
    runs only there when the model supports ``logits_to_keep`` masks (padding is never projected)."""
    try:
        logits = model(input_ids=ids, attention_mask=mask, past_key_values=past, use_cache=True,
                       logits_to_keep=keep).logits
    except TypeError:  # a model whose forward has no logits_to_keep
        logits = None
    if logits is None or logits.dim() != 2:
        if logits is None:
            logits = model(input_ids=ids, attention_mask=mask, past_key_values=past, use_cache=True).logits
        logits = logits[keep]
    return logits.float()


def _from_row(row: HeadTail) -> PassageNLL:
    head_total, head_tokens, tail_total, tail_tokens = row
    return PassageNLL(NLL(), NLL(head_total, head_tokens), NLL(tail_total, tail_tokens), NLL())


def _to_row(result: PassageNLL) -> HeadTail:
    return (result.head.total, result.head.tokens, result.tail.total, result.tail.tokens)


def _sum(values: Sequence[float]) -> NLL:
    return NLL(float(sum(values)), len(values))


def _split(first: list[float], second: list[float], n_prefix: int, n_quote: int, n_head: int) -> PassageNLL:
    """Ranges of a full-sequence pass: ``first[i]`` is the NLL of token ``i + 1``."""
    p = n_prefix - 1
    return PassageNLL(prefix=_sum(first[:p]), head=_sum(first[p : p + n_head]),
                      tail=_sum(first[p + n_head : p + n_quote]), after=_sum(second[p + n_quote :]))


def _token_nlls(model: Any, ids: list[int]) -> list[float]:
    import torch

    x = torch.tensor([ids], device=_device(model))
    logits = model(input_ids=x, use_cache=False).logits[0].float()
    return torch.nn.functional.cross_entropy(logits[:-1], x[0, 1:], reduction="none").tolist()


def _device(model: Any) -> Any:
    try:
        return next(model.parameters()).device
    except (StopIteration, AttributeError):
        return "cpu"


def _start_token(tokenizer: Any) -> int:
    """The token every scored sequence starts with (so the first real token is scored too): the document
    separator ``<|endoftext|>`` when the vocabulary has one, else BOS, else EOS."""
    unk = getattr(tokenizer, "unk_token_id", None)
    for candidate in ("<|endoftext|>",):
        tid = tokenizer.convert_tokens_to_ids(candidate)
        if isinstance(tid, int) and tid != unk and tid >= 0:
            return tid
    for tid in (getattr(tokenizer, "bos_token_id", None), getattr(tokenizer, "eos_token_id", None)):
        if isinstance(tid, int):
            return tid
    raise ModelError("the language model's tokenizer has no start, BOS or EOS token to score from")
