"""Tiny real models for tests: a character tokenizer with a randomly initialised Llama (for the scorer), and a chat
tokenizer with a model that echoes (for the local generator)."""

from __future__ import annotations


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


class ChatTokenizer:
    """A chat tokenizer for the local generator: one token per character (its code point; 0 pads and ends), and a
    chat template that writes each message as ``<role>content``."""

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
    """A causal LM for :class:`ChatTokenizer` that generates a fixed continuation one character per step, honouring
    stopping criteria; ``options`` keeps the generation options it was last called with."""

    def __init__(self, continuation) -> None:
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
