"""Load and validate the quiz (quiz.yaml, zh and en): every problem raises ValueError naming the file and the
question (lessons/loader.py's rules for the other content files)."""
from __future__ import annotations

from lessons import loader
from lessons.loader import TOPICS, Question, _entries, _lang, _need, _need_str, check_link, load_moments, valid_pages

QUESTION_TYPES = ("single", "multiple", "two_tier", "ordering", "numeric")
COMPARES = ("ratio", "max_class")  # numeric: how the run (and its `versus` run) give the graded figure
MISCONCEPTIONS = ("a", "b", "c")


def _is_index(value, n) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n


def load_quiz(lang: str) -> list[Question]:
    path = loader.ROOT / _lang(lang) / "quiz.yaml"  # (a test points ROOT at a copy)
    moments, pages = load_moments(), valid_pages(lang)
    questions = []
    for entry, d in _entries(path, "question"):
        qtype, options, answer, items, run, tol, reasons, compare = (
            d.get(k) for k in ("type", "options", "answer", "items", "run", "tolerance", "reasons", "compare"))
        n = len(options) if isinstance(options, list) else 0
        versus = run.get("versus") if isinstance(run, dict) else None
        problems = [
            (qtype not in QUESTION_TYPES, f"type must be one of {', '.join(QUESTION_TYPES)}"),
            (d.get("topic") not in TOPICS, f"topic must be one of {', '.join(TOPICS)}"),
            (d.get("misconception") not in (None,) + MISCONCEPTIONS, "misconception must be a, b or c"),
            (qtype in ("single", "multiple", "two_tier") and (n < 2 or not all(isinstance(o, str) for o in options)),
             "`options` must list at least two strings"),
            (qtype in ("single", "two_tier") and not _is_index(answer, n),
             "`answer` must be an index into the options"),
            (qtype == "two_tier" and (not isinstance(reasons, list) or len(reasons) < 2
                                      or not all(isinstance(o, str) for o in reasons)
                                      or not _is_index(d.get("reason"), len(reasons))),
             "a two-tier question needs `reasons` (at least two strings) and `reason`, an index into them"),
            (qtype == "multiple" and (not isinstance(answer, list) or not answer or len(set(answer)) != len(answer)
                                      or not all(_is_index(a, n) for a in answer)),
             "`answer` must be a non-empty list of distinct indices into the options"),
            (qtype == "ordering" and (not isinstance(items, list) or len(items) < 3 or len(set(items)) != len(items)
                                      or not all(isinstance(x, str) for x in items)),
             "`items` must list at least three distinct strings, in the correct order"),
            (qtype == "numeric" and (not isinstance(run, dict) or run.get("moment") not in moments
                                     or moments[run["moment"]].workload is None
                                     or not isinstance(run.get("settings") or {}, dict)),
             "`run` must be {moment: a moment of moments.yaml that runs a workload, settings: EngineConfig overrides}"),
            (qtype == "numeric" and compare not in (None,) + COMPARES, f"compare must be one of {', '.join(COMPARES)}"),
            (qtype == "numeric" and (compare == "ratio" and not isinstance(versus, dict)
                                     or versus is not None and not isinstance(versus, dict)),
             "a ratio (`compare: ratio`) needs `run.versus`, the other run's EngineConfig overrides (a figure of one "
             "run may have it too: the run shown beside it)"),
            (qtype == "numeric" and compare == "max_class" and (
                "{cls}" not in str(d.get("metric")) or not isinstance(d.get("classes"), dict) or len(d["classes"]) < 2
                or not all(isinstance(v, str) for v in d["classes"].values())),
             "`compare: max_class` needs a metric with `{cls}` and `classes`: class ids mapped to labels"),
            (qtype == "numeric" and compare != "max_class" and (
                not isinstance(tol, dict) or not tol or bool(set(tol) - {"rel", "abs"})
                or not all(isinstance(v, (int, float)) and v > 0 for v in tol.values())),
             "`tolerance` must be {rel: x} and/or {abs: y} with positive numbers"),
            (not isinstance(d.get("predict", False), bool) or (d.get("predict") and qtype != "numeric"),
             "`predict` (true or false) is for numeric questions only")]
        for bad, msg in problems:
            _need(not bad, path, entry, msg)
        kw = dict(id=d["id"], type=qtype, topic=d["topic"], prompt=_need_str(path, entry, d, "prompt"),
                  explanation=_need_str(path, entry, d, "explanation"),
                  link=check_link(d.get("link"), path, entry, pages, moments),
                  self_check=bool(d.get("self_check", False)), misconception=d.get("misconception"), lang=lang,
                  hint=_need_str(path, entry, d, "hint"))
        if qtype in ("single", "multiple", "two_tier"):
            kw.update(options=tuple(options), answer=answer if qtype != "multiple" else tuple(sorted(answer)))
            if qtype == "two_tier":
                kw.update(reasons=tuple(reasons), reason=d["reason"])
        elif qtype == "ordering":
            kw["items"] = tuple(items)
        else:
            kw.update(run={"moment": run["moment"], "settings": dict(run.get("settings") or {}),
                           "versus": dict(versus) if isinstance(versus, dict) else None},
                      tolerance=dict(tol) if tol else None, metric=_need_str(path, entry, d, "metric"),
                      unit=str(d.get("unit") or "") if compare == "max_class" else _need_str(path, entry, d, "unit"),
                      predict=bool(d.get("predict", False)), compare=compare, look=_need_str(path, entry, d, "look"),
                      classes=tuple((str(k), v) for k, v in (d.get("classes") or {}).items()))
        questions.append(Question(**kw))
    return questions
