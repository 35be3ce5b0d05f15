"""Home: what the lab is, how to use it, and every lecture moment one click away."""
import streamlit as st

from ui import presets
from ui.i18n import lang, t

st.title(t("home.title"))
st.markdown(t("home.intro"))
st.subheader(t("home.moments"))
cols = st.columns(3)
for i, p in enumerate(presets.all_presets().values()):
    with cols[i % 3].container(border=True):
        st.markdown(f"**🎓 {p.id}** · `{p.page}`")
        st.caption(p.narration[lang()])
        if st.button(t("home.open"), key=f"home.open.{p.id}"):
            presets.open_preset(p.id)
