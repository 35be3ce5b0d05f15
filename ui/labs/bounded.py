"""Number boxes that keep what the person typed, checked against their range when Run is pressed.

st.number_input with min_value/max_value drops a value outside them in the browser (a small red mark, and the
old value stays), so a run would use a number the person did not choose. These boxes take any number, and
`refused` names every one outside its range, in the person's language, before anything runs."""
from __future__ import annotations

import streamlit as st

from ui.shell.i18n import t

_BOUNDS = "bounded.ranges"  # widget key -> (label, low, high): the boxes drawn this run


def number(container, label: str, low, high, key: str, **kwargs):
    """A number box with a range checked at Run (`refused`); floats when `low` is one, whole numbers otherwise."""
    st.session_state.setdefault(_BOUNDS, {})[key] = (label, low, high)
    step = kwargs.pop("step", 1.0 if isinstance(low, float) else 1)
    return container.number_input(label, key=key, step=step, **kwargs)


def refused(prefix: str) -> bool:
    """Say which boxes under `prefix` hold a number outside their range; True when any does (then do not run)."""
    bad = False
    for key, (label, low, high) in st.session_state.get(_BOUNDS, {}).items():
        value = st.session_state.get(key)
        if key.startswith(f"{prefix}.") and value is not None and not low <= value <= high:
            st.error(t("err.out_of_range", name=label, low=low, high=high, value=value))
            bad = True
    return bad
