"""Find and load a model by name or path: `tiny`, `smollm2`, `random-small`, a GGUF file or an HF folder."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from engine.config import ModelConfig, resolve_device, resolve_dtype
from engine.messages import ConfigError
from engine.models.llama import LlamaForCausalLM
from engine.models.loaded import LoadedModel, Progress
from engine.models.tokenizer import ByteTokenizer, Tokenizer

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY_DIR = REPO_ROOT / "models" / "tiny"
DEFAULT_MODEL = "tiny"
MODEL_CHOICES = ("tiny", "smollm2", "random-small")

# A seeded random model: fast, needs no file; its text is noise but its tokens are deterministic.
RANDOM_SMALL = ModelConfig(vocab_size=259, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                           rope_theta=10000.0, bos_token_id=256, eos_token_id=257, initializer_range=0.5)

def _noop(msg: str, frac: float) -> None:
    pass


def load_model(name_or_path: str = DEFAULT_MODEL, dtype: torch.dtype | str = "auto", device: str = "auto",
               progress: Progress | None = None) -> LoadedModel:
    """`device="auto"`: CUDA when present, else CPU; `dtype="auto"`: bfloat16 on CUDA, float32 on CPU."""
    progress = progress or _noop
    device = resolve_device(device)
    if isinstance(dtype, str):
        dtype = getattr(torch, resolve_dtype(dtype, device))
    if name_or_path == "random-small":
        model = LlamaForCausalLM(RANDOM_SMALL).init_weights(seed=0)
        loaded = LoadedModel("random-small", model, ByteTokenizer(), "seeded random init (seed 0)")
    elif name_or_path == "tiny":
        loaded = _load_hf_dir(TINY_DIR, "tiny", progress)
        loaded.tokenizer = ByteTokenizer()
    elif name_or_path == "smollm2":
        from engine.models.gguf_loader import load_gguf, smollm2_gguf_path  # needs gguf and tokenizers
        loaded = load_gguf(smollm2_gguf_path(), "smollm2", progress)
    else:
        path = Path(name_or_path)
        if not path.exists():
            raise ConfigError("model.unknown", name=name_or_path, choices=", ".join(MODEL_CHOICES))
        if path.suffix == ".gguf":
            from engine.models.gguf_loader import load_gguf
            loaded = load_gguf(path, path.stem, progress)
        else:
            loaded = _load_hf_dir(path, path.name, progress)
    loaded.model.to(device=device, dtype=dtype).eval()
    progress("ready", 1.0)
    return loaded


def _load_hf_dir(path: Path, name: str, progress: Progress) -> LoadedModel:
    from safetensors.torch import load_file

    config_file = path / "config.json"
    weight_files = sorted(path.glob("*.safetensors"))
    if not config_file.is_file() or not weight_files:
        raise ConfigError("model.folder_incomplete", path=str(path),
                          found=", ".join(p.name for p in path.iterdir()) if path.is_dir() else "not a folder")
    try:
        cfg = ModelConfig.from_dict(json.loads(config_file.read_text()))
    except (json.JSONDecodeError, TypeError) as e:
        raise ConfigError("model.bad_config_json", path=str(config_file), detail=str(e)) from e
    progress(f"reading {len(weight_files)} weight file(s)", 0.2)
    weights: dict[str, torch.Tensor] = {}
    for f in weight_files:
        weights.update(load_file(str(f)))
    model = LlamaForCausalLM.from_weights(cfg, weights)
    tokenizer = _hf_tokenizer(path, cfg) if (path / "tokenizer.json").is_file() else ByteTokenizer()
    return LoadedModel(name, model, tokenizer, str(path))


def _hf_tokenizer(path: Path, cfg: ModelConfig) -> Tokenizer:
    from engine.models.bpe_tokenizer import BPETokenizer  # needs tokenizers: only models that ship one load it

    return BPETokenizer.from_file(path / "tokenizer.json", eos_token_ids=cfg.eos_token_ids,
                                  bos_token_id=cfg.bos_token_id)
