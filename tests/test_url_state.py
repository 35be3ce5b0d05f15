"""Language and instructor mode in the URL (ui/shell/url_state.py), run against plain dicts in place of
Streamlit's session state and query parameters, so the order of a browser's reruns can be replayed."""
from types import SimpleNamespace

import pytest

from ui.shell import url_state
from ui.shell.keys import INSTRUCTOR, LANG


@pytest.fixture
def browser(monkeypatch):
    """One session: its state, the query string of the rerun in flight, the browser's language."""
    fake = SimpleNamespace(session_state={}, query_params={},
                           context=SimpleNamespace(headers={"Accept-Language": "zh-CN,zh;q=0.9"}))
    monkeypatch.setattr(url_state, "st", fake)
    return fake


def rerun(fake, query: dict, click: dict | None = None) -> dict:
    """A rerun the browser sends with `query` as its address; a sidebar click's callback copies its value
    in before the script runs (bound() in ui/shell/sidebar.py). Returns the address the run writes."""
    fake.query_params = dict(query)
    fake.session_state.update(click or {})
    url_state.restore()
    url_state.persist()
    return dict(fake.query_params)


def test_the_first_visit_takes_the_address_then_the_browser_language(browser):
    assert rerun(browser, {"lang": "en", "instructor": "1"}) == {"lang": "en", "instructor": "1"}
    assert browser.session_state[LANG] == "en" and browser.session_state[INSTRUCTOR]


def test_a_visit_with_no_language_in_the_address_takes_the_browser_language(browser):
    assert rerun(browser, {}) == {"lang": "zh"}


def test_a_rerun_sent_before_the_browser_applied_the_last_write_does_not_undo_a_click(browser):
    """The lecturer switches to English while a run plays and then turns instructor mode off: the
    second click's rerun can carry the address from before the first was applied (lang=zh)."""
    rerun(browser, {"lang": "zh", "instructor": "1"})
    assert rerun(browser, {"lang": "zh", "instructor": "1"}, {LANG: "en"})["lang"] == "en"
    written = rerun(browser, {"lang": "zh", "instructor": "1"}, {INSTRUCTOR: False})
    assert written == {"lang": "en"}
    assert browser.session_state[LANG] == "en" and not browser.session_state[INSTRUCTOR]


def test_a_page_link_that_clears_the_query_changes_nothing(browser):
    rerun(browser, {"lang": "en", "instructor": "1"})
    assert rerun(browser, {}) == {"lang": "en", "instructor": "1"}


def test_an_address_the_session_never_wrote_still_wins(browser):
    rerun(browser, {"lang": "zh"})
    assert rerun(browser, {"lang": "en"}) == {"lang": "en"}
    assert rerun(browser, {"lang": "zh", "instructor": "1"})["instructor"] == "1"
