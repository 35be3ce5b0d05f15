"""A Llama-style decoder (RMSNorm, RoPE, grouped-query attention, SwiGLU) with Hugging Face weight names.

Two ways to run it:
- paged: a flat batch of tokens from many requests; attention writes K/V only through
  `slot_mapping` and reads them only through block tables (see kernels/).
- dense: `[batch, seq]` with plain causal attention and no cache. It trains the tiny model
  and is the oracle the paged engine must match token for token.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from engine.messages import ConfigError

if TYPE_CHECKING:  # annotations only: no import chain at run time
    from engine.config import ModelConfig


@dataclass
class PagedContext:
    """What the attention layers need for one engine step (built by the runner)."""

    backend: object  # kernels.AttentionBackend
    metadata: object  # kernels.AttentionMetadata
    kv_caches: list[tuple[torch.Tensor, torch.Tensor]]  # per layer: (k_cache, v_cache)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + self.eps)).to(x.dtype) * self.weight


class RotaryEmbedding(nn.Module):
    """RoPE in the "rotate half" layout that Hugging Face Llama checkpoints use."""

    def __init__(self, head_dim: int, max_positions: int, theta: float):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
        angles = torch.outer(torch.arange(max_positions, dtype=torch.float64), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos().float(), persistent=False)
        self.register_buffer("sin", angles.sin().float(), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        # x: [..., tokens, heads, head_dim]; positions broadcast over the token axis
        cos = self.cos[positions].unsqueeze(-2).to(x.dtype)
        sin = self.sin[positions].unsqueeze(-2).to(x.dtype)
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int):
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads, self.num_kv_heads = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = cfg.head_dim
        self.scale = self.head_dim ** -0.5
        bias = cfg.attention_bias
        self.q_proj = nn.Linear(cfg.hidden_size, self.num_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(cfg.hidden_size, self.num_kv_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(cfg.hidden_size, self.num_kv_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, cfg.hidden_size, bias=False)

    def forward(self, x, positions, rope: RotaryEmbedding, paged: PagedContext | None):
        lead = x.shape[:-1]  # [tokens] when paged, [batch, seq] when dense
        q = rope(self.q_proj(x).view(*lead, self.num_heads, self.head_dim), positions)
        k = rope(self.k_proj(x).view(*lead, self.num_kv_heads, self.head_dim), positions)
        v = self.v_proj(x).view(*lead, self.num_kv_heads, self.head_dim)
        if paged is None:
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                is_causal=True, scale=self.scale, enable_gqa=True).transpose(1, 2)
        else:
            k_cache, v_cache = paged.kv_caches[self.layer_idx]
            paged.backend.store_kv(k, v, k_cache, v_cache, paged.metadata.slot_mapping)
            out = paged.backend.attention(q, k_cache, v_cache, paged.metadata, self.scale)
        return self.o_proj(out.reshape(*lead, self.num_heads * self.head_dim))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, layer_idx)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, positions, rope, paged):
        x = x + self.self_attn(self.input_layernorm(x), positions, rope, paged)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.rotary_emb = RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta)

    def forward(self, input_ids, positions, paged: PagedContext | None):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, positions, self.rotary_emb, paged)
        return self.norm(x)


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.model = LlamaModel(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    @classmethod
    def from_weights(cls, cfg: ModelConfig, weights: dict[str, torch.Tensor]) -> "LlamaForCausalLM":
        """Build without random init (seconds for a 135M model), then load every tensor."""
        with torch.device("meta"):
            model = cls(cfg)
        model.to_empty(device="cpu")
        model.model.rotary_emb = RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta)
        if cfg.tie_word_embeddings:  # to_empty made two tensors of the tied one
            model.lm_head.weight = model.model.embed_tokens.weight
        model.load_weights(weights)
        return model

    def init_weights(self, seed: int) -> "LlamaForCausalLM":
        """Seeded random init, for tests and the `random-small` model."""
        gen = torch.Generator().manual_seed(seed)
        std = self.config.initializer_range
        for name, p in self.named_parameters():
            with torch.no_grad():
                if name.endswith("norm.weight"):
                    p.fill_(1.0)
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
        return self

    def forward_paged(self, input_ids, positions, paged: PagedContext, logits_indices: torch.Tensor):
        """One engine step over a flat batch; logits only for the rows that sample."""
        hidden = self.model(input_ids, positions, paged)
        return self.lm_head(hidden[logits_indices])

    def forward_dense(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Full causal forward over `[batch, seq]`, no cache: logits for every position."""
        positions = torch.arange(input_ids.shape[-1], device=input_ids.device)
        return self.lm_head(self.model(input_ids, positions, None))

    def state_dict_for_save(self) -> dict[str, torch.Tensor]:
        sd = {k: v.contiguous() for k, v in self.state_dict().items()}
        if self.config.tie_word_embeddings:
            sd.pop("lm_head.weight", None)
        return sd

    def load_weights(self, weights: dict[str, torch.Tensor]) -> None:
        """Load HF-named tensors; every parameter must be present with its exact shape."""
        expected = self.state_dict_for_save()
        missing = sorted(set(expected) - set(weights))
        wrong = [f"{k}: file {tuple(weights[k].shape)}, model {tuple(v.shape)}"
                 for k, v in expected.items() if k in weights and weights[k].shape != v.shape]
        if missing or wrong:
            parts = []
            if missing:
                parts.append(f"missing tensors: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}")
            if wrong:
                parts.append(f"shape mismatch: {'; '.join(wrong[:5])}")
            raise ConfigError("model.weights_mismatch", detail=" | ".join(parts))
        params = dict(self.named_parameters())
        with torch.no_grad():
            for name, tensor in weights.items():
                if name in params:
                    params[name].copy_(tensor.to(params[name].dtype))
