"""Engine messages by code: English for the CLI, the student's language in the lab; the playground
runs with the knob values it shows."""
import ast
import pickle
import re
import string
from pathlib import Path

import pytest
from app_support import runs_ended
from streamlit.testing.v1 import AppTest

from engine.config import EngineConfig
from engine.messages import ConfigError, EngineError
from engine.core.llm_engine import LLMEngine
from engine.messages import MESSAGES, EngineMessage
from engine.lab.recorder import RunRecorder
from engine.sampling_params import SamplingParams
from engine.core.snapshot import StepSnapshot
from engine.lab.trace import TraceError, TraceRequest, read_trace
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()


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
    runs_ended(press_run(at, "zh"))  # the rejections are counted once the run has ended
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


# Every engine message is built from a code, never from text: a scan of the sources (ast), not of what a test
# happens to run.
SCANNED = ("engine", "kernels", "lessons", "classroom", "ui")


def translated(code: str) -> bool:
    """Whether `code` is a message code with its zh and en text in ui/shell/strings.yaml."""
    entry = STRINGS.get(f"engine.{code}") or {}
    return code in MESSAGES and bool(entry.get("zh")) and bool(entry.get("en"))


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def engine_error_classes(trees: dict[str, ast.Module]) -> set[str]:
    """EngineMessage, EngineError and every subclass: those imported (walked through __subclasses__) and those
    any scanned module defines (read from its classes' bases)."""
    import engine
    from engine.messages import EngineError

    for name in engine.__all__:  # the façade's names load the modules that define the engine's own subclasses
        getattr(engine, name)

    found, todo = set(), [EngineError]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo += cls.__subclasses__()
    grew = True
    while grew:
        defined = {c.name for tree in trees.values() for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                   and any(_name(b) in found for b in c.bases)}
        grew = bool(defined - found)
        found |= defined
    return found | {"EngineMessage"}


def _code_index(fn: ast.FunctionDef, method: bool) -> int | None:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if method else 0:]
    return names.index("code") if "code" in names else None


def _functions(tree: ast.Module):
    """(function, is_method, enclosing class or None) for every def in a module."""
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                cls = node if isinstance(node, ast.ClassDef) else None
                yield child, cls is not None, cls


def _calls(node: ast.AST, fn: ast.AST | None = None):
    """(call, innermost enclosing def or None) for every call under node."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Call):
            yield child, fn
        yield from _calls(child, child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn)


def _code_arg(call: ast.Call, index: int) -> ast.AST | None:
    keyword = next((k.value for k in call.keywords if k.arg == "code"), None)
    return call.args[index] if len(call.args) > index else keyword


def free_text_messages(trees: dict[str, ast.Module], classes: set[str]) -> list[str]:
    """Where an engine message is built from anything but a known code: `path:line: call` for each.

    A code is written as a string literal (a key of MESSAGES, translated) where the message is made: at a call of
    EngineError or a subclass (first argument), of a function that passes its `code` parameter on to one (such as
    trace's `fail`), or of an engine class that carries a `code` for one (policy_key's `_Fault`). Between those a
    code travels as that parameter `code` or as an attribute `.code`; an f-string, `str(e)` or other text fails."""
    problems = []
    for path, tree in trees.items():
        sinks = {name: 0 for name in classes}  # callee name -> where its code argument sits
        passes_on = set()  # defs whose own `code` parameter goes on to a sink: checked at their callers
        grew = True
        while grew:
            grew = False
            for fn, method, _ in _functions(tree):
                index = _code_index(fn, method)
                if index is None or fn in passes_on:
                    continue
                if any(isinstance(arg := _code_arg(c, sinks[_name(c.func)]), ast.Name) and arg.id == "code"
                       for c, _ in _calls(fn) if _name(c.func) in sinks):
                    passes_on.add(fn)
                    if fn.name != "__init__":  # a class's __init__ is called by the class's name
                        sinks[fn.name], grew = index, True
        calls = [(c, fn) for c, fn in _calls(tree) if _name(c.func) in sinks]
        if path.split("/")[0] in ("engine", "kernels") and any(
                isinstance(_code_arg(c, sinks[_name(c.func)]), ast.Attribute) for c, _ in calls):
            for fn, method, cls in _functions(tree):  # a class whose objects carry a code (policy_key._Fault)
                if fn.name == "__init__" and cls.name not in sinks and _code_index(fn, method) is not None:
                    sinks[cls.name] = _code_index(fn, method)
            calls = [(c, fn) for c, fn in _calls(tree) if _name(c.func) in sinks]
        for call, fn in calls:
            arg = _code_arg(call, sinks[_name(call.func)])
            ok = ((isinstance(arg, ast.Constant) and isinstance(arg.value, str) and translated(arg.value))
                  or (isinstance(arg, ast.Name) and arg.id == "code" and fn in passes_on)
                  or (isinstance(arg, ast.Attribute) and arg.attr == "code"))
            if not ok:
                problems.append(f"{path}:{call.lineno}: {ast.unparse(call)}")
    return problems


def source_trees() -> dict[str, ast.Module]:
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8"))
            for top in SCANNED for p in sorted((ROOT / top).rglob("*.py"))}


def test_every_engine_message_is_built_from_a_translated_code_never_from_text():
    trees = source_trees()
    classes = engine_error_classes(trees)
    assert {"EngineError", "ConfigError", "TraceError", "PolicyKeyError"} <= classes
    assert free_text_messages(trees, classes) == []


@pytest.mark.parametrize("source", [
    'raise EngineError(f"the cache has {n} blocks")',
    'raise ConfigError("config.no_such_code")',
    'raise TraceError(str(e))',
    'raise PolicyKeyError(text, line=1)',
    'raise EngineError(code="config" + ".block_size")',
    'def fail(code, **params):\n    raise TraceError(code, line=1, **params)\nfail("line 3 is wrong")',
    'def need(ok, code, **params):\n    if not ok:\n        raise ConfigError(code, **params)\nneed(x > 0, f"x={x}")',
    'def f(text):\n    raise ConfigError(text)',
    'class MyError(ConfigError):\n    pass\nraise MyError("plain words")',
])
def test_the_scan_catches_a_message_built_from_text(source):
    tree = ast.parse(source)
    assert free_text_messages({"engine/x.py": tree}, engine_error_classes({"engine/x.py": tree}))


def test_the_scan_passes_codes_given_as_literals_and_passed_along():
    source = ('def fail(code, **params):\n    raise TraceError(code, line=1, **params)\n'
              'fail("trace.request_id")\nraise ConfigError("config.block_size", value=0)\n'
              'msg = EngineMessage("reject.empty_prompt")\nraise PolicyKeyError(fault.code)')
    tree = ast.parse(source)
    assert free_text_messages({"engine/x.py": tree}, engine_error_classes({})) == []


def test_an_unknown_code_is_refused_when_the_error_is_made():
    with pytest.raises(KeyError, match="no such code"):
        EngineError("no such code")
    with pytest.raises(KeyError, match="config.nope"):
        ConfigError("config.nope", value=1)
    with pytest.raises(KeyError, match="reject.nope"):
        EngineMessage("reject.nope")


def test_an_engine_error_survives_pickling_with_its_code():
    e = pickle.loads(pickle.dumps(ConfigError("config.block_size", value=0)))
    assert type(e) is ConfigError and e.message == EngineMessage("config.block_size", {"value": 0})
    assert str(e) == MESSAGES["config.block_size"].format(value=0)
