"""Each engine default lives in EngineConfig: the command line's flags read it rather than retype it."""
from engine import EngineConfig
from engine.__main__ import build_parser, engine_kwargs
from engine.server.cli import engine_config_kwargs


def test_every_engine_flag_of_serve_and_generate_defaults_to_engine_config():
    defaults = EngineConfig()
    serve = engine_config_kwargs(build_parser().parse_args(["serve"]), engine_kwargs)
    generate = engine_kwargs(build_parser().parse_args(["generate", "--prompt", "x"]))
    for name, value in {**serve, **generate}.items():
        assert value == getattr(defaults, name), f"--{name.replace('_', '-')} defaults to {value!r}"
    assert serve["dtype"] == "auto"  # bfloat16 on a GPU, float32 on the CPU, as LLM(...) loads


def test_serve_dtype_auto_resolves_where_the_model_loads(tiny):
    from engine import LLMEngine

    engine = LLMEngine(tiny, EngineConfig(**engine_config_kwargs(build_parser().parse_args(["serve"]),
                                                                 engine_kwargs)))
    assert engine.config.dtype == "float32" and engine.config.max_model_len == 512
