"""A numeric question grades against the runs the student saw: open the question's experiment on its lab
page, read the figures from the page's own results table (both runs of a ratio, every class for "which class waited
longest"), type the answer into the quiz (a prediction: commit it first), and it is correct: the page and the quiz
measure one and the same run."""
import pytest

from lessons import load_quiz, parse_number, run_spec
from lessons.quiz_variants import variant
from ui.practice.quiz import form_of
from tests.test_app_teaching import page
from ui.shell.nav import SECTIONS
from app_support import runs_ended
from ui.shell.i18n import strings

pytestmark = pytest.mark.slow  # a lecture moment's full runs per question

PAGE_FILES = {url: path for entries in SECTIONS.values() for url, path, _, _ in entries}
STRINGS = strings()
# where each metric sits in the lab pages' results tables (column headers in English)
COLUMNS = {"steps": STRINGS["sum.steps"]["en"], "slot_utilisation": STRINGS["sum.slot_util"]["en"],
           "throughput_tok_per_step": STRINGS["sum.tok_per_step"]["en"],
           "kv_waste_share": STRINGS["sum.kv_waste"]["en"],
           "by_class.chat.ttft_steps.p50": STRINGS["sum.ttft_p50_class"]["en"].format(cls=STRINGS["cls.chat"]["en"]),
           "by_class.support.slo_attainment": STRINGS["sum.slo_class"]["en"].format(cls=STRINGS["cls.support"]["en"])}
NUMERIC = [q for q in load_quiz("en") if q.type == "numeric"]


def _row_label(spec: dict, label: str | None = None) -> str:
    """The run's name as the page's table shows it (translated, like every run name)."""
    label = label or spec["label"]
    if spec["page"] == "paged-kv":
        return STRINGS[f"kv.v.{label}"]["en"]
    return STRINGS[f"run.name.{label}"]["en"]


def _figure_on_page(at, spec: dict, metric: str, label: str | None = None) -> str:
    column = COLUMNS.get(metric) or _class_column(metric)
    run_col = STRINGS["sum.run"]["en"]
    for frame in at.dataframe:
        df = frame.value
        if column in df.columns and run_col in df.columns:
            row = df[df[run_col] == _row_label(spec, label)]
            assert len(row) == 1, (spec, list(df[run_col]))
            return str(row[column].iloc[0])
    raise AssertionError(f"no results table with {column!r} on {spec['page']}")


def _class_column(metric: str) -> str:
    """by_class.<cls>.ttft_steps.p50 (or .p95): the per-class TTFT column of the results table."""
    _, cls, _, quantile = metric.split(".")
    return STRINGS[f"sum.ttft_{quantile}_class"]["en"].format(cls=STRINGS[f"cls.{cls}"]["en"])


def _answer_from_page(at, q, spec: dict) -> str:
    """What a student reads off the page and types: one figure, the ratio of the two runs' figures, or the class
    whose figure is largest."""
    if q.compare == "max_class":
        figures = {c: parse_number(_figure_on_page(at, spec, q.metric.replace("{cls}", c))) for c, _ in q.classes}
        return max(figures, key=figures.get)
    figure = _figure_on_page(at, spec, q.metric)
    if q.compare != "ratio":
        return figure
    a, b = (parse_number(x.rstrip("%")) for x in (figure, _figure_on_page(at, spec, q.metric, spec["versus_label"])))
    return f"{a / b:.4g}"


@pytest.mark.parametrize("q", NUMERIC, ids=[q.id for q in NUMERIC])
def test_the_figure_the_lab_page_shows_is_the_one_the_quiz_accepts(q):
    at = page("pages/quiz.py")
    at.session_state["quiz.index"] = at.session_state["quiz.order"].index(q.id)
    at.run()  # the question drawn: the student's token, and so the variant, is made
    spec = run_spec(q, variant=variant(q.id, at.session_state["progress.token"]))
    assert q.link["moment"] == spec["moment"]  # "see it happen" opens exactly the graded run
    at.session_state["pending_moment"] = q.link["moment"]
    at.session_state["pending_moment.form"] = form_of(spec)  # as the quiz's "Open … in the lab" queues it
    at.switch_page(PAGE_FILES[spec["page"]]).run()
    next(b for b in at.button if b.label == STRINGS["pred.skip"]["en"]).click().run()
    runs_ended(at)
    assert not at.exception, [e.value for e in at.exception]
    narration = next(i.value for i in at.info if i.value.startswith(f"**{STRINGS['moment.label']['en']}"))
    assert f"your own variant: seed {spec['seed']}," in narration  # the line's figures are said to be the lecture's
    figure = _answer_from_page(at, q, spec)

    at.switch_page("pages/quiz.py").run()
    at.session_state["quiz.index"] = at.session_state["quiz.order"].index(q.id)
    at.run()
    if q.predict:  # the watched runs count only once a prediction is committed
        assert not any(s.value.startswith("Graded against the run you watched") for s in at.success)
        widget = at.radio(key=f"quiz.q.{q.id}") if q.compare == "max_class" else at.text_input(key=f"quiz.q.{q.id}")
        widget.set_value(figure).run()
        next(b for b in at.button if b.key == f"quiz.q.{q.id}.commit").click().run()
    assert any(s.value.startswith("Graded against the run you watched") for s in at.success)
    if not q.predict:
        at.text_input(key=f"quiz.q.{q.id}").input(figure)
    next(b for b in at.button if b.key == f"quiz.q.{q.id}.submit").click().run()
    assert any(s.value == "Correct." for s in at.success), (q.id, figure, [e.value for e in at.caption])
