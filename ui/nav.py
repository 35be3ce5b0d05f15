"""The page registry: url path -> file, title key and icon, grouped in the sidebar's sections."""
from __future__ import annotations

import streamlit as st

from ui.i18n import t

SECTIONS = {
    "nav.lessons": [("home", "pages/home.py", "home.title", "🏠")],
    "nav.labs": [("why-batch", "pages/why_batch.py", "wb.title", "📈"),
                 ("static-vs-continuous", "pages/static_vs_continuous.py", "svc.title", "🧱"),
                 ("paged-kv", "pages/paged_kv.py", "kv.title", "🗂️"),
                 ("policies", "pages/policies.py", "pol.title", "⚖️")],
    "nav.practice": [("playground", "pages/playground.py", "pg.title", "🛝")],
}
PAGE_FILES = {url: path for pages in SECTIONS.values() for url, path, _, _ in pages}


def navigation():
    # The default page lives at "/" (Streamlit ignores its url_path)
    pages = {t(section): [st.Page(path, title=t(title), icon=icon, url_path=url, default=(url == "home"))
                          for url, path, title, icon in entries]
             for section, entries in SECTIONS.items()}
    return st.navigation(pages)


def go(page_id: str) -> None:
    st.switch_page(PAGE_FILES[page_id])
