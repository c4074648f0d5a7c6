"""Generators: the OpenAI-compatible client against a scripted chat-completions endpoint (``httpx.MockTransport``:
retries, timeouts, errors, no network and no real waiting), the local chat-template generator with a fake model,
and the settings-driven choice."""

from __future__ import annotations

import httpx
import pytest

from quill_core._config import Settings
from quill_core._errors import ConfigError, GenerationError
from quill_core._generate import OpenAIChatGenerator, TransformersGenerator, load_generator
from tests.fakes import ChatEndpoint, chat_reply
from tests.tinymodels import ChatTokenizer, EchoModel


def test_chat_completion_round_trip():
    srv = ChatEndpoint(chat_reply("As Bacon said, “Knowledge is power.”"))
    gen = srv.generator("tiny-model", api_key="k-123")
    out = gen.generate([("system", "be brief"), ("user", "write")], temperature=0.5, max_tokens=30, seed=7)
    assert out == "As Bacon said, “Knowledge is power.”"
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer k-123"
    assert req["headers"]["Content-Type"] == "application/json"
    body = req["body"]
    assert body["model"] == "tiny-model" and body["temperature"] == 0.5 and body["max_tokens"] == 30
    assert body["seed"] == 7 and body["stream"] is False
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write"}]


def test_no_api_key_no_authorization_header():
    srv = ChatEndpoint(chat_reply("ok"))
    assert srv.generator().generate([("user", "hi")]) == "ok"
    assert "Authorization" not in srv.requests[0]["headers"]


def test_prefill_becomes_an_instruction_and_stop_strings_are_sent_and_applied():
    srv = ChatEndpoint(chat_reply("In the words of Bacon, “Knowledge is power.”\nExtra line"))
    out = srv.generator().generate([("user", "write"), ("assistant", "In the words of")], stop=("\n",))
    assert out == "In the words of Bacon, “Knowledge is power.”"
    body = srv.requests[0]["body"]
    assert "model" not in body and body["stop"] == ["\n"]
    assert body["messages"] == [{"role": "user", "content": "write\n\nBegin your reply with: In the words of"}]


def test_transient_failures_are_retried_with_backoff():
    waits = []
    srv = ChatEndpoint((503, {"error": {"message": "busy"}}), (429, "slow down", {"Retry-After": "0"}), chat_reply("ok"))
    gen = srv.generator(retries=2, backoff=0.25, sleep=waits.append)
    assert gen.generate([("user", "hi")]) == "ok"
    assert len(srv.requests) == 3
    assert waits == [0.25, 0.0]  # exponential backoff, then the server's Retry-After


@pytest.mark.parametrize("retry_after, wait", [("7", 7.0), ("3600", 30.0), ("soon", 0.5), (None, 0.5)])
def test_retry_after_is_honoured_capped_or_ignored(retry_after, wait):
    waits = []
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    srv = ChatEndpoint((429, "slow down", headers), chat_reply("ok"))
    assert srv.generator(retries=1, backoff=0.5, sleep=waits.append).generate([("user", "hi")]) == "ok"
    assert waits == [wait]


def test_backoff_doubles():
    waits = []
    srv = ChatEndpoint((502, "bad gateway"))
    with pytest.raises(GenerationError, match=r"failed after 4 attempt\(s\): HTTP 502"):
        srv.generator(retries=3, backoff=0.5, sleep=waits.append).generate([("user", "hi")])
    assert waits == [0.5, 1.0, 2.0]


def test_persistent_server_errors_give_a_clear_generation_error():
    srv = ChatEndpoint((500, {"error": {"message": "boom"}}))
    gen = srv.generator(retries=2, sleep=lambda s: None)
    with pytest.raises(GenerationError, match=r"failed after 3 attempt\(s\): HTTP 500"):
        gen.generate([("user", "hi")])
    assert len(srv.requests) == 3


@pytest.mark.parametrize("status, body, message", [
    (401, {"error": {"message": "invalid api key"}}, "HTTP 401: invalid api key"),
    (400, {"message": "bad  request\n body"}, "HTTP 400: bad request body"),
    (404, "no such model", "HTTP 404: no such model"),
    (403, "", r"HTTP 403: \(empty body\)"),
])
def test_client_errors_are_not_retried_and_carry_the_server_message(status, body, message):
    srv = ChatEndpoint((status, body))
    gen = srv.generator(retries=3)
    with pytest.raises(GenerationError, match=message):
        gen.generate([("user", "hi")])
    assert len(srv.requests) == 1


@pytest.mark.parametrize("payload", ["not json", {"choices": []}, {"choices": [{"message": {"content": None}}]}])
def test_malformed_responses(payload):
    gen = ChatEndpoint((200, payload)).generator(retries=0)
    with pytest.raises(GenerationError, match="sent"):
        gen.generate([("user", "hi")])


