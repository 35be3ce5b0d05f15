"""Train the tiny byte-level model that ships in models/tiny, on CPU, with the engine's own model class.

    python scripts/janeausten_corpus.py /tmp/austen.txt
    python scripts/train_tiny.py --corpus /tmp/austen.txt

Each paragraph becomes BOS + UTF-8 bytes + EOS; the paragraphs are packed into one stream and
the model learns from random windows of it, so it also learns where a paragraph ends. The last
~3% of the paragraphs are held out and never trained on.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from engine.config import ModelConfig
from engine.models.loader import TINY_DIR, load_model
from engine.models.llama import LlamaForCausalLM
from engine.models.tokenizer import ByteTokenizer

BOS, EOS = ByteTokenizer.bos_token_id, ByteTokenizer.eos_token_id
CONFIG = ModelConfig(vocab_size=259, hidden_size=128, intermediate_size=352, num_hidden_layers=4,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                     rope_theta=10000.0, tie_word_embeddings=True, bos_token_id=BOS, eos_token_id=EOS)
HELDOUT_FRACTION = 0.03
HELDOUT_FILE_BYTES = 32_000


def frame(paragraphs: list[str]) -> torch.Tensor:
    """BOS + bytes + EOS per paragraph, packed into one stream (the test frames text the same way)."""
    ids: list[int] = []
    for p in paragraphs:
        ids += [BOS, *p.encode("utf-8"), EOS]
    return torch.tensor(ids, dtype=torch.long)


@torch.no_grad()
def mean_loss(model: LlamaForCausalLM, stream: torch.Tensor, context: int, batch: int = 16) -> float:
    """Mean next-byte loss (nats) over consecutive non-overlapping windows of `context` predictions."""
    n = (len(stream) - 1) // context
    total = 0.0
    for i in range(0, n, batch):
        rows = torch.stack([stream[j * context:(j + 1) * context + 1] for j in range(i, min(i + batch, n))])
        logits = model.forward_dense(rows[:, :-1]).float()
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1), reduction="sum").item()
    return total / (n * context)


@torch.no_grad()
def sample(model: LlamaForCausalLM, prompt: str, n: int, temperature=0.8, top_k=40, seed=0) -> str:
    gen = torch.Generator().manual_seed(seed)
    ids = [BOS, *prompt.encode("utf-8")]
    for _ in range(n):
        logits = model.forward_dense(torch.tensor([ids[-CONFIG.max_position_embeddings:]]))[0, -1].float()
        top = torch.topk(logits / temperature, top_k)
        nxt = top.indices[torch.multinomial(top.values.softmax(-1), 1, generator=gen)].item()
        if nxt == EOS:
            break
        ids.append(nxt)
    return ByteTokenizer().decode(ids[1:])


def lr_at(step: int, args) -> float:
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine down to 10%


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="text file, paragraphs separated by blank lines")
    ap.add_argument("--out", default=str(TINY_DIR))
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--minutes", type=float, default=16.0, help="stop early after this much training time")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--log-every", type=int, default=25)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(2)
    torch.manual_seed(args.seed)

    paragraphs = [p.strip() for p in Path(args.corpus).read_text(encoding="utf-8").split("\n\n") if p.strip()]
    n_val = max(1, int(len(paragraphs) * HELDOUT_FRACTION))
    train, val = frame(paragraphs[:-n_val]), frame(paragraphs[-n_val:])
    print(f"{len(paragraphs)} paragraphs: train {len(train):,} tokens, held out {n_val} paragraphs "
          f"({len(val):,} tokens)", flush=True)

    model = LlamaForCausalLM(CONFIG).init_weights(args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params:,} parameters", flush=True)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed)
    log_rows, running, t0, step = [], [], time.time(), 0
    model.train()
    for step in range(args.steps):
        starts = torch.randint(0, len(train) - args.context - 1, (args.batch,), generator=gen)
        rows = torch.stack([train[s:s + args.context + 1] for s in starts.tolist()])
        lr = lr_at(step, args)
        for group in opt.param_groups:
            group["lr"] = lr
        with torch.autocast("cpu", dtype=torch.bfloat16):  # ~40% faster than fp32 on this CPU
            logits = model.forward_dense(rows[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, CONFIG.vocab_size), rows[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running.append(loss.item())
        elapsed = time.time() - t0
        if (step + 1) % args.log_every == 0 or step == 0:
            log_rows.append((step + 1, round(sum(running) / len(running), 4), round(lr, 6), round(elapsed, 1)))
            print(f"step {step + 1:5d}  loss {log_rows[-1][1]:.4f}  lr {lr:.2e}  {elapsed:6.0f} s", flush=True)
            running = []
        if elapsed > args.minutes * 60:
            print(f"time cap of {args.minutes} min reached after {step + 1} steps", flush=True)
            break
    steps_done, wall_s = step + 1, time.time() - t0
    model.eval()
    print(f"validation loss (all {n_val} held-out paragraphs, fp32): "
          f"{mean_loss(model, val, args.context):.4f} nats/byte", flush=True)

    # Save: HF-style config + fp16 safetensors, and a slice of the held-out text for the test.
    from safetensors.torch import save_file
    (out / "config.json").write_text(json.dumps(CONFIG.to_dict(), indent=2) + "\n")
    save_file({k: v.half() for k, v in model.state_dict_for_save().items()}, str(out / "model.safetensors"))
    heldout, size = [], 0
    for p in paragraphs[-n_val:]:
        if size >= HELDOUT_FILE_BYTES:
            break
        heldout.append(p)
        size += len(p.encode("utf-8")) + 2
    (out / "heldout.txt").write_text("\n\n".join(heldout) + "\n", encoding="utf-8")
    with open(out / "train_log.csv", "w", newline="") as f:
        csv.writer(f).writerows([("step", "train_loss", "lr", "elapsed_s"), *log_rows])

    # The figure the test checks: the saved fp16 weights, loaded the way the engine loads them.
    loaded = load_model("tiny" if out.resolve() == TINY_DIR else str(out)).model
    heldout_loss = mean_loss(loaded, frame(heldout), args.context)
    metrics = {"heldout_loss_nats_per_byte": round(heldout_loss, 4), "steps": steps_done,
               "wall_s": round(wall_s, 1), "seed": args.seed,
               "corpus": "Jane Austen's six novels (Debian r-cran-janeaustenr)",
               "command": "python " + " ".join(sys.argv), "parameters": n_params}
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    print(f"held-out loss (heldout.txt, saved fp16 weights): {heldout_loss:.4f} nats/byte "
          f"= {heldout_loss / math.log(2):.3f} bits/byte", flush=True)
    for i, prompt in enumerate(["", "It is a truth universally acknowledged", "Elizabeth"]):
        print(f"sample {i}: {sample(loaded, prompt, 300, seed=i)!r}", flush=True)


if __name__ == "__main__":
    main()
