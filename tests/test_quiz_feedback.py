"""What the quiz says back: a numeric question's wrong first try says too high or too low and where in the
run to look, never the measured figure, which shows only once the question is done; every question has a hint of its
own, in both languages, that does not give the answer away; figures print as people write them; an empty Submit
costs no try; the README counts the questions the bank has; students read moments by their titles, never slugs."""
import re
from pathlib import Path

import pytest
import yaml

from lessons import LANGS, grade, load_moments, load_quiz, load_tasks, measure
from lessons.attempt import Attempt
from lessons.grading import figure, metric_figure
from tests.test_app_teaching import answer, page
from tests.test_quiz_page import show, submit

ROOT = Path(__file__).resolve().parent.parent
BANKS = {lang: load_quiz(lang) for lang in LANGS}
SLOT_RATIO = (0.874 / 0.379, 0.874, 0.379)  # what fixed-slot-ratio's two runs measure: 2.31×, 87.4 % ÷ 37.9 %
SLOT_FIGURES = ("2.3", "87.4", "37.9", "0.874", "0.379")  # the measured figure in any form a page could print


def words(text: str, lang: str, n: int) -> set[str]:
    """Runs of n words (en) or n characters, letters and digits only (zh): what two texts share."""
    if lang == "zh":
        chars = re.sub(r"[^\w]", "", text.lower())
        return {chars[i:i + n] for i in range(len(chars) - n + 1)}
    w = re.findall(r"[a-z0-9_]+", text.lower())
    return {" ".join(w[i:i + n]) for i in range(len(w) - n + 1)}


def right_texts(q) -> list[str]:
    if q.type == "single":
        return [q.options[q.answer]]
    if q.type == "multiple":
        return [q.options[i] for i in q.answer]
    if q.type == "two_tier":
        return [q.options[q.answer], q.reasons[q.reason]]
    if q.type == "ordering":
        return list(q.items)
    return [label for _, label in q.classes]  # which class: naming one would point at it


def numbers(text: str) -> set[float]:
    """The figures in a text (not the 50 of a name such as p50)."""
    return {float(x) for x in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text.replace(",", ""))}


def all_text(at) -> str:
    parts = [*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success, *at.subheader]
    return "\n".join(str(e.value) for e in parts) + "\n".join(w.label for w in at.text_input)


# --- figures ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, unit, lang, text", [
    (37.9073, "%", "en", "37.9 %"), (37.9073, "%", "zh", "37.9%"), (7.1934, "tokens/step", "en", "7.2 tokens/step"),
    (491.0, "steps", "en", "491 steps"), (159.5, "steps", "en", "160 steps"), (491.4, "步", "zh", "491 步"),
    (2.30607, "×", "en", "2.31×"), (12.345, "×", "en", "12.3×"), (153.2, "×", "en", "153×"),
    (2.30607, "倍", "zh", "2.31 倍"),
    (0.98, "", "en", "0.98"), (1234.5, "", "en", "1234"), (-0.001, "%", "en", "0.0 %")])
def test_a_figure_prints_as_people_write_it(value, unit, lang, text):
    assert figure(value, unit, lang) == text


def test_a_ratio_names_both_runs_figures_in_the_metrics_own_units():
    assert metric_figure("slot_utilisation", 0.874) == "87.4 %"
    assert metric_figure("by_class.chat.ttft_steps.p50", 159.5, "zh") == "160 步"
    assert metric_figure("throughput_tok_per_step", 7.1934) == "7.2 tokens/step"
    q = next(q for q in BANKS["en"] if q.id == "fixed-slot-ratio")
    done = grade(q, "2.3", SLOT_RATIO)
    assert done.message == "Your two runs measured a ratio of 2.31× (87.4 % ÷ 37.9 %); accepted within ±3 %."


