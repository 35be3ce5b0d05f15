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


def _attempt_of(rows, latest: bool) -> dict:
    """(token, item) -> the rows of one attempt: each student's first attempt at the item, or (`latest`) the
    attempt the student is in now (no entry when it has none of that item). Rows carry `item`, `attempt` and
    `now` (the student's current attempt). A retake (start over, a new quiz attempt) never changes the first."""
    by: dict = defaultdict(lambda: defaultdict(list))
    now: dict = {}
    for row in rows:
        by[(row.token, row.item)][row.attempt].append(row)
        now[row.token] = row.now
    if latest:
        return {key: attempts[now[key[0]]] for key, attempts in by.items() if now[key[0]] in attempts}
    return {key: attempts[min(attempts)] for key, attempts in by.items()}


def class_quiz(conn, class_code: str, latest: bool = False) -> dict:
    """Per question, over each student's first attempt at it (or, `latest`, over the quiz attempt each student is
    in now): the first tries' answers, how many students got it right on the first or the second try, and how
    many answered at all."""
    rows = conn.execute(
        select(quiz_answers.c.token, quiz_answers.c.question_id.label("item"),
               quiz_answers.c.quiz_attempt.label("attempt"), students.c.quiz_attempt.label("now"),
               quiz_answers.c.try_no, quiz_answers.c.answer, quiz_answers.c.correct)
        .join(students, students.c.token == quiz_answers.c.token)
        .where(students.c.class_code == class_code)
        .order_by(quiz_answers.c.question_id, quiz_answers.c.try_no)
    ).all()
    out: dict = {}
    for (_, qid), tries in sorted(_attempt_of(rows, latest).items(), key=lambda kv: kv[0][1]):
        entry = out.setdefault(qid, {"answers": Counter(), "first_try_correct": 0, "second_try_correct": 0,
                                     "students": 0})
        entry["students"] += 1
        by_try = {r.try_no: r for r in tries}
        if 1 in by_try:
            entry["answers"][_hashable(by_try[1].answer)] += 1
        if 1 in by_try and by_try[1].correct:
            entry["first_try_correct"] += 1
        elif 2 in by_try and by_try[2].correct:
            entry["second_try_correct"] += 1
    return out


def class_worksheets(conn, class_code: str, latest: bool = False) -> dict:
    """Per task, over each student's first attempt at it (or, `latest`, over the attempt each student is in now):
    how many submitted, how many completed it, and how many met each part."""
    rows = conn.execute(
        select(gradings.c.token, gradings.c.task_id.label("item"), gradings.c.attempt,
               students.c.attempt.label("now"), gradings.c.passed, gradings.c.criteria)
        .join(students, students.c.token == gradings.c.token)
        .where(students.c.class_code == class_code)
    ).all()
    out: dict = {}
    for (_, task_id), (row,) in _attempt_of(rows, latest).items():
        entry = out.setdefault(task_id, {"students": 0, "passed": 0, "criteria": {}})
        entry["students"] += 1
        entry["passed"] += bool(row.passed)
        for name, ok in json.loads(row.criteria).items():
            entry["criteria"][name] = entry["criteria"].get(name, 0) + bool(ok)
    return out


def class_predictions(conn, class_code: str, latest: bool = False) -> dict:
    """Per prompt, over each student's first attempt at it (or, `latest`, over the attempt each student is in
    now): every student's prediction, and the latest measured value any of them was compared with."""
    rows = conn.execute(
        select(predictions.c.token, predictions.c.prompt_id.label("item"), predictions.c.attempt,
               students.c.attempt.label("now"), predictions.c.value, predictions.c.measured, predictions.c.at)
        .join(students, students.c.token == predictions.c.token)
        .where(students.c.class_code == class_code)
    ).all()
    out: dict = {}
    for (_, prompt_id), (row,) in sorted(_attempt_of(rows, latest).items(), key=lambda kv: kv[1][0].at):
        entry = out.setdefault(prompt_id, {"values": [], "measured": None})
        entry["values"].append(row.value)
        if row.measured is not None:
            entry["measured"] = row.measured
    return out


def _cell(value: str) -> str:
    """A name a spreadsheet would run as a formula (=, +, -, @) is kept as text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@") else value


CSV_COLUMNS = ("student", "kind", "item", "attempt", "latest", "try", "answer", "correct", "at")
"""`attempt`: which of the student's attempts the record belongs to (a quiz row: which quiz attempt), from 1;
`latest`: whether it is the attempt the student is in now (what their pages show)."""


def _labels(conn, class_code: str, show_names: bool) -> dict[str, str]:
    """token -> how the class view names the student: "student N" (in order of joining) unless names are shown."""
    roster = conn.execute(
        select(students.c.token, students.c.name)
        .where(students.c.class_code == class_code)
        .order_by(students.c.created, students.c.token)
    ).all()
    return {tok: _cell(nm or f"student {i}") if show_names else f"student {i}" for i, (tok, nm) in enumerate(roster, 1)}


def class_attempts(conn, class_code: str, show_names: bool = False) -> dict[str, tuple[int, int]]:
    """Every student of the class, in order of joining, as the class view names them: (the attempt they are in
    now, their quiz attempt now). 1 and 1 for a student who never started over nor began a new quiz attempt."""
    label = _labels(conn, class_code, show_names)
    now = {tok: (n, quiz_n) for tok, n, quiz_n in conn.execute(
        select(students.c.token, students.c.attempt, students.c.quiz_attempt)
        .where(students.c.class_code == class_code))}
    return {name: now[tok] for tok, name in label.items()}


def class_csv(conn, class_code: str, show_names: bool = False) -> str:
    """One row per stored record, of every attempt. Students are "student N" (in order of joining) unless names
    are shown."""
    label = _labels(conn, class_code, show_names)
    rows = []
    member = students.c.class_code == class_code
    for tok, qid, attempt, now, try_no, answer, correct, at in conn.execute(
            select(quiz_answers.c.token, quiz_answers.c.question_id, quiz_answers.c.quiz_attempt,
                   students.c.quiz_attempt, quiz_answers.c.try_no, quiz_answers.c.answer, quiz_answers.c.correct,
                   quiz_answers.c.at)
            .join(students, students.c.token == quiz_answers.c.token).where(member)):
        rows.append((label[tok], "quiz", qid, attempt, attempt == now, try_no, answer, correct, at))
    for tok, task_id, attempt, now, passed, criteria, at in conn.execute(
            select(gradings.c.token, gradings.c.task_id, gradings.c.attempt, students.c.attempt, gradings.c.passed,
                   gradings.c.criteria, gradings.c.at)
            .join(students, students.c.token == gradings.c.token).where(member)):
        rows.append((label[tok], "worksheet", task_id, attempt, attempt == now, "", criteria, passed, at))
    for tok, prompt_id, attempt, now, value, measured, at in conn.execute(
            select(predictions.c.token, predictions.c.prompt_id, predictions.c.attempt, students.c.attempt,
                   predictions.c.value, predictions.c.measured, predictions.c.at)
            .join(students, students.c.token == predictions.c.token).where(member)):
        rows.append((label[tok], "prediction", prompt_id, attempt, attempt == now, "", value,
                     "" if measured is None else measured, at))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in sorted(rows, key=lambda r: (r[0], r[1], r[2], r[3], str(r[5]))):
        writer.writerow((*row[:-1], when(row[-1]).isoformat(timespec="seconds")))
    return buf.getvalue()
