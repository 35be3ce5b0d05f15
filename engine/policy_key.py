"""A student's priority key: one expression over a request's fields, checked and compiled without exec/eval.

    key = compile_key("max(0, priority - waited // 100)")
    key.evaluate({"priority": 2.0, "waited": 250.0})  # -> 0.0; lower runs first (vLLM's priority convention)

The text is parsed with `ast` and every node is checked against an explicit whitelist: numbers, the fields in
FIELDS, arithmetic, comparisons, and/or/not, `x if c else y`, and the pure functions in FUNCTIONS. Everything
else (attributes, subscripts, calls of anything else, lambdas, comprehensions, f-strings, walrus, starred,
keywords) is refused with its line and column. The checked tree is then turned into nested Python closures,
so evaluation is plain function calls on floats: no interpreter of the student's text ever runs, every number
is a float (no huge integers), and a text constant exists only to be compared with `request_class`.
"""
from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass
from typing import Callable, Mapping

from engine.messages import ConfigError

MAX_KEY_CHARS = 500
MAX_DEPTH = 32  # nodes from the root to the deepest leaf
MAX_CONSTANT = 1e12
MAX_EXPONENT = 8  # `x ** k`: k a constant with |k| <= 8
MAX_TEXT_CONSTANT = 32
MAX_CALL_ARGS = 16

# The fields a key may read, all numbers except request_class. Their meanings, for the page, are strings.yaml's
# challenge.field.<name>; engine.core.policy reads them off a request.
FIELDS = ("waited", "arrival_step", "step", "num_prompt_tokens", "num_output_tokens", "max_tokens", "tokens_left",
          "request_class", "priority", "ttft_slo", "deadline", "num_preemptions")
TEXT_FIELDS = frozenset({"request_class"})
CONSTANTS = {"inf": math.inf}


def _clip(x: float, low: float, high: float) -> float:
    return min(max(x, low), high)


# name -> (function, fewest arguments, most arguments)
FUNCTIONS: dict[str, tuple[Callable, int, int]] = {
    "min": (min, 2, MAX_CALL_ARGS), "max": (max, 2, MAX_CALL_ARGS), "abs": (abs, 1, 1),
    "log": (math.log, 1, 1), "sqrt": (math.sqrt, 1, 1), "clip": (_clip, 3, 3),
}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_RISKY = (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)  # the only operators that can raise on floats


class PolicyKeyError(ConfigError):
    """A key refused (code policy_key.*, with line and column) or stopped while running (with the request)."""


def _refuse(code: str, node: ast.AST | None = None, text: str = "", **params) -> PolicyKeyError:
    if node is not None:
        params.setdefault("line", node.lineno)
        params.setdefault("column", node.col_offset + 1)
        if text:
            params.setdefault("text", ast.get_source_segment(text, node) or "")
    return PolicyKeyError(code, **params)


class _Fault(Exception):
    """Raised inside evaluation: which node failed and why (a message code)."""

    def __init__(self, node: ast.AST, code: str):
        self.node, self.code = node, code


@dataclass(frozen=True)
class CompiledKey:
    text: str
    names: tuple[str, ...]  # the fields it reads, in FIELDS order
    _run: Callable[[Mapping[str, float | str]], float]
    _tree: ast.AST
    # Its work for one request, counted: one operation per part of the expression (a number, a field, an operator,
    # a call), each a bounded amount of work on floats, evaluated at most once (a chained comparison's middle
    # terms twice, counted twice). The engine's step budget adds these up (engine.core.policy.KeyPolicy): counted,
    # not timed, so a key's verdict is the same on an idle machine and a busy one.
    cost: int = 1

    def evaluate(self, values: Mapping[str, float | str], request_id: str = "?") -> float:
        """The key for one request (`values`: at least `names`). A failure names the request, the
        sub-expression and the fields it read."""
        try:
            result = self._run(values)
        except _Fault as fault:
            raise self._failure(fault.code, fault.node, values, request_id) from None
        if result != result:  # NaN: it would scramble any sort
            raise self._failure("policy_key.not_a_number", self._tree, values, request_id)
        return result

    def _failure(self, code: str, node: ast.AST, values: Mapping, request_id: str) -> PolicyKeyError:
        read = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in values})
        shown = ", ".join(f"{name}={_show(values[name])}" for name in read) or "-"
        return _refuse(code, node, self.text, request_id=request_id, values=shown)


