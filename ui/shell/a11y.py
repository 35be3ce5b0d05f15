"""What assistive technology needs that Streamlit's widgets cannot say themselves: the page's language (so a screen
reader pronounces it), names for buttons labelled by a glyph (▶ is read "black right-pointing triangle"), and the
reduce-motion preference of the browser, and
the sidebar's page list made a list again. One small script in the app's document: the names are kept in a map
that every run updates, and an observer applies them whenever Streamlit redraws the buttons."""
from __future__ import annotations

import json

import streamlit as st

HIDDEN = "lab-a11y"  # the script's element takes no room (ui/shell/style.py)
_SCRIPT = """<span class="lab-a11y"></span><script>
(() => {
  const lab = window.__labA11y = window.__labA11y || { names: {} };
  const update = PAYLOAD;
  if (update.lang) lab.lang = update.lang;
  // the browser asks for reduced motion and the address says nothing of motion: open it again with
  // ?motion=reduce, which the server reads as it reads ?lang= (a rerun does not send an address changed here); the
  // sidebar's switch turned off writes ?motion=full, so this happens once
  if (!lab.motionAsked && window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches) {
    lab.motionAsked = true;
    const url = new URL(window.location.href);
    if (!url.searchParams.has("motion")) {
      url.searchParams.set("motion", "reduce");
      window.location.replace(url.toString());
    }
  }
  Object.assign(lab.names, update.names || {});
  function apply() {
    lab.queued = false;
    if (lab.lang && document.documentElement.lang !== lab.lang) document.documentElement.lang = lab.lang;
    for (const [selector, name] of Object.entries(lab.names)) {
      for (const el of document.querySelectorAll(selector)) {
        if (el.getAttribute("aria-label") !== name) el.setAttribute("aria-label", name);
      }
    }
    // Streamlit's page list puts each section (a div: its title, then the pages' list items) straight in the
    // list, which is no list any more to assistive technology: each section becomes the list, named by its title
    for (const ul of document.querySelectorAll('ul[data-testid="stSidebarNavItems"]')) {
      const sections = [...ul.children].filter((c) => c.tagName === "DIV");
      if (!sections.length) continue;
      if (ul.getAttribute("role") !== "none") ul.setAttribute("role", "none");
      for (const section of sections) {
        const title = section.querySelector('[data-testid="stNavSectionHeader"]');
        const name = title ? title.innerText.trim() : "";
        if (section.getAttribute("role") !== "list") section.setAttribute("role", "list");
        if (name && section.getAttribute("aria-label") !== name) section.setAttribute("aria-label", name);
      }
    }
  }
  if (!lab.observer) {
    lab.observer = new MutationObserver(() => {
      if (!lab.queued) { lab.queued = true; requestAnimationFrame(apply); }
    });
    lab.observer.observe(document.body, { childList: true, subtree: true });
  }
  apply();
})();
</script>"""


def key_selector(key: str) -> str:
    """The CSS class Streamlit gives a keyed element (its frontend's rule: every other character becomes '-')."""
    return ".st-key-" + "".join(c if c.isalnum() or c in "_-" else "-" for c in key.strip())


def script(lang: str | None = None, names: dict[str, str] | None = None) -> str:
    # Streamlit's DOMPurify drops a script whose text looks like markup ("<" then a letter, "/" or "!"): the
    # script has none, and in the JSON "<" can only be inside strings, where \u003c is the same
    return _SCRIPT.replace("PAYLOAD", json.dumps({"lang": lang, "names": names or {}}).replace("<", "\\u003c"))


def page_language(lang: str) -> None:
    """<html lang="zh"> or "en", set on every run (the language switch changes it without a reload)."""
    st.html(script(lang=lang), unsafe_allow_javascript=True)


def button_names(names: dict[str, str]) -> None:
    """Button key -> the name assistive technology reads (the visible label may stay a glyph)."""
    st.html(script(names={f"{key_selector(key)} button": name for key, name in names.items()}),
            unsafe_allow_javascript=True)
