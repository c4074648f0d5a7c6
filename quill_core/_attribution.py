"""Attribution: how well evidence supports a claim, measured with *localized* entailment.

One interface, ``Entailer.entailment(premise, hypothesis) -> float in [0, 1]`` (an optional
``entailment_many(pairs)`` batches), and one localizer, :func:`localized_entailment`: the evidence is split into
sentences (English and Chinese punctuation), every window of ``window`` consecutive sentences (default 2) is scored
as a premise, and the best window wins; a claim of several sentences is split too and its sentences' scores are
aggregated (the weakest sentence by default: a claim is only as supported as its least supported part).

Backends (:func:`load_entailer` picks one from the settings):

- ``LMEntailer`` (default, offline): the causal LM itself. Support is how much reading the evidence window makes
  the claim more likely, a conditional pointwise mutual information normalized by the claim's own surprisal::

      score = clip(1 - NLL(claim | window) / NLL(claim), 0, 1)

  i.e. the fraction of the claim's information the window explains (0: no help or worse, 1: fully predicted).
  It measures lexical and semantic support, not logic: a claim that contradicts the evidence with the evidence's
  own words still scores high (see bench/attribution.py).
- ``NLIEntailer``: a Hugging Face sequence-classification NLI model by name or path (``QUILL_NLI_MODEL``), the
  probability of its entailment label.
- ``JudgeEntailer``: an LLM judge through any :class:`~quill_core._generate.Generator` (``QUILL_NLI_MODEL=judge``
  uses the OpenAI-compatible endpoint of ``QUILL_LLM_BASE_URL``); it answers a 0-10 support score.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Callable, Protocol, Sequence, runtime_checkable

from ._config import Settings
from ._errors import ConfigError, ModelError
from ._generate import Generator
from ._scorer import Scorer
from ._text import CJK_RANGES, split_sentences
from ._types import Quote

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


# Characters of Chinese running text for joining evidence sentences without a space and for telling a Chinese quote:
# CJK, every full-width form (letters and digits too) and the curly double quotes Chinese writes with.
_CHINESE_TEXT = re.compile(f"[{CJK_RANGES}\uff00-\uffef“”]")


@runtime_checkable
class Entailer(Protocol):
    """How strongly ``premise`` supports ``hypothesis``, in [0, 1] (higher: better supported)."""

    name: str

    def entailment(self, premise: str, hypothesis: str) -> float: ...


def entail_many(entailer: Entailer, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Scores of many ``(premise, hypothesis)`` pairs, batched when the backend can."""
    if not pairs:
        return []
    batch = getattr(entailer, "entailment_many", None)
    if callable(batch):
        return [float(x) for x in batch(list(pairs))]
    return [float(entailer.entailment(p, h)) for p, h in pairs]


# -- the localizer ---------------------------------------------------------------------------------------------
def _join(parts: Sequence[str]) -> str:
    """Sentences joined back into text: no space between Chinese sentences, one space otherwise."""
    out = ""
    for part in parts:
        if out and not (_CHINESE_TEXT.match(out[-1]) and _CHINESE_TEXT.match(part[0])):
            out += " "
        out += part
    return out


def evidence_windows(evidence: str | Sequence[str], *, window: int = 2) -> list[str]:
    """Every run of ``window`` consecutive evidence units, as text. A string is split into sentences; a sequence
    is taken as ready-made units (so a multi-sentence quotation can stay one unit). Fewer units than ``window``
    give one window with all of them; no evidence gives none."""
    if window < 1:
        raise ValueError("window must be at least 1")
    units = split_sentences(evidence) if isinstance(evidence, str) else [u.strip() for u in evidence if u.strip()]
    if not units:
        return []
    if len(units) <= window:
        return [_join(units)]
    return [_join(units[i : i + window]) for i in range(len(units) - window + 1)]


def localized_entailment(entailer: Entailer, evidence: str | Sequence[str], claim: str, *, window: int = 2,
                         aggregate: Callable[[Sequence[float]], float] = min) -> float:
    """The localized support of ``claim`` by ``evidence``: max over evidence windows, aggregated over the claim's
    sentences (``min`` by default). No evidence or an empty claim scores 0."""
    return localized_many(entailer, evidence, [claim], window=window, aggregate=aggregate)[0]


