"""A class larger than one machine: two replicas of `make class` on one PostgreSQL, behind HAProxy with sticky
sessions (bench/replicas.py starts them, on 127.0.0.1 and free ports, and stops them after).

Each browser is pinned to a replica by HAProxy's cookie, and HAProxy's log (a line per request, with the replica
and the browser's User-Agent) shows that every request of it, its websocket included, went there. The instructor
on replica A opens a poll; students who join the class through replica A's and replica B's Home pages see it and
answer; after "close and run" on A, the student on B sees the measured value; A's class view counts both students,
and the instructor's cookie in a browser on B opens the class view there. Then the
passcode limiter: two processes guessing at once against the one database get TOTAL_FAILURES (20) passcodes
checked in all, and the forms on both replicas then refuse even the right passcode unchecked.

Skipped only when haproxy is not installed (`make test` installs it). Screenshots: tests/artifacts/replicas-*.png;
the replicas' and HAProxy's logs and HAProxy's configuration: tests/artifacts/replicas/."""
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from browser_support import ARTIFACTS, PASSCODE, ROOT, assert_no_errors, new_page, wait_idle, worker
from pg_support import fresh_database
from test_browser_poll import MOMENT, load_moment_question, unlock, wait_for_measured, wait_for_text

from classroom import Store
from lessons import load_moments, predictions
from ui.instructor.attempts import EVERYONE, TOTAL_FAILURES, WINDOW_S
from ui.shell.i18n import strings

sys.path.insert(0, str(ROOT / "bench"))

import replicas

STRINGS = strings()


@pytest.fixture(scope="module")
def room(postgres_server, tmp_path_factory):
    """Replicas a and b on one fresh database, HAProxy in front: (the Room, the database's URL). Their cache folders,
    HAProxy's configuration and the logs are in a temporary folder; the configuration and logs are copied to
    tests/artifacts/replicas/ after."""
    if replicas.haproxy() is None:
        pytest.skip("haproxy is not installed: `make test` installs it (apt-get install -y haproxy)")
    folder = tmp_path_factory.mktemp("replicas")
    db_url = fresh_database(postgres_server)
    try:
        with replicas.room(db_url, folder, passcode=PASSCODE) as r:
            yield r, db_url
    finally:
        kept = ARTIFACTS / "replicas" / worker()
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir(parents=True)
        for path in [*folder.glob("*.log"), *folder.glob("*.cfg")]:
            shutil.copy(path, kept)


@pytest.fixture(scope="module")
def db(room):
    store = Store(room[1])
    yield store
    store.close()


def pinned_page(browser, room, replica: str, who: str, lang: str = "en"):
    """A browser (a context of its own) that HAProxy sends to `replica`: its cookie is set before the first
    request. Its User-Agent names it in HAProxy's log."""
    page = new_page(browser, lang, 1440, 900, user_agent=f"replica-test-{who} Chromium")
    page.context.add_cookies([{"name": replicas.COOKIE, "value": replica, "url": room.url}])
    assert page.request.get(room.url + "/_stcore/health").headers[replicas.HEADER.lower()] == replica
    return page


