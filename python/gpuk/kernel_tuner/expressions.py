"""Kernel Tuner's Python expression strings (restrictions, grid divisors, problem sizes, metrics)
in gpuk's expression language (docs/declared.md), or in Python where they cannot be translated
exactly.

Kernel Tuner evaluates a string with Python's ``eval`` after replacing each parameter's name by
its value (util.replace_param_occurrences); grid divisors and problem sizes are then truncated
with ``int()``. gpuk's language is integer arithmetic with C's truncating ``/``. A translation is
given only where both agree on every point: ``/`` only as the outermost operation of a value that
``int()`` truncates (``"block_size_x/32"``), never inside a restriction, where Python compares the
exact quotient. Anything else (``**``, a ``/`` deeper down, a function gpuk lacks) returns None,
and the caller evaluates the string in Python over the space instead (the same ``eval`` Kernel
Tuner makes).
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Dict, Iterable, Optional

from .._gpuk import ConfigError

_TOKEN = re.compile(r"([a-zA-Z0-9_]+)")

_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "/", ast.Mod: "%", ast.Div: "/"}
_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def replace_param_occurrences(string: str, params: Dict) -> str:
    """Each token of `string` that is a key of `params` replaced by its value (Kernel Tuner's rule)."""
    return "".join(str(params[p]) if p in params else p for p in _TOKEN.split(string))


def python_value(text: str) -> Callable[[Dict], object]:
    """`text` evaluated as Kernel Tuner evaluates it, for one point (a dict of names to values)."""
    try:
        code = compile(text, "<expression>", "eval")
    except SyntaxError as e:
        raise ConfigError(f"{text!r} is not a Python expression: {e.msg}") from None

    def value(point: Dict) -> object:
        try:
            return eval(code, {"__builtins__": {"min": min, "max": max, "int": int, "abs": abs}}, dict(point))
        except NameError as e:
            raise ConfigError(f"{text!r}: {e} (the names it may use: {', '.join(point)})") from None

    return value


class _Untranslatable(Exception):
    pass


class _Translator:
    """Python AST -> (gpuk text, C text). Names must be among `names`; integers only."""

    def __init__(self, names: Iterable[str], truncated: bool):
        self.names = set(names)
        self.truncated = truncated  # the whole value goes through int(): one outer `/` is exact

    def run(self, node: ast.AST, top: bool) -> tuple:
        if isinstance(node, ast.Expression):
            return self.run(node.body, top)
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
            return str(node.value), str(node.value)
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            return str(int(node.value)), str(int(node.value))
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise _Untranslatable(node.id)
            return node.id, node.id
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            if isinstance(node.op, ast.Div) and not (top and self.truncated):
                raise _Untranslatable("/")
            # `//` and `%`: Python floors, C truncates; the same for non-negative operands, which
            # sizes and block-size parameters are.
            a, ca = self.run(node.left, False)
            b, cb = self.run(node.right, False)
            op = _BIN[type(node.op)]
            return f"({a} {op} {b})", f"({ca} {op} {cb})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            a, ca = self.run(node.operand, False)
            return f"(0 - {a})", f"(-{ca})"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            a, ca = self.run(node.operand, False)
            return f"({a} == 0)", f"(!{ca})"
        if isinstance(node, ast.BoolOp):
            op, cop = ("&&", "&&") if isinstance(node.op, ast.And) else ("||", "||")
            parts = [self.run(v, False) for v in node.values]
            return "(" + f" {op} ".join(p[0] for p in parts) + ")", "(" + f" {cop} ".join(p[1] for p in parts) + ")"
        if isinstance(node, ast.Compare):
            terms = [node.left] + list(node.comparators)
            pieces, cpieces = [], []
            for left, op, right in zip(terms, node.ops, terms[1:]):
                if type(op) not in _CMP:
                    raise _Untranslatable(type(op).__name__)
                a, ca = self.run(left, False)
                b, cb = self.run(right, False)
                pieces.append(f"({a} {_CMP[type(op)]} {b})")
                cpieces.append(f"({ca} {_CMP[type(op)]} {cb})")
            return "(" + " && ".join(pieces) + ")", "(" + " && ".join(cpieces) + ")"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id == "int" and len(node.args) == 1:
                return self.run(node.args[0], top)
            if node.func.id in ("min", "max") and node.args:
                parts = [self.run(a, False) for a in node.args]
                c = parts[0][1]
                for p in parts[1:]:
                    c = f"(({c}) {'<' if node.func.id == 'min' else '>'} ({p[1]}) ? ({c}) : ({p[1]}))"
                return f"{node.func.id}(" + ", ".join(p[0] for p in parts) + ")", c
        raise _Untranslatable(type(node).__name__)


def translate(text: str, names: Iterable[str], truncated: bool = False) -> Optional[tuple]:
    """(gpuk expression, C expression) of a Kernel Tuner string over `names`, or None where the
    translation would not be exact. `truncated`: Kernel Tuner applies int() to the value."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ConfigError(f"{text!r} is not a Python expression: {e.msg}") from None
    try:
        return _Translator(names, truncated).run(tree, True)
    except _Untranslatable:
        return None
