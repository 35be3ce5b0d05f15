"""The flat tensors that describe one step's packed batch to the attention kernels.

Naming follows vLLM: queries of all requests are packed back to back (`cu_seqlens_q` marks
where each request's new tokens start); `seq_lens` counts each request's cached context plus
its new tokens; `block_tables[i, j]` is the physical block holding request i's tokens
j*block_size ... (j+1)*block_size-1; `slot_mapping[t] = block * block_size + offset` says where
new token t's K/V go (-1: do not store).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class AttentionMetadata:
    cu_seqlens_q: torch.Tensor  # [num_seqs + 1] int32
    seq_lens: torch.Tensor  # [num_seqs] int32
    block_tables: torch.Tensor  # [num_seqs, max_blocks] int32, padded with 0
    slot_mapping: torch.Tensor  # [num_tokens] int64
    query_lens_list: list[int]  # host copies, so the torch path never syncs
    seq_lens_list: list[int]
    block_size: int
    cache: dict = field(default_factory=dict)  # per-step plans a backend derives once, reused by every layer

    @property
    def num_seqs(self) -> int:
        return len(self.seq_lens_list)

    @property
    def max_query_len(self) -> int:
        return max(self.query_lens_list, default=0)

    @classmethod
    def build(cls, query_lens: list[int], seq_lens: list[int], block_tables: list[list[int]],
              slot_mapping: list[int], block_size: int, device: torch.device | str) -> "AttentionMetadata":
        cu = [0]
        for n in query_lens:
            cu.append(cu[-1] + n)
        width = max((len(t) for t in block_tables), default=0) or 1
        padded = [t + [0] * (width - len(t)) for t in block_tables]
        return cls(
            cu_seqlens_q=torch.tensor(cu, dtype=torch.int32, device=device),
            seq_lens=torch.tensor(seq_lens, dtype=torch.int32, device=device),
            block_tables=torch.tensor(padded, dtype=torch.int32, device=device).reshape(len(block_tables), width),
            slot_mapping=torch.tensor(slot_mapping, dtype=torch.int64, device=device),
            query_lens_list=list(query_lens), seq_lens_list=list(seq_lens), block_size=block_size)