def _show(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, str) else str(value)


def compile_key(text: str) -> CompiledKey:
    """Check `text` and compile it; a refusal is a PolicyKeyError with line and column."""
    if not isinstance(text, str) or not text.strip():
        raise PolicyKeyError("policy_key.empty")
    if len(text) > MAX_KEY_CHARS:
        raise PolicyKeyError("policy_key.too_long", n=len(text), limit=MAX_KEY_CHARS)
    text = text.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise PolicyKeyError("policy_key.syntax", line=e.lineno or 1, column=e.offset or 1) from None
    except (ValueError, RecursionError, MemoryError):  # a NUL byte; nesting past the parser's own limits
        raise PolicyKeyError("policy_key.syntax", line=1, column=1) from None
    _check_depth(tree.body, text)
    builder = _Builder(text)
    run, kind = builder.build(tree.body)
    if kind == "text":
        raise _refuse("policy_key.text", tree.body, text, limit=MAX_TEXT_CONSTANT)
    names = tuple(name for name in FIELDS if name in builder.names)
    return CompiledKey(text, names, run, tree.body, _cost(tree.body))


def _cost(root: ast.AST) -> int:
    parts = sum(isinstance(node, ast.expr) for node in ast.walk(root))
    chained = sum(len(node.comparators) - 1 for node in ast.walk(root) if isinstance(node, ast.Compare))
    return parts + chained


def _check_depth(root: ast.AST, text: str) -> None:
    """Refuse nesting past MAX_DEPTH, pointing at the deepest node that has a place in the text (a name's
    load context, say, has none)."""
    stack = [(root, 1, root)]
    while stack:
        node, depth, placed = stack.pop()
        if depth > MAX_DEPTH:
            raise _refuse("policy_key.too_deep", placed, text, limit=MAX_DEPTH)
        stack.extend((child, depth + 1, child if hasattr(child, "lineno") else placed)
                     for child in ast.iter_child_nodes(node))


