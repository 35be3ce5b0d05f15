"""A student's priority key: escapes and exhaustion are refused with a clear, located message, and nothing
else ever comes out of the evaluator."""
import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.messages import MESSAGES
from engine.policy_key import FIELDS, MAX_KEY_CHARS, PolicyKeyError, compile_key

VALUES = {name: 3.0 for name in FIELDS} | {"request_class": "chat", "num_output_tokens": 0.0, "deadline": math.inf}

# (text, the refusal's code): each one an escape, an exhaustion or a plain mistake
REFUSED = [
    ("__import__('os').system('ls')", "policy_key.call"),
    ("__import__('os')", "policy_key.call"),
    ("waited.__class__", "policy_key.attribute"),
    ("().__class__.__bases__[0].__subclasses__()", "policy_key.call"),
    ("__builtins__", "policy_key.unknown_name"),
    ("import os", "policy_key.syntax"),
    ("exec('1')", "policy_key.call"),
    ("eval('1')", "policy_key.call"),
    ("open('/etc/passwd')", "policy_key.call"),
    ("lambda: waited", "policy_key.construct"),
    ("[x for x in range(10**9)]", "policy_key.construct"),
    ("{x: 1 for x in (1, 2)}", "policy_key.construct"),
    ("sum(x for x in (1,))", "policy_key.call"),
    ("9**9**9", "policy_key.exponent"),
    ("waited ** waited", "policy_key.exponent"),
    ("2 ** 1000", "policy_key.exponent"),
    ("'a' * 10**8", "policy_key.text"),
    ("[1] * 100000000", "policy_key.construct"),
    ("(" * 201 + "1" + ")" * 201, "policy_key.syntax"),
    ("(" * 40 + "waited" + " + 1)" * 40, "policy_key.too_deep"),
    ("(" * 250 + "1" + ")" * 250, "policy_key.too_long"),
    ("-" * 100 + "1", "policy_key.too_deep"),
    ("waited + " * 80 + "1", "policy_key.too_long"),
    ("os", "policy_key.unknown_name"),
    ("self", "policy_key.unknown_name"),
    ("max", "policy_key.unknown_function"),
    ("max(waited, key=abs)", "policy_key.call_args"),
    ("max(*(1, 2))", "policy_key.call_args"),
    ("log(1, 2)", "policy_key.call_args"),
    ("(w := 3)", "policy_key.construct"),
    ("f'{waited}'", "policy_key.construct"),
    ("waited[0]", "policy_key.construct"),
    ("{'a': 1}", "policy_key.construct"),
    ("waited if waited else", "policy_key.syntax"),
    ("1e13", "policy_key.constant"),
    ("-1e13", "policy_key.constant"),
    ("b'bytes' == request_class", "policy_key.text"),
    ("request_class", "policy_key.text"),
    ("request_class < 'z'", "policy_key.text"),
    ("request_class + 1", "policy_key.text"),
    ("'x' * 40 == request_class", "policy_key.text"),
    ("waited in (1, 2)", "policy_key.construct"),
    ("waited is None", "policy_key.construct"),
    ("~waited", "policy_key.construct"),
    ("waited << 60", "policy_key.construct"),
    ("1j", "policy_key.constant"),
    ("...", "policy_key.construct"),
    ("None", "policy_key.construct"),
    ("waited\x00", "policy_key.syntax"),
    ("", "policy_key.empty"),
    ("   ", "policy_key.empty"),
    ("waited -", "policy_key.syntax"),
    ("max(waited, 10", "policy_key.syntax"),
]


@pytest.mark.parametrize("text,code", REFUSED, ids=[f"{i:02d}" for i in range(len(REFUSED))])
def test_an_escape_or_exhaustion_attempt_is_refused_with_its_own_message(text, code):
    started = time.perf_counter()
    with pytest.raises(PolicyKeyError) as refused:
        compile_key(text)
    assert time.perf_counter() - started < 0.5
    assert refused.value.code == code, str(refused.value)
    assert str(refused.value) and "Traceback" not in str(refused.value)
    if "line" in MESSAGES[code]:
        assert refused.value.message.params["line"] >= 1 and refused.value.message.params["column"] >= 1


