"""The UI glue that reads the engine: knob defaults come from EngineConfig, a cut-off run says so."""
import dataclasses

from streamlit.testing.v1 import AppTest

from engine import EngineConfig


def knobs_page():
    import streamlit as st

    from ui.labs.knobs import engine_knobs

    st.session_state["result"] = engine_knobs("p")


def test_ui_defaults_are_engine_config_defaults():
    from ui.labs.knobs import DEFAULTS

    fields = {f.name: f.default for f in dataclasses.fields(EngineConfig)}
    assert DEFAULTS and all(fields[name] == value for name, value in DEFAULTS.items())
    assert DEFAULTS["max_model_len"] is None and DEFAULTS["num_blocks"] is None  # "auto", sized by the engine


def test_untouched_knobs_leave_the_engine_to_size_itself():
    """The knobs run as shown: every setting is passed; the sizes left empty stay None ("auto")."""
    from ui.labs.knobs import DEFAULTS

    at = AppTest.from_function(knobs_page).run(timeout=30)
    assert not at.exception and not at.warning
    result = at.session_state["result"]
    assert result == DEFAULTS and result["num_blocks"] is None and result["max_model_len"] is None
    at.number_input(key="p.num_blocks").set_value(64).run(timeout=30)
    at.number_input(key="p.max_model_len").set_value(256).run(timeout=30)
    assert at.session_state["result"] == {**DEFAULTS, "num_blocks": 64, "max_model_len": 256}


def stopped_run_page():
    import streamlit as st

    from engine import EngineConfig, LiveRun, SamplingParams, TraceRequest, load_model
    from ui.labs.experiments import explain_rejections

    st.session_state["lang"] = st.session_state.get("lang", "en")
    reqs = [TraceRequest(f"q{i}", [40 + i] * 5, SamplingParams(temperature=0, max_tokens=50, ignore_eos=True))
            for i in range(3)]
    run = LiveRun(load_model("random-small"), reqs, EngineConfig(max_num_seqs=1), label="#1")
    run.MAX_STEPS = 20
    run.run_to_end()
    explain_rejections([run])


def test_a_run_cut_off_at_the_step_limit_says_so_in_the_users_language():
    for lang, words in (("en", "stopped at its limit of 20 steps; 3 unfinished"), ("zh", "20 步的上限")):
        at = AppTest.from_function(stopped_run_page)
        at.session_state["lang"] = lang
        at.run(timeout=60)
        assert not at.exception and not at.error
        assert [w.value for w in at.warning if words in w.value], [w.value for w in at.warning]
