"""Property tests for the doors that take input from outside: SamplingParams, the trace loader and the
classroom store each either accept a value or refuse it with their one error (ConfigError, TraceError,
StorageError), for any value whatever: lone surrogates, 400-digit integers, NaN, JSON nested past any limit.
And what the server's request models let through, SamplingParams takes: one schema, so no request that passed
the edge can fail inside the engine."""
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from classroom import StorageError
from classroom.store import Store
from engine import ConfigError, SamplingParams, TraceError, read_trace
from engine.server.protocol import CompletionRequest

SURROGATE = st.characters(categories=["Cs"])
TEXT = st.text(st.one_of(st.characters(), SURROGATE), max_size=30) | st.sampled_from(["", "\ud800", "x" * 6000,
                                                                                         "a\x00b", "q-static-01"])
HUGE = st.sampled_from([10 ** 400, -(10 ** 400), 2 ** 63, 2 ** 64, -(2 ** 63) - 1])
NUMBER = (st.integers() | HUGE | st.floats(allow_nan=True, allow_infinity=True)
          | st.sampled_from([float("nan"), float("inf"), 1e-300, -0.0]))
SCALAR = st.none() | st.booleans() | NUMBER | TEXT | st.binary(max_size=8)
ANYTHING = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                        max_leaves=12)


def deep(n: int):
    value = []
    for _ in range(n):
        value = [value]
    return value


DEEP = st.sampled_from([deep(50), deep(400), {"a": deep(400)}])  # the trace test sends 10,000 as bytes
HOSTILE = ANYTHING | DEEP
SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "max_tokens", "seed", "ignore_eos", "stop", "stop_token_ids")


@settings(max_examples=250, deadline=None)
@given(st.dictionaries(st.sampled_from(SAMPLING_FIELDS), HOSTILE, max_size=4))
def test_sampling_params_take_a_value_or_refuse_it_with_a_config_error(fields):
    try:
        p = SamplingParams(**fields)
    except ConfigError:
        return
    assert math.isfinite(p.temperature) and (p.temperature == 0 or p.temperature >= 1e-2)
    assert 0 < p.top_p <= 1 and p.top_k >= 0 and p.max_tokens >= 1
    assert p.seed is None or -(2 ** 63) <= p.seed < 2 ** 63
    assert len(p.stop) <= 32 and all(isinstance(s, str) and 0 < len(s) <= 256 for s in p.stop)


JSON_SCALAR = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | st.floats(allow_nan=False)
               | st.text(max_size=300))
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.lists(inner, max_size=40), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(("temperature", "top_p", "top_k", "max_tokens", "seed", "stop",
                                        "ignore_eos")), JSON_VALUE, max_size=4))
def test_what_the_server_lets_through_sampling_params_take(fields):
    try:
        req = CompletionRequest.model_validate({"prompt": "x", **fields})
    except ValueError:  # pydantic's ValidationError: a 400 at the edge
        return
    req.sampling_params(req.max_tokens or 16)  # raises APIError only if the two schemas disagree


HEADER = b'{"kind": "header", "version": 1}\n'
REQUEST = {"kind": "request", "request_id": "r0", "prompt_token_ids": [1, 2], "arrival_step": 0,
           "sampling_params": {"max_tokens": 4}}


def line(obj) -> bytes:
    try:
        return json.dumps(obj, allow_nan=True).encode("utf-8", "surrogatepass") + b"\n"
    except (RecursionError, ValueError, TypeError):
        return b"[" * 5000 + b"\n"


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(sorted(REQUEST) + ["slo", "priority", "request_class", "prompt"]), value=HOSTILE,
       inner=st.sampled_from(["", "temperature", "seed", "top_k", "stop"]))
