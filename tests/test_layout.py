"""Import-linter's contracts catch an upward import (that they hold is `make lint`'s, run before every test tier),
the README's map is the tree, and its "where to change what" table points at real folders."""
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pages", "ui", "viz", "lessons", "classroom", "engine", "kernels")
MODULE_FILE = re.compile(r"^[\w]+\.(?:py|js|html|yaml)$")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def architecture_block() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8").split("## Architecture", 1)[1].split("```")[1]


def listed_paths() -> set[str]:
    """Every file the block names, resolved against the folder lines above it (two spaces a level)."""
    folders: list[tuple[int, str]] = []  # (indent, path) of the enclosing folder lines
    found = set()
    for line in architecture_block().splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while folders and folders[-1][0] >= indent:
            folders.pop()
        here = folders[-1][1] if folders else ""
        words = line.split()
        if words[0].endswith("/"):
            here = here + words[0]
            folders.append((indent, here))
        for word in words:
            word = word.strip("`(),;:")
            if MODULE_FILE.match(word):
                found.add(here + word)
    return found


def tree_modules() -> set[str]:
    skip = ("lessons/zh/", "lessons/en/", "engine/lab/data/")
    files = {p.relative_to(ROOT).as_posix() for pkg in PACKAGES for p in (ROOT / pkg).rglob("*")
             if p.is_file() and MODULE_FILE.match(p.name) and "__pycache__" not in p.parts}
    return {f for f in files if not f.endswith("__init__.py") and not f.startswith(skip)} | {"app.py"}


def test_every_path_in_the_readme_architecture_exists():
    missing = sorted(p for p in listed_paths() if not (ROOT / p).is_file())
    assert not missing, f"the README's architecture names files that do not exist: {missing}"


def test_the_readme_architecture_lists_every_module_by_its_path():
    unlisted = sorted(tree_modules() - listed_paths())
    assert not unlisted, f"modules missing from the README's architecture: {unlisted}"


def test_where_to_change_what_points_at_one_real_folder_and_a_file_inside_it_for_each_change():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Where to change what", 1)[1].split("\n\n", 2)[1]
    rows = [[cell.strip().strip("`") for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    assert len(rows) >= 10
    for change, folder, start in rows:
        assert (ROOT / folder).is_dir() and folder.endswith("/"), f"{change!r}: {folder} is not a folder"
        assert start.startswith(folder) and (ROOT / start).is_file(), f"{change!r}: {start} is not in {folder}"
    assert len({change for change, _, _ in rows}) == len(rows)


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("importer, imported, contract", [
    ("engine/core/scheduler.py", "ui.shell.i18n", "pages -> ui"),  # a layer reaching up
    ("engine/core/scheduler.py", "engine.lab.metrics", "engine.core knows nothing"),
    ("ui/shell/style.py", "ui.views.base", "No import cycles"),  # views imports style: a cycle in ui
])
def test_an_import_against_a_contract_in_a_scratch_copy_breaks_it(tmp_path, importer, imported, contract):
    for name in (*PACKAGES, ".importlinter"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, tmp_path / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                               if (ROOT / name).is_dir() else {}))
    target = tmp_path / importer
    target.write_text(target.read_text(encoding="utf-8") + f"\nimport {imported}  # noqa\n", encoding="utf-8")
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    broken = done.stdout.split("Broken contracts", 1)[1]
    assert contract in broken, done.stdout


def test_no_function_outside_the_triton_kernels_takes_more_than_six_parameters():
    wide = []
    folders = (*PACKAGES, "bench", "tests", "scripts")
    for path in [*ROOT.glob("*.py"), *(p for d in folders for p in (ROOT / d).rglob("*.py"))]:
        if path.name == "triton_attention.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                n = len(names) + (a.vararg is not None) + (a.kwarg is not None) - (names[:1] in (["self"], ["cls"]))
                if n > 6:
                    wide.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({n})")
    assert not wide, wide
