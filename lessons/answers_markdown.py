"""Worksheet answers as a Markdown file a student can read and import again:

    # Serving Lab: worksheet answers
    ## Compare batching (`compare-batching`)
    ### Why does online serving prefer continuous batching? (`why_online`)
    ```
    the answer, verbatim; the fence grows longer than any run of backticks inside
    ```
"""
from __future__ import annotations

import re

from lessons.loader import load_tasks
from lessons.strings import phrase

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
    lines = [f"# {phrase('answers_file.title', lang)}", "", phrase("answers_file.note", lang), ""]
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
