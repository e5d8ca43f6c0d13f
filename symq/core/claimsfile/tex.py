r"""Formulas in LaTeX in a claims file: the keys that hold them and the symbol maps.

A claim's ``tex`` key holds a formula or a relation as a paper prints it: with a relation
(``=``, ``\le``, ``\ge``, ``<``, ``>``, ``\to``) it stands for ``statement``; without one it
stands for ``formula`` and goes with ``reference``.  A ``let`` quantity or a ``[constants]``
entry may be a table ``{ tex = '...' }``.  TeX symbols are names of the claim by the file's
``[tex]`` table (``symbols = { '\lambda' = 'lam', 'E[T]' = 'ET' }``), updated by a claim's own
``tex_symbols``; see :mod:`symq.core.formula_tex` for the grammar and the default names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParameter
from ..formula_tex import check_symbol_map, parse_tex_formula, tex_has_relation, tex_shown
from .quantities import FileContext, Formula

__all__ = ["TEX_KEYS", "file_symbols", "claim_symbols", "tex_claim", "tex_quantity"]

#: The keys of a file's ``[tex]`` table.
TEX_KEYS = ("symbols",)


def file_symbols(table: Any) -> dict[str, str]:
    """The symbol map of a file's ``[tex]`` table (empty without one)."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise InvalidParameter("tex", table, "a table [tex] with symbols = { '\\lambda' = "
                               "'lam', ... }")
    unknown = [k for k in table if k not in TEX_KEYS]
    if unknown:
        raise InvalidParameter(f"tex.{unknown[0]}", table[unknown[0]], "one of the keys "
                               + ", ".join(TEX_KEYS), "unknown key")
    return check_symbol_map("tex.symbols", table.get("symbols", {}))


def claim_symbols(where: str, table: Mapping[str, Any], context: FileContext) -> dict[str, str]:
    """The file's symbol map updated by the claim's ``tex_symbols``."""
    own = table.get("tex_symbols")
    if own is None:
        return dict(context.tex_symbols)
    return {**context.tex_symbols, **check_symbol_map(f"{where}.tex_symbols", own)}


def tex_claim(where: str, table: Mapping[str, Any]) -> tuple[bool, str] | None:
    """The claim's ``tex``: (whether it is a relation, the TeX), or None without one."""
    if "tex" not in table:
        return None
    text = table["tex"]
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameter(f"{where}.tex", text, "a formula or a relation in LaTeX, e.g. "
                               "'\\frac{\\rho}{1-\\rho}'")
    for key in ("statement", "formula"):
        if key in table:
            raise InvalidParameter(f"{where}.{key}", table[key], "absent when tex is given",
                                   f"give tex or {key}, not both")
    relation = tex_has_relation(f"{where}.tex", text)
    if relation and "reference" in table:
        raise InvalidParameter(f"{where}.reference", table["reference"], "absent when tex "
                               "states a relation", "a tex formula without a relation goes "
                               "with reference; a relation compares its own sides")
    return relation, text


def tex_quantity(key: str, name: str, spec: Mapping[str, Any], names: tuple[str, ...],
                 symbols: Mapping[str, str], assumptions: dict[str, dict[str, bool]]
                 ) -> Formula:
    """A quantity ``{ tex = '...' }``: its formula, printed back in TeX."""
    unknown = [k for k in spec if k != "tex"]
    if unknown:
        raise InvalidParameter(f"{key}.{unknown[0]}", spec[unknown[0]], "absent: a TeX "
                               "quantity is the table { tex = '...' }", "unknown key")
    text = spec["tex"]
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameter(f"{key}.tex", text, "a formula in LaTeX")
    expr = parse_tex_formula(f"{key}.tex", text, names, symbols=symbols, sums=True,
                             assumptions=assumptions)
    return Formula(name, expr, tex_shown(text))
