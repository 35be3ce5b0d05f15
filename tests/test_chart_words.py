"""Words for the animated views: each run's summary for screen readers says what the frame shown says (the step
on the counter, the queue's length, the busy slots of the frame's table), in both languages, and moves with it."""
import re

import pytest
from app_support import runs_ended
from test_app import RUN, app, click, frame_counter

PAGE = "static-vs-continuous"
SUMMARY = {"en": r"step (\d+): (\d+) of (\d+) slots busy, (\d+) waiting, KV (\d+) % used, (\d+) partly filled blocks",
           "zh": r"第 (\d+) 步：(\d+) 个槽位中 (\d+) 个在用，(\d+) 个在等待，KV 显存已用 (\d+)%，"
                 r"(\d+) 个块只填了一部分"}
WAITING = {"en": r"waiting at the door: (\d+)", "zh": r"门外等待: (\d+)"}


def summaries(at, lang: str) -> list[dict]:
    out = []
    for h in at.html:
        if 'class="lab-words"' in h.value and 'aria-live="polite"' in h.value:
            m = re.search(SUMMARY[lang], h.value)
            step, a, b, waiting, kv, partial = map(int, m.groups())
            busy, slots = (a, b) if lang == "en" else (b, a)
            out.append({"step": step, "busy": busy, "slots": slots, "waiting": waiting, "kv": kv, "partial": partial})
    return out


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_runs_summary_matches_the_frame_shown(lang):
    at = app(lang, f"pages/{PAGE.replace('-', '_')}.py", **{f"{PAGE}.scale": 0.25})
    click(at, RUN[lang])
    runs_ended(at)
    for _ in range(6):
        next(b for b in at.button if b.key == f"{PAGE}.step").click().run()
    next(t for t in at.toggle if t.key == f"{PAGE}.as_table").set_value(True).run()
    frame = frame_counter(at)[0]
    said = summaries(at, lang)
    assert len(said) == 2 and all(s["step"] == frame for s in said)  # one per run, at the frame on the counter
    queues = [int(m.group(1)) for h in at.html for m in [re.search(WAITING[lang], h.value)] if m]
    assert [s["waiting"] for s in said] == queues  # what each run's queue at the door shows
    tables = [h.value for h in at.html if 'class="lab-table"' in h.value and re.search(SUMMARY[lang], h.value)]
    assert len(tables) == 2
    for s, table in zip(said, tables):  # the frame as a table: one row per slot, the busy ones name a request
        rows = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td>", table)
        assert len(rows) == s["slots"] and sum(1 for _, rid in rows if rid != "–") == s["busy"]
    assert any(s["busy"] for s in said)
    next(b for b in at.button if b.key == f"{PAGE}.step").click().run()
    assert all(s["step"] == frame + 1 for s in summaries(at, lang))  # it follows the player
