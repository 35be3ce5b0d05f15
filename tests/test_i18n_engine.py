"""Engine messages by code: English for the CLI, the student's language in the lab; the playground
runs with the knob values it shows."""
import re
import string
from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from engine.config import EngineConfig
from engine.messages import ConfigError
from engine.core.llm_engine import LLMEngine
from engine.messages import MESSAGES, EngineMessage
from engine.lab.recorder import RunRecorder
from engine.sampling_params import SamplingParams
from engine.core.snapshot import StepSnapshot
from engine.lab.trace import TraceError, TraceRequest, read_trace
from ui.shell.i18n import STRINGS_FILE

ROOT = Path(__file__).resolve().parent.parent
STRINGS = yaml.safe_load(STRINGS_FILE.read_text(encoding="utf-8"))


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_every_engine_message_code_has_a_zh_and_en_string_with_the_same_parameters(code):
    entry = STRINGS.get(f"engine.{code}")
    assert entry and entry.get("zh") and entry.get("en"), f"engine.{code} missing in ui/shell/strings.yaml"
    assert fields(entry["zh"]) == fields(entry["en"]) == fields(MESSAGES[code])
    assert re.search(r"[\u4e00-\u9fff]", entry["zh"]), f"engine.{code}: the zh text is not Chinese"


def test_a_config_error_keeps_its_english_text_and_carries_its_code():
    with pytest.raises(ConfigError) as e:
        EngineConfig(max_num_seqs=0).validate()
    assert str(e.value) == "max_num_seqs must be at least 1 (got 0): with no slots nothing can run"
    assert e.value.message == EngineMessage("config.max_num_seqs", {"value": 0})


def test_a_trace_error_inside_a_request_nests_the_sampling_message():
    bad = b'{"kind": "header", "version": 1}\n{"kind": "request", "request_id": "a", "prompt_token_ids": [1],' \
          b' "sampling_params": {"temperature": -1}}\n'
    with pytest.raises(TraceError) as e:
        read_trace(bad)
    assert e.value.code == "trace.request_invalid"
    assert str(e.value) == "line 2: request a: temperature must be a finite number >= 0 (got -1)"
    assert e.value.message.params["detail"] == EngineMessage("sampling.temperature", {"value": -1})


def test_a_rejection_is_recorded_with_its_code_and_survives_the_trace_round_trip(random_small):
    engine = LLMEngine(random_small, EngineConfig(block_size=4, num_blocks=5))
    req = TraceRequest("big", list(range(1, 13)), SamplingParams(max_tokens=20))
    engine.add_request(req.prompt_token_ids, req.sampling_params, request_id="big")
    snaps = engine.run_until_done()
    r = engine.requests["big"]
    assert r.error_code == "reject.bigger_than_cache" and r.error_params["need"] == 8
    assert "needs up to 8 KV blocks" in r.error
    recorder = RunRecorder([req], 8, 512)
    for s in snaps:
        recorder.add(StepSnapshot.from_dict(s.to_dict()))
    replayed = recorder.requests["big"]
    assert (replayed.error_code, replayed.error_params) == (r.error_code, r.error_params)


def app(lang: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/playground.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def press_run(at: AppTest, lang: str) -> AppTest:
    next(b for b in at.button if b.key == "playground.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_bad_config_reads_in_chinese_and_hides_the_previous_runs_warnings():
    at = app("zh", **{"playground.workload": "uniform", "playground.scale": 0.25, "playground.num_blocks": 1})
    press_run(at, "zh")
    assert any("被拒绝" in w.value and "KV 块" in w.value for w in at.error)  # every request rejected, in Chinese
    at.session_state["playground.max_num_seqs"] = 0
    press_run(at, "zh")
    errors = [e.value for e in at.error]
    assert any("max_num_seqs 至少为 1（现在是 0）" in e for e in errors), errors
    assert not any("must be at least" in e or "KV blocks" in e for e in errors), errors
    assert not any("被拒绝" in e for e in [*errors, *(w.value for w in at.warning)]), "the old run's warning stayed"
    assert any(c.value == STRINGS["err.previous_runs"]["zh"] for c in at.caption)


def test_the_playground_runs_with_the_max_num_seqs_it_shows():
    at = app("en", **{"playground.workload": "chat-and-reports", "playground.scale": 0.25})
    shown = at.number_input(key="playground.max_num_seqs").value
    assert shown == 16  # the preset's suggestion is put into the knob, visibly
    press_run(at, "en")
    assert f"max_num_seqs {shown} ·" in " ".join(c.value for c in at.caption)
    at.number_input(key="playground.max_num_seqs").set_value(8).run()  # back to the engine's default
    press_run(at, "en")
    assert "max_num_seqs 8 ·" in " ".join(c.value for c in at.caption)


def test_outputs_capped_by_max_model_len_get_a_visible_note():
    at = app("en", **{"playground.workload": "uniform", "playground.scale": 0.25, "playground.max_model_len": 64})
    press_run(at, "en")  # 8 requests of prompt 32 + max_tokens 64: each stops at 64 tokens
    note = STRINGS["pg.capped"]["en"].format(n=8, max_model_len=64)
    assert note in [i.value for i in at.info]
