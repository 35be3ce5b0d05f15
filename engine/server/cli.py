"""`python -m engine serve`: the lab's engine behind an OpenAI-compatible API, flags in vLLM's names."""
from __future__ import annotations

import argparse
import sys

from engine.config import DTYPE_NAMES, KV_LAYOUTS, POLICIES, PREEMPTION_MODES, EngineConfig
from engine.policy_key_flags import POLICY_KEY_KNOBS, add_policy_key_args
from engine.server.supervisor import HEARTBEAT_TIMEOUT_S

DEFAULT_PORT = 8000


def add_serve_parser(sub, add_engine_args, engine_kwargs) -> None:
    """The generic engine flags come from engine/__main__.py; every engine default is EngineConfig's."""
    default = EngineConfig.default
    p = sub.add_parser("serve", help="serve the engine over HTTP (OpenAI-compatible, vLLM's /metrics)")
    add_engine_args(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--served-model-name", default=None, help="the name clients send as `model` (default: --model)")
    p.add_argument("--max-model-len", type=int, default=default("max_model_len"))
    p.add_argument("--scheduling-policy", choices=POLICIES, default=default("policy"))
    add_policy_key_args(p)
    p.add_argument("--preemption-mode", choices=PREEMPTION_MODES, default=default("preemption_mode"))
    p.add_argument("--kv-layout", choices=KV_LAYOUTS, default=default("kv_layout"))
    p.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction,
                   default=default("enable_prefix_caching"))
    p.add_argument("--enable-chunked-prefill", action=argparse.BooleanOptionalAction,
                   default=default("enable_chunked_prefill"))
    p.add_argument("--long-prefill-token-threshold", type=int, default=default("long_prefill_token_threshold"))
    p.add_argument("--num-swap-blocks", type=int, default=default("num_swap_blocks"))
    p.add_argument("--priority-aging-steps", type=int, default=default("priority_aging_steps"))
    p.add_argument("--max-wait-steps", type=int, default=default("max_wait_steps"),
                   help="static batcher: steps to wait for a full batch")
    p.add_argument("--contiguous-reserve", choices=("max_tokens", "max_model_len"),
                   default=default("contiguous_reserve"))
    p.add_argument("--vllm-v1-semantics", action=argparse.BooleanOptionalAction, default=default("vllm_v1_semantics"),
                   help="schedule as vLLM v1 does: no waiting request preempts running ones; recompute only")
    p.add_argument("--dtype", choices=DTYPE_NAMES, default=default("dtype"),
                   help="auto: bfloat16 on a GPU, float32 on the CPU")
    p.add_argument("--max-waiting", type=int, default=1024,
                   help="requests allowed to wait for a slot; beyond it: 503 with Retry-After")
    p.add_argument("--heartbeat-timeout", type=float, default=HEARTBEAT_TIMEOUT_S,
                   help="seconds of silence after which the engine core is taken for stopped and restarted")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20)
    p.set_defaults(func=cmd_serve, engine_kwargs=engine_kwargs)


def engine_config_kwargs(args, engine_kwargs) -> dict:
    return {**engine_kwargs(args), **{k: getattr(args, k) for k in POLICY_KEY_KNOBS},
            "max_model_len": args.max_model_len, "policy": args.scheduling_policy,
            "preemption_mode": args.preemption_mode, "kv_layout": args.kv_layout,
            "enable_prefix_caching": args.enable_prefix_caching, "enable_chunked_prefill": args.enable_chunked_prefill,
            "long_prefill_token_threshold": args.long_prefill_token_threshold,
            "num_swap_blocks": args.num_swap_blocks, "priority_aging_steps": args.priority_aging_steps,
            "max_wait_steps": args.max_wait_steps, "contiguous_reserve": args.contiguous_reserve, "dtype": args.dtype,
            "vllm_v1_semantics": args.vllm_v1_semantics}


def make_app(model: str, served_model_name: str | None = None, max_waiting: int = 1024,
             max_body_bytes: int = 1 << 20, loaded=None, **engine_kwargs):
    """The FastAPI app for a model name (or an already loaded model) and EngineConfig keywords (and
    `heartbeat_timeout_s`, the supervisor's); the engine loads and steps in a process of its own."""
    from engine import EngineConfig
    from engine.server.api import build_app
    from engine.server.async_engine import AsyncEngine

    heartbeat_timeout_s = engine_kwargs.pop("heartbeat_timeout_s", HEARTBEAT_TIMEOUT_S)
    config = EngineConfig(**engine_kwargs).validate()
    name = served_model_name or model
    engine = AsyncEngine(model, config, name, max_waiting, loaded, heartbeat_timeout_s)
    return build_app(engine, name, max_body_bytes)


def cmd_serve(args) -> int:
    import uvicorn

    from engine.server.async_engine import EngineDead
    from engine.server.connection import HTTP_PROTOCOL

    try:
        app = make_app(args.model, args.served_model_name, args.max_waiting, args.max_body_bytes,
                       heartbeat_timeout_s=args.heartbeat_timeout, **engine_config_kwargs(args, args.engine_kwargs))
    except EngineDead as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"serving {args.served_model_name or args.model} on http://{args.host}:{args.port}", file=sys.stderr,
          flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False,
                http=HTTP_PROTOCOL)
    return 0
