"""A condition parser that cannot run code: guards such as ``n < K and m > 0``.

A condition is the guard of a jump of a Markov chain, or an event whose probability a model
reports.  Its text is parsed by Python's :mod:`ast`; the only nodes accepted are ``and``,
``or``, ``not``, comparisons ``< <= > >= == !=`` (chains such as ``0 < n < K`` mean
``0 < n and n < K``), the constants ``true`` and ``false``, and parentheses.  Each side of a
comparison is an arithmetic formula read by :func:`symq.core.formula.parse_formula` (its
whitelist, its cost bounds), so a condition can call ``min``, ``max`` and the other functions of
:data:`symq.core.formula.FUNCTIONS`, and nothing else.  The text is never given to ``eval``,
``exec``, ``sympify`` or ``parse_expr``; its length and its number of syntax-tree nodes are
bounded.

The variables of a condition are real sympy symbols (``{"real": True}``; a caller may pass other
assumptions), so that the same names parsed by :func:`~symq.core.formula.parse_formula` with the
same assumptions are the same symbols.

Examples
--------
>>> parse_condition("guard", "n < K and m > 0", ("n", "m", "K"))
(m > 0) & (n < K)
>>> parse_condition("guard", "0 < n <= 3", ("n",))
(n <= 3) & (0 < n)
>>> parse_condition("guard", "true", ("n",))
True
>>> parse_condition("guard", "__import__('os')", ("n",))
Traceback (most recent call last):
...
symq.core.errors.InvalidParameter: parameter guard="__import__('os')" must be a condition in n
(a comparison such as n < 3, joined by and / or / not, or true / false; a call of __import__
is not a condition)
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import sympy as sp
from sympy.logic.boolalg import Boolean

from .errors import InvalidParameter
from .formula import MAX_LENGTH, MAX_NODES, parse_formula

__all__ = ["parse_condition", "CONDITION_WORDS", "MAX_CONDITION_LENGTH",
           "MAX_CONDITION_NODES", "is_condition_text"]

#: Longest condition accepted, in characters.
MAX_CONDITION_LENGTH = MAX_LENGTH
#: Most syntax-tree nodes of a condition accepted (all its comparisons together).
MAX_CONDITION_NODES = MAX_NODES
#: Words of the condition language besides the formula's: ``and or not true false``.
CONDITION_WORDS = ("and", "or", "not", "true", "false")

_COMPARE: dict[type, Any] = {
    ast.Lt: sp.StrictLessThan, ast.LtE: sp.LessThan, ast.Gt: sp.StrictGreaterThan,
    ast.GtE: sp.GreaterThan, ast.Eq: sp.Eq, ast.NotEq: sp.Ne,
}
_CONSTANTS = {"true": sp.true, "false": sp.false, "True": sp.true, "False": sp.false}
_HINT = "a comparison such as {example}, joined by and / or / not, or true / false"


class _Reject(Exception):
    """Why the text is not a condition (turned into InvalidParameter by parse_condition)."""


def _kind(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        func = node.func.id if isinstance(node.func, ast.Name) else "an expression"
        return f"a call of {func}"
    if isinstance(node, ast.Name):
        return f"the bare name {node.id}"
    if isinstance(node, ast.Constant):
        return f"the bare value {node.value!r}"
    if isinstance(node, ast.Attribute):
        return f"attribute access (.{node.attr})"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return "arithmetic (a formula)"
    return type(node).__name__


def is_condition_text(text: str) -> bool:
    """Whether ``text`` reads as a condition (a comparison, ``and``/``or``/``not``, ``true``
    or ``false`` at its top level) rather than as an arithmetic formula.

    Only the syntax is looked at; nothing is evaluated.  Text that does not parse is not a
    condition (the formula parser then reports the syntax error).

    Examples
    --------
    >>> is_condition_text("n == K"), is_condition_text("n + 1")
    (True, False)
    """
    if not isinstance(text, str) or len(text) > MAX_CONDITION_LENGTH:
        return False
    try:
        body = ast.parse(text.replace("^", "**").strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.Not):
        return True
    return isinstance(body, (ast.Compare, ast.BoolOp)) or (
        isinstance(body, ast.Name) and body.id in _CONSTANTS) or (
        isinstance(body, ast.Constant) and isinstance(body.value, bool))


def parse_condition(name: str, text: str | bool, symbols: Sequence[str], *,
                    assumptions: Mapping[str, Mapping[str, bool]] | None = None) -> Boolean:
    """Parse ``text`` into a sympy Boolean in ``symbols`` only.

    Parameters
    ----------
    name : str
        The parameter as the user typed it (named in error messages), e.g. ``"jumps[0].guard"``.
    text : str
        The condition: comparisons joined by ``and``, ``or``, ``not`` (parentheses allowed),
        or ``true`` / ``false``.  Each side of a comparison is a formula of
        :func:`~symq.core.formula.parse_formula`.
    symbols : sequence of str
        The names it may use.
    assumptions : mapping, optional
        sympy assumptions per symbol name (default ``{"real": True}`` for each).

    Returns
    -------
    sympy.logic.boolalg.Boolean
        ``sympy.true``, ``sympy.false``, a relational, or ``And``/``Or``/``Not`` of them.

    Raises
    ------
    InvalidParameter
        Empty, too long or not printable text, a syntax error, a node outside the condition
        language (a bare number or name, arithmetic at the top level, attributes, calls other
        than those of a formula side, lambda, ...), more than :data:`MAX_CONDITION_NODES` nodes,
        or a side that :func:`~symq.core.formula.parse_formula` refuses (its reason is given).

    Examples
    --------
    >>> parse_condition("g", "not (n == 0) or m >= c", ("n", "m", "c"))
    (m >= c) | Ne(n, 0)
    >>> parse_condition("g", "n < x", ("n",))
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidParameter: parameter g='n < x' must be a condition in n
    (in the side x: unknown name x; names allowed: n, pi, E)
    """
    symbols = tuple(symbols)
    domain = ("a condition in " + ", ".join(symbols)) if symbols else "a constant condition"
    if isinstance(text, bool):
        return sp.true if text else sp.false
    if not isinstance(text, str):
        raise InvalidParameter(name, text, domain, "not a string")
    shown = text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"
    if not text.strip():
        raise InvalidParameter(name, shown, domain, "empty condition; write true to allow "
                               "every state")
    if len(text) > MAX_CONDITION_LENGTH:
        raise InvalidParameter(name, shown, domain,
                               f"longer than {MAX_CONDITION_LENGTH} characters")
    text = " ".join(text.split()) if any(c in text for c in "\n\r\t") else text
    if not text.isprintable():
        raise InvalidParameter(name, shown, domain, "contains a control character")
    try:
        tree = ast.parse(text.replace("^", "**").strip(), mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise InvalidParameter(name, shown, domain, f"syntax error{where}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise InvalidParameter(name, shown, domain, f"cannot parse it: {exc}") from None
    try:
        count = sum(1 for _ in ast.walk(tree))
    except RecursionError:  # pragma: no cover - bounded by the length already
        count = MAX_CONDITION_NODES + 1
    if count > MAX_CONDITION_NODES:
        raise InvalidParameter(name, shown, domain, f"more than {MAX_CONDITION_NODES} terms")
    chosen = {s: dict(assumptions.get(s, {"real": True})) if assumptions else {"real": True}
              for s in symbols}
    example = f"{symbols[0]} < 3" if symbols else "1 < 3"
    try:
        return _Builder(name, symbols, chosen).build(tree.body)
    except _Reject as exc:
        reason = str(exc)
        if reason.endswith("is not a condition"):
            reason = _HINT.format(example=example) + "; " + reason
        raise InvalidParameter(name, shown, domain, reason) from None
    except RecursionError:
        raise InvalidParameter(name, shown, domain, "nested too deeply") from None


class _Builder:
    """Builds a sympy Boolean from a condition's syntax tree."""

    def __init__(self, name: str, symbols: tuple[str, ...],
                 assumptions: dict[str, dict[str, bool]]) -> None:
        self.name = name
        self.symbols = symbols
        self.assumptions = assumptions

    def build(self, node: ast.AST) -> Boolean:
        if isinstance(node, ast.BoolOp):
            parts = [self.build(value) for value in node.values]
            return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return sp.Not(self.build(node.operand))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return sp.true if node.value else sp.false
        raise _Reject(f"{_kind(node)} is not a condition")

    def _compare(self, node: ast.Compare) -> Boolean:
        sides = [self._side(side) for side in (node.left, *node.comparators)]
        relations = []
        for (op, left, right) in zip(node.ops, sides[:-1], sides[1:], strict=True):
            relation = _COMPARE.get(type(op))
            if relation is None:
                word = "is" if isinstance(op, (ast.Is, ast.IsNot)) else "in"
                raise _Reject(f"the operator {word} is not allowed (compare with == or !=)")
            relations.append(relation(left, right))
        return sp.And(*relations)

    def _side(self, node: ast.AST) -> sp.Expr:
        if isinstance(node, (ast.Compare, ast.BoolOp)) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            raise _Reject("a condition inside a comparison side is not allowed")
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            raise _Reject(f"{node.id} cannot be compared (write the condition itself)")
        side = ast.unparse(node)
        try:
            return parse_formula(self.name, side, self.symbols,
                                 assumptions=self.assumptions)
        except InvalidParameter as exc:
            raise _Reject(f"in the side {side}: {exc.reason}") from None
