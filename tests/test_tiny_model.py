"""The shipped tiny model: it loads from the repo files, predicts held-out Austen text as well as
its training run reported, and samples English-looking text. `tiny` is the session fixture in conftest."""
from __future__ import annotations

import json
import re

import torch
import torch.nn.functional as F

from engine.models.loader import TINY_DIR

BOS, EOS = 256, 257
CONTEXT = 512
COMMON_WORDS = {"the", "and", "of", "to", "a", "in", "was", "her", "she", "he", "his", "it", "that",
                "not", "be", "had", "i", "you", "with", "as", "for", "but", "is", "my", "have"}


def frame(text: str) -> torch.Tensor:
    """As in scripts/train_tiny.py: BOS + UTF-8 bytes + EOS per paragraph, packed."""
    ids: list[int] = []
    for p in text.split("\n\n"):
        if p.strip():
            ids += [BOS, *p.strip().encode("utf-8"), EOS]
    return torch.tensor(ids)


def test_loads_with_expected_config(tiny):
    cfg = tiny.model.config
    assert (cfg.vocab_size, cfg.num_hidden_layers, cfg.num_key_value_heads) == (259, 4, 2)
    assert cfg.num_attention_heads == 4 and cfg.tie_word_embeddings
    assert cfg.eos_token_ids == (EOS,) and tiny.tokenizer.vocab_size == 259
    assert next(tiny.model.parameters()).dtype == torch.float32


@torch.no_grad()
def test_heldout_loss_matches_training_report(tiny):
    reported = json.loads((TINY_DIR / "metrics.json").read_text())["heldout_loss_nats_per_byte"]
    stream = frame((TINY_DIR / "heldout.txt").read_text(encoding="utf-8"))
    n = (len(stream) - 1) // CONTEXT  # consecutive windows, CONTEXT predictions each
    rows = torch.stack([stream[i * CONTEXT:(i + 1) * CONTEXT + 1] for i in range(n)])
    total = 0.0
    for batch in rows.split(16):
        logits = tiny.model.forward_dense(batch[:, :-1])
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1),
                                 reduction="sum").item()
    loss = total / (n * CONTEXT)
    assert loss < reported + 0.02, f"held-out loss {loss:.4f} nats/byte, training reported {reported}"
    assert loss < 2.0  # a random model scores ~5.5: the figure above must mean something


@torch.no_grad()
def test_samples_look_like_english(tiny):
    gen = torch.Generator().manual_seed(0)
    ids, out = [BOS], []
    while len(out) < 200:
        logits = tiny.model.forward_dense(torch.tensor([ids[-CONTEXT:]]))[0, -1] / 0.8
        top = torch.topk(logits, 40)
        nxt = top.indices[torch.multinomial(top.values.softmax(-1), 1, generator=gen)].item()
        if nxt == EOS:  # paragraph over: start a new one, as the packed training stream does
            ids += [EOS, BOS]
            out.append(ord("\n"))
        elif nxt < 256:
            ids.append(nxt)
            out.append(nxt)
    text = bytes(out).decode("utf-8", errors="replace")
    plain = sum(c.isascii() and (c.isalpha() or c in " ,.'\n;!?-\"") for c in text) / len(text)
    words = set(re.findall(r"[a-z]+", text.lower()))
    assert plain > 0.8, f"only {plain:.0%} letters and punctuation: {text!r}"
    assert len(words & COMMON_WORDS) >= 4, f"few common English words: {text!r}"


def test_hf_folder_errors_say_what_was_expected(tmp_path):
    import shutil

    import pytest

    from engine.messages import ConfigError
    from engine.models.loader import load_model

    with pytest.raises(ConfigError, match="no model named"):
        load_model(str(tmp_path / "nowhere"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match=r"must hold config.json and at least one \*.safetensors"):
        load_model(str(empty))
    broken = tmp_path / "broken"
    shutil.copytree(TINY_DIR, broken)
    (broken / "config.json").write_text("{not json")
    with pytest.raises(ConfigError, match="not a valid config.json"):
        load_model(str(broken))
    wrong = tmp_path / "wrong"
    shutil.copytree(TINY_DIR, wrong)
    cfg = json.loads((TINY_DIR / "config.json").read_text())
    (wrong / "config.json").write_text(json.dumps({**cfg, "hidden_size": 64}))
    with pytest.raises(ConfigError, match="the weights do not fit the config"):
        load_model(str(wrong))