class _Builder:
    """Turns a checked node into (closure over a values mapping, "number" | "text")."""

    def __init__(self, text: str):
        self.text = text
        self.names: set[str] = set()

    def refuse(self, code: str, node: ast.AST, **params) -> PolicyKeyError:
        return _refuse(code, node, self.text, **params)

    def number(self, node: ast.AST) -> Callable:
        run, kind = self.build(node)
        if kind != "number":
            raise self.refuse("policy_key.text", node, limit=MAX_TEXT_CONSTANT)
        return run

    def build(self, node: ast.AST) -> tuple[Callable, str]:
        method = getattr(self, f"_{type(node).__name__}", None)
        if isinstance(node, ast.Attribute):
            raise self.refuse("policy_key.attribute", node)
        if method is None:
            raise self.refuse("policy_key.construct", node)
        return method(node)

    def _Constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, bool):
            value = float(value)
            return (lambda v: value), "number"
        if isinstance(value, (int, float)):
            if not abs(value) <= MAX_CONSTANT:
                raise self.refuse("policy_key.constant", node, limit=f"{MAX_CONSTANT:.0e}")
            value = float(value)
            return (lambda v: value), "number"
        if isinstance(value, str) and len(value) <= MAX_TEXT_CONSTANT:
            return (lambda v: value), "text"
        if isinstance(value, (str, bytes)):
            raise self.refuse("policy_key.text", node, limit=MAX_TEXT_CONSTANT)
        if isinstance(value, complex):
            raise self.refuse("policy_key.constant", node, limit=f"{MAX_CONSTANT:.0e}")
        raise self.refuse("policy_key.construct", node)  # None, ...

    def _Name(self, node: ast.Name):
        name = node.id
        if name in CONSTANTS:
            value = CONSTANTS[name]
            return (lambda v: value), "number"
        if name not in FIELDS and name in FUNCTIONS:
            raise self.refuse("policy_key.unknown_function", node, name=name, fields=", ".join(FIELDS))
        if name not in FIELDS:
            raise self.refuse("policy_key.unknown_name", node, name=name, fields=", ".join(FIELDS))
        self.names.add(name)
        return (lambda v: v[name]), "text" if name in TEXT_FIELDS else "number"

    def _UnaryOp(self, node: ast.UnaryOp):
        operand = self.number(node.operand)
        if isinstance(node.op, ast.USub):
            return (lambda v: -operand(v)), "number"
        if isinstance(node.op, ast.UAdd):
            return operand, "number"
        if isinstance(node.op, ast.Not):
            return (lambda v: float(not operand(v))), "number"
        raise self.refuse("policy_key.construct", node)  # ~x: bit operations on floats make no sense

    def _BinOp(self, node: ast.BinOp):
        op = _BINARY.get(type(node.op))
        if op is None:
            raise self.refuse("policy_key.construct", node)
        left, right = self.number(node.left), self.number(node.right)
        if isinstance(node.op, ast.Pow):
            exponent = node.right
            if isinstance(exponent, ast.UnaryOp) and isinstance(exponent.op, (ast.USub, ast.UAdd)):
                exponent = exponent.operand
            if not (isinstance(exponent, ast.Constant) and abs(float(exponent.value)) <= MAX_EXPONENT):
                raise self.refuse("policy_key.exponent", node, limit=MAX_EXPONENT)
        if not isinstance(node.op, _RISKY):
            return (lambda v: op(left(v), right(v))), "number"

        def risky(v):
            try:
                return op(left(v), right(v))
            except ZeroDivisionError:
                raise _Fault(node, "policy_key.division_by_zero") from None
            except (OverflowError, ValueError, TypeError):  # (-8) ** 0.5 is complex in Python: refused too
                raise _Fault(node, "policy_key.not_a_number") from None
        return _real(risky, node), "number"

    def _BoolOp(self, node: ast.BoolOp):
        parts = [self.number(value) for value in node.values]
        if isinstance(node.op, ast.And):
            return (lambda v: float(all(part(v) for part in parts))), "number"
        return (lambda v: float(any(part(v) for part in parts))), "number"

    def _Compare(self, node: ast.Compare):
        built = [self.build(part) for part in (node.left, *node.comparators)]
        kinds = {kind for _, kind in built}
        ops = []
        for op in node.ops:
            fn = _COMPARE.get(type(op))
            if fn is None:
                raise self.refuse("policy_key.construct", node, limit=MAX_TEXT_CONSTANT)
            if "text" in kinds and fn not in (operator.eq, operator.ne):
                raise self.refuse("policy_key.text", node, limit=MAX_TEXT_CONSTANT)
            ops.append(fn)
        if len(kinds) > 1:
            raise self.refuse("policy_key.text", node, limit=MAX_TEXT_CONSTANT)
        runs = [run for run, _ in built]
        pairs = list(zip(ops, runs[:-1], runs[1:]))
        return (lambda v: float(all(op(a(v), b(v)) for op, a, b in pairs))), "number"

    def _IfExp(self, node: ast.IfExp):
        test, body, orelse = self.number(node.test), self.number(node.body), self.number(node.orelse)
        return (lambda v: body(v) if test(v) else orelse(v)), "number"

    def _Call(self, node: ast.Call):
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
            raise self.refuse("policy_key.call", node, functions=", ".join(FUNCTIONS))
        fn, low, high = FUNCTIONS[func.id]
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args) or not low <= len(node.args) <= high:
            raise self.refuse("policy_key.call_args", node, name=func.id, low=low, high=high, n=len(node.args))
        args = [self.number(a) for a in node.args]

        def call(v):
            try:
                return fn(*(a(v) for a in args))
            except ValueError:  # log(0), sqrt(-1)
                raise _Fault(node, "policy_key.math_domain") from None
        return (_real(call, node) if func.id in ("log", "sqrt") else call), "number"


def _real(run: Callable, node: ast.AST) -> Callable:
    """A result that must stay a real number (Python's float ** float can be complex)."""
    def checked(v):
        result = run(v)
        if isinstance(result, complex):
            raise _Fault(node, "policy_key.not_a_number")
        return result
    return checked
