"""Text generators behind one small interface: ``generate(messages, *, temperature, max_tokens, seed, stop)``.

``messages`` is a chat: a sequence of ``(role, content)`` pairs, roles ``system`` / ``user`` / ``assistant``.
A trailing ``assistant`` message is a *prefill*: the start the reply should have. Local models continue it (the
returned text starts with it); endpoints, whose support for prefills varies, get it as an instruction to begin the
reply with it. Generation ends at ``max_tokens`` or at the first of the ``stop`` strings (not returned).
Three implementations, chosen by :func:`load_generator` from the settings:

- ``QUILL_LLM_BASE_URL`` set: :class:`OpenAIChatGenerator`, any OpenAI-compatible chat-completions endpoint
  (Ollama, vLLM, llama.cpp server, hosted APIs) with ``QUILL_LLM_MODEL`` and ``QUILL_LLM_API_KEY``;
- else ``QUILL_LLM_MODEL`` set: :class:`TransformersGenerator` over that Hugging Face causal LM (needs internet once);
- else: :class:`TransformersGenerator` over the packaged SmolLM2-135M-Instruct that the reranker also uses (offline).

Callers never care which: the insert stage and the LLM-judge attribution backend take any :class:`Generator`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol, Sequence, get_args, runtime_checkable

from ._config import Settings
from ._compute import COMPUTE
from ._errors import ConfigError, GenerationError

if TYPE_CHECKING:
    import httpx
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, StoppingCriteriaList

Role = Literal["system", "user", "assistant"]
Message = tuple[Role, str]
"""One chat turn: ``(role, content)``."""
_ROLES = frozenset(get_args(Role))


@runtime_checkable
class Generator(Protocol):
    """What the insert stage needs from a language model. ``name`` says which model answered (for reports).

    An implementation may set ``prefill = True`` when it continues a trailing assistant message exactly (local
    models); the insert stage then copies quotes into drafts by construction instead of asking for a copy.
    """

    name: str

    def generate(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 96,
                 seed: int | None = None, stop: Sequence[str] = ()) -> str: ...


def _check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    chat = []
    for role, content in messages:
        if role not in _ROLES:
            raise ValueError(f"unknown chat role {role!r}")
        chat.append({"role": role, "content": content})
    if not chat:
        raise ValueError("a chat needs at least one message")
    return chat


class OpenAIChatGenerator:
    """A client of an OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

    Connection failures, timeouts, HTTP 408/409/429 and 5xx are retried ``retries`` times with exponential backoff
    (``backoff`` seconds, doubled each time, honouring a numeric ``Retry-After``; ``sleep`` waits); anything else,
    or the last failure, raises :class:`GenerationError` with one readable line. The API key is sent as a bearer
    token only. ``transport`` replaces httpx's network transport (tests pass an ``httpx.MockTransport``).
    """

    RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
    prefill = False  # a trailing assistant message becomes an instruction, not a true prefill

    def __init__(self, base_url: str, model: str = "", *, api_key: str = "", timeout: float = 60.0,
                 retries: int = 2, backoff: float = 0.5, sleep: Callable[[float], None] = time.sleep,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"the LLM base URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model or 'default'}"
        self._api_key = api_key
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                headers = {"Content-Type": "application/json"}
                if self._api_key:
                    headers["Authorization"] = f"Bearer {self._api_key}"
                self._client = httpx.Client(timeout=self.timeout, headers=headers, transport=self._transport)
            return self._client

    def generate(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 96,
                 seed: int | None = None, stop: Sequence[str] = ()) -> str:
        import httpx

        chat = _check_messages(messages)
        if chat[-1]["role"] == "assistant" and len(chat) > 1:
            prefill = chat.pop()["content"]
            chat[-1] = {"role": chat[-1]["role"],
                        "content": f"{chat[-1]['content']}\n\nBegin your reply with: {prefill}"}
        body: dict[str, Any] = {"messages": chat, "temperature": float(temperature),
                                "max_tokens": int(max_tokens), "stream": False}
        if self.model:
            body["model"] = self.model
        if seed is not None:
            body["seed"] = int(seed)
        if stop:
            body["stop"] = list(stop)[:4]
        client = self._http()
        problem, wait = "", None
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(wait if wait is not None else self.backoff * 2 ** (attempt - 1))
            wait = None
            try:
                response = client.post(self.url, json=body)
            except httpx.TimeoutException:
                problem = f"timed out after {self.timeout:g}s"
                continue
            except httpx.HTTPError as exc:
                problem = f"unreachable ({type(exc).__name__})"
                continue
            if response.status_code in self.RETRY_STATUS:
                problem, wait = f"HTTP {response.status_code}", _retry_after(response)
                continue
            if response.status_code >= 400:
                raise GenerationError(f"LLM endpoint {self.url} answered HTTP {response.status_code}: "
                                      f"{_error_text(response)}")
            return _cut(_content(response, self.url), stop)
        raise GenerationError(f"LLM endpoint {self.url} failed after {self.retries + 1} attempt(s): {problem}")

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _retry_after(response: httpx.Response) -> float | None:
    """A numeric ``Retry-After`` header in seconds (capped at 30), else None."""
    try:
        return min(30.0, max(0.0, float(response.headers.get("retry-after", ""))))
    except ValueError:
        return None


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
        err = data.get("error", data) if isinstance(data, dict) else data
        message = err.get("message", err) if isinstance(err, dict) else err
        text = str(message)
    except (ValueError, AttributeError):
        text = response.text
    text = " ".join(text.split())
    return text[:200] or "(empty body)"


def _content(response: httpx.Response, url: str) -> str:
    try:
        data = response.json()
        content = data["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise GenerationError(f"LLM endpoint {url} sent no chat completion ({type(exc).__name__})") from exc
    if not isinstance(content, str):
        raise GenerationError(f"LLM endpoint {url} sent a non-text message content")
    return content


class TransformersGenerator:
    """A local Hugging Face causal LM with a chat template, loaded on first use by ``loader() -> (model, tokenizer)``.

    Greedy at ``temperature == 0``; otherwise top-p sampling seeded by ``seed`` (so drafts are reproducible).
    One lock serializes generation: torch's global RNG and the model are shared.
    """

    prefill = True  # continues a trailing assistant message exactly

    def __init__(self, loader: Callable[[], tuple[PreTrainedModel, PreTrainedTokenizerBase]], *, name: str = "local",
                 repetition_penalty: float = 1.1, top_p: float = 0.95) -> None:
        self._loader = loader
        self.name = name
        self.repetition_penalty = repetition_penalty
        self.top_p = top_p
        self._loaded: tuple[PreTrainedModel, PreTrainedTokenizerBase] | None = None
        self._lock = COMPUTE
        self._last: tuple[int, ...] = ()  # the previous prompt's tokens
        self._prefix: tuple[tuple[int, ...], Any] | None = None  # tokens shared by recent prompts and their KV cache

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (it loads on first use)."""
        return self._loaded is not None

    def _load(self) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._loader()
            return self._loaded

    def prompt(self, messages: Sequence[Message]) -> str:
        """The chat rendered by the tokenizer's template, ending where the assistant's reply starts (a trailing
        assistant message is appended as the start of that reply)."""
        _, tokenizer = self._load()
        chat = _check_messages(messages)
        prefill = chat.pop()["content"] if chat[-1]["role"] == "assistant" and len(chat) > 1 else ""
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        else:
            text = "\n\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\n\nassistant: "
        return text + prefill

    def generate(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 96,
                 seed: int | None = None, stop: Sequence[str] = ()) -> str:
        import torch

        chat = list(messages)
        prefill = chat[-1][1] if chat and chat[-1][0] == "assistant" and len(chat) > 1 else ""
        with self._lock:
            model, tokenizer = self._load()
            inputs = tokenizer(self.prompt(chat), return_tensors="pt", add_special_tokens=False)
            options: dict[str, Any] = {"max_new_tokens": int(max_tokens),
                                       "repetition_penalty": self.repetition_penalty,
                                       "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                                       else tokenizer.eos_token_id}
            if stop:
                options["stopping_criteria"] = _stopper(tokenizer, inputs["input_ids"].shape[1], stop)
            past = self._shared_prefix(model, inputs["input_ids"])
            if past is not None:
                options["past_key_values"] = past
            if temperature > 0:
                torch.manual_seed(0 if seed is None else int(seed))
                options.update(do_sample=True, temperature=float(temperature), top_p=self.top_p, top_k=0)
            else:
                options.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            try:
                with torch.inference_mode():
                    output = model.generate(**inputs, **options)
            except (RuntimeError, ValueError) as exc:
                raise GenerationError(f"local generation with {self.name} failed: {exc}") from exc
            text = tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        return prefill + _cut(text, stop)


    def _shared_prefix(self, model: PreTrainedModel, ids: torch.Tensor) -> Any:
        """A copy of the KV cache of the tokens this prompt shares with the previous ones, or None. The drafts of
        one insertion share most of their prompt (instructions, example, paragraph, quote): the shared part is
        computed once and every later draft only reads its own last lines. A prompt that shares more with the
        previous one than the kept cache covers (the next insertion's paragraph after the instructions) extends the
        cache from where it ends (called under the lock)."""
        import copy

        import torch

        tokens = tuple(ids[0].tolist())
        last, self._last = self._last, tokens
        n = min(next((i for i, (a, b) in enumerate(zip(last, tokens)) if a != b), min(len(last), len(tokens))),
                len(tokens) - 1)  # the model must read at least the prompt's last token
        kept, cache = self._prefix or ((), None)
        starts = 0 < len(kept) < len(tokens) and tokens[: len(kept)] == kept
        if n < (len(kept) if starts else 0) + SHARED_PREFIX_MIN:  # not enough newly shared to be worth a pass
            return copy.deepcopy(cache) if starts else None
        with torch.inference_mode():
            if starts:  # continue the kept cache over the newly shared tokens
                cache = model(input_ids=ids[:, len(kept):n], past_key_values=copy.deepcopy(cache),
                              use_cache=True).past_key_values
            else:
                cache = model(input_ids=ids[:, :n], use_cache=True).past_key_values
        self._prefix = (tokens[:n], cache)
        return copy.deepcopy(cache)


def _stopper(tokenizer: PreTrainedTokenizerBase, prompt_len: int, stop: Sequence[str]) -> StoppingCriteriaList:
    """Stop once the generated text holds a stop string (decoding only the new tokens: cheaper than
    transformers' ``stop_strings``, which indexes the whole vocabulary on every call)."""
    from transformers import StoppingCriteria, StoppingCriteriaList

    class _Stop(StoppingCriteria):
        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor | None, **kwargs: Any) -> torch.Tensor:
            import torch

            done = [any(s in tokenizer.decode(row[prompt_len:], skip_special_tokens=True) for s in stop)
                    for row in input_ids]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([_Stop()])


def _cut(text: str, stop: Sequence[str]) -> str:
    """``text`` up to (not including) the first stop string."""
    ends = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    return text[: min(ends)] if ends else text


SHARED_PREFIX_MIN = 64
"""Prompt tokens two consecutive prompts must share before their KV cache is kept for the next ones."""


def load_generator(settings: Settings | None = None) -> Generator:
    """The generator the settings ask for (see the module docstring); nothing is loaded until first use."""
    settings = settings or Settings.load()
    if settings.llm_base_url:
        return OpenAIChatGenerator(settings.llm_base_url, settings.llm_model, api_key=settings.llm_api_key)
    # A named Hugging Face model goes through the same loader (and process cache) as the scorer's LM.
    lm_settings = dataclasses.replace(settings, lm_model=settings.llm_model) if settings.llm_model else settings

    def load() -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
        from ._lm import load_causal_lm

        return load_causal_lm(lm_settings)

    name = f"hf:{settings.llm_model}" if settings.llm_model else (settings.lm_model or "smollm2")
    return TransformersGenerator(load, name=name)
