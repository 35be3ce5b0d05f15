"""Byte-level BPE (GPT-2 style, as SmolLM2 uses), built with `tokenizers` from a GGUF vocabulary or a tokenizer.json."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tokenizers import AddedToken, decoders, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from engine.messages import ConfigError
from engine.models.tokenizer import chatml

# GGUF `tokenizer.ggml.pre` values whose split we reproduce. smollm/starcoder/refact: llama.cpp splits
# every digit off first, then applies the GPT-2 regex (= HF's Digits(individual) + ByteLevel).
_DIGITS_THEN_GPT2 = ("smollm", "starcoder", "refact")
_PRE_TYPES = _DIGITS_THEN_GPT2 + ("gpt-2",)
# Tokens that end a turn or a document: generation stops on any of them (when the vocabulary has them).
_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>")
_CONTROL, _USER_DEFINED = 3, 4  # gguf.TokenType values
# The default system prompt a ChatML template writes when the conversation has none (SmolLM2's does).
_DEFAULT_SYSTEM = re.compile(r"<\|im_start\|>system(?:\n|\\n)([^'\"{}<]+)<\|im_end\|>")  # literal text only


class BPETokenizer:
    """The `engine.models.tokenizer.Tokenizer` protocol over a Hugging Face `tokenizers.Tokenizer`."""

    def __init__(self, tok: HFTokenizer, eos_token_ids, bos_token_id: int | None, chat_template: str | None = None):
        self._tok = tok
        self.vocab_size = tok.get_vocab_size(with_added_tokens=True)
        self.bos_token_id = bos_token_id
        self.eos_token_ids = tuple(eos_token_ids)
        self.chat_template = chat_template
        found = _DEFAULT_SYSTEM.search(chat_template or "")
        self.default_system = found.group(1) if found else None

    @classmethod
    def from_gguf(cls, reader) -> "BPETokenizer":
        def field(key, default=None):
            f = reader.get_field(key)
            return default if f is None else f.contents()

        kind, pre = field("tokenizer.ggml.model"), field("tokenizer.ggml.pre", "gpt-2")
        if kind != "gpt2" or pre not in _PRE_TYPES:
            raise ConfigError("gguf.tokenizer", kind=kind, pre=pre, choices=", ".join(_PRE_TYPES))
        tokens, types = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.token_type")
        merges = [tuple(m.split(" ", 1)) for m in field("tokenizer.ggml.merges")]
        tok = HFTokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
        split = [pre_tokenizers.Digits(individual_digits=True)] if pre in _DIGITS_THEN_GPT2 else []
        tok.pre_tokenizer = pre_tokenizers.Sequence(split + [pre_tokenizers.ByteLevel(add_prefix_space=False)])
        tok.decoder = decoders.ByteLevel()
        # Control tokens (<|im_start|> ...) must match whole, before the BPE ever sees their characters.
        controls = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty == _CONTROL}
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in controls])
        tok.add_tokens([AddedToken(t, normalized=False) for t, ty in zip(tokens, types) if ty == _USER_DEFINED])
        eos = [field("tokenizer.ggml.eos_token_id"), field("tokenizer.ggml.eot_token_id")]
        eos += [controls[t] for t in _END_TOKENS if t in controls]
        eos = list(dict.fromkeys(i for i in eos if i is not None))  # dedupe, keep order
        return cls(tok, eos, field("tokenizer.ggml.bos_token_id"), field("tokenizer.chat_template"))

    @classmethod
    def from_file(cls, path: str | Path, eos_token_ids=(), bos_token_id: int | None = None) -> "BPETokenizer":
        """A tokenizer.json; its chat template comes from tokenizer_config.json beside it, when there is one."""
        path = Path(path)
        config = path.with_name("tokenizer_config.json")
        template = json.loads(config.read_text()).get("chat_template") if config.is_file() else None
        return cls(HFTokenizer.from_file(str(path)), eos_token_ids, bos_token_id,
                   template if isinstance(template, str) else None)

    def save(self, path: str | Path) -> None:
        """Write tokenizer.json (and tokenizer_config.json with the chat template) as `from_file` reads them."""
        path = Path(path)
        self._tok.save(str(path))
        if self.chat_template:
            path.with_name("tokenizer_config.json").write_text(json.dumps({"chat_template": self.chat_template}))

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids  # no BOS: SmolLM2 adds none

    def decode(self, token_ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._tok.decode(list(token_ids), skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        return chatml(messages, add_generation_prompt, default_system=self.default_system)
