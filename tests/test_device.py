"""The engine runs where the model's weights are, and the sidebar states exactly that, read from the engine."""
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from engine import LLM, EngineConfig, LLMEngine, SamplingParams
from engine.config import resolve_device, resolve_dtype
from engine.messages import ConfigError
from engine.models.loader import load_model
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour of a machine without CUDA")


@no_cuda
def test_auto_means_cpu_and_float32_without_cuda():
    assert resolve_device("auto") == "cpu"
    assert resolve_dtype("auto", "cpu") == "float32" and resolve_dtype("auto", "cuda") == "bfloat16"
    engine = LLMEngine(load_model("random-small"), EngineConfig())
    assert (engine.device, engine.dtype, engine.attention_backend) == ("cpu", "float32", "torch")
    assert (engine.config.device, engine.config.dtype) == ("cpu", "float32"), "a trace must record what ran"


@no_cuda
def test_asking_for_cuda_without_one_is_a_clear_error_not_a_cpu_run():
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        LLM("random-small", device="cuda")


def test_the_engine_follows_a_bfloat16_model_and_its_cache_is_bfloat16():
    loaded = load_model("random-small", dtype="bfloat16", device="cpu")
    engine = LLMEngine(loaded, EngineConfig(max_num_seqs=2))
    assert engine.dtype == "bfloat16"
    assert engine.runner.kv_caches[0][0].dtype == torch.bfloat16
    engine.add_request([1, 2, 3], SamplingParams(max_tokens=3, ignore_eos=True))
    assert len(engine.run_until_done()) == 3


def test_an_explicit_dtype_or_device_that_disagrees_with_the_weights_is_refused():
    loaded = load_model("random-small", dtype="bfloat16", device="cpu")
    with pytest.raises(ConfigError, match="weights are bfloat16"):
        LLMEngine(loaded, EngineConfig(dtype="float32"))
    if torch.cuda.is_available():
        with pytest.raises(ConfigError, match="weights are on cpu"):
            LLMEngine(loaded, EngineConfig(device="cuda"))
    with pytest.raises(ConfigError, match="device must be"):
        EngineConfig(device="tpu").validate()


@no_cuda
def test_triton_on_cpu_says_it_runs_under_the_interpreter(random_small):
    engine = LLMEngine(random_small, EngineConfig(attention_backend="triton"))
    assert engine.attention_backend == "triton (interpreter)"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_sidebar_device_line_states_what_the_engine_runs_on(lang):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    at.run()
    from ui.labs.models import slot  # the very model object the app holds (st.cache_resource is per process)
    if slot("tiny").model is None:
        want = STRINGS["side.loads_on"][lang].format(device=resolve_device("auto"), dtype="", backend="")
        assert any(c.value.startswith(want.split(" · ")[0]) for c in at.sidebar.caption), "where it will load"
    at.switch_page("pages/why_batch.py").run()
    measure = next((b for b in at.button if b.key == "why-batch.measure"), None)
    if measure is not None:  # else a curve is kept from an earlier language's run (one per server process)
        measure.click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.run()  # the sidebar is drawn before the page loads the model: the next run reads it
    engine = LLMEngine(slot("tiny").get(), EngineConfig())
    want = STRINGS["side.runs_on"][lang].format(device=engine.device, dtype=engine.dtype,
                                                 backend=engine.attention_backend)
    assert want in [c.value for c in at.sidebar.caption]
