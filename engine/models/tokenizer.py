"""Tokenizers: bytes for the tiny model; byte-level BPE (built from a GGUF file) for SmolLM2."""
from __future__ import annotations

from typing import Protocol


def bos_prefix(tokenizer) -> list[int]:
    """The BOS token a prompt starts with, for a tokenizer whose model expects one (`add_bos`); else none."""
    bos = tokenizer.bos_token_id
    return [bos] if getattr(tokenizer, "add_bos", False) and bos is not None else []


class Tokenizer(Protocol):
    vocab_size: int
    bos_token_id: int | None
    eos_token_ids: tuple[int, ...]

    def encode(self, text: str) -> list[int]: ...

    def decode(self, token_ids: list[int]) -> str: ...

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str: ...


def chatml(messages: list[dict], add_generation_prompt: bool = True,
           default_system: str | None = None) -> str:
    """ChatML, the template SmolLM2-Instruct was trained with."""
    if default_system and (not messages or messages[0].get("role") != "system"):
        messages = [{"role": "system", "content": default_system}] + list(messages)
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def bos_prefix(tokenizer) -> list[int]:
    """The BOS token a prompt starts with, for a tokenizer whose model expects one (`add_bos`); else none."""
    bos = tokenizer.bos_token_id
    return [bos] if getattr(tokenizer, "add_bos", False) and bos is not None else []


class ByteTokenizer:
    """One token per UTF-8 byte, plus BOS, EOS and PAD. Any text round-trips."""

    vocab_size = 259
    bos_token_id = 256
    eos_token_id = 257
    pad_token_id = 258
    eos_token_ids = (257,)
    add_bos = True  # the tiny model was trained on BOS-framed paragraphs

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, token_ids: list[int]) -> str:
        return bytes(t for t in token_ids if t < 256).decode("utf-8", errors="replace")

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        # The tiny model was never taught to chat: the conversation becomes plain text to continue.
        return "\n".join(m["content"] for m in messages) + ("\n" if add_generation_prompt else "")