def localized_many(entailer: Entailer, evidence: str | Sequence[str], claims: Sequence[str], *, window: int = 2,
                   aggregate: Callable[[Sequence[float]], float] = min) -> list[float]:
    """:func:`localized_entailment` for several claims against one evidence, in one batch of pairs."""
    windows = evidence_windows(evidence, window=window)
    parts = [split_sentences(c) or ([c.strip()] if c.strip() else []) for c in claims]
    pairs = [(w, s) for sentences in parts for s in sentences for w in windows]
    scores = iter(entail_many(entailer, pairs))
    out = []
    for sentences in parts:
        if not sentences or not windows:
            out.append(0.0)
            continue
        best = [max(next(scores) for _ in windows) for _ in sentences]
        out.append(float(min(1.0, max(0.0, aggregate(best)))))
    return out


def quote_evidence(quote: Quote, passage: str = "") -> list[str]:
    """The evidence for a sentence that cites ``quote``: who said it (and where), then the source passage's
    sentences when one is known. The quotation stays one unit however many sentences it has."""
    # NB: curly quotes count, so an English quote with “ or ” in its first 20 characters gets the Chinese sentence
    zh = quote.lang == "zh" or bool(_CHINESE_TEXT.search(quote.text[:20]))
    author = quote.author.strip()
    if zh:
        who = author or "佚名"
        work = quote.work.strip("《》")
        head = f"{who}在《{work}》中写道：“{quote.text}”" if work else f"{who}说：“{quote.text}”"
    else:
        who = author or "An unknown author"
        head = f"{who} wrote in {quote.work}: “{quote.text}”" if quote.work else f"{who} said: “{quote.text}”"
    return [head] + split_sentences(passage or "")


# -- backends ------------------------------------------------------------------------------------------------------
class LMEntailer:
    """Support as normalized conditional PMI under a causal LM (see the module docstring).

    ``scorer`` is the LM's passage scorer (a :class:`~quill_core._scorer.Scorer`: ``score`` and ``quote_alone``);
    the premise is the shared prefix, so all claims against one window run in one cached, batched pass.
    """

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self.name = f"lm-pmi:{getattr(scorer, 'name', 'lm')}"

    def entailment(self, premise: str, hypothesis: str) -> float:
        return self.entailment_many([(premise, hypothesis)])[0]

    def entailment_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        by_premise: dict[str, list[int]] = {}
        for i, (premise, _) in enumerate(pairs):
            by_premise.setdefault(premise, []).append(i)
        hypotheses = [h for _, h in pairs]
        alone = {h: nll.quote for h, nll in zip(dict.fromkeys(hypotheses),
                                                 self.scorer.quote_alone(list(dict.fromkeys(hypotheses))))}
        out = [0.0] * len(pairs)
        for premise, rows in by_premise.items():
            given = self.scorer.score(premise, [hypotheses[i] for i in rows])
            for i, nll in zip(rows, given):
                base = alone[hypotheses[i]].total
                out[i] = 0.0 if base <= 0 else min(1.0, max(0.0, 1.0 - nll.quote.total / base))
        return out


