"""The layers hold and the README's map matches the tree."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imports(path: Path) -> list[str]:
    return re.findall(r"^\s*(?:from|import) ([\w.]+)", path.read_text(encoding="utf-8"), flags=re.M)


def test_the_ui_imports_the_engine_only_through_its_public_contract():
    """`engine` itself, or the HTTP side (`engine.server`: the server, its load client and metric reader)."""
    offenders = [f"{p.relative_to(ROOT)}: {m}" for folder in ("ui", "pages", "viz")
                 for p in (ROOT / folder).rglob("*.py") for m in imports(p)
                 if m.startswith("engine.") and not m.startswith("engine.server")]
    assert not offenders, offenders


def test_the_engine_imports_no_ui_library_and_kernels_no_engine():
    ui_libs = ("streamlit", "plotly", "ui", "viz", "pages")
    bad = [f"{p.relative_to(ROOT)}: {m}" for p in (ROOT / "engine").rglob("*.py") for m in imports(p)
           if m.split(".")[0] in ui_libs]
    bad += [f"{p.relative_to(ROOT)}: {m}" for p in (ROOT / "kernels").rglob("*.py") for m in imports(p)
            if m.split(".")[0] == "engine"]
    assert not bad, bad


def test_the_readme_architecture_lists_every_engine_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Architecture", 1)[1].split("```")[1]
    listed = set(re.findall(r"\b[a-z_]+\b", block))
    for sub in ("core", "lab", "models"):
        assert f"{sub}/" in block
        for p in (ROOT / "engine" / sub).glob("*.py"):
            if p.stem != "__init__":
                assert p.stem in listed, f"engine/{sub}/{p.name} is missing from the README's architecture"
    for p in (ROOT / "engine").glob("*.py"):
        assert p.stem in listed or p.stem == "__init__", f"engine/{p.name} is missing from the README"


def test_the_classroom_imports_no_ui_library_and_the_readme_lists_its_modules():
    ui_libs = ("streamlit", "plotly", "ui", "viz", "pages", "engine")
    bad = [f"{p.relative_to(ROOT)}: {m}" for p in (ROOT / "classroom").rglob("*.py") for m in imports(p)
           if m.split(".")[0] in ui_libs]
    assert not bad, bad
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("## Architecture", 1)[1].split("```")[1]
    assert "classroom/" in block
    listed = set(re.findall(r"\b[a-z_]+\b", block))
    missing = [p.name for p in (ROOT / "classroom").glob("*.py") if p.stem != "__init__" and p.stem not in listed]
    assert not missing, f"classroom modules missing from the README's architecture: {missing}"
