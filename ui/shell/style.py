"""The lab's look: a compact frame that keeps the picture on the first screen, and instructor mode,
which scales everything together (type, values, buttons, chart fonts) for a lecture hall.

Instructor mode enlarges the root font size: Streamlit sizes its type, widgets and metrics in rem,
so they all grow in proportion and nothing becomes smaller than its label. Charts get the same
factor through `font_scale` (live charts) or `scale_fonts` (plotly charts)."""
import streamlit as st
from ui.shell import a11y
from ui.shell.i18n import lang
from ui.shell.keys import INSTRUCTOR, REDUCE_MOTION, SCROLL_TOP

INSTRUCTOR_SCALE = 1.3
CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
# While the player runs, charts are static pictures: no hover layers, no modebar. It halves the
# browser's work per frame, and nobody can hover a moving chart anyway.
ANIMATING_CONFIG = {"staticPlot": True}

# Text a student must read stands 4.5:1 off the main (white) and the sidebar's (#f0f2f6) background: Streamlit's
# caption grey (#828180, 3.9:1) is darkened; tests/test_contrast.py measures these.
CAPTION_COLOR = "#5c5c66"
SIDEBAR_BACKGROUND = "#f0f2f6"  # Streamlit's secondary background

BASE_CSS = """
<style>
/* captions and help text: readable grey (WCAG AA 4.5:1), in the sidebar too */
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stWidgetLabel"] [data-testid="stTooltipHoverTarget"] svg { color: CAPTION_COLOR !important; }
[data-testid="stCaptionContainer"] { opacity: 1 !important; }  /* Streamlit fades captions to 60 % */
/* a compact frame: the picture, not the page furniture, gets the first screen */
[data-testid="stMainBlockContainer"] { padding: 2.6rem 2rem 3rem 2rem; }
[data-testid="stMain"] h1 { font-size: 1.9rem; padding: 0 0 0.3rem 0; }
[data-testid="stMain"] h4 { padding: 0.1rem 0 0.2rem 0; }
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.55rem; }
/* labels wrap between words, never inside an identifier such as max_num_seqs, and are never cut */
[data-testid="stWidgetLabel"] p, [data-testid="stMetricLabel"] p, [data-testid="stMarkdownContainer"] th {
  word-break: normal !important; overflow-wrap: normal !important; }
[data-testid="stMetricLabel"] p, [data-testid="stMetricLabel"] div { white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }
/* a button's label wraps inside the button (a longer title, a narrow column, instructor mode's type), never
   cut with an ellipsis or spilling past its border; a toggle's or checkbox's label beside its switch too */
[data-testid^="stBaseButton"] p, [data-testid^="stBaseButton"] [data-testid="stMarkdownContainer"],
[data-testid="stCheckbox"] label p, [data-testid="stCheckbox"] label [data-testid="stMarkdownContainer"],
[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"] {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
[data-testid^="stBaseButton"] { height: auto; min-height: 2.5rem; }
/* a button's label keeps its Chinese words whole as it keeps English ones: it wraps at a space or after
   punctuation (「批量越大，| 吞吐越高」, not 「吞|吐」); one longer than its button still wraps, between characters */
[data-testid^="stBaseButton"] p { word-break: keep-all !important; overflow-wrap: anywhere !important; }
[data-testid="stSidebar"] [data-testid^="stBaseButton"] { text-align: left; justify-content: flex-start; }
/* no tooltip right after a click on its button (ui/shell/a11y.py): it would cover the page until the pointer moves */
.lab-quiet-tips [role="tooltip"], .lab-quiet-tips [data-testid="stTooltipContent"] { display: none !important; }
/* the lecture moments in the sidebar (instructor mode's larger type): a title of nine Chinese characters on a line */
[data-testid="stSidebar"] [class*="st-key-side-moment-"] button { padding-left: 0.45rem; padding-right: 0.45rem; }
[data-testid="stSidebar"] [class*="st-key-side-moment-"] button p { font-size: 0.8rem; }
/* the sidebar's lesson titles wrap instead of being cut */
[data-testid="stSidebarNavLink"] span, [data-testid="stSidebarNavLink"] div,
[data-testid="stSidebarNavLink"] p { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; line-height: 1.25; }
[data-testid="stSidebarNavLink"] { height: auto !important; min-height: 2rem; padding-top: 0.2rem;
  padding-bottom: 0.2rem; }
/* side-by-side columns keep their content inside: wide rows scroll within their own column */
[data-testid="stColumn"] { min-width: 0; }
.lab-scroll-x { overflow-x: auto; max-width: 100%; }
[data-testid="stAlert"] [data-testid="stMarkdownContainer"] p { margin-bottom: 0; }
.lab-run-heading { font-size: 1.15rem; font-weight: 600; margin: 0; padding: 0 0 0.15rem 0; }
.lab-heading-room { display: grid; }
.lab-heading-room > span { grid-area: 1 / 1; }
.lab-room { visibility: hidden; }
/* live metrics and small tables of the side-by-side views */
.lab-metrics { display: grid; grid-template-columns: repeat(auto-fill, minmax(7.2rem, 1fr)); gap: 0.35rem 0.9rem; }
.lab-metric-label { font-size: 0.8rem; color: #555; line-height: 1.2; }
.lab-metric-value { font-size: 1.3rem; font-weight: 600; white-space: nowrap; font-variant-numeric: tabular-nums; }
.lab-table { border-collapse: collapse; font-size: 0.85rem; margin-top: 0.4rem; }
/* what a live figure covers mid-run (requests counted with their time so far) */
.lab-note { font-size: 0.8rem; color: #555; line-height: 1.35; margin: 0.3rem 0 0 0; }
.lab-table th, .lab-table td { border-bottom: 1px solid #e6e6ea; padding: 0.15rem 0.5rem; text-align: left; }
.lab-table th { font-weight: 600; min-width: 4.5em; }
/* the player's frame line: a progress bar and "step 55 / 710" */
.lab-frame { display: flex; align-items: center; gap: 0.6rem; }
/* a refusal note drawn by the in-browser player: st.warning's colours */
.lab-refusal { background: rgba(255, 227, 18, 0.1); color: rgb(146, 108, 5); padding: 0.3rem 0.6rem;
  border-radius: 0.5rem; font-size: 0.85rem; line-height: 1.35; }
/* a frame with no refusal: its (empty) note takes no room */
[data-testid="stElementContainer"]:has(.lab-refusals:empty) { display: none; }
.lab-frame-bar { flex: 1; height: 0.4rem; background: #e6e6ea; border-radius: 0.2rem; overflow: hidden; }
.lab-frame-bar > div { height: 100%; background: #0072B2; }
/* a frame in words for screen readers (ui/views/words.py): out of sight and taking no room, still read */
[data-testid="stElementContainer"]:has(.lab-words) { position: absolute !important; width: 1px; height: 1px;
  overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
/* the lab's skip links (ui/shell/a11y.py): out of sight until the keyboard reaches them, as Streamlit's own */
a.lab-skip { position: absolute; left: -10000px; top: 0.5rem; z-index: 1000100; padding: 0.5rem 0.75rem;
  background: #ffffff; color: #1f4e9c; border: 2px solid #1f4e9c; border-radius: 0.4rem; }
a.lab-skip:focus { left: 0.5rem; }
/* what a number box refused (ui/shell/a11y.py): Streamlit's error red, 6.5:1 on white */
.lab-not-a-number { color: #b3261e; font-size: 0.85rem; line-height: 1.3; margin-top: 0.25rem; }
/* the accessibility script (ui/shell/a11y.py): nothing to see */
[data-testid="stElementContainer"]:has(.lab-a11y) { display: none !important; }
/* the player's message with the next chunk of a run still computed (ui/playback/player.py): a script, nothing to see */
[data-testid="stElementContainer"]:has(.lab-next-chunk) { display: none !important; }
.lab-frame-value { font-weight: 600; font-size: 1.15rem; font-variant-numeric: tabular-nums; white-space: nowrap; }
/* "computing… step 768": the runs are still being computed, and the total grows */
.lab-frame-computing { color: #5f5f6b; white-space: nowrap; font-variant-numeric: tabular-nums; }
</style>
""".replace("CAPTION_COLOR", CAPTION_COLOR)

