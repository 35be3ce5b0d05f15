"""Colour vision deficiencies simulated (Machado, Oliveira & Fernandes 2009, severity 1.0, as colour-science implements
it) and colour differences measured (CIEDE2000), on single colours and on a picture's pixels. WCAG 2.x contrast."""
import functools
import warnings

import numpy as np


@functools.cache
def _colour():
    """colour-science, imported when first used (a second of import that test collection need not pay)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # colour-science warns that matplotlib (for its plots) is missing
        import colour
    return colour

DEFICIENCIES = {"protanopia": "Protanomaly", "deuteranopia": "Deuteranomaly", "tritanopia": "Tritanomaly"}
VISIONS = ("normal", *DEFICIENCIES)


def rgb01(hex_color: str) -> np.ndarray:
    return np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255


def simulate(rgb: np.ndarray, vision: str) -> np.ndarray:
    """sRGB in 0..1 (any shape ending in 3) as a person with `vision` sees it."""
    if vision == "normal":
        return rgb
    matrix = _colour().matrix_cvd_Machado2009(DEFICIENCIES[vision], 1.0)
    linear = _colour().cctf_decoding(np.asarray(rgb, dtype=float), function="sRGB")
    return _colour().cctf_encoding(np.clip(linear @ matrix.T, 0, 1), function="sRGB")


def delta_e(a: str, b: str, vision: str) -> float:
    """CIEDE2000 between two colours as seen with `vision`."""
    lab = [_colour().XYZ_to_Lab(_colour().sRGB_to_XYZ(simulate(rgb01(c), vision))) for c in (a, b)]
    return float(_colour().delta_E(*lab, method="CIE 2000"))


def simulate_png(source, target, vision: str) -> None:
    """A screenshot as a person with `vision` would see it."""
    from PIL import Image

    image = Image.open(source).convert("RGB")
    seen = simulate(np.asarray(image, dtype=float) / 255, vision)
    Image.fromarray(np.round(seen * 255).astype(np.uint8)).save(target)


def luminance(hex_color: str) -> float:
    r, g, b = _colour().cctf_decoding(rgb01(hex_color), function="sRGB")
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2.x contrast ratio, 1..21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