def join_class(page, url: str, name: str, code: str, lang: str = "en") -> None:
    """A student opens the Home page and enters a name and the class code, as in the room."""
    page.goto(f"{url}/?lang={lang}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    page.get_by_label(STRINGS["progress.name"][lang]).fill(name)
    page.get_by_label(STRINGS["progress.class_code"][lang]).fill(code)
    page.locator('[data-testid="stMain"] button').filter(has_text=STRINGS["progress.start"][lang]).click()
    page.get_by_text(STRINGS["progress.your_link"][lang]).first.wait_for(timeout=60_000)


def answer(page, value: str, lang: str = "en") -> None:
    page.locator(".st-key-poll-banner input").first.wait_for(timeout=60_000)
    wait_for_text(page, ".st-key-poll-banner", re.escape(load_moment_question(lang)))
    page.locator(".st-key-poll-banner input").first.fill(value)
    page.locator(".st-key-poll-banner button").filter(has_text=STRINGS["poll.send"][lang]).first.click()
    wait_for_text(page, ".st-key-poll-banner", re.escape(STRINGS["poll.sent"][lang].format(value=value + "×")))


def assert_served_by(room, who: str, replica: str) -> None:
    """Every request HAProxy logged from this browser went to `replica`, its websocket included."""
    seen = room[0].log_lines(f"replica-test-{who}")
    assert seen, f"HAProxy logged nothing from {who}"
    assert {r for r, _ in seen} == {replica}, seen
    assert any("/_stcore/stream" in request for _, request in seen), seen


@pytest.mark.browser
@pytest.mark.server
def test_a_poll_opened_on_one_replica_reaches_a_student_on_the_other_and_so_does_its_reveal(browser, room, db):
    lab, _ = room
    assert replicas.pinned(lab.url, "a") == "a" and replicas.pinned(lab.url, "b") == "b"
    code = f"two-{uuid.uuid4().hex[:6]}"

    teacher = pinned_page(browser, lab, "a", "instructor")
    unlock(teacher, lab.url, "en", code)
    teacher.locator(f".st-key-side-moment-{MOMENT} button").first.click()
    opener = teacher.locator(f".st-key-poll-{MOMENT}-open button").first
    opener.wait_for(timeout=60_000)
    opener.click()
    teacher.locator(".st-key-poll-live").first.wait_for(timeout=30_000)

    students = {}
    for replica, name, value in (("a", "Ada on A", "3"), ("b", "Lin on B", "12.5")):
        page = pinned_page(browser, lab, replica, f"student-{replica}")
        join_class(page, lab.url, name, code)
        answer(page, value)
        students[replica] = page
    wait_for_text(teacher, ".st-key-poll-live", re.escape(STRINGS["poll.live"]["en"].format(code=code, n=2)))
    assert sorted(db.poll_values(db.current_poll(code).id)) == [3.0, 12.5]
    students["b"].screenshot(path=str(ARTIFACTS / "replicas-student-b-answered.png"))

    teacher.locator(f".st-key-poll-{MOMENT}-close button").first.click()
    measured = wait_for_measured(db, code)  # replica A runs the moment and publishes it
    assert measured is not None, "replica A published no measured value"
    figure = predictions.shown(load_moments()[MOMENT], measured, "en")
    for replica, mine in (("b", "12.5"), ("a", "3")):  # B reads what A published, from the database
        result = wait_for_text(students[replica], ".st-key-poll-banner", re.escape(figure), timeout=60)
        assert mine in result
        assert_no_errors(students[replica])
    students["b"].screenshot(path=str(ARTIFACTS / "replicas-student-b-reveal.png"))

    # A's class view counts the students who joined through A and through B
    teacher.locator('[data-testid="stSidebarNav"] a[href*="class"]').click()
    wait_for_text(teacher, '[data-testid="stMain"]', re.escape(STRINGS["cv.refreshed"]["en"].format(
        code=code, students=2, seconds=3)))
    teacher.get_by_role("tab", name=STRINGS["cv.tab.poll"]["en"]).click()
    wait_for_text(teacher, '[data-testid="stMain"]', re.escape(STRINGS["poll.closed_line"]["en"].format(
        n=2, median=predictions.shown(load_moments()[MOMENT], 7.75, "en"), measured=figure)))
    assert_no_errors(teacher)
    teacher.screenshot(path=str(ARTIFACTS / "replicas-class-view-a.png"))

    # the instructor's session is in the database: their cookie, in a browser that replica B serves, opens the
    # class view there with the class (as a reload would, had the balancer moved them)
    moved = pinned_page(browser, lab, "b", "instructor-on-b")
    moved.context.add_cookies([c for c in teacher.context.cookies() if c["name"] == "serving_lab_instructor"])
    moved.goto(f"{lab.url}/class?instructor=1&lang=en")
    moved.locator(".st-key-class-view-class-widget input").wait_for(timeout=60_000)
    assert moved.locator(".st-key-class-view-class-widget input").input_value() == code

    for who, replica in (("instructor", "a"), ("student-a", "a"), ("student-b", "b"), ("instructor-on-b", "b")):
        assert_served_by(room, who, replica)
    for page in (teacher, moved, *students.values()):
        page.close()


# Two processes guess at once, each as a replica does: its own store on the database, a new session per guess (a
# session alone is held after 5). Prints how many guesses were checked (a wrong answer) and how many refused.
GUESSER = """
import sys
from classroom import Store
from ui.instructor.attempts import Attempts
store = Store(sys.argv[1])
outcomes = [Attempts(store).check("not the passcode", f"{sys.argv[2]}-{i}", None) for i in range(int(sys.argv[3]))]
print(sum(o.retry_after_s == 0 for o in outcomes), sum(o.retry_after_s > 0 for o in outcomes))
store.close()
"""


@pytest.mark.browser
@pytest.mark.server
def test_wrong_passcodes_through_both_replicas_share_one_budget_of_twenty_a_minute(browser, room, db):
    lab, db_url = room
    env = {**os.environ, "SERVING_LAB_PASSCODE": PASSCODE, "OMP_NUM_THREADS": "1"}
    guessers = [subprocess.Popen([sys.executable, "-c", GUESSER, db_url, name, str(TOTAL_FAILURES)], cwd=ROOT,
                                 env=env, stdout=subprocess.PIPE, text=True) for name in ("guesser-a", "guesser-b")]
    counts = [tuple(map(int, g.communicate(timeout=120)[0].split())) for g in guessers]
    assert all(g.returncode == 0 for g in guessers)
    checked = sum(c for c, _ in counts)
    assert checked == TOTAL_FAILURES and sum(r for _, r in counts) == TOTAL_FAILURES, counts  # 40 tried, 20 checked
    assert len(db.passcode_failures([EVERYONE], time.time() - WINDOW_S)[EVERYONE]) == TOTAL_FAILURES

    # the budget is spent for both replicas: their forms refuse even the right passcode, unchecked
    too_many = STRINGS["cv.too_many"]["en"].split("{s}")[0].strip()
    for replica in ("a", "b"):
        page = pinned_page(browser, lab, replica, f"late-instructor-{replica}")
        page.goto(f"{lab.url}/class?instructor=1&lang=en")
        page.wait_for_selector('input[type="password"]', timeout=60_000)
        wait_idle(page)
        page.locator('input[type="password"]').fill(PASSCODE)
        page.locator('[data-testid="stMain"] button').filter(has_text=STRINGS["cv.unlock"]["en"]).click()
        wait_for_text(page, '[data-testid="stMain"]', re.escape(too_many))
        assert page.locator('input[type="password"]').count() == 1  # still locked
        page.screenshot(path=str(ARTIFACTS / f"replicas-passcode-refused-{replica}.png"))
        page.close()
        assert_served_by(room, f"late-instructor-{replica}", replica)


def test_the_readme_shows_the_haproxy_configuration_the_test_uses():
    shown = replicas.haproxy_config(":80", {"a": "10.0.0.11:8501", "b": "10.0.0.12:8501"})
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Teaching a class on several machines", 1)[1].split("\n## ", 1)[0]
    assert "\n".join("   " + line if line else "" for line in shown.rstrip().splitlines()) in section
