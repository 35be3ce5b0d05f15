"""Command line: `python -m engine generate --prompt "..." --max-tokens 20 [--trace out.jsonl]`."""
from __future__ import annotations

import argparse
import sys

from engine.config import BACKENDS, BATCHERS, EngineConfig
from engine.messages import ConfigError
from engine.models.loader import DEFAULT_MODEL, MODEL_CHOICES
from engine.lab.trace import TraceError


def add_engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"{', '.join(MODEL_CHOICES)}, a .gguf file or an HF folder")
    default = EngineConfig.default  # every engine flag's default is EngineConfig's
    p.add_argument("--batcher", choices=BATCHERS, default=default("batcher"))
    p.add_argument("--backend", choices=BACKENDS, default=default("attention_backend"), help="attention backend")
    p.add_argument("--block-size", type=int, default=default("block_size"))
    p.add_argument("--num-blocks", type=int, default=default("num_blocks"))
    p.add_argument("--max-num-seqs", type=int, default=default("max_num_seqs"))
    p.add_argument("--max-num-batched-tokens", type=int, default=default("max_num_batched_tokens"))
    p.add_argument("--device", default=default("device"), help="auto: CUDA when present, else cpu")


def engine_kwargs(args) -> dict:
    return dict(batcher=args.batcher, attention_backend=args.backend, block_size=args.block_size,
                num_blocks=args.num_blocks, max_num_seqs=args.max_num_seqs,
                max_num_batched_tokens=args.max_num_batched_tokens, device=args.device)


def cmd_generate(args) -> int:
    from engine import LLM, SamplingParams
    from engine.lab.trace import TraceRequest, write_trace

    llm = LLM(args.model, **engine_kwargs(args))
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k,
                            max_tokens=args.max_tokens, seed=args.seed, ignore_eos=args.ignore_eos)
    prompts = args.prompt
    snapshots = []
    if args.chat:
        outputs = llm.chat([[{"role": "user", "content": p}] for p in prompts], params, on_step=snapshots.append)
    else:
        outputs = llm.generate(prompts, params, on_step=snapshots.append)
    for out in outputs:
        if out.error:
            print(f"[{out.request_id}] rejected: {out.error}", file=sys.stderr)
            continue
        if len(outputs) > 1:
            print(f"[{out.request_id}]", end=" ")
        print(out.text)
    if args.trace:
        engine = llm.engine
        requests = [TraceRequest(r.request_id, r.prompt_token_ids, r.sampling_params, r.arrival_step,
                                 r.request_class, r.priority, r.slo, r.prompt) for r in engine.requests.values()]
        write_trace(args.trace, {"model": args.model, "engine_config": engine.config.to_dict()}, requests, snapshots)
        print(f"wrote {len(snapshots)} step snapshots to {args.trace}", file=sys.stderr)
    return 0 if all(o.error is None for o in outputs) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine", description="Serving Lab's inference engine")
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", help="generate text for one or more prompts")
    gen.add_argument("--prompt", action="append", required=True, help="repeat for several prompts (one batch)")
    gen.add_argument("--max-tokens", type=int, default=32)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--top-p", type=float, default=1.0)
    gen.add_argument("--top-k", type=int, default=0)
    gen.add_argument("--seed", type=int, default=None)
    gen.add_argument("--ignore-eos", action="store_true")
    gen.add_argument("--chat", action="store_true", help="wrap each prompt in the model's chat template")
    gen.add_argument("--trace", help="write the requests and every step snapshot to this JSONL file")
    add_engine_args(gen)
    gen.set_defaults(func=cmd_generate)

    from engine.lab.bench import add_bench_parser
    add_bench_parser(sub)
    from engine.server.cli import add_serve_parser
    add_serve_parser(sub, add_engine_args, engine_kwargs)
    from engine.server.loadgen import add_loadgen_parser
    add_loadgen_parser(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, TraceError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
