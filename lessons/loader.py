"""Load and validate the teaching content, zh and en: lessons (Markdown with YAML front matter), the
lecture moments and worksheets (tasks.yaml); the quiz in quiz_loader.py. Pure Python + yaml; every
problem in a content file raises ValueError naming the file and the entry."""
from __future__ import annotations

import functools
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from engine.lab.journey import STATES
from lessons.page_slugs import BASE_PAGES, LAB_PAGES, lesson_page

ROOT = Path(__file__).resolve().parent
LANGS = ("zh", "en")
TOPICS = ("batching", "fixed-batch", "continuous", "paged", "four-axes", "priorities", "decisions")
FIELD_KINDS = ("text", "long", "number", "choice", "runs")  # long: an explanation, judged by people
OPTION_SOURCES = ("runs", "workloads", "changes", "effect_metrics", "classes", "policies")  # filled in by the page
EVIDENCE = ("batching", "effects", "paging", "goal")  # lessons/evidence/checks.py
SELF_ASSESSMENT = ("met", "partly", "not_yet")
LIVE_TABLES = ("mechanisms",)
FRONT_MATTER_KEYS = {"id", "order", "title", "summary", "experiments", "live_table"}
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Lesson:
    id: str
    order: int
    title: str
    summary: str
    experiments: tuple[str, ...]
    body: str  # Markdown, front matter removed
    lang: str
    path: Path
    live_table: str | None = None

    @property
    def page(self) -> str:
        return lesson_page(self.id)


@dataclass(frozen=True)
class Moment:
    id: str
    page: str
    workload: str | None = None
    seed: int = 0
    settings: dict = field(default_factory=dict)
    compare: tuple[str, ...] = ()
    batch_sizes: tuple[int, ...] = ()
    narration: dict = field(default_factory=dict)  # lang -> text
    predict: dict = field(default_factory=dict)  # what to predict before the run (lessons/predictions.py)


@dataclass(frozen=True)
class Criterion:
    id: str
    any: tuple[str, ...]  # lowercase keywords (lessons/reading.py); one affirmed is enough
    ok: str
    missing: str
    required: bool = True  # an optional criterion only adds a tip
    negation_ok: bool = False  # a denied keyword counts too ("no request starves" is about fairness)


@dataclass(frozen=True)
class TaskField:
    id: str
    label: str
    kind: str = "text"
    criteria: tuple[Criterion, ...] = ()
    reject_if_only: tuple[str, ...] = ()
    reject_feedback: str = ""  # a field with criteria gets keyword hints (never a verdict)
    options: tuple[tuple[str, str], ...] = ()  # choice: (value, label) pairs ...
    options_from: str | None = None  # ... or the page's list of OPTION_SOURCES
    answer: str | None = None  # choice: the right value, where the lab knows it (a fact, not an opinion)
    rubric: tuple[str, ...] = ()  # long: what a good explanation does, for the student's self-assessment
    unit: str = ""  # number: shown beside the field


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    milestone: bool
    prompt: str
    link: dict  # {"page": ..., "moment": ... or None}
    fields: tuple[TaskField, ...]
    model_answers: dict  # field id -> list of good answers
    bad_answers: dict  # field id -> list of off-topic or insufficient answers
    lang: str
    evidence: str | None = None  # which evidence check grades the task's runs and figures (EVIDENCE)
    answers_by_change: dict = field(default_factory=dict)  # a workload change -> model answers of a feature's why

    def explanations(self) -> tuple[TaskField, ...]:
        return tuple(f for f in self.fields if f.kind == "long")

    def model_answers_for(self, field_id: str, answers: dict) -> list[str]:
        """The model answers to show beside `field_id`: a feature's "why_<i>" follows the change the student chose
        as "change_<i>" (an answer about a long prompt does not fit a student who chose longer outputs)."""
        prefix, _, number = field_id.rpartition("_")
        change = (answers.get(f"change_{number}") or "").strip() if prefix == "why" else ""
        return self.answers_by_change.get(change) or self.model_answers.get(field_id) or []


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    topic: str
    prompt: str
    explanation: str
    link: dict
    options: tuple[str, ...] = ()  # single, multiple, two_tier (its answer tier)
    answer: int | tuple[int, ...] | None = None  # single, two_tier: index; multiple: indices
    items: tuple[str, ...] = ()  # ordering: the correct order
    run: dict | None = None  # numeric: {"moment": id, "settings": {...}, "versus": {...} or None}
    metric: str | None = None  # numeric: dotted path into summarize(); max_class: with `{cls}` for the class
    tolerance: dict | None = None  # numeric: {"rel": x} and/or {"abs": y} (none for max_class)
    unit: str = ""
    reasons: tuple[str, ...] = ()  # two_tier: the reason tier's options
    reason: int | None = None  # two_tier: the right reason's index
    predict: bool = False  # numeric: answered before the run (one try), then graded against it
    compare: str | None = None  # numeric: None (the run's figure), "ratio" (run / versus), "max_class"
    classes: tuple[tuple[str, str], ...] = ()  # max_class: (class id, label) pairs, the choices shown
    self_check: bool = False
    misconception: str | None = None
    lang: str = ""
    hint: str = ""  # the question's own, shown on request and after a wrong first try; never the answer
    look: str = ""  # numeric: where in the run the figure is read ("the results table's TTFT p50 · chat column")


