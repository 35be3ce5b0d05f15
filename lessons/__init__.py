"""The teaching layer: lessons, lecture moments, worksheets and quiz as data, with a pure-Python loader,
worksheet checker and quiz grader (no Streamlit here).

    from lessons import load_lessons, load_tasks, load_quiz, check_task, grade
    tasks = load_tasks("zh"); feedback = check_task(tasks[0], {"why_online": "..."})

Worksheet answers export to a Markdown file a student can read and import again:

    # Serving Lab: worksheet answers
    ## Compare batching (`compare-batching`)
    ### Why does online serving prefer continuous batching? (`why_online`)
    ```
    the answer, verbatim; the fence grows longer than any run of backticks inside
    ```
"""
from __future__ import annotations

import re

from lessons.grading import (
    CriterionResult,
    FieldFeedback,
    QuizGrade,
    TaskFeedback,
    check_field,
    check_task,
    grade,
    incomplete,
    matches,
    measure,
    measured_value,
    metric_value,
    parse_number,
    quiz_order,
    run_spec,
    shown_value,
    shuffled_items,
)
from lessons.quiz_loader import load_quiz
from lessons.loader import (
    BASE_PAGES,
    LAB_PAGES,
    LANGS,
    TOPICS,
    Criterion,
    Lesson,
    Moment,
    Question,
    Task,
    TaskField,
    load_lessons,
    load_moments,
    load_tasks,
    valid_pages,
)

__all__ = ["LANGS", "BASE_PAGES", "LAB_PAGES", "TOPICS", "Lesson", "Moment", "Task", "TaskField", "Criterion",
           "Question", "load_lessons", "load_moments", "load_tasks", "load_quiz", "valid_pages", "run_spec",
           "metric_value", "check_task", "check_field", "TaskFeedback", "FieldFeedback", "CriterionResult",
           "grade", "QuizGrade", "incomplete", "measure", "measured_value",
           "parse_number", "shown_value", "matches", "quiz_order", "shuffled_items",
           "answers_to_markdown", "answers_from_markdown"]

_TITLE = {"zh": "Serving Lab：练习答案", "en": "Serving Lab: worksheet answers"}
_NOTE = {"zh": "每个问题的答案原样写在下面的代码块里；可以在「练习」页重新导入本文件。",
         "en": "Each answer sits verbatim in the code block under its question; "
               "import this file again on the Tasks page."}
_ID = re.compile(r"^(#{2,3}) .*\(`([A-Za-z0-9_.-]+)`\)\s*$")
_FENCE = re.compile(r"^(`{3,})$")


def _labels(lang: str) -> tuple[dict, dict]:
    try:
        tasks = load_tasks(lang)
    except (ValueError, OSError):
        return {}, {}
    return ({t.id: t.title for t in tasks},
            {(t.id, f.id): f.label for t in tasks for f in t.fields})


def _one_line(text: str) -> str:
    return " ".join(text.split())


def answers_to_markdown(task_answers: dict[str, dict[str, str]], lang: str) -> str:
    """Readable Markdown: a heading per task and per field (ids in backticks), each answer verbatim
    in a backtick fence longer than any backtick run inside it. answers_from_markdown reads it back."""
    titles, labels = _labels(lang)
    lines = [f"# {_TITLE.get(lang, _TITLE['en'])}", "", _NOTE.get(lang, _NOTE["en"]), ""]
    for task_id, fields in task_answers.items():
        lines += [f"## {_one_line(titles.get(task_id, task_id))} (`{task_id}`)", ""]
        for field_id, answer in fields.items():
            answer = "" if answer is None else str(answer)
            longest = max((len(run) for run in re.findall(r"`+", answer)), default=0)
            fence = "`" * max(3, longest + 1)
            lines += [f"### {_one_line(labels.get((task_id, field_id), field_id))} (`{field_id}`)", "",
                      fence, answer, fence, ""]
    return "\n".join(lines)


def answers_from_markdown(text: str) -> dict[str, dict[str, str]]:
    """The answers of a file written by answers_to_markdown, exactly as they were exported."""
    out: dict[str, dict[str, str]] = {}
    if text.count("\n") and text.count("\r\n") == text.count("\n"):  # saved by an editor with CRLF line ends
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    task_id = field_id = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _ID.match(line)
        if m and len(m.group(1)) == 2:
            task_id, field_id = m.group(2), None
            out.setdefault(task_id, {})
        elif m:
            if task_id is None:
                raise ValueError(f"answers file, line {i + 1}: a field heading before any task heading")
            field_id = m.group(2)
        elif field_id is not None and _FENCE.match(line.rstrip("\r")):
            fence = line.rstrip("\r")
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip("\r") == fence), None)
            if end is None:
                raise ValueError(f"answers file, line {i + 1}: the answer to {task_id}/{field_id} is not closed")
            out[task_id][field_id] = "\n".join(lines[i + 1:end])
            field_id, i = None, end
        i += 1
    return out
