"""Import chains among the project's own modules stay shallow, and the string layer imports the engine's
messages alone (no torch, no lab)."""
import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pages", "ui", "viz", "lessons", "classroom", "engine", "kernels")
MAX_CHAIN = 11  # modules on the longest chain, both ends counted


def _module_level_import_lines(path: Path) -> set[int]:
    """Lines of the imports that run when the module is imported (not those inside a function)."""
    lines = set()

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)) and not in_function:
                lines.add(child.lineno)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(path.read_text(encoding="utf-8")), False)
    return lines


def _file(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def import_graph() -> dict[str, list[str]]:
    """module -> the project modules it imports at module level (grimp's static graph; imports under
    `if TYPE_CHECKING:` never run and are left out), app.py included."""
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False, exclude_type_checking_imports=True)
    edges = {}
    for module in graph.modules:
        lines = _module_level_import_lines(_file(module))
        edges[module] = sorted(
            imported for imported in graph.find_modules_directly_imported_by(module)
            if any(d["line_number"] in lines for d in graph.get_import_details(importer=module, imported=imported)))
    app = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))  # a module, not a package: grimp takes packages
    edges["app"] = sorted({f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in edges else node.module
                           for node in app.body if isinstance(node, ast.ImportFrom) and node.module in edges
                           for a in node.names}
                          | {a.name for node in app.body if isinstance(node, ast.Import) for a in node.names
                             if a.name in edges})
    return edges


def longest_chain(edges: dict[str, list[str]]) -> list[str]:
    """The longest simple import path: a depth-first search (modules in name order) drops the edges that close a
    cycle, and the longest path of what is left is found by memoised recursion."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(edges)))
    state, acyclic = {}, {}

    def visit(module: str) -> None:
        state[module] = "open"
        acyclic[module] = []
        for imported in edges[module]:
            if state.get(imported) == "open":
                continue  # a back edge: it closes a cycle
            acyclic[module].append(imported)
            if imported not in state:
                visit(imported)
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module)
    best: dict[str, list[str]] = {}

    def chain(module: str) -> list[str]:
        if module not in best:
            best[module] = max(([module, *chain(m)] for m in acyclic[module]), key=len, default=[module])
        return best[module]

    return max((chain(m) for m in sorted(edges)), key=len)


def test_the_longest_import_chain_is_short():
    chain = longest_chain(import_graph())
    print(f"{len(chain)}: " + " -> ".join(chain))
    assert len(chain) <= MAX_CHAIN, f"{len(chain)} modules: " + " -> ".join(chain)


def test_the_chain_measure_counts_modules_and_ignores_cycles():
    edges = {"a": ["b"], "b": ["c", "a"], "c": ["d"], "d": ["b"], "e": []}
    assert longest_chain(edges) == ["a", "b", "c", "d"]


def test_the_string_layer_imports_the_engine_messages_alone():
    code = ("import sys, ui.shell.i18n\n"
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('torch.', 'engine.lab'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
