"""Glossary: the chapter's terms in both languages, a one-line definition each, and a button to the lab
view that shows it. Lessons link a term's first use here (`glossary#<id>`)."""
import streamlit as st

from lessons.glossary import load_glossary
from ui.instructor import moments
from ui.shell import nav
from ui.shell.i18n import lang, t

st.title(t("gloss.title"))
st.markdown(t("gloss.intro"))
terms = load_glossary(lang())
st.table([{t("gloss.term"): term.term, t("gloss.other"): term.other, t("gloss.definition"): term.definition}
          for term in terms])
for term in terms:
    with st.container(border=True):
        st.subheader(f"{term.term} · {term.other}", anchor=term.id)
        st.markdown(term.definition)
        c = st.columns([3, 2], vertical_alignment="center")
        c[0].caption(f"{t('gloss.shows')}: {term.shows}")
        view = term.view
        label = (f"🎓 {moments.title(view['moment'])}" if view["moment"]
                 else t("gloss.open", page=moments.page_title(view["page"])))
        if c[1].button(label,
                       key=f"gloss.{term.id}"):
            moments.open_moment(view["moment"]) if view["moment"] else nav.go(view["page"])
