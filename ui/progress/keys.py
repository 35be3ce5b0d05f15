"""The session keys of a student's progress: what ui/progress/saved.py restores from the store and writes back,
and what the quiz and worksheet pages read. Each name is used through these constants only."""
from ui.shell.keys import STUDENT_TOKEN

TOKEN = STUDENT_TOKEN  # the student's `?s=` token, which the URL carries (so the frame owns the key)

NOTICE = "progress.notice"  # (kind, strings key, params): shown once, at the top of the next page drawn
UNAVAILABLE = "progress.unavailable"  # the StorageError that keeps this session from saving
OUTBOX = "progress.outbox"  # classroom.outbox.Outbox: the student's writes, kept until the store has them
SAVED_AGAIN = "progress.saved_again"  # writes that waited have all gone through: say so once
RETRIED = "progress.retried"  # this run's retry() has sent the writes that wait (its fragment need not)
PROBED = "progress.probed"  # the store was tried once this session
IMPORTED = "progress.imported"  # the file id of the last progress file imported
MILESTONES = "progress.milestones"  # set of milestone ids reached
ATTEMPT_NO = "progress.attempt_no"  # the student's attempt this session writes into (start over opens the next)
QUIZ_ATTEMPT_NO = "progress.quiz_attempt_no"  # the quiz attempt this session writes its tries into
MEASURED_PREFIX = "progress.measured."  # + moment id: the measured value last stored for a prediction

ANSWERS = "answers"  # worksheets: task id -> field id -> text (outlives the widgets)
TASK_PREFIX = "task."  # + task id + "." + field id: a worksheet field's widget
RECORDED = "tasks.recorded"  # task id -> the TaskStatus last written to the store
SUBMITTED = "tasks.submitted"  # ids of tasks whose answers were submitted (their rubric shows)
SELF_ASSESSED = "tasks.self_assessed"  # task id -> field id -> met | partly | not_yet
SELF_ASSESS_PREFIX = "tasks.sa."  # + task id + "." + field id: a self-assessment's widget
EVIDENCE_VERDICTS = "tasks.evidence"  # task id -> the last evidence check's Verdict (ui/practice/evidence_check.py)
MARKS = "tasks.marks"  # task id -> field id -> the instructor's Mark
PREDICTIONS = "predictions"  # moment id -> the prediction made (lessons.predictions)
PREDICTION_WIDGET_PREFIX = "pred."  # + moment id: a prediction's widget (ui/instructor/moments.py)

QUIZ_PREFIX = "quiz."  # every quiz key below starts so
QUIZ_SEED = "quiz.seed"  # the attempt's seed (option order, question order): kept over a restart
QUIZ_ORDER = "quiz.order"  # question ids in the attempt's order
QUIZ_ATTEMPT = "quiz.attempt"  # lessons.attempt.Attempt: tries and grades
QUIZ_MEASURED = "quiz.measured"  # question id -> what the student's runs measured (lessons.grading.measure)
QUIZ_PREDICTED = "quiz.predicted"  # question id -> the prediction committed before its run (a prediction question)
QUIZ_PROBLEM = "quiz.problem"  # (question id, message): an answer that could not be graded yet, said once
QUIZ_INDEX = "quiz.index"  # the question shown
QUIZ_HINTS = "quiz.hints"  # ids of questions whose hint was asked for
QUIZ_UNMEASURED = "quiz.unmeasured"  # a numeric question submitted before its run: say so once
QUIZ_WIDGET_PREFIX = "quiz.q."  # + question id (+ ".2" on the second try): the answer's widget


def quiz_widget(question_id: str, second_try: bool) -> str:
    return f"{QUIZ_WIDGET_PREFIX}{question_id}" + (".2" if second_try else "")


def task_field(task_id: str, field_id: str) -> str:
    return f"{TASK_PREFIX}{task_id}.{field_id}"