def test_a_syntax_error_is_placed_at_its_line_and_column():
    with pytest.raises(PolicyKeyError) as refused:
        compile_key("(waited\n + )")
    assert refused.value.message.params["line"] == 2
    with pytest.raises(PolicyKeyError) as unknown:
        compile_key("waited + prompt_tokens")
    assert (unknown.value.message.params["line"], unknown.value.message.params["column"]) == (1, 10)
    assert unknown.value.message.params["name"] == "prompt_tokens"


@pytest.mark.parametrize("text,expected", [
    ("0", 0.0), ("waited", 3.0), ("num_prompt_tokens + max_tokens", 6.0), ("max(0, priority - waited // 2)", 2.0),
    ("clip(waited * 10, 0, 5)", 5.0), ("sqrt(waited * 3)", 3.0), ("0 if request_class == 'chat' else 1", 0.0),
    ("deadline", math.inf), ("-waited ** 2", -9.0), ("not waited and priority", 0.0), ("1 < waited <= 3", 1.0),
])
def test_an_allowed_key_evaluates_to_what_python_arithmetic_says(text, expected):
    assert compile_key(text).evaluate(VALUES) == expected


@pytest.mark.parametrize("text,code,values", [
    ("1 / num_output_tokens", "policy_key.division_by_zero", "num_output_tokens=0"),
    ("waited % num_output_tokens", "policy_key.division_by_zero", "num_output_tokens=0, waited=3"),
    ("log(num_output_tokens)", "policy_key.math_domain", "num_output_tokens=0"),
    ("deadline - deadline", "policy_key.not_a_number", "deadline=inf"),
    ("(1e12 * 1e12 * 1e12 * 1e12) ** 8", "policy_key.not_a_number", "-"),
])
def test_a_key_that_fails_on_a_request_names_the_request_and_the_fields_it_read(text, code, values):
    key = compile_key(text)
    with pytest.raises(PolicyKeyError) as failed:
        key.evaluate(VALUES, "support-3")
    params = failed.value.message.params
    assert failed.value.code == code and params["request_id"] == "support-3" and params["values"] == values


TOKENS = list(FIELDS) + ["min", "max", "abs", "log", "sqrt", "clip", "inf", "(", ")", ",", ".", "[", "]", "+", "-",
                         "*", "/", "//", "%", "**", "<", "==", "!=", "and", "or", "not", "if", "else", "0", "1", "7",
                         "1e12", "0.5", "'chat'", "lambda", ":", "__class__", "import", "for", "in", "=", ":=", "\n"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=80), st.lists(st.sampled_from(TOKENS), max_size=30).map(" ".join)),
       st.sampled_from([0.0, 1.0, -2.0, 1e12, math.inf, -math.inf]))
def test_only_the_evaluators_own_error_ever_comes_out(text, value):
    values = {name: value for name in FIELDS} | {"request_class": "report"}
    try:
        result = compile_key(text).evaluate(values, "r0")
    except PolicyKeyError as e:
        assert e.code in MESSAGES
        return
    assert isinstance(result, float) and result == result


# one link of a deep chain around an inner key: unary signs, calls, comparisons, attribute and subscript reads
LINKS = ["-{}", "+{}", "not {}", "~{}", "sqrt({})", "abs({})", "log({})", "min({}, 1)", "max(0, {})", "({})",
         "{} < 1", "1 == {}", "{} if waited else 0", "{}.real", "{}[0]", "f({})", "clip({}, 0, 1)"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINKS), min_size=1, max_size=60), st.sampled_from(list(FIELDS) + ["7", "'chat'"]))
def test_a_deep_chain_of_unary_call_and_comparison_links_is_refused_or_compiled_never_crashes(links, inner):
    text = inner
    for link in links:
        text = link.format(text)
    try:
        compile_key(text[:MAX_KEY_CHARS])
    except PolicyKeyError as e:
        assert e.code in MESSAGES


@pytest.mark.parametrize("text", ["-" * 31 + "waited", "sqrt(" * 31 + "waited" + ")" * 31, "not " * 40 + "waited"])
def test_the_deep_keys_found_in_the_wild_get_a_policy_key_error_with_a_place(text):
    with pytest.raises(PolicyKeyError) as refused:
        compile_key(text)
    assert refused.value.code == "policy_key.too_deep" and refused.value.message.params["line"] == 1


def test_the_length_limit_is_the_documented_one():
    compile_key("waited" + " " * (MAX_KEY_CHARS - 6))
    with pytest.raises(PolicyKeyError):
        compile_key("waited" + " " * (MAX_KEY_CHARS - 5) + "+1")
