"""The copy-back student (tests/copy_back.py) against the worksheets' checks as the page runs them (the check, then
the tries that add pointers, said in the student's words) on real runs of the tiny model: typing 0 and retyping
whatever the messages show does not verify Task 1's or Task 3's evidence within 10 checks, while the same script
fed the figures the runs table shows does at once (so the first failure is the check's silence, not the script)."""
import pytest
import yaml
from copy_back import copy_back
from run_store import spec_summary

from engine import load_model
from lessons import load_tasks
from lessons.evidence import METRICS, RunSpec, check_batching, check_paging, say
from lessons.evidence.tries import MISSES_BEFORE_POINTER, Tries

LIMIT = 10
COLUMNS = ("fixed", "continuous", "contiguous", "paged")
FIGURES = {"throughput": "throughput", "waiting": "wait_mean", "running": "running", "kv_waste": "kv_waste",
           "refusals": "refusals"}  # a figure field's prefix -> the metric the runs table shows


@pytest.fixture(scope="module")
def model():
    return load_model("tiny")


def column_names(lang: str) -> dict[str, str]:
    with open("ui/shell/strings.yaml", encoding="utf-8") as fh:
        strings = yaml.load(fh, Loader=yaml.CSafeLoader)
    return {c: strings[f"ev.column.{c}"][lang] for c in COLUMNS}


def as_page_checks(task, check, runs: dict, measured: dict, lang: str = "en"):
    """The page's check (ui/practice/evidence_check.check) without the page: verdict, tries, failing lines."""
    tries, labels = Tries(), {f.id: f.label for f in task.fields} | column_names(lang)
    labels |= {m: m for m in METRICS}

    def run(answers: dict):
        verdict = check(answers, runs, measured)
        tries.checked(verdict, answers, [f for f in task.fields if f.kind == "choice" and f.answer])
        return verdict.verified, [say(f, lang, labels) for f in verdict.findings if not f.ok]
    return run


def script(task, runs: dict, lang: str = "en"):
    """The copy-back student's view of the task: its figures by label, its run pickers by column name."""
    figures = {f.id: f.label for f in task.fields if f.kind == "number"}
    quoted = {c: ("“{}”" if lang == "en" else "「{}」").format(name) for c, name in column_names(lang).items()}
    choices = {f.id: (list(runs), [quoted[f.id.removesuffix("_run")]]) for f in task.fields if f.options_from == "runs"}
    return figures, choices


def table_figure(field_id: str, runs: dict, measured: dict, answers: dict) -> str:
    """The figure as the runs table shows it for the run the field's column names."""
    prefix, _, column = field_id.rpartition("_")
    m = METRICS[FIGURES[prefix]]
    return f"{m.value(measured[answers[f'{column}_run']]):.{m.digits}f}"


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_tasks("en")}


@pytest.fixture(scope="module")
def batching(model):
    runs = {s.key: s for s in (RunSpec("chat-and-reports", {"batcher": b}) for b in ("static", "continuous"))}
    return runs, {k: spec_summary(model, "tiny", s) for k, s in runs.items()}


@pytest.fixture(scope="module")
def paging(model):
    runs = {s.key: s for s in (RunSpec("chat-and-reports", {"kv_layout": k, "num_blocks": 96})
                               for k in ("contiguous", "paged"))}
    return runs, {k: spec_summary(model, "tiny", s) for k, s in runs.items()}


@pytest.mark.parametrize("task_id, check, runs_of", [("compare-batching", check_batching, "batching"),
                                                     ("paged-attention-purpose", check_paging, "paging")])
def test_the_copy_back_student_does_not_verify_the_evidence_within_ten_checks(request, tasks, task_id, check,
                                                                              runs_of):
    runs, measured = request.getfixturevalue(runs_of)
    task = tasks[task_id]
    figures, choices = script(task, runs)
    assert copy_back(as_page_checks(task, check, runs, measured), figures, choices, LIMIT) is None

    def honest(answers: dict):  # the same student, reading the runs table instead of the messages
        filled = {**answers, **{fid: table_figure(fid, runs, measured, answers) for fid in figures}}
        return as_page_checks(task, check, runs, measured)(filled)
    assert copy_back(honest, figures, choices, LIMIT) is not None


def test_after_three_misses_the_check_points_to_the_table_cell_never_to_the_value(tasks, batching):
    runs, measured = batching
    task = tasks["compare-batching"]
    static, continuous = runs
    answers = {"fixed_run": static, "continuous_run": continuous, "throughput_fixed": "0", "waiting_fixed": "0",
               "throughput_continuous": "0", "waiting_continuous": "0"}
    shown = {fid: table_figure(fid, runs, measured, answers) for fid in ("throughput_fixed", "waiting_fixed")}
    tries = Tries()
    for n in range(1, MISSES_BEFORE_POINTER + 1):
        verdict = check_batching(answers, runs, measured)
        tries.checked(verdict, answers)
        pointers = [f for f in verdict.findings if f.code == "figure_where"]
        assert len(pointers) == (4 if n == MISSES_BEFORE_POINTER else 0)
    labels = {f.id: f.label for f in task.fields} | {"throughput": "Throughput"}
    where = next(f for f in pointers if f.params["field"] == "throughput_fixed")
    for lang in ("en", "zh"):
        text = say(where, lang, labels)
        assert "#1" in text and "Throughput" in text and not any(v in text for v in shown.values())
    assert "Make a run" in say(where, "en", labels) and "做一次运行" in say(where, "zh", labels)