def test_unreachable_endpoint():
    waits = []
    srv = ChatEndpoint(httpx.ConnectError)
    gen = srv.generator(retries=1, timeout=2, sleep=waits.append)
    with pytest.raises(GenerationError, match=r"failed after 2 attempt\(s\): unreachable \(ConnectError\)"):
        gen.generate([("user", "hi")])
    assert len(srv.requests) == 2 and waits == [0.5]


def test_timeout():
    srv = ChatEndpoint(httpx.ReadTimeout)
    gen = srv.generator(retries=0, timeout=0.2)
    with pytest.raises(GenerationError, match=r"timed out after 0.2s"):
        gen.generate([("user", "hi")])
    assert srv.requests[0]["timeout"]["read"] == 0.2  # the client's timeout reaches the transport


def test_a_timeout_then_an_answer_is_retried():
    srv = ChatEndpoint(httpx.ReadTimeout, chat_reply("late"))
    assert srv.generator(retries=1, sleep=lambda s: None).generate([("user", "hi")]) == "late"
    assert len(srv.requests) == 2


def test_close_drops_the_client():
    srv = ChatEndpoint(chat_reply("one"), chat_reply("two"))
    gen = srv.generator()
    assert gen.generate([("user", "hi")]) == "one"
    gen.close()
    assert gen.generate([("user", "hi")]) == "two"  # a new client, same transport


def test_bad_configuration():
    with pytest.raises(ConfigError):
        OpenAIChatGenerator("localhost:8080")
    with pytest.raises(ValueError):
        OpenAIChatGenerator("http://127.0.0.1:9/v1").generate([("robot", "hi")])


def test_load_generator_follows_the_settings(tmp_path):
    gen = load_generator(Settings.load(home=tmp_path, llm_base_url="http://127.0.0.1:9/v1", llm_model="m"))
    assert isinstance(gen, OpenAIChatGenerator) and gen.model == "m"
    gen = load_generator(Settings.load(home=tmp_path, llm_model="some/causal-lm"))
    assert isinstance(gen, TransformersGenerator) and gen.name == "hf:some/causal-lm"
    gen = load_generator(Settings.load(home=tmp_path))
    assert isinstance(gen, TransformersGenerator) and gen.name == "smollm2"
    assert not gen.loaded  # nothing loaded yet


# -- the local generator, with a character-level fake model ----------------------------------------------------
def test_local_generator_continues_a_prefill_and_stops():
    model = EchoModel(" Einstein, “Imagination.”\nMore text")
    gen = TransformersGenerator(lambda: (model, ChatTokenizer()), name="fake")
    chat = [("system", "s"), ("user", "u"), ("assistant", "In the words of")]
    assert gen.prompt(chat) == "<system>s<user>u<assistant>In the words of"
    out = gen.generate(chat, stop=("\n",))
    assert out == "In the words of Einstein, “Imagination.”"
    assert model.options["do_sample"] is False


def test_local_generator_samples_with_a_seed():
    model = EchoModel("abc")
    gen = TransformersGenerator(lambda: (model, ChatTokenizer()))
    assert gen.generate([("user", "u")], temperature=0.5, max_tokens=2, seed=3) == "ab"
    assert model.options["do_sample"] is True and model.options["temperature"] == 0.5


def test_consecutive_prompts_share_the_kv_cache_of_their_common_start(monkeypatch):
    """The drafts of one insertion share most of their prompt: from the second prompt on, the shared tokens are
    computed once and later prompts that start with them reuse that cache (only a copy is handed to generate)."""
    import torch

    from quill_core import _generate

    monkeypatch.setattr(_generate, "SHARED_PREFIX_MIN", 4)
    forwards = []

    class Model:
        def __call__(self, input_ids, use_cache, past_key_values=None):
            forwards.append(input_ids.shape[1])
            seen = (past_key_values or {"tokens": 0})["tokens"]
            return type("Out", (), {"past_key_values": {"tokens": seen + input_ids.shape[1]}})()

    gen = TransformersGenerator(lambda: (Model(), None), name="fake")
    common = list(range(10))
    assert gen._shared_prefix(Model(), torch.tensor([common + [50, 51]])) is None  # nothing to share with yet
    first = gen._shared_prefix(Model(), torch.tensor([common + [60, 61, 62]]))
    assert forwards == [10] and first == {"tokens": 10}
    again = gen._shared_prefix(Model(), torch.tensor([common + [70]]))
    assert forwards == [10] and again == first and again is not gen._prefix[1]  # reused, as a copy
    assert gen._shared_prefix(Model(), torch.tensor([[99] * 12])) is None  # a different prompt: nothing shared
    # the next insertion shares the instructions (the kept cache) and then a longer start of its own: the kept
    # cache is reused, then extended over the newly shared tokens only
    paragraph = list(range(20, 30))
    assert gen._shared_prefix(Model(), torch.tensor([common + paragraph + [1]])) == first and forwards == [10]
    longer = gen._shared_prefix(Model(), torch.tensor([common + paragraph + [2]]))
    assert forwards == [10, 10] and longer == {"tokens": 20}
