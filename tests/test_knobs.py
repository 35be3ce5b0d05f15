"""The engine knobs in the UI start at EngineConfig's own defaults and pass on only what was moved."""
import dataclasses

from streamlit.testing.v1 import AppTest

from engine import EngineConfig


def knobs_page():
    import streamlit as st

    from ui.knobs import engine_knobs

    st.session_state["result"] = engine_knobs("p")


def test_ui_defaults_are_engine_config_defaults():
    from ui.knobs import DEFAULTS

    fields = {f.name: f.default for f in dataclasses.fields(EngineConfig)}
    assert DEFAULTS and all(fields[name] == value for name, value in DEFAULTS.items())
    assert DEFAULTS["max_model_len"] is None and DEFAULTS["num_blocks"] is None  # "auto", sized by the engine


def test_untouched_knobs_leave_the_engine_to_size_itself():
    at = AppTest.from_function(knobs_page).run(timeout=30)
    assert not at.exception and not at.warning
    assert at.session_state["result"] == {}
    at.number_input(key="p.num_blocks").set_value(64).run(timeout=30)
    at.number_input(key="p.max_model_len").set_value(256).run(timeout=30)
    assert at.session_state["result"] == {"num_blocks": 64, "max_model_len": 256}
