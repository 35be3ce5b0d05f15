"""The app under streamlit.testing: every page in both languages, the player, bad input."""
import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from app_support import runs_ended
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["pages/home.py", "pages/why_batch.py", "pages/static_vs_continuous.py", "pages/paged_kv.py",
         "pages/policies.py", "pages/playground.py"]
STRINGS = strings()
RUN = {"zh": "运行", "en": "Run"}


def app(lang: str, page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def frame_counter(at: AppTest) -> tuple[int, int]:
    """The player's frame line, as the page shows it: "step 12 / 345"."""
    shown = next(h.value for h in at.html if "lab-frame-value" in h.value)
    frame, last = re.search(r'lab-frame-value">(\d+) / (\d+)', shown).groups()
    return int(frame), int(last)


def click(at: AppTest, label: str) -> AppTest:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, key: str, lang: str = "en") -> str:
    """A live metric's value, read from the metric grid the views draw."""
    label = html.escape(STRINGS[key][lang])
    grid = next(h.value for h in at.html if f'lab-metric-label">{label}<' in h.value)
    return re.search(f'lab-metric-label">{re.escape(label)}</div><div class="lab-metric-value">([^<]*)<', grid).group(1)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_runs_in_both_languages(page, lang):
    at = app(lang, page)
    assert not at.error
    texts = [e.value for e in [*at.title, *at.markdown, *at.caption, *at.info] if isinstance(e.value, str)]
    leaked = [t for t in texts if re.fullmatch(r"[a-z]+\.[a-z_.-]+", t.strip())]
    assert not leaked, f"untranslated keys shown: {leaked}"
    if lang == "zh":
        assert re.search(r"[\u4e00-\u9fff]", at.title[0].value)


def test_every_label_exists_in_both_languages():
    used = set()
    for path in [*ROOT.glob("ui/**/*.py"), *ROOT.glob("pages/*.py")]:
        used |= set(re.findall(r"""\bt\(\s*["']([a-z][\w.-]*)["']""", path.read_text()))
    missing = sorted(k for k in used if k not in STRINGS and not k.endswith("."))  # "x." + name: dynamic
    assert not missing, missing
    assert all(set(v) == {"zh", "en"} and all(v.values()) for v in STRINGS.values())
    from lessons import load_moments
    untitled = [m for m in load_moments() if f"moment.name.{m}" not in STRINGS]
    assert not untitled, f"lecture moments without a title in ui/shell/strings.yaml: {untitled}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_step_advances_the_frame_counter(lang):
    at = app(lang, "pages/static_vs_continuous.py", **{"static-vs-continuous.scale": 0.25})
    click(at, RUN[lang])
    assert frame_counter(at)[0] == 0
    next(b for b in at.button if b.key == "static-vs-continuous.step").click().run()
    next(b for b in at.button if b.key == "static-vs-continuous.step").click().run()
    assert frame_counter(at)[0] == 2
    next(b for b in at.button if b.key == "static-vs-continuous.back").click().run()
    assert frame_counter(at)[0] == 1 and not at.exception


def run_playground_to_end(at: AppTest) -> AppTest:
    click(at, "Run")
    runs_ended(at)
    last = frame_counter(at)[1]
    at.slider(key="playground.slider").set_value(last).run()
    assert frame_counter(at)[0] == last
    return at


@pytest.mark.parametrize("knob,values,shown", [
    ("batcher", ("static", "continuous"), "m.tok_per_step"),
    ("policy", ("fcfs", "sjf"), "m.fairness"),
])
@pytest.mark.slow
def test_changing_the_batcher_or_policy_changes_the_metrics(knob, values, shown):
    seen = []
    for value in values:
        at = app("en", "pages/playground.py", **{"playground.workload": "chat-and-reports", "playground.scale": 0.5,
                                                  f"playground.{knob}": value, "playground.max_num_seqs": 4})
        run_playground_to_end(at)
        seen.append(metric(at, shown))
    assert seen[0] != seen[1], f"{knob} {values} both showed {shown} = {seen[0]}"


@pytest.mark.parametrize("state,expected", [
    ({"playground.max_num_seqs": 0}, "max_num_seqs must be at least 1"),
    ({"playground.block_size": 0}, "block_size must be an integer"),
    ({"playground.num_blocks": 1, "playground.workload": "uniform"}, "all 32 requests were rejected"),
])
def test_an_impossible_configuration_is_explained(state, expected):
    at = app("en", "pages/playground.py", **state)
    click(at, "Run")
    errors = " ".join(e.value for e in at.error)
    assert expected in errors and "Traceback" not in errors


def test_policies_page_needs_two_policies():
    at = app("en", "pages/policies.py", **{"policies.policies": ["fcfs"]})
    click(at, "Run")
    assert STRINGS["pol.need_two"]["en"] in [e.value for e in at.error]


@pytest.mark.slow
def test_lecture_moment_sets_up_and_runs_its_experiment():
    at = app("en", "pages/paged_kv.py")
    click(at, "🎓 " + STRINGS["moment.name.contiguous-vs-paged"]["en"])
    click(at, "Skip, just run")  # the moment asks for a prediction first (tests/test_predictions.py)
    runs_ended(at)
    assert any("Lecture moment: Contiguous vs paged" in i.value for i in at.info)
    assert frame_counter(at)[1] > 100
    jump = next(b for b in at.button if b.label.startswith("Jump to the first refusal"))
    tables = lambda: [h.proto.body for h in at.get("html") if "lab-scroll-x" in h.proto.body or  # noqa: E731
                      "lab-refusal" in h.proto.body]
    assert not any("Refused" in h for h in tables())  # frame 0
    jump.click().run()
    # at the refusal, in the playing picture's cell: the note in short, in the place of two of the three tables
    contiguous = next(h for h in tables() if "Refused" in h)
    assert contiguous.count('class="lab-refusal"') == 1 and "longest run is" in contiguous


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("page,key,value,name", [
    ("pages/playground.py", "playground.max_num_seqs", 999_999, "max_num_seqs"),
    ("pages/playground.py", "playground.block_size", -5, "block_size"),
    ("pages/static_vs_continuous.py", "static-vs-continuous.slots", 999_999, "max_num_seqs"),
    ("pages/policies.py", "policies.aging", 0, "priority_aging_steps"),
    ("pages/paged_kv.py", "paged-kv.blocks", 100_000, "num_blocks"),
])
def test_a_number_outside_its_range_is_refused_at_run_and_nothing_runs(page, key, value, name, lang):
    """The number box keeps what was typed (no silent fall back to the previous value); Run says the range."""
    at = app(lang, page)
    prefix = page.split("/")[1][:-3].replace("_", "-")
    before = at.session_state[f"{prefix}.runs"] if f"{prefix}.runs" in at.session_state else None
    at.number_input(key=key).set_value(value)  # typed, then Run (in a form, Run sends what was typed)
    next(b for b in at.button if b.label == RUN[lang]).click().run()
    assert not at.exception, [e.value for e in at.exception]
    errors = " ".join(e.value for e in at.error)
    assert name in errors and str(value) in errors and ("范围" in errors if lang == "zh" else "range" in errors)
    assert at.number_input(key=key).value == value  # what was typed stays
    assert (at.session_state[f"{prefix}.runs"] if f"{prefix}.runs" in at.session_state else None) == before
