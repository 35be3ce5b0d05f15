"""The lab's page slugs (each page's url path), in one place: lesson content links to them (lessons/loader.py
checks it), ui/shell/nav.py registers a page under each, and each file in pages/ names itself by its own."""
from __future__ import annotations

HOME = "home"
WHY_BATCH = "why-batch"
STATIC_VS_CONTINUOUS = "static-vs-continuous"
PAGED_KV = "paged-kv"
POLICIES = "policies"
REAL_SERVER = "real-server"
TASKS = "tasks"
QUIZ = "quiz"
CHALLENGE = "challenge"
GLOSSARY = "glossary"
PLAYGROUND = "playground"
CLASS = "class"  # the instructor's class view, listed in instructor mode only

LAB_PAGES = (WHY_BATCH, STATIC_VS_CONTINUOUS, PAGED_KV, POLICIES, REAL_SERVER)  # pages that open a moment
BASE_PAGES = (HOME, *LAB_PAGES, PLAYGROUND, TASKS, QUIZ, GLOSSARY)  # every page content may link to, lessons aside


def lesson_page(lesson_id: str) -> str:
    """A lesson's page: one per lesson, made from the lesson's id."""
    return f"lesson-{lesson_id}"
