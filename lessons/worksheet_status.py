"""Where a worksheet task stands, and whether it is complete. No word of an explanation enters here: a task is
complete when the engine verified its evidence (lessons/evidence), its choices of fact are right, and each
explanation is written, self-assessed as met against the rubric and, for a student in a class, marked ✓ by
the instructor. The keyword reader (lessons/grading.check_task) only gives hints beside it."""
from __future__ import annotations

from dataclasses import dataclass, field

from lessons.evidence.checks import Verdict
from lessons.evidence.tries import Tries
from lessons.loader import Task
from lessons.reading import normalize

MET = "met"  # the self-assessment that counts (lessons.loader.SELF_ASSESSMENT)
OK_MARK = "ok"  # the instructor's ✓ (the other mark is "needs_work")


@dataclass(frozen=True)
class Explanation:
    written: bool
    self_assessment: str | None  # met | partly | not_yet, once the student has judged it
    mark: str | None  # the instructor's: ok | needs_work

    def done(self, in_class: bool) -> bool:
        return self.written and self.self_assessment == MET and (not in_class or self.mark == OK_MARK)


@dataclass(frozen=True)
class TaskStatus:
    evidence: bool | None  # None: the task has no evidence part
    choices: dict[str, bool] = field(default_factory=dict)  # choice field id -> right, as last checked
    guessed: tuple[str, ...] = ()  # choice field ids right only after their free try (lessons/evidence/tries.py)
    explanations: dict[str, Explanation] = field(default_factory=dict)
    in_class: bool = False
    goal_attempts: int = 0  # goals checked, a goal changed after its results were shown counting anew

    @property
    def complete(self) -> bool:
        return (self.evidence is not False and all(self.choices.values())
                and all(e.done(self.in_class) for e in self.explanations.values()))

    def waiting_for(self) -> list[str]:
        """What is still missing, as codes the page words: evidence, choices, write, self_assess, mark."""
        out = []
        if self.evidence is False:
            out.append("evidence")
        if not all(self.choices.values()):
            out.append("choices")
        explanations = self.explanations.values()
        for code, missing in (("write", [e for e in explanations if not e.written]),
                              ("self_assess", [e for e in explanations if e.written and e.self_assessment != MET]),
                              ("mark", [e for e in explanations if self.in_class and e.self_assessment == MET
                                        and e.mark != OK_MARK])):
            if missing:
                out.append(code)
        return out


def task_status(task: Task, answers: dict, evidence: Verdict | None, self_assessed: dict, marks: dict | None,
                tries: Tries | None = None) -> TaskStatus:
    """answers: field id -> text; self_assessed: field id -> value; marks: field id -> the instructor's mark, for
    a student in a class (None: a student alone, whose explanations need no mark).
    evidence: the task's last evidence check (None before any); tries: its checks so far, which judge the
    choices of fact (a choice is right once checked right; None: judged as they stand, for a task without checks)."""
    answers = answers or {}
    facts = [f for f in task.fields if f.kind == "choice" and f.answer]
    if tries is None:
        choices = {f.id: (answers.get(f.id) or "").strip() == f.answer for f in facts}
    else:
        choices = {f.id: tries.choice_right(f, answers) for f in facts}
    return TaskStatus(
        None if task.evidence is None else bool(evidence and evidence.verified),
        choices,
        tuple(f.id for f in facts if tries is not None and choices[f.id] and tries.guessed(f)),
        {f.id: Explanation(bool(normalize(answers.get(f.id) or "")), self_assessed.get(f.id), (marks or {}).get(f.id))
         for f in task.explanations()},
        in_class=marks is not None, goal_attempts=tries.goal_attempts if tries is not None else 0)
