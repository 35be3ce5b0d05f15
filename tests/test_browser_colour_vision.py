"""The memory split and the slot timeline as a student with deuteranopia sees them: screenshots taken in chromium,
simulated on their pixels (tests/artifacts/cvd-*.png, normal and deuteranopia), and the memory split's shares, as
drawn, still apart under every simulated deficiency."""
import itertools

import numpy as np
import pytest
from browser_support import ARTIFACTS, assert_no_errors, new_page, wait_idle
from colour_support import VISIONS, delta_e, simulate_png
from PIL import Image

from viz.palette import SPLIT_COLORS

pytestmark = pytest.mark.browser
FEW = 15.0  # tests/test_colour_vision.py's threshold for a few named categories


def hexes_in(png) -> set[str]:
    pixels = np.asarray(Image.open(png).convert("RGB")).reshape(-1, 3)
    return {"#{:02X}{:02X}{:02X}".format(*p) for p in np.unique(pixels, axis=0)}


def test_memory_split_and_slot_timeline_seen_with_deuteranopia(browser, server):
    page = new_page(browser, "en", 1440, 900, device_scale_factor=2)  # the patterns visible in the shots
    page.goto(f"{server}/paged-kv?lang=en")
    page.wait_for_selector("h1", timeout=60_000)
    wait_idle(page)
    page.locator('[data-testid="stMain"]').get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("""() => { const c = document.querySelector('.st-key-paged-kv-frame-counter');
                                      return c && /\\d+ \\/ \\d+$/.test(c.innerText.trim()); }""", timeout=300_000)
    page.wait_for_function("() => !document.querySelector('.lab-frame-computing')", timeout=300_000)  # ended
    wait_idle(page)
    slider = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first
    slider.press("End")
    for _ in range(7):  # 30 % into the run (a page is a tenth of it): memory held, fragmented, requests running
        slider.press("PageDown")
    wait_idle(page)
    split = ARTIFACTS / "cvd-memory-split-normal.png"
    for _ in range(60):  # the charts redraw at the new frame: until the split is drawn in the palette's colours
        page.locator(".st-key-paged-kv-mem-contiguous-split").first.screenshot(path=str(split))
        if sum(c.upper() in hexes_in(split) for c in SPLIT_COLORS.values()) >= 3:
            break
        page.wait_for_timeout(500)
    page.wait_for_timeout(500)  # and the other charts of the same rerun
    shots = {}
    for name, selector in (("memory-split", ".st-key-paged-kv-mem-contiguous-split"),
                           ("block-pool", ".st-key-paged-kv-mem-contiguous-pool"),
                           ("slot-timeline", ".st-key-paged-kv-tl-paged")):
        normal, seen = ARTIFACTS / f"cvd-{name}-normal.png", ARTIFACTS / f"cvd-{name}-deuteranopia.png"
        page.locator(selector).first.screenshot(path=str(normal))
        simulate_png(normal, seen, "deuteranopia")
        shots[name] = normal
    page.screenshot(path=str(ARTIFACTS / "cvd-paged-kv-normal.png"))
    simulate_png(ARTIFACTS / "cvd-paged-kv-normal.png", ARTIFACTS / "cvd-paged-kv-deuteranopia.png", "deuteranopia")
    assert_no_errors(page)
    page.close()
    drawn = hexes_in(shots["memory-split"])
    shares = [c.upper() for k, c in SPLIT_COLORS.items() if c.upper() in drawn]
    assert len(shares) >= 3, (shares, len(drawn))  # the chart is drawn in the palette's colours
    for vision in VISIONS:
        assert min(delta_e(a, b, vision) for a, b in itertools.combinations(shares, 2)) >= FEW, vision
