"""A class's results, summed over its students: what the instructor's view and its CSV read. No token leaves here."""
import csv
import io
import json
from collections import Counter, defaultdict

from sqlalchemy import select

from .records import when
from .schema import gradings, predictions, quiz_answers, students


def _hashable(answer_text: str):
    value = json.loads(answer_text)
    return value if isinstance(value, (str, int, float, bool, type(None))) else answer_text


def class_quiz(conn, class_code: str) -> dict:
    """Per question: the first-try answers' distribution, how many students got it right on the first or the
    second try, and how many answered at all."""
    rows = conn.execute(
        select(quiz_answers.c.token, quiz_answers.c.question_id, quiz_answers.c.try_no,
               quiz_answers.c.answer, quiz_answers.c.correct)
        .join(students, students.c.token == quiz_answers.c.token)
        .where(students.c.class_code == class_code)
        .order_by(quiz_answers.c.question_id, quiz_answers.c.try_no)
    ).all()
    out: dict = {}
    seen: dict[str, set] = defaultdict(set)
    first_right: dict[str, set] = defaultdict(set)
    for token, qid, try_no, answer, correct in rows:
        entry = out.setdefault(qid, {"answers": Counter(), "first_try_correct": 0, "second_try_correct": 0,
                                     "students": 0})
        seen[qid].add(token)
        if try_no == 1:
            entry["answers"][_hashable(answer)] += 1
            if correct:
                entry["first_try_correct"] += 1
                first_right[qid].add(token)
        elif try_no == 2 and correct and token not in first_right[qid]:
            entry["second_try_correct"] += 1
    for qid, entry in out.items():
        entry["students"] = len(seen[qid])
    return out


def class_worksheets(conn, class_code: str) -> dict:
    rows = conn.execute(
        select(gradings.c.task_id, gradings.c.passed, gradings.c.criteria)
        .join(students, students.c.token == gradings.c.token)
        .where(students.c.class_code == class_code)
    ).all()
    out: dict = {}
    for task_id, passed, criteria in rows:
        entry = out.setdefault(task_id, {"students": 0, "passed": 0, "criteria": {}})
        entry["students"] += 1
        entry["passed"] += bool(passed)
        for name, ok in json.loads(criteria).items():
            entry["criteria"][name] = entry["criteria"].get(name, 0) + bool(ok)
    return out


def class_predictions(conn, class_code: str) -> dict:
    """Per prompt: every student's prediction, and the latest measured value any of them was compared with."""
    rows = conn.execute(
        select(predictions.c.prompt_id, predictions.c.value, predictions.c.measured)
        .join(students, students.c.token == predictions.c.token)
        .where(students.c.class_code == class_code)
        .order_by(predictions.c.at)
    ).all()
    out: dict = {}
    for prompt_id, value, measured in rows:
        entry = out.setdefault(prompt_id, {"values": [], "measured": None})
        entry["values"].append(value)
        if measured is not None:
            entry["measured"] = measured
    return out


def _cell(value: str) -> str:
    """A name a spreadsheet would run as a formula (=, +, -, @) is kept as text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


CSV_COLUMNS = ("student", "kind", "item", "try", "answer", "correct", "at")


def class_csv(conn, class_code: str, show_names: bool = False) -> str:
    """One row per stored record. Students are "student N" (in order of joining) unless names are shown."""
    roster = conn.execute(
        select(students.c.token, students.c.name)
        .where(students.c.class_code == class_code)
        .order_by(students.c.created, students.c.token)
    ).all()
    label = {tok: _cell(nm or f"student {i}") if show_names else f"student {i}"
             for i, (tok, nm) in enumerate(roster, 1)}
    rows = []
    member = students.c.class_code == class_code
    for tok, qid, try_no, answer, correct, at in conn.execute(
            select(quiz_answers.c.token, quiz_answers.c.question_id, quiz_answers.c.try_no, quiz_answers.c.answer,
                   quiz_answers.c.correct, quiz_answers.c.at)
            .join(students, students.c.token == quiz_answers.c.token).where(member)):
        rows.append((label[tok], "quiz", qid, try_no, answer, correct, at))
    for tok, task_id, passed, criteria, at in conn.execute(
            select(gradings.c.token, gradings.c.task_id, gradings.c.passed, gradings.c.criteria, gradings.c.at)
            .join(students, students.c.token == gradings.c.token).where(member)):
        rows.append((label[tok], "worksheet", task_id, "", criteria, passed, at))
    for tok, prompt_id, value, measured, at in conn.execute(
            select(predictions.c.token, predictions.c.prompt_id, predictions.c.value, predictions.c.measured,
                   predictions.c.at)
            .join(students, students.c.token == predictions.c.token).where(member)):
        rows.append((label[tok], "prediction", prompt_id, "", value, "" if measured is None else measured, at))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in sorted(rows, key=lambda r: (r[0], r[1], r[2], str(r[3]))):
        writer.writerow((*row[:-1], when(row[-1]).isoformat(timespec="seconds")))
    return buf.getvalue()