# no transitions or CSS animations (Streamlit's spinners, expanders, toggles): under the browser's
# prefers-reduced-motion, and for everyone once the sidebar's switch is on
_STILL = "*, *::before, *::after { animation-duration: 0.01ms !important; animation-iteration-count: 1 !important; " \
         "transition-duration: 0.01ms !important; scroll-behavior: auto !important; }"
REDUCED_MOTION_CSS = f"<style>@media (prefers-reduced-motion: reduce) {{ {_STILL} }}</style>"
STILL_CSS = f"<style>{_STILL}</style>"

INSTRUCTOR_CSS = f"""
<style>
html {{ font-size: {16 * INSTRUCTOR_SCALE:.1f}px; }}
</style>
"""


def instructor() -> bool:
    return bool(st.session_state.get(INSTRUCTOR, False))


def font_scale() -> float:
    return INSTRUCTOR_SCALE if instructor() else 1.0


def scaled(height: int) -> int:
    return int(height * INSTRUCTOR_SCALE) if instructor() else height


def scale_fonts(fig):
    """A plotly figure's fonts, enlarged in instructor mode (live charts do this in the browser)."""
    if not instructor():
        return fig
    fig.update_layout(font_size=round(12 * INSTRUCTOR_SCALE))
    margin = fig.layout.margin  # the room beside the plot for its (larger) labels and titles grows too
    fig.update_layout(margin={side: round(getattr(margin, side) * INSTRUCTOR_SCALE) for side in "lrtb"
                              if getattr(margin, side) is not None})
    for path in ("title", "xaxis.title", "yaxis.title", "yaxis2.title", "legend"):
        node = fig.layout
        for part in path.split("."):
            node = node[part] if node is not None and part in node else None
        if node is not None and node.font is not None and node.font.size:
            node.font.size = round(node.font.size * INSTRUCTOR_SCALE)
    return fig


def reduced_motion() -> bool:
    return bool(st.session_state.get(REDUCE_MOTION, False))


def apply() -> None:
    st.html(BASE_CSS + REDUCED_MOTION_CSS + (INSTRUCTOR_CSS if instructor() else "")
            + (STILL_CSS if reduced_motion() else ""))
    a11y.page_language(lang())
    if st.session_state.pop(SCROLL_TOP, False):  # a page switch from a button at the bottom of a page
        st.html("<script>setTimeout(() => { for (const el of [document.scrollingElement, "
                "document.querySelector('[data-testid=\"stMain\"]')]) if (el) el.scrollTop = 0; }, 60);</script>",
                unsafe_allow_javascript=True)
