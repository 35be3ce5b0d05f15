"""A live poll in a real browser: an instructor opens a lecture moment's poll, two students on the class code
answer from their own browsers, the instructor's histogram fills in, and "close and run" reveals the measured
value on all three screens. Then the class view, with the class's aggregates.

Screenshots: tests/artifacts/poll-*.png and class-view-*.png (zh and en; 1440x900 and 1280x720)."""
import re
import time
import uuid

import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle, PASSCODE
from layout_support import check_text

from classroom import get_store
from lessons import load_moments, load_quiz, predictions
from ui.shell.i18n import strings

pytestmark = pytest.mark.browser

STRINGS = strings()
SIZES = [(1440, 900), (1280, 720)]
MOMENT = "online-uniform"  # a numeric prediction, and a short run


def text_of(page, selector: str) -> str:
    loc = page.locator(selector)
    return " ".join(loc.all_inner_texts()) if loc.count() else ""


def wait_for_measured(db, code: str, timeout: float = 300) -> float | None:
    """The measured value of the class's latest poll once a server has published it (minutes on a busy machine)."""
    deadline = time.monotonic() + timeout
    while db.latest_poll(code).measured is None and time.monotonic() < deadline:
        time.sleep(0.5)
    return db.latest_poll(code).measured


def wait_for_text(page, selector: str, pattern: str, timeout: float = 60) -> str:
    """Until an element matching selector shows text matching pattern (fragments refresh it every few seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = text_of(page, selector)
        if re.search(pattern, shown):
            return shown
        time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "poll-failed.png"), full_page=True)
    raise AssertionError(f"{selector} never showed {pattern!r}; it shows {text_of(page, selector)!r}")


def shoot(page, name: str) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        time.sleep(1.0)
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}x{height}.png"))
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})


def unlock(page, server: str, lang: str, code: str) -> None:
    page.goto(f"{server}/class?instructor=1&lang={lang}")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    page.locator('input[type="password"]').fill(PASSCODE)
    page.locator('[data-testid="stMain"] button').filter(has_text=STRINGS["cv.unlock"][lang]).click()
    page.locator(".st-key-class-view-class-widget input").wait_for(timeout=30_000)
    page.locator(".st-key-class-view-class-widget input").fill(code)
    page.locator(".st-key-class-view-class-widget input").press("Enter")
    wait_for_text(page, '[data-testid="stMain"]', re.escape(code))
    wait_idle(page)


def seed_quiz(db, tokens: list[str]) -> None:
    """A few quiz answers, so that the class view's first tab has something to show."""
    questions = [q for q in load_quiz("en") if q.type == "single"][:3]
    for i, tok in enumerate(tokens):
        for q in questions:
            first = q.answer if i == 0 else (q.answer + 1) % len(q.options)
            db.record_answer(tok, q.id, first, 1, first == q.answer)
            if first != q.answer:
                db.record_answer(tok, q.id, q.answer, 2, True)


def shoot_at(page, selector: str, name: str) -> None:
    """Screenshots with `selector` scrolled into view, once the page has stopped redrawing."""
    wait_idle(page)
    page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'center'})")
    shoot(page, name)


