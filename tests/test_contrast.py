"""Contrast (WCAG 2.2 AA): text 4.5:1 against the background it sits on, chart lines and marks and the parts of
controls 3:1 (1.4.3, 1.4.11), measured on the colours the app really uses: its CSS, its theme, its palette."""
import re
import tomllib
from pathlib import Path

import pytest

from ui.shell import style
from viz import palette
from viz.palette import contrast_ratio

ROOT = Path(__file__).resolve().parent.parent
WHITE = "#ffffff"
TEXT, GRAPHIC = 4.5, 3.0


def css_colours(selector: str) -> list[str]:
    """The `color:` values of the CSS rules of BASE_CSS whose selector names `selector`."""
    found = []
    for rule_selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", style.BASE_CSS):
        if selector in rule_selector:
            found += re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3})\b", body)
    return [c if len(c) == 7 else "#" + "".join(d * 2 for d in c[1:]) for c in found]


def test_streamlit_caption_grey_fails_and_the_labs_passes():
    assert contrast_ratio("#828180", WHITE) < TEXT  # what axe-core reported
    for background in (WHITE, style.SIDEBAR_BACKGROUND):
        assert contrast_ratio(style.CAPTION_COLOR, background) >= TEXT, background
    assert css_colours("stCaptionContainer") == [style.CAPTION_COLOR]


@pytest.mark.parametrize("selector", [".lab-metric-label", ".lab-frame-computing"])
def test_the_labs_own_grey_text_is_readable(selector):
    (colour,) = css_colours(selector)
    assert contrast_ratio(colour, WHITE) >= TEXT


def test_primary_buttons_white_text_on_the_theme_colour():
    """▶ and every primary button: white on the theme's primary colour (Streamlit's own red is 3.3:1)."""
    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    assert contrast_ratio(theme["primaryColor"], WHITE) >= TEXT
    # a selected pill or segmented-control option: the primary colour as text on its own 10 % tint (axe found 4.33:1)
    assert contrast_ratio(theme["primaryColor"], palette.tint(theme["primaryColor"], 0.9)) >= TEXT
    assert contrast_ratio("#ff4b4b", WHITE) < TEXT


@pytest.mark.parametrize("name, colour", [
    *(("gauge " + k, c) for k, c in palette.GAUGE_COLORS.items()),
    *(("measure " + c, c) for c in palette.TRIO),
    *(("run " + k, c) for k, c in palette.RUN_COLORS.items()),  # the run headings' underline
    ("mark", palette.MARK), ("accent", palette.ACCENT)])
def test_lines_and_marks_stand_off_white(name, colour):
    assert contrast_ratio(colour, WHITE) >= GRAPHIC, name
