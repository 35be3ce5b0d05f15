"""The prefix-sharing lecture moment is memory-limited: sharing visibly lets more requests run at once."""
from pathlib import Path

from streamlit.testing.v1 import AppTest
from app_support import runs_ended
from ui.shell.i18n import strings

ROOT = Path(__file__).resolve().parent.parent
STRINGS = strings()


def test_sharing_saves_blocks_and_raises_concurrency_and_throughput_in_the_prefix_sharing_moment():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.session_state["lang"] = "en"
    at.run()
    at.switch_page("pages/paged_kv.py").run()
    next(b for b in at.button if b.key == "paged-kv.moment-btn.prefix-sharing").click().run()
    next(b for b in at.button if b.label == STRINGS["pred.skip"]["en"]).click().run()  # the moment asks first
    runs_ended(at)
    assert not at.exception, [e.value for e in at.exception]
    col = lambda key: STRINGS[key]["en"]  # noqa: E731
    table = next(d.value for d in at.dataframe if col("kv.shared_saved") in d.value.columns)
    shared, copied = (table[table[col("sum.run")] == STRINGS[f"kv.v.{v}"]["en"]].iloc[0]
                      for v in ("paged", "paged-no-sharing"))
    assert shared[col("kv.shared_saved")] > 0 and copied[col("kv.shared_saved")] == 0
    assert shared[col("kv.max_concurrent")] > copied[col("kv.max_concurrent")]
    assert float(shared[col("sum.tok_per_step")]) > float(copied[col("sum.tok_per_step")])
    assert any(c.value == col("kv.summary_note") for c in at.caption)