class NLIEntailer:
    """A Hugging Face NLI cross-encoder (``AutoModelForSequenceClassification``), loaded on first use.

    The score is the softmax probability of the label whose name contains 'entail' (MNLI / XNLI style models).
    """

    def __init__(self, model: str, *, batch_size: int = 16, max_length: int = 512) -> None:
        self.model_name = model
        self.name = f"nli:{model}"
        self.batch_size = batch_size
        self.max_length = max_length
        self._loaded: tuple[PreTrainedModel, PreTrainedTokenizerBase, int] | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it loads on first use)."""
        return self._loaded is not None

    @property
    def label(self) -> int:
        """The index of the model's entailment label (loads the model)."""
        return self._load()[2]

    def _load(self) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, int]:
        with self._lock:
            if self._loaded is None:
                try:
                    from transformers import AutoModelForSequenceClassification, AutoTokenizer

                    tokenizer = AutoTokenizer.from_pretrained(self.model_name)
                    model = AutoModelForSequenceClassification.from_pretrained(self.model_name)
                except (OSError, ValueError, ImportError, KeyError) as exc:
                    raise ModelError(f"cannot load NLI model {self.model_name!r} (unset HF_HUB_OFFLINE to "
                                     f"download it): {str(exc).splitlines()[0]}") from exc
                labels = {int(i): str(n).lower() for i, n in (model.config.id2label or {}).items()}
                found = [i for i, n in labels.items() if "entail" in n and not n.startswith(("not", "non"))]
                if len(found) != 1:
                    raise ModelError(f"NLI model {self.model_name!r} has no single entailment label "
                                     f"(labels: {sorted(labels.values())})")
                model.eval()
                self._loaded = (model, tokenizer, found[0])
            return self._loaded

    def entailment(self, premise: str, hypothesis: str) -> float:
        return self.entailment_many([(premise, hypothesis)])[0]

    def entailment_many(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        model, tokenizer, label = self._load()
        limit = min(self.max_length, getattr(model.config, "max_position_embeddings", None) or self.max_length)
        out: list[float] = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start : start + self.batch_size]
            enc = tokenizer([p for p, _ in chunk], [h for _, h in chunk], truncation="longest_first",
                            max_length=limit, padding=True, return_tensors="pt")
            with torch.inference_mode():
                probs = torch.softmax(model(**enc).logits.float(), dim=-1)[:, label]
            out.extend(float(x) for x in probs)
        return out


_NUMBER = re.compile(r"\b(10|[0-9])(?:\.\d+)?\b")
_JUDGE_SYSTEM = ("You check whether a claim is supported by a piece of evidence. Judge only from the evidence, "
                 "not from what you know. Reply with a single number from 0 to 10: 10 means the evidence states "
                 "the claim, 5 means the evidence neither supports nor contradicts it, 0 means the evidence "
                 "contradicts it.")


class JudgeEntailer:
    """An LLM judge: asks ``generator`` for a 0-10 support score (greedy) and maps it to [0, 1].

    An answer without a number falls back on yes/no words, else 0.5 (undecided)."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator
        self.name = f"judge:{getattr(generator, 'name', 'llm')}"

    def entailment(self, premise: str, hypothesis: str) -> float:
        messages = [("system", _JUDGE_SYSTEM),
                    ("user", f"Evidence: {premise}\nClaim: {hypothesis}\nScore (0-10):")]
        return parse_judgement(self.generator.generate(messages, temperature=0.0, max_tokens=8))


def parse_judgement(answer: str) -> float:
    """A judge's reply as a score in [0, 1]: its first number out of 10, else yes / no, else 0.5."""
    text = answer.strip().lower()
    m = _NUMBER.search(text)
    if m:
        return min(10.0, float(m.group(0))) / 10.0
    if re.match(r"(yes|supported|true|entail)", text):
        return 1.0
    if re.match(r"(no|not|false|contradict)", text):
        return 0.0
    return 0.5


def load_entailer(settings: Settings | None = None, *, scorer: Scorer | None = None,
                  generator: Generator | None = None) -> Entailer:
    """The attribution backend the settings ask for: ``nli_model`` empty -> :class:`LMEntailer` over ``scorer``
    (the LM's :class:`~quill_core._scorer.PerplexityScorer` is made when none is given); ``"judge"`` -> :class:`JudgeEntailer`
    over ``generator`` (default: the OpenAI-compatible endpoint, which must be configured); anything else -> an
    :class:`NLIEntailer` of that name or path."""
    settings = settings or Settings.load()
    choice = settings.nli_model.strip()
    if not choice:
        if scorer is None:
            from ._scorer import PerplexityScorer

            scorer = PerplexityScorer(settings)
        return LMEntailer(scorer)
    if choice.lower() in ("judge", "llm", "llm-judge"):
        if generator is None:
            if not settings.llm_base_url:
                raise ConfigError("QUILL_NLI_MODEL=judge needs an LLM endpoint: set QUILL_LLM_BASE_URL")
            from ._generate import load_generator

            generator = load_generator(settings)
        return JudgeEntailer(generator)
    return NLIEntailer(choice)