def test_the_trace_loader_reads_a_request_or_refuses_it_with_a_trace_error(field, value, inner):
    request = dict(REQUEST)
    if inner and field == "sampling_params":
        request[field] = {inner: value}
    else:
        request[field] = value
    try:
        read_trace(HEADER + line(request))
    except TraceError as e:
        assert str(e).startswith(("line 2", "the trace")), e


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200) | st.sampled_from([b"[" * 10_000, b'{"kind": "request", "arrival_step": ' +
                                                   b"9" * 5000 + b"}", b'{"kind": "header", "version": NaN}',
                                                   b'{"kind": "snapshot", "step": 1e400}']))
def test_the_trace_loader_refuses_any_bytes_with_a_trace_error(raw):
    try:
        read_trace(HEADER + raw + b"\n")
    except TraceError:
        pass


def test_a_trace_arriving_beyond_the_run_limit_is_refused_not_run():
    with pytest.raises(TraceError) as e:
        read_trace(HEADER + line({**REQUEST, "arrival_step": 10 ** 12}))
    assert "arrival_step must be an integer from 0 to 100000" in str(e.value)


# --- the classroom store -------------------------------------------------------------------------------------
ARGS = {  # method -> the kind of each argument
    "new_student": ("name", "code"), "ensure_student": ("token", "name", "code", "number"),
    "student": ("token",), "update_student": ("token", "name", "code"),
    "start_over": ("token", "attempt", "attempt"), "record_answer": ("token", "id", "answer", "try", "flag", "attempt"),
    "clear_quiz": ("token", "attempt"),
    "quiz_answers": ("token",), "save_draft": ("token", "id", "id", "text", "attempt"), "drafts": ("token",),
    "record_grading": ("token", "id", "flag", "criteria", "attempt"), "gradings": ("token",),
    "record_prediction": ("token", "id", "number", "number", "attempt"),
    "set_measured": ("token", "id", "number", "attempt"),
    "predictions": ("token",), "reach_milestone": ("token", "id", "attempt"), "milestones": ("token",),
    "class_quiz": ("code", "flag"), "class_worksheets": ("code", "flag"), "class_predictions": ("code", "flag"),
    "class_csv": ("code", "flag"), "class_attempts": ("code", "flag"), "class_size": ("code",),
    "open_poll": ("code", "id"), "current_poll": ("code",),
    "latest_poll": ("code",), "answer_poll": ("poll", "token", "number"), "poll_values": ("poll",),
    "close_poll": ("poll", "number"), "reveal_poll": ("poll", "number"), "fail_poll": ("poll",),
    "self_assess": ("token", "id", "id", "assessment", "attempt"),
    "self_assessments": ("token",), "mark": ("code", "token", "id", "id", "mark", "text"), "marks": ("token",),
    "class_explanations": ("code",),
}


class Deep(list):
    """A list nested thousands deep (json.dumps recurses into it) that prints short (hypothesis prints it)."""

    def __repr__(self):
        return "<a list nested 3000 deep>"


def nested(n: int) -> Deep:
    return Deep([deep(n - 1)])


STORE_HOSTILE = HOSTILE | st.sampled_from([nested(3000), "\ud800", "a\ud800b", 10 ** 400, float("nan")])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = Store(f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'lab.db'}")
    yield db
    db.close()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), method=st.sampled_from(sorted(ARGS)))
def test_the_store_raises_only_storage_error_for_any_input(store, data, method):
    """Every argument valid but one, which is anything at all."""
    token = store.new_student("Ada", "room-1")
    valid = {"token": token, "name": "Ada", "code": "room-1", "id": "q-static-01", "text": "because", "number": 0.5,
             "try": 1, "flag": True, "criteria": {"evidence": True}, "answer": ["b"], "mark": "ok",
             "assessment": "met", "attempt": 1, "poll": store.open_poll("room-1", "p-1")}
    kinds = ARGS[method]
    bad = data.draw(st.integers(0, len(kinds) - 1))
    args = [data.draw(STORE_HOSTILE) if i == bad else valid[kind] for i, kind in enumerate(kinds)]
    try:
        getattr(store, method)(*args)
    except StorageError:
        pass