# --- a numeric question's first try ----------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_numeric_try_says_which_way_and_where_to_look_not_the_figure(lang):
    for q in (q for q in BANKS[lang] if q.type == "numeric" and q.compare != "max_class"):
        measured = (2.0, 4.0, 2.0) if q.compare == "ratio" else 0.5
        high, low = ("95", "1") if q.unit == "%" else ("9", "0.1")  # against 50 % or a ratio of 2
        for typed, way in ((high, "high"), (low, "low")):
            g = grade(q, typed, measured)
            assert not g.correct and g.retry and q.look in g.retry, (q.id, g.retry)
            said = {"high": {"en": "Too high", "zh": "偏高"}, "low": {"en": "Too low", "zh": "偏低"}}[way][lang]
            assert g.retry.startswith(said), (q.id, typed, g.retry)
            assert not numbers(g.retry), (q.id, g.retry)  # no figure at all, measured or not
            assert figure(g.expected, q.unit, lang) in g.message  # shown once the question is done
        assert not numbers(q.look), q.id
    which = next(q for q in BANKS[lang] if q.compare == "max_class")
    g = grade(which, "batch", {"batch": 160.0, "support": 502.0})
    assert which.look in g.retry and not numbers(g.retry) and "502" in g.message


@pytest.mark.parametrize("lang", LANGS)
def test_the_quiz_page_keeps_the_measured_figure_back_until_the_question_is_done(lang):
    q = next(q for q in BANKS[lang] if q.id == "fixed-slot-ratio")
    at = page("pages/quiz.py", lang)
    at.session_state["quiz.measured"][q.id] = SLOT_RATIO  # as if its two runs had been made
    show(at, q.id)
    left = {"en": "{} of 2 tries left", "zh": "还剩 {} 次机会（共 2 次）"}[lang]
    assert left.format(2) in [c.value for c in at.caption]
    assert at.text_input(key=f"quiz.q.{q.id}").label == {"en": "Your answer (×)", "zh": "你的答案（倍）"}[lang]
    submit(at, q.id)  # empty: refused, no try
    assert left.format(2) in [c.value for c in at.caption] and q.id not in at.session_state["quiz.attempt"].tries
    answer(at, q, "5")
    submit(at, q.id)
    assert at.session_state["quiz.attempt"].awaiting_retry(q.id)
    shown = all_text(at)
    assert {"en": "Too high", "zh": "偏高了"}[lang] in shown and q.look in shown and q.hint in shown
    assert not [f for f in SLOT_FIGURES if f in shown], shown  # the figure stays back for the second try
    assert left.format(1) in [c.value for c in at.caption]
    answer(at, q, "1", key=f"quiz.q.{q.id}.2")
    submit(at, q.id)
    assert at.session_state["quiz.attempt"].done(q.id)
    shown = all_text(at)
    assert "2.31×" in shown or "2.31 倍" in shown
    assert ("87.4 % ÷ 37.9 %" if lang == "en" else "87.4% ÷ 37.9%") in shown
    assert "2.3061" not in shown and q.explanation in shown


# --- hints --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_every_question_has_a_hint_of_its_own_that_does_not_give_the_answer_away(lang):
    """Its own: present, not the prompt, no other question's. Not the answer: no run of five words (zh: eight
    characters) from a right option, reason or item that the prompt does not already say, nothing of the
    explanation, no class named for "which class"; a numeric question's hint adds no figure to its prompt."""
    bank = BANKS[lang]
    n, long = (8, 14) if lang == "zh" else (5, 8)
    assert all(q.hint.strip() for q in bank)
    assert len({q.hint for q in bank}) == len(bank) and all(q.hint != q.prompt for q in bank)
    for q in bank:
        for right in right_texts(q):
            shared = (words(q.hint, lang, n) & words(right, lang, n)) - words(q.prompt, lang, n)
            assert not shared, (q.id, shared)
            if q.compare == "max_class":
                assert right.lower() not in q.hint.lower(), (q.id, right)
        assert not (words(q.hint, lang, long) & words(q.explanation, lang, long)) - words(q.prompt, lang, long), q.id
        if q.type == "numeric":
            assert numbers(q.hint) <= numbers(q.prompt), (q.id, numbers(q.hint) - numbers(q.prompt))