def _need(ok, path, entry, msg):
    """Raise ValueError naming the file and the entry unless `ok`."""
    if not ok:
        raise ValueError(f"{Path(path).name}: {entry}: {msg}")


def _read_yaml(path: Path, text: str | None = None, entry: str = "file"):
    try:
        return yaml.load(path.read_text(encoding="utf-8") if text is None else text, Loader=_Loader)
    except yaml.YAMLError as e:
        _need(False, path, entry, f"not valid YAML: {e}")


def _lang(lang: str) -> str:
    _need(lang in LANGS, ROOT, "language", f"must be one of {', '.join(LANGS)} (got {lang!r})")
    return lang


def _need_str(path, entry, d, key):
    value = d.get(key)
    _need(isinstance(value, str) and value.strip(), path, entry, f"`{key}` must be a non-empty string")
    return value


def _kept_while_unchanged(files_of):
    """Keep what a loader returned while the files it read are unchanged (same names, mtimes and sizes): every
    page run of every session asks for the lessons and moments, and a room of forty spent more of the
    server's time parsing them than drawing. The files are looked at again at most once every RECHECK_S
    (each look is a few dozen system calls, and on a busy server every one waits for the interpreter lock),
    so an edited file is read again within a second. Callers get their own shallow copy of the dict or list."""
    def wrap(load):
        kept, lock = {}, threading.Lock()

        @functools.wraps(load)
        def loader(*args):
            key = (ROOT, args)  # (tests point ROOT at a copy of the lessons)
            with lock:
                hit = kept.get(key)
            if hit is not None and time.monotonic() - hit[2] < RECHECK_S:
                return type(hit[1])(hit[1])
            files = files_of(*args)
            if files is None:  # arguments that are not files (moments passed in): no keeping
                return load(*args)
            stamp = []
            for f in files:
                info = f.stat()
                stamp.append((str(f), info.st_mtime_ns, info.st_size))
            if hit is None or hit[0] != stamp:
                hit = (stamp, load(*args), time.monotonic())
            else:
                hit = (stamp, hit[1], time.monotonic())
            with lock:
                kept[key] = hit
            return type(hit[1])(hit[1])
        return loader
    return wrap


RECHECK_S = 1.0


@_kept_while_unchanged(lambda path=None: [path or ROOT / "moments.yaml"])
def load_moments(path: Path | None = None) -> dict[str, Moment]:
    path = path or ROOT / "moments.yaml"
    out = {}
    for entry, d in _entries(path, "moment"):
        _need(d.get("page") in LAB_PAGES, path, entry, f"page must be one of {', '.join(LAB_PAGES)}")
        predict = d.get("predict") or {}
        _need(not predict or (predict.get("kind") in ("number", "choice") and isinstance(predict.get("metric"), str)
                              and all(isinstance(predict.get(lang), str) for lang in LANGS)
                              and 1 <= len(predict.get("runs") or []) <= 2
                              and set(predict.get("runs") or []) <= set(d.get("compare") or ("static", "continuous"))
                              and (predict["kind"] == "number" or predict.get("choices"))), path, entry,
              "`predict` needs kind (number|choice), metric, runs (1-2 compared runs), zh and en questions, and "
              "choices for a choice")
        _need(predict.get("metric") != "next_step" or (
            predict["kind"] == "choice" and len(predict["runs"]) == 1 and isinstance(predict.get("request"), str)
            and isinstance(predict.get("step"), int) and set(predict["choices"]) <= set(STATES)), path, entry,
              "a next_step question is a choice on one run, with the request, the step it is asked at, and choices "
              "among the journey's states")
        out[d["id"]] = Moment(d["id"], d["page"], d.get("workload"), int(d.get("seed", 0)),
                              dict(d.get("settings") or {}),
                              tuple(d.get("compare") or ()), tuple(d.get("batch_sizes") or ()),
                              dict(d.get("narration") or {}), dict(predict))
    return out