def switch_language(page, lang: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_text({"zh": "中文", "en": "English"}[lang], exact=True).click()
    wait_idle(page)


def test_a_live_poll_reaches_two_students_and_reveals_the_measured_value_on_all_three_screens(browser, server):
    """The instructor and one student in English, the other student in Chinese."""
    code, db = f"room-{uuid.uuid4().hex[:6]}", get_store()
    tokens = [db.new_student(name, code) for name in ("Ada Student", "Lin Student")]
    seed_quiz(db, tokens)

    teacher = new_page(browser, "en", *SIZES[0])
    unlock(teacher, server, "en", code)
    teacher.locator(f".st-key-side-moment-{MOMENT} button").first.click()
    opener = teacher.locator(f".st-key-poll-{MOMENT}-open button").first
    opener.wait_for(timeout=60_000)
    assert code in opener.inner_text()
    opener.click()
    teacher.locator(".st-key-poll-live").first.wait_for(timeout=30_000)

    students = []
    for tok, value, lang in zip(tokens, ("3", "12.5"), ("en", "zh")):  # each from the bookmarked link, own context
        page = new_page(browser, lang, *SIZES[0])
        page.goto(f"{server}/?s={tok}&lang={lang}")
        page.locator(".st-key-poll-banner input").first.wait_for(timeout=60_000)
        wait_for_text(page, ".st-key-poll-banner", re.escape(load_moment_question(lang)))
        page.locator(".st-key-poll-banner input").first.fill(value)
        page.locator(".st-key-poll-banner button").filter(has_text=STRINGS["poll.send"][lang]).first.click()
        wait_for_text(page, ".st-key-poll-banner", re.escape(STRINGS["poll.sent"][lang].format(value=value + "×")))
        shoot(page, f"poll-student-open-{lang}")
        students.append(page)

    wait_for_text(teacher, ".st-key-poll-live", re.escape(STRINGS["poll.live"]["en"].format(code=code, n=2)))
    assert teacher.locator(".st-key-poll-live .js-plotly-plot .bars path").count() >= 1  # the histogram is drawn
    assert sorted(db.poll_values(db.current_poll(code).id)) == [3.0, 12.5]
    shoot_at(teacher, ".st-key-poll-live", "poll-instructor-live-en")

    teacher.locator(f".st-key-poll-{MOMENT}-close button").first.click()
    measured = wait_for_measured(db, code)
    assert measured is not None and db.latest_poll(code).state == "closed"
    figure = {lang: predictions.shown(load_moments()[MOMENT], measured, lang) for lang in ("en", "zh")}  # "28.5×"
    wait_for_text(teacher, ".st-key-poll-reveal", re.escape(
        STRINGS["poll.closed_line"]["en"].format(n=2, median="7.75×", measured=figure["en"])), timeout=60)
    assert_no_errors(teacher)
    shoot_at(teacher, ".st-key-poll-reveal", "poll-instructor-reveal-en")
    for page, lang, mine in zip(students, ("en", "zh"), ("3", "12.5")):
        result = wait_for_text(page, ".st-key-poll-banner", re.escape(figure[lang]), timeout=30)
        assert mine in result
        assert_no_errors(page)
        shoot(page, f"poll-student-reveal-{lang}")
    switch_language(teacher, "zh")  # the reveal stays, now in Chinese
    wait_for_text(teacher, ".st-key-poll-reveal", re.escape(
        STRINGS["poll.closed_line"]["zh"].format(n=2, median="7.75×", measured=figure["zh"])))
    shoot_at(teacher, ".st-key-poll-reveal", "poll-instructor-reveal-zh")

    # the class view: the students' poll answers are their predictions, with the measured value; names hidden
    teacher.locator('[data-testid="stSidebarNav"] a[href*="class"]').click()
    for lang in ("zh", "en"):
        if lang == "en":
            switch_language(teacher, "en")
        wait_for_text(teacher, '[data-testid="stMain"]', re.escape(STRINGS["cv.refreshed"][lang].format(
            code=code, students=2, seconds=3)))
        wait_idle(teacher)
        assert "Ada Student" not in teacher.inner_text("body")
        shoot(teacher, f"class-view-quiz-{lang}")
        teacher.get_by_role("tab", name=STRINGS["cv.tab.predictions"][lang]).click()
        wait_for_text(teacher, '[data-testid="stMain"]', re.escape(STRINGS["cv.prediction_line"][lang].format(n=2)))
        time.sleep(1)
        shoot(teacher, f"class-view-predictions-{lang}")
        teacher.get_by_role("tab", name=STRINGS["cv.tab.quiz"][lang]).click()
    assert_no_errors(teacher)
    for page in (teacher, *students):
        page.close()


def test_a_choice_poll_on_one_requests_next_step_is_answered_by_a_click_and_reads_whole_on_both_screens(
        browser, server):
    """The next-step poll: the student (zh, 1280x720) picks what the engine does next by clicking its name and sends
    it; the instructor (en, 1440x900) sees a bar per choice; after "close and run" both read the engine's next step.
    No text of either page overlaps, is cut or wraps mid-word."""
    moment_id = "fixed-batch-next-step"
    code, db = f"next-{uuid.uuid4().hex[:6]}", get_store()
    tok = db.new_student("Lin Student", code)
    teacher = new_page(browser, "en", *SIZES[0])
    unlock(teacher, server, "en", code)
    teacher.locator(f".st-key-side-moment-{moment_id} button").first.click()
    teacher.locator(f".st-key-poll-{moment_id}-open button").first.click(timeout=60_000)
    teacher.locator(".st-key-poll-live").first.wait_for(timeout=30_000)

    student = new_page(browser, "zh", *SIZES[1])
    student.goto(f"{server}/?s={tok}&lang=zh")
    banner = student.locator(".st-key-poll-banner")
    said = {lang: STRINGS["journey.next.waiting"][lang] for lang in ("en", "zh")}
    banner.get_by_text(said["zh"], exact=True).click(timeout=60_000)
    banner.locator("button").filter(has_text=STRINGS["poll.send"]["zh"]).first.click()
    wait_for_text(student, ".st-key-poll-banner", re.escape(STRINGS["poll.sent"]["zh"].format(value=said["zh"])))
    found = check_text(student, "poll-choice-student-open-zh-1280x720")

    wait_for_text(teacher, ".st-key-poll-live", re.escape(STRINGS["poll.live"]["en"].format(code=code, n=1)))
    assert teacher.locator(".st-key-poll-live .js-plotly-plot .bars path").count() >= 1
    found += check_text(teacher, "poll-choice-instructor-live-en-1440x900")
    teacher.locator(f".st-key-poll-{moment_id}-close button").first.click()
    moment = load_moments()[moment_id]
    assert wait_for_measured(db, code) == predictions.as_number(moment, "waiting")
    wait_for_text(teacher, ".st-key-poll-reveal", re.escape(STRINGS["poll.closed_line_choice"]["en"].format(
        n=1, room=said["en"], measured=said["en"])), timeout=120)
    wait_idle(teacher)
    found += check_text(teacher, "poll-choice-instructor-reveal-en-1440x900")
    measured = STRINGS["poll.result_choice"]["zh"].split("**")[0].split("}")[-1].strip()  # "实测："
    wait_for_text(student, ".st-key-poll-banner", re.escape(measured) + r"\s*" + re.escape(said["zh"]), timeout=60)
    wait_idle(student)
    found += check_text(student, "poll-choice-student-reveal-zh-1280x720")
    for page in (teacher, student):
        assert_no_errors(page)
        page.close()
    assert found == [], "\n".join(found)


def test_the_room_gets_the_measured_value_after_the_instructor_closes_the_tab_right_after_close_and_run(
        browser, server):
    """The server, not the instructor's browser, finishes the poll: the instructor presses "close and run" and
    closes the tab as soon as the poll is closed (a second or two); both students (en and zh) then see the measured
    value beside their answers, and an instructor who opens the class view anew sees it too."""
    moment_id = "chat-and-reports"  # another moment than the test above: its runs start after the press
    code, db = f"left-{uuid.uuid4().hex[:6]}", get_store()
    tokens = [db.new_student(name, code) for name in ("Ada Student", "Lin Student")]
    teacher = new_page(browser, "en", *SIZES[0])
    unlock(teacher, server, "en", code)
    teacher.locator(f".st-key-side-moment-{moment_id} button").first.click()
    teacher.locator(f".st-key-poll-{moment_id}-open button").first.click(timeout=60_000)
    teacher.locator(".st-key-poll-live").first.wait_for(timeout=30_000)

    students, langs, answers = [], ("en", "zh"), ("3", "12.5")
    for tok, value, lang in zip(tokens, answers, langs):
        page = new_page(browser, lang, *SIZES[0])
        page.goto(f"{server}/?s={tok}&lang={lang}")
        page.locator(".st-key-poll-banner input").first.wait_for(timeout=60_000)
        page.locator(".st-key-poll-banner input").first.fill(value)
        page.locator(".st-key-poll-banner button").filter(has_text=STRINGS["poll.send"][lang]).first.click()
        wait_for_text(page, ".st-key-poll-banner", re.escape(STRINGS["poll.sent"][lang].format(value=value + "×")))
        students.append(page)
    wait_for_text(teacher, ".st-key-poll-live", re.escape(STRINGS["poll.live"]["en"].format(code=code, n=2)))

    teacher.locator(f".st-key-poll-{moment_id}-close button").first.click()
    deadline = time.monotonic() + 30
    while db.latest_poll(code).state == "open":  # the press has reached the server: the poll is closed
        assert time.monotonic() < deadline, "the press never closed the poll"
        time.sleep(0.1)
    teacher.close()  # the tab goes, and with it the instructor's session

    moment = load_moments()[moment_id]
    for page, lang, mine in zip(students, langs, answers):
        said = STRINGS["poll.result"][lang].split("{question}")[1].split("**")[0].strip()  # "Measured:", "实测："
        result = wait_for_text(page, ".st-key-poll-banner", re.escape(said) + r"\s*\d", timeout=240)
        poll = db.latest_poll(code)
        assert poll.state == "closed" and poll.measured is not None
        assert f"{said} {predictions.shown(moment, poll.measured, lang)}".replace("： ", "：") in result
        assert mine + "×" in result and predictions.shown(moment, 7.75, lang) in result  # theirs, the room's median
        assert_no_errors(page)
        page.screenshot(path=str(ARTIFACTS / f"poll-reveal-after-instructor-left-{lang}.png"))
    measured = db.latest_poll(code).measured
    assert db.class_predictions(code)[moment_id]["measured"] == measured  # beside each answer, for the class view

    again = new_page(browser, "zh", *SIZES[0])  # the instructor comes back, in a new browser session
    unlock(again, server, "zh", code)
    again.get_by_role("tab", name=STRINGS["cv.tab.poll"]["zh"]).click()
    wait_for_text(again, '[data-testid="stMain"]', re.escape(STRINGS["poll.closed_line"]["zh"].format(
        n=2, median=predictions.shown(moment, 7.75, "zh"), measured=predictions.shown(moment, measured, "zh"))))
    assert_no_errors(again)
    again.screenshot(path=str(ARTIFACTS / "poll-reveal-after-instructor-left-class-view-zh.png"))
    for page in (again, *students):
        page.close()


def load_moment_question(lang: str) -> str:
    from lessons import load_moments
    return load_moments()[MOMENT].predict[lang]


def test_an_instructor_reload_or_deep_link_keeps_the_class_and_poll_control_and_lock_ends_it(browser, server):
    """The passcode opens a browser session (a cookie with a random token the store knows), not the URL: a reload
    and a deep link into a lab page keep the class and "Open the poll"; Lock ends it; another browser has none."""
    code = f"reload-{uuid.uuid4().hex[:6]}"
    page = new_page(browser, "en", 1440, 900)
    unlock(page, server, "en", code)
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    try:  # the script sets the box's value after the box is drawn: give it a moment
        page.wait_for_function("(code) => document.querySelector('.st-key-class-view-class-widget input').value === "
                               "code", arg=code, timeout=30_000)
    except Exception:
        pass
    shown = page.locator(".st-key-class-view-class-widget input").input_value()
    boxes = page.evaluate("() => [...document.querySelectorAll('input[type=text]')].map(i => [i.closest("
                          "'[class*=st-key-]')?.className.match(/st-key-[^ ]+/)?.[0], i.value, i === "
                          "document.activeElement])")
    assert shown == code, (f"the class view after a reload, at {page.url}, its text boxes (key, value, focused) "
                           f"{boxes}: {text_of(page, '[data-testid=stMain]')!r}")
    assert not page.locator('input[type="password"]').count()
    page.goto(f"{server}/static-vs-continuous?lang=en&instructor=1")  # a deep link, a new session
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    page.locator("[class*='moment-btn-online-uniform'] button").first.click()
    page.get_by_role("button", name=s_open(code)).first.wait_for(timeout=60_000)
    page.screenshot(path=str(ARTIFACTS / "poll-after-deep-link-en.png"))
    stranger = new_page(browser, "en", 1440, 900)  # another browser: the passcode form, nothing else
    stranger.goto(f"{server}/class?instructor=1&lang=en")
    stranger.wait_for_selector('input[type="password"]', timeout=60_000)
    stranger.close()
    page.goto(f"{server}/class?instructor=1&lang=en")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    page.locator('[data-testid="stMain"] button').filter(has_text=STRINGS["cv.lock"]["en"]).click()
    page.wait_for_selector('input[type="password"]', timeout=30_000)
    page.reload()
    page.wait_for_selector('input[type="password"]', timeout=60_000)  # locked stays locked
    assert_no_errors(page)
    page.close()


def test_a_cookie_write_the_browser_lost_is_made_again_so_a_reload_keeps_the_class(browser, server):
    """On a busy server the script that sets the instructor's cookie can be replaced by the next run before the
    browser runs it (CI: a reload then opened an empty class). Here the browser drops the first write of that
    cookie: the class view writes it again, and a reload keeps the class."""
    code = f"lost-{uuid.uuid4().hex[:6]}"
    page = new_page(browser, "en", 1440, 900)
    page.add_init_script("""(() => {
        const own = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
        let dropped = false;
        Object.defineProperty(document, 'cookie', { configurable: true,
            get() { return own.get.call(document); },
            set(v) {
                if (dropped || !/^serving_lab_instructor=[^;]/.test(v)) return own.set.call(document, v);
                dropped = window.__dropped = true;
            } });
    })()""")
    unlock(page, server, "en", code)
    assert page.evaluate("() => !!window.__dropped"), "the first write was not made through document.cookie"
    page.reload()
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    assert page.locator(".st-key-class-view-class-widget input").input_value(timeout=30_000) == code
    assert_no_errors(page)
    page.close()


def test_a_copied_instructor_cookie_opens_another_browser_until_sign_out_everywhere(browser, server):
    """The instructor's cookie pasted into another browser opens the class view there (it is the session), and
    *Sign out everywhere* ends it in both: the copy, replayed in a fresh session, meets the passcode form."""
    code = f"copy-{uuid.uuid4().hex[:6]}"
    page = new_page(browser, "en", 1440, 900)
    unlock(page, server, "en", code)
    copied = [c for c in page.context.cookies() if c["name"] == "serving_lab_instructor"]
    assert len(copied) == 1 and PASSCODE not in copied[0]["value"] and code not in copied[0]["value"]
    other = new_page(browser, "en", 1440, 900)
    other.context.add_cookies(copied)
    other.goto(f"{server}/class?instructor=1&lang=en")
    other.locator(".st-key-class-view-class-widget input").wait_for(timeout=60_000)
    assert other.locator(".st-key-class-view-class-widget input").input_value() == code  # the class came along
    page.screenshot(path=str(ARTIFACTS / "class-view-sign-out-everywhere-en.png"))
    page.locator(".st-key-class-view-sign-out-all").get_by_role("button", name=STRINGS["cv.sign_out_all"]["en"]).click()
    page.wait_for_selector('input[type="password"]', timeout=30_000)
    other.reload()
    other.wait_for_selector('input[type="password"]', timeout=60_000)
    assert not other.locator(".st-key-class-view-class-widget input").count()
    assert_no_errors(page)
    assert_no_errors(other)
    page.close()
    other.close()


def s_open(code: str) -> str:
    return STRINGS["poll.open"]["en"].format(code=code)


def test_in_a_class_a_second_student_cannot_start_stop_or_repoint_the_real_server(browser, server):
    """The Real-server page in a class: the instructor's browser starts the lab's own server; a student's browser
    (another context, no passcode, in zh) sees it running, with start, stop, load and the address all disabled,
    and the room's address, not one of its own. Only the instructor's browser can stop it."""
    teacher = new_page(browser, "en", 1440, 900)
    unlock(teacher, server, "en", f"server-{uuid.uuid4().hex[:6]}")
    teacher.goto(f"{server}/real-server?lang=en&instructor=1")
    teacher.wait_for_selector("h1", timeout=60_000)
    wait_idle(teacher)
    start, stop = (teacher.get_by_role("button", name=STRINGS[k]["en"], exact=True) for k in ("rs.start", "rs.stop"))
    start.click()
    teacher.wait_for_function(  # the server is up when Stop is enabled (a new process imports torch: seconds)
        "name => [...document.querySelectorAll('button')].some(b => b.innerText.trim() === name && !b.disabled)",
        arg=STRINGS["rs.stop"]["en"], timeout=180_000)
    student = new_page(browser, "zh", 1280, 720)
    student.goto(f"{server}/real-server?lang=zh")
    student.wait_for_selector("h1", timeout=60_000)
    wait_idle(student)
    student.get_by_text(STRINGS["rs.instructor_only"]["zh"]).wait_for(timeout=30_000)
    for key in ("rs.start", "rs.stop", "rs.run"):
        assert student.get_by_role("button", name=STRINGS[key]["zh"], exact=True).is_disabled(), key
    url_box = student.get_by_label(STRINGS["rs.url"]["zh"])
    assert url_box.is_disabled()
    assert url_box.input_value().startswith("http://127.0.0.1:")  # the room's server, which the instructor started
    student.screenshot(path=str(ARTIFACTS / "real-server-student-in-class-zh-1280x720.png"))
    assert_no_errors(student)
    stop.click()
    teacher.wait_for_function(
        "name => [...document.querySelectorAll('button')].some(b => b.innerText.trim() === name && !b.disabled)",
        arg=STRINGS["rs.start"]["en"], timeout=60_000)
    assert_no_errors(teacher)
    student.close()
    teacher.close()
