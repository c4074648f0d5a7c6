"""Generators: the OpenAI-compatible client against a real chat-completions server on loopback (retries,
timeouts, errors), the local chat-template generator with a fake model, and the settings-driven choice."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from quill_core._config import Settings
from quill_core._errors import ConfigError, GenerationError
from quill_core._generate import OpenAIChatGenerator, TransformersGenerator, load_generator


class ChatServer:
    """A chat-completions endpoint on 127.0.0.1 (free port). ``script`` is a list of responses, one per request
    (the last repeats): ``(status, body_dict_or_text)`` or ``("sleep", seconds)``. Requests are recorded."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                step = server.script[min(len(server.requests), len(server.script)) - 1]
                if step[0] == "sleep":
                    time.sleep(step[1])
                    step = (200, {"choices": [{"message": {"role": "assistant", "content": "late"}}]})
                status, payload = step
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(text):
    return (200, {"id": "x", "object": "chat.completion",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})


def no_sleep(_seconds):
    pass


def test_chat_completion_round_trip():
    with ChatServer([reply("As Bacon said, “Knowledge is power.”")]) as srv:
        gen = OpenAIChatGenerator(srv.url, "tiny-model", api_key="k-123", sleep=no_sleep)
        out = gen.generate([("system", "be brief"), ("user", "write")], temperature=0.5, max_tokens=30, seed=7)
    assert out == "As Bacon said, “Knowledge is power.”"
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == "Bearer k-123"
    body = req["body"]
    assert body["model"] == "tiny-model" and body["temperature"] == 0.5 and body["max_tokens"] == 30
    assert body["seed"] == 7
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write"}]


def test_prefill_becomes_an_instruction_and_stop_strings_are_sent_and_applied():
    with ChatServer([reply("In the words of Bacon, “Knowledge is power.”\nExtra line")]) as srv:
        gen = OpenAIChatGenerator(srv.url, sleep=no_sleep)
        out = gen.generate([("user", "write"), ("assistant", "In the words of")], stop=("\n",))
    assert out == "In the words of Bacon, “Knowledge is power.”"
    body = srv.requests[0]["body"]
    assert "model" not in body and body["stop"] == ["\n"]
    assert body["messages"] == [{"role": "user", "content": "write\n\nBegin your reply with: In the words of"}]


def test_transient_failures_are_retried_with_backoff():
    waits = []
    with ChatServer([(503, {"error": {"message": "busy"}}), (429, "slow down"), reply("ok")]) as srv:
        gen = OpenAIChatGenerator(srv.url, retries=2, backoff=0.25, sleep=waits.append)
        assert gen.generate([("user", "hi")]) == "ok"
    assert len(srv.requests) == 3
    assert waits == [0.25, 0.0]  # exponential backoff, then the server's Retry-After


def test_persistent_server_errors_give_a_clear_generation_error():
    with ChatServer([(500, {"error": {"message": "boom"}})]) as srv:
        gen = OpenAIChatGenerator(srv.url, retries=2, sleep=no_sleep)
        with pytest.raises(GenerationError, match=r"failed after 3 attempt\(s\): HTTP 500"):
            gen.generate([("user", "hi")])
    assert len(srv.requests) == 3


def test_client_errors_are_not_retried_and_carry_the_server_message():
    with ChatServer([(401, {"error": {"message": "invalid api key"}})]) as srv:
        gen = OpenAIChatGenerator(srv.url, retries=3, sleep=no_sleep)
        with pytest.raises(GenerationError, match="HTTP 401: invalid api key"):
            gen.generate([("user", "hi")])
    assert len(srv.requests) == 1


@pytest.mark.parametrize("payload", ["not json", {"choices": []}, {"choices": [{"message": {"content": None}}]}])
def test_malformed_responses(payload):
    with ChatServer([(200, payload)]) as srv:
        gen = OpenAIChatGenerator(srv.url, retries=0, sleep=no_sleep)
        with pytest.raises(GenerationError, match="sent"):
            gen.generate([("user", "hi")])


def test_unreachable_endpoint():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    gen = OpenAIChatGenerator(f"http://127.0.0.1:{port}/v1", retries=1, timeout=2, sleep=no_sleep)
    with pytest.raises(GenerationError, match="unreachable"):
        gen.generate([("user", "hi")])


def test_timeout():
    with ChatServer([("sleep", 1.0)]) as srv:
        gen = OpenAIChatGenerator(srv.url, retries=0, timeout=0.2, sleep=no_sleep)
        started = time.monotonic()
        with pytest.raises(GenerationError, match="timed out"):
            gen.generate([("user", "hi")])
        assert time.monotonic() - started < 1.0


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
    assert gen._model is None  # nothing loaded yet


# -- the local generator, with a character-level fake model ----------------------------------------------------
class CharTokenizer:
    chat_template = "fake"
    pad_token_id = 0
    eos_token_id = 0

    def apply_chat_template(self, chat, tokenize=False, add_generation_prompt=True):
        return "".join(f"<{m['role']}>{m['content']}" for m in chat) + ("<assistant>" if add_generation_prompt else "")

    def __call__(self, text, return_tensors=None, add_special_tokens=False):
        import torch

        return {"input_ids": torch.tensor([[ord(c) for c in text]])}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids if int(i))


class EchoModel:
    """Generates a fixed continuation one character per step, honouring stopping criteria."""

    def __init__(self, continuation):
        self.continuation = continuation
        self.options = None

    def generate(self, input_ids, max_new_tokens, stopping_criteria=None, **options):
        import torch

        self.options = options
        ids = input_ids
        for ch in self.continuation[:max_new_tokens]:
            ids = torch.cat([ids, torch.tensor([[ord(ch)]])], dim=1)
            if stopping_criteria and bool(stopping_criteria[0](ids, None)[0]):
                break
        return ids


def test_local_generator_continues_a_prefill_and_stops():
    model = EchoModel(" Einstein, “Imagination.”\nMore text")
    gen = TransformersGenerator(lambda: (model, CharTokenizer()), name="fake")
    chat = [("system", "s"), ("user", "u"), ("assistant", "In the words of")]
    assert gen.prompt(chat) == "<system>s<user>u<assistant>In the words of"
    out = gen.generate(chat, stop=("\n",))
    assert out == "In the words of Einstein, “Imagination.”"
    assert model.options["do_sample"] is False


def test_local_generator_samples_with_a_seed():
    model = EchoModel("abc")
    gen = TransformersGenerator(lambda: (model, CharTokenizer()))
    assert gen.generate([("user", "u")], temperature=0.5, max_tokens=2, seed=3) == "ab"
    assert model.options["do_sample"] is True and model.options["temperature"] == 0.5