_FRONT = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.S)
_LESSON_FILE = re.compile(r"^(\d+)-([a-z0-9-]+)\.md$")


def parse_front_matter(text: str, path: Path) -> tuple[dict, str]:
    m = _FRONT.match(text.replace("\r\n", "\n"))
    _need(m, path, "front matter", "the file must start with YAML between two `---` lines")
    meta = _read_yaml(path, m.group(1), "front matter")
    _need(isinstance(meta, dict), path, "front matter", "must be a mapping")
    return meta, m.group(2).strip() + "\n"


@_kept_while_unchanged(lambda lang, moments=None: None if moments is not None or lang not in LANGS else
                       [ROOT / "moments.yaml", *sorted((ROOT / lang).glob("*.md"))])
def load_lessons(lang: str, moments: dict[str, Moment] | None = None) -> list[Lesson]:
    """The lessons of one language, sorted by `order`; front matter checked against moments.yaml."""
    moments = moments if moments is not None else load_moments()
    lessons, seen = [], {}
    for path in sorted((ROOT / _lang(lang)).glob("*.md")):
        fm = _LESSON_FILE.match(path.name)
        _need(fm, path, "file name", "lesson files are named NN-<id>.md")
        meta, body = parse_front_matter(path.read_text(encoding="utf-8"), path)
        entry, order, experiments = f"lesson {meta.get('id')!r}", meta.get("order"), meta.get("experiments")
        problems = [
            (meta.get("id") != fm.group(2), f"id must match the file name ({fm.group(2)!r})"),
            (not isinstance(order, int) or isinstance(order, bool), "`order` must be an integer"),
            (not isinstance(experiments, list) or any(p not in moments for p in experiments),
             "`experiments` must be a list of moment ids from moments.yaml (may be empty)"),
            (meta.get("live_table") not in (None,) + LIVE_TABLES, f"live_table must be one of {LIVE_TABLES}"),
            (bool(set(meta) - FRONT_MATTER_KEYS), f"unknown front-matter keys {sorted(set(meta) - FRONT_MATTER_KEYS)}"),
            (not body.strip(), "the lesson body is empty"),
            (("id", meta.get("id")) in seen or ("order", order) in seen, "id or order used by another lesson")]
        for bad, msg in problems:
            _need(not bad, path, entry, msg)
        seen.update({("id", meta["id"]): 1, ("order", order): 1})
        lessons.append(Lesson(meta["id"], order, _need_str(path, entry, meta, "title"),
                              _need_str(path, entry, meta, "summary"),
                              tuple(experiments), body, lang, path, meta.get("live_table")))
    return sorted(lessons, key=lambda le: le.order)


def valid_pages(lang: str) -> list[str]:
    """Every page id a link may name: the app's pages, then `lesson-<id>` per lesson."""
    return list(BASE_PAGES) + [lesson.page for lesson in load_lessons(lang)]


def check_link(link, path, entry, pages, moments) -> dict:
    """A link {page, moment}: a real page; a moment only on a lab page, and the moment's own page."""
    page, pid = (link.get("page"), link.get("moment")) if isinstance(link, dict) else (None, None)
    _need(page in pages, path, entry, f"link page {page!r} is not a page (choose from {', '.join(pages)})")
    _need(pid is None or (pid in moments and moments[pid].page == page), path, entry,
          f"link moment {pid!r} is not a moment of moments.yaml that opens on page {page!r}")
    return {"page": page, "moment": pid}


def _keywords(path, entry, value, key) -> tuple[str, ...]:
    _need(isinstance(value, list) and value and all(isinstance(k, str) and k.strip() for k in value), path, entry,
          f"`{key}` must be a non-empty list of keyword strings")
    _need(all(k == k.lower() for k in value), path, entry, f"`{key}` keywords must be lowercase")
    return tuple(value)


def _answer_lists(path, entry, value, key, field_ids) -> dict:
    _need(isinstance(value, dict) and all(fid in field_ids for fid in value) and all(
        isinstance(a, list) and all(isinstance(x, str) for x in a) for a in value.values()), path, entry,
          f"`{key}` must map field ids ({', '.join(field_ids)}) to lists of strings")
    return {fid: list(answers) for fid, answers in value.items()}


