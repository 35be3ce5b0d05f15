"""The page registry: url path -> page, title and icon, grouped in the sidebar's sections.

Lessons are data (lessons/), so their pages are made here, one per lesson, each drawn by the renderer app.py
hands in (ui/views/lesson.py); every other page is a file in pages/.
"""
from __future__ import annotations

import copy
import functools
from typing import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from lessons import load_lessons
from lessons import page_slugs as slugs
from ui.shell import url_state
from ui.shell.i18n import lang, t
from ui.shell.keys import INSTRUCTOR, NAV_PAGES, SCROLL_TOP

SECTIONS = {
    "nav.lessons": [(slugs.HOME, "pages/home.py", "home.title", "🏠")],
    "nav.labs": [(slugs.WHY_BATCH, "pages/why_batch.py", "wb.title", "📈"),
                 (slugs.STATIC_VS_CONTINUOUS, "pages/static_vs_continuous.py", "svc.title", "🧱"),
                 (slugs.PAGED_KV, "pages/paged_kv.py", "kv.title", "🗂️"),
                 (slugs.POLICIES, "pages/policies.py", "pol.title", "⚖️"),
                 (slugs.REAL_SERVER, "pages/real_server.py", "rs.title", "🛰️")],
    "nav.practice": [(slugs.TASKS, "pages/tasks.py", "tasks.title", "📝"),
                     (slugs.QUIZ, "pages/quiz.py", "quiz.title", "✅"),
                     (slugs.CHALLENGE, "pages/challenge.py", "ch.title", "🏁"),
                     (slugs.GLOSSARY, "pages/glossary.py", "gloss.title", "📚"),
                     (slugs.PLAYGROUND, "pages/playground.py", "pg.title", "🛝")],
}
# in instructor mode only
INSTRUCTOR_SECTION = {"nav.instructor": [(slugs.CLASS, "pages/class_view.py", "cv.title", "👩‍🏫")]}


def _lesson_page(render: Callable[[str], None], lesson_id: str):
    def page():
        render(lesson_id)
    page.__name__ = f"lesson_{lesson_id.replace('-', '_')}"  # Streamlit names a callable page by its function
    return page


def navigation(render_lesson: Callable[[str], None]):
    """`render_lesson(lesson_id)` draws a lesson's page."""
    lessons = tuple((lesson.id, lesson.title) for lesson in load_lessons(lang()))
    ctx = get_script_run_ctx()
    made = _pages(ctx and ctx.pages_manager.main_script_parent, lang(), bool(st.session_state.get(INSTRUCTOR)),
                  lessons, render_lesson)
    # a copy per run: st.navigation marks the page it returns as the one to run, once (a flag on the page)
    pages = {section: [copy.copy(p) for p in entries] for section, entries in made.items()}
    st.session_state[NAV_PAGES] = {p.url_path or slugs.HOME: p for section in pages.values() for p in section}
    return st.navigation(pages, expanded=True)  # labs and practice stay in sight, not behind "View more"


@functools.lru_cache(maxsize=16)
def _pages(app_folder, language: str, instructor: bool, lessons: tuple, render_lesson) -> dict[str, list]:
    """The sidebar's pages, made once per language, mode and set of lessons for every session: making a
    page resolves its file's path (system calls that each wait for the interpreter lock on a busy server:
    ~35 ms of every page run with forty students)."""
    sections = {**SECTIONS, **(INSTRUCTOR_SECTION if instructor else {})}
    pages = {t(section): [st.Page(path, title=t(title), icon=icon, url_path=url, default=(url == slugs.HOME))
                          for url, path, title, icon in entries]  # the default page lives at "/"
             for section, entries in sections.items()}
    pages[t("nav.lessons")] += [st.Page(_lesson_page(render_lesson, lesson_id), title=title, icon="📖",
                                        url_path=slugs.lesson_page(lesson_id)) for lesson_id, title in lessons]
    return pages


def go(page_id: str) -> None:
    """Open another page, keeping the language and instructor mode (st.switch_page would clear the query)."""
    st.session_state[SCROLL_TOP] = True
    st.switch_page(st.session_state[NAV_PAGES][page_id], query_params=url_state.kept())