def test_the_loader_refuses_a_question_without_a_hint(tmp_path, monkeypatch):
    from lessons import loader

    for lang in LANGS:
        (tmp_path / lang).mkdir()
        for name in ("quiz.yaml", "tasks.yaml"):
            (tmp_path / lang / name).write_text((ROOT / "lessons" / lang / name).read_text(encoding="utf-8"),
                                                encoding="utf-8")
    for name in ("moments.yaml", "glossary.yaml"):
        (tmp_path / name).write_text((ROOT / "lessons" / name).read_text(encoding="utf-8"), encoding="utf-8")
    bank = yaml.load((tmp_path / "en" / "quiz.yaml").read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    del bank[0]["hint"]
    (tmp_path / "en" / "quiz.yaml").write_text(yaml.safe_dump(bank, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(loader, "ROOT", tmp_path)
    with pytest.raises(ValueError, match=rf"quiz.yaml: .*{bank[0]['id']}.*`hint` must be a non-empty string"):
        load_quiz("en")


# --- empty Submit, README, moment names -------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_an_empty_submit_twice_uses_no_try_and_reveals_nothing(lang):
    for q in BANKS[lang]:
        a = Attempt()
        for _ in range(2):
            assert a.submit(q, None, SLOT_RATIO if q.type == "numeric" else None) == "incomplete", q.id
        assert q.id not in a.tries and q.id not in a.results and not a.done(q.id)


def test_the_readme_says_how_many_questions_the_quiz_has():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.findall(r"(\d+)-question", readme)
    assert said and {int(n) for n in said} == {len(BANKS["en"])} == {len(BANKS["zh"])}, said


def student_texts(value):
    """Every string a student reads in a loaded bank entry (ids, pages, moments and settings are not read)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, v in value.items():
            if key not in ("id", "run", "link", "moment", "page", "settings", "metric", "topic", "type"):
                yield from student_texts(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from student_texts(v)


@pytest.mark.parametrize("lang", LANGS)
def test_the_quiz_and_the_worksheets_name_moments_by_their_titles_not_their_slugs(lang):
    from ui.shell.i18n import STRINGS_FILE

    strings = yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    slugs = re.compile(r"(?<![\w-])(" + "|".join(re.escape(m) for m in load_moments()) + r")(?![\w-])")
    for name in ("quiz.yaml", "tasks.yaml"):
        raw = yaml.load((ROOT / "lessons" / lang / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        found = {m for text in student_texts(raw) for m in slugs.findall(text)}
        assert not found, (name, found)
    for q in (q for q in BANKS[lang] if q.type == "numeric"):  # the prompt names the moment its Run button runs
        assert strings[f"moment.name.{q.run['moment']}"][lang] in q.prompt, q.id
    assert load_tasks(lang)  # the worksheets still load


@pytest.mark.parametrize("lang", LANGS)
def test_measured_values_in_a_finished_question_use_the_figure_format(lang):
    q = next(q for q in BANKS[lang] if q.compare == "max_class")
    done = grade(q, "support", measure(q, {"by_class": {"batch": {"ttft_steps": {"p50": 159.5}},
                                                         "support": {"ttft_steps": {"p50": 502.25}}}}))
    assert done.correct and "160" in done.message and "502" in done.message and "502.25" not in done.message


@pytest.mark.parametrize("lang", LANGS)
def test_lessons_and_narrations_name_moments_by_their_titles_on_the_page(lang):
    """The lesson texts and moments.yaml name moments by id (tests/test_lessons.py checks those against each lesson's
    experiments); the page shows each by its button's title instead."""
    from streamlit.testing.v1 import AppTest

    from lessons import load_lessons
    from tests.test_app_teaching import lesson_script
    from ui.shell.i18n import STRINGS_FILE

    strings = yaml.load(STRINGS_FILE.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    slugs = re.compile(r"`(" + "|".join(re.escape(m) for m in load_moments()) + r")`")
    mark = "“{}”" if lang == "en" else "「{}」"
    home = all_text(page("pages/home.py", lang))  # the moments' narrations, one of which names another moment
    assert not slugs.findall(home) and mark.format(strings["moment.name.online-uniform"][lang]) in home
    for lesson in load_lessons(lang):
        named = set(slugs.findall(lesson.body))
        at = AppTest.from_function(lesson_script, args=(lesson.id,), default_timeout=60)
        at.session_state["lang"] = lang
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        shown = all_text(at)
        assert not slugs.findall(shown), (lesson.id, slugs.findall(shown))
        assert all(mark.format(strings[f"moment.name.{m}"][lang]) in shown for m in named), lesson.id