def _entries(path, kind):
    data = _read_yaml(path)
    _need(isinstance(data, list), path, "top level", f"must be a list of {kind}s")
    ids = set()
    for i, d in enumerate(data):
        entry = f"{kind} #{i + 1} ({d.get('id') if isinstance(d, dict) else repr(d)})"
        _need(isinstance(d, dict), path, entry, "must be a mapping")
        _need(_need_str(path, entry, d, "id") not in ids, path, entry, "duplicate id")
        ids.add(d["id"])
        yield entry, d


def _task_field(path, entry, f) -> TaskField:
    _need(f.get("kind", "text") in FIELD_KINDS, path, entry, f"kind must be one of {', '.join(FIELD_KINDS)}")
    criteria = []
    for k, c in enumerate(f.get("criteria") or []):
        centry = f"{entry} criterion #{k + 1} ({c.get('id') if isinstance(c, dict) else repr(c)})"
        _need(isinstance(c, dict), path, centry, "must be a mapping")
        words = _keywords(path, centry, c.get("any"), "any")
        criteria.append(Criterion(_need_str(path, centry, c, "id"), words, _need_str(path, centry, c, "ok"),
                                  _need_str(path, centry, c, "missing"), bool(c.get("required", True)),
                                  bool(c.get("negation_ok", False))))
    _need(len({c.id for c in criteria}) == len(criteria), path, entry, "duplicate criterion ids")
    reject = f.get("reject_if_only")
    reject = _keywords(path, entry, reject, "reject_if_only") if reject is not None else ()
    kind, options, source = f.get("kind", "text"), f.get("options") or [], f.get("options_from")
    _need(kind != "choice" or bool(options) != bool(source), path, entry,
          "a choice needs either `options` (a mapping of values to labels) or `options_from`")
    _need(isinstance(options, dict) or not options, path, entry, "`options` must map values to labels")
    _need(source is None or source in OPTION_SOURCES, path, entry,
          f"options_from must be one of {', '.join(OPTION_SOURCES)}")
    _need(f.get("answer") is None or f.get("answer") in options, path, entry, "`answer` must be one of the options")
    rubric = f.get("rubric") or []
    _need(kind != "long" or (isinstance(rubric, list) and rubric and all(isinstance(r, str) for r in rubric)),
          path, entry, "an explanation (kind long) needs a `rubric`: a list of what a good answer does")
    return TaskField(_need_str(path, entry, f, "id"), _need_str(path, entry, f, "label"), kind,
                     tuple(criteria), reject, _need_str(path, entry, f, "reject_feedback") if reject else "",
                     tuple((str(k), str(v)) for k, v in dict(options).items()), source,
                     None if f.get("answer") is None else str(f["answer"]), tuple(rubric), str(f.get("unit", "")))


def load_tasks(lang: str) -> list[Task]:
    path = ROOT / _lang(lang) / "tasks.yaml"
    moments, pages = load_moments(), valid_pages(lang)
    tasks = []
    for entry, d in _entries(path, "task"):
        _need(isinstance(d.get("milestone"), bool), path, entry, "`milestone` must be true or false")
        raw = d.get("fields")
        _need(isinstance(raw, list) and raw and all(isinstance(f, dict) for f in raw), path, entry,
              "`fields` must list at least one field mapping")
        fields = tuple(_task_field(path, f"{entry} field {f.get('id')!r}", f) for f in raw)
        ids = [f.id for f in fields]
        _need(len(set(ids)) == len(ids), path, entry, "duplicate field ids")
        _need(d.get("evidence") in (None,) + EVIDENCE, path, entry, f"evidence must be one of {', '.join(EVIDENCE)}")
        tasks.append(Task(d["id"], _need_str(path, entry, d, "title"), d["milestone"],
                          _need_str(path, entry, d, "prompt"),
                          check_link(d.get("link"), path, entry, pages, moments), fields,
                          _answer_lists(path, entry, d.get("model_answers") or {}, "model_answers", ids),
                          _answer_lists(path, entry, d.get("bad_answers") or {}, "bad_answers", ids), lang,
                          d.get("evidence"),
                          _answer_lists(path, entry, d.get("model_answers_by_change") or {}, "model_answers_by_change",
                                        list(d.get("model_answers_by_change") or {}))))
    return tasks
