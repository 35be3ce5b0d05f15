"""What assistive technology and the keyboard need that Streamlit's widgets cannot do themselves: the page's language
(so a screen reader pronounces it), names for buttons labelled by a glyph (▶ is read "black right-pointing
triangle"), Streamlit's own English names ("Help for …", "Open", "Skip to main content") in the page's language, the
reduce-motion preference of the browser, the sidebar's page list made a list again, skip links to Run and to the
player, ← and → on the player's buttons, number boxes that refuse text that is not a number with a message
instead of reading 0, text boxes sent after a pause in typing (the challenge's key, checked as it is typed), and a
tooltip hidden after a click on its button. One small script in the app's document: the names are kept in a map that
every run updates, and an observer applies them whenever Streamlit redraws the page."""
from __future__ import annotations

import json

import streamlit as st

HIDDEN = "lab-a11y"  # the script's element takes no room (ui/shell/style.py)
TYPED_PAUSE_MS = 700  # a pause in typing this long sends a box checked as typed
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
  if (update.words) lab.words = update.words;
  lab.typed = [...new Set([...(lab.typed || []), ...(update.typed || [])])];
  // Streamlit's own names ("Help for …", "Open", "Skip to main content") in the page's language, and back again
  // when it changes (React leaves an attribute it did not change as it is)
  function said(text) {
    const i = lab.lang === "zh" ? 1 : 0;
    for (const pair of lab.words.plain) if (text === pair[0] || text === pair[1]) return pair[i];
    for (const template of lab.words.help_for) {
      const [before, after] = template.split("{label}");
      if (text.length > before.length + after.length && text.startsWith(before) && text.endsWith(after))
        return lab.words.help_for[i].replace("{label}", text.slice(before.length, text.length - after.length));
    }
    return null;
  }
  // a name set here is marked, so that the observer tells it from one set by React (below)
  function named(el, name) {
    el.dataset.labNamed = name;
    el.setAttribute("aria-label", name);
  }
  function speak() {
    if (!lab.words) return;
    for (const el of document.querySelectorAll(STREAMLIT_NAMED)) {
      const name = el.getAttribute("aria-label"), want = name && said(name);
      if (want && want !== name) named(el, want);
    }
    for (const a of document.querySelectorAll('a[data-testid="stSkipToContent"]')) {
      const want = said(a.textContent);
      if (want && want !== a.textContent) a.textContent = want;
    }
  }
  // A number box drops what is not a number without a word (then reads 0): keep the number it had, and say why
  function guard(input) {
    input.dataset.labNumber = "1";
    const box = input.closest('[data-testid="stNumberInput"]');
    const note = (text) => {
      let el = box.querySelector(".lab-not-a-number");
      if (!text) { if (el) el.remove(); return; }
      if (!el) {
        el = document.createElement("div");
        el.className = "lab-not-a-number";
        el.setAttribute("role", "alert");
        box.appendChild(el);
      }
      el.textContent = text;
    };
    let refused = "";  // what was typed since the last number or the last visit to the box: said whole
    input.addEventListener("focus", () => { refused = ""; });
    input.addEventListener("beforeinput", (e) => {
      if (e.data && /[^0-9.eE+-]/.test(e.data)) {
        e.preventDefault();
        refused += e.data;
        note(lab.words && lab.words.not_a_number[lab.lang === "zh" ? 1 : 0].replace("{typed}", refused));
      } else if (e.data) {
        refused = "";
        note(null);
      }
    });
  }
  // Two more skip links after Streamlit's: to Run (its settings opened if they are folded) and to the player's ▶
  function target(which) {
    if (which === "player") return document.querySelector('[class*="-player-controls"] button[kind="primary"]');
    const run = lab.words.run[lab.lang === "zh" ? 1 : 0];
    // textContent, not innerText: this runs on every redraw while a run plays, and innerText lays the page out
    return [...document.querySelectorAll('[data-testid="stMain"] button')].find((b) => b.textContent.trim() === run);
  }
  function skipLinks() {
    const first = document.querySelector('a[data-testid="stSkipToContent"]');
    if (!first || !lab.words) return;
    const i = lab.lang === "zh" ? 1 : 0;
    for (const which of ["player", "run"]) {  // inserted after the first, so "run" ends up first
      let a = document.querySelector(`a.lab-skip[data-to="${which}"]`);
      if (!a) {
        a = document.createElement("a");
        a.className = "lab-skip";
        a.dataset.to = which;
        a.href = "#";
        a.addEventListener("click", (e) => {
          e.preventDefault();
          const to = target(which), folded = to && to.closest("details:not([open])");
          if (folded) folded.querySelector("summary").click();
          if (to) requestAnimationFrame(() => to.focus());
        });
        first.after(a);
      }
      const text = lab.words[`skip_${which}`][i];
      if (a.textContent !== text) a.textContent = text;
      const none = !target(which);
      if (a.hidden !== none) a.hidden = none;
    }
  }
  // The player's buttons: the arrow keys step it back and forward while one of them has focus
  if (!lab.arrows) {
    lab.arrows = true;
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey || (e.key !== "ArrowLeft" && e.key !== "ArrowRight")) return;
      const row = e.target.closest && e.target.tagName === "BUTTON" && e.target.closest('[class*="-player-controls"]');
      if (!row || e.target.closest('[data-testid="stSelectbox"]')) return;
      const page = (row.className.match(/st-key-([^ ]+)-player-controls/) || [])[1];  // the player's keys: ui/playback
      const to = page && row.querySelector(`.st-key-${page}-${e.key === "ArrowLeft" ? "back" : "step"} button`);
      if (to && !to.disabled) { e.preventDefault(); to.click(); }
    });
  }
  // A tooltip goes with the click on its button: while the pointer rests where it clicked it would stay over the
  // page (a moment's narration, the picture); moving the pointer brings tooltips back
  if (!lab.quietTips) {
    lab.quietTips = true;
    let at = null;
    document.addEventListener("click", (e) => {
      if (!(e.target.closest && e.target.closest("button"))) return;
      at = [e.clientX, e.clientY];
      document.documentElement.classList.add("lab-quiet-tips");
    }, true);
    document.addEventListener("pointermove", (e) => {
      if (at && Math.abs(e.clientX - at[0]) + Math.abs(e.clientY - at[1]) > 24) {
        at = null;
        document.documentElement.classList.remove("lab-quiet-tips");
      }
    }, true);
  }
  // A text box checked as it is typed: Streamlit sends a box's text when it loses focus or on Ctrl+Enter; a pause
  // in typing sends it the same way (a Ctrl+Enter of our own), the focus and the caret staying where they are
  if (!lab.typedListener) {
    lab.typedListener = true;
    let timer = null;
    document.addEventListener("input", (e) => {
      const box = e.target;
      if (e.isComposing || !box.matches || !lab.typed.some((s) => box.matches(s))) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (document.activeElement !== box) return;  // it left the box, which sent it
        box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", ctrlKey: true, bubbles: true,
                                                         cancelable: true }));
      }, TYPED_PAUSE_MS);
    }, true);
  }
  function apply() {
    lab.queued = false;
    skipLinks();
    if (lab.lang && document.documentElement.lang !== lab.lang) document.documentElement.lang = lab.lang;
    speak();
    for (const input of document.querySelectorAll('[data-testid="stNumberInput"] input:not([data-lab-number])')) {
      guard(input);
    }
    for (const [selector, name] of Object.entries(lab.names)) {
      for (const el of document.querySelectorAll(selector)) {
        if (el.getAttribute("aria-label") !== name) named(el, name);
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
        if (name && section.getAttribute("aria-label") !== name) named(section, name);
      }
    }
  }
  if (!lab.observer) {
    lab.observer = new MutationObserver((records) => {
      if (lab.queued || !records.some((r) => r.type === "childList"
                                      || r.target.getAttribute("aria-label") !== r.target.dataset.labNamed)) return;
      lab.queued = true;
      requestAnimationFrame(apply);
    });
    // attributes too: React may set a name of its own again on an element it keeps, which adds no child
    lab.observer.observe(document.body, { childList: true, subtree: true, attributes: true,
                                          attributeFilter: ["aria-label"] });
  }
  apply();
})();
</script>"""


def key_selector(key: str) -> str:
    """The CSS class Streamlit gives a keyed element (its frontend's rule: every other character becomes '-')."""
    return ".st-key-" + "".join(c if c.isalnum() or c in "_-" else "-" for c in key.strip())


# Streamlit's own accessible names (its frontend has them in English only): the elements that carry them
STREAMLIT_NAMED = ('[data-testid="stTooltipHoverTarget"] button, [data-testid="stSelectbox"] button, '
                   '[data-testid="stMultiSelect"] button, [data-testid^="stNumberInputStep"], '
                   '[data-testid="stSidebarNav"], [data-testid="stSidebar"], [data-testid="stSidebarCollapseButton"] '
                   'button, [data-testid="stExpandSidebarButton"], [data-testid="stHeaderActionElements"] a, '
                   '.react-aria-ProgressBar')
STREAMLIT_WORDS = ("app_pages", "sidebar", "collapse_sidebar", "expand_sidebar", "increment", "decrement", "help",
                   "open", "close", "clear", "link_to_heading", "progress", "skip")


def streamlit_words() -> dict:
    """Each of Streamlit's English names beside the lab's words for it ([en, zh]); "Help for {label}" in both."""
    from ui.shell.i18n import strings

    said = strings()
    return {"plain": [[said[f"a11y.st.{w}"]["en"], said[f"a11y.st.{w}"]["zh"]] for w in STREAMLIT_WORDS],
            "help_for": [said["a11y.st.help_for"][lang] for lang in ("en", "zh")],
            **{key: [said[f"a11y.{key}"][lang] for lang in ("en", "zh")]
               for key in ("not_a_number", "skip_run", "skip_player")},
            "run": [said["ctl.run"][lang] for lang in ("en", "zh")]}


def script(lang: str | None = None, names: dict[str, str] | None = None, words: dict | None = None,
           typed: list[str] | None = None) -> str:
    # Streamlit's DOMPurify drops a script whose text looks like markup ("<" then a letter, "/" or "!"): the
    # script has none, and in the JSON "<" can only be inside strings, where \u003c is the same
    payload = {"lang": lang, "names": names or {}, **({"words": words} if words else {}), "typed": typed or []}
    return (_SCRIPT.replace("STREAMLIT_NAMED", json.dumps(STREAMLIT_NAMED))
            .replace("TYPED_PAUSE_MS", str(TYPED_PAUSE_MS))
            .replace("PAYLOAD", json.dumps(payload).replace("<", "\\u003c")))


def page_language(lang: str) -> None:
    """<html lang="zh"> or "en", set on every run (the language switch changes it without a reload), and
    Streamlit's own accessible names in that language."""
    st.html(script(lang=lang, words=streamlit_words()), unsafe_allow_javascript=True)


def checked_as_typed(*keys: str) -> None:
    """The text boxes of these widgets are sent (and so checked by the page) after a pause in typing, not only when
    they lose focus."""
    st.html(script(typed=[f"{key_selector(key)} {box}" for key in keys for box in ("textarea", "input")]),
            unsafe_allow_javascript=True)


def button_names(names: dict[str, str]) -> None:
    """Button key -> the name assistive technology reads (the visible label may stay a glyph)."""
    st.html(script(names={f"{key_selector(key)} button": name for key, name in names.items()}),
            unsafe_allow_javascript=True)
