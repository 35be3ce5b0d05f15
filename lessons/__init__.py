"""The teaching layer: lessons, lecture moments, worksheets and quiz as data, with a pure-Python loader,
worksheet checker and quiz grader (no Streamlit here).

    from lessons import load_lessons, load_tasks, load_quiz, check_task, grade
    tasks = load_tasks("zh"); feedback = check_task(tasks[0], {"why_online": "..."})

The worksheet answers file (export, import) is lessons/answers_markdown.py.
"""
from __future__ import annotations

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
    workload_of,
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
           "workload_of", "metric_value", "check_task", "check_field", "TaskFeedback", "FieldFeedback",
           "CriterionResult", "grade", "QuizGrade", "incomplete", "measure", "measured_value",
           "parse_number", "shown_value", "matches", "quiz_order", "shuffled_items"]
