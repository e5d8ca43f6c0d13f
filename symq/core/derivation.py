"""Derivation records: ordered, named steps that print as Markdown with LaTeX.

A model's ``derive`` methods append :class:`Step` objects (a title, a sympy object or
``Eq``, one line of prose) to a :class:`Derivation`.  ``Derivation.to_markdown()`` renders
every formula with sympy's LaTeX printer as :func:`symq.core.printing.latex` sets it up (``lam``
as :math:`\\lambda`, ``u(k)`` as :math:`u_k`); no TeX is written by hand.  A formula that sympy
evaluated to a truth value (an ``Eq`` that simplified to ``True``) is not a formula: it is stated
in words instead of printing a bare ``True``; build relations with ``evaluate=False``
(:func:`equations`) to show them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .display import MarkdownDisplay
from .printing import latex

__all__ = ["Derivation", "Step"]

#: What a step says for a formula sympy evaluated to ``True`` (or ``False``).
TRUTH = {True: "*sympy evaluates this relation to true: it holds identically.*",
         False: "*sympy evaluates this relation to false.*"}


def _is_truth(obj: Any) -> bool:
    return isinstance(obj, (bool, sp.logic.boolalg.BooleanAtom))


@dataclass(frozen=True)
class Step(MarkdownDisplay):
    """One named step of a derivation.

    Parameters
    ----------
    title : str
        Short name of the step ("KKT conditions").
    content : sympy object, or a sequence of them
        The equation(s) or expression(s) established by the step.
    prose : str
        One line saying what the step does and where it comes from.
    """

    title: str
    content: Any
    prose: str = ""

    def formulas(self) -> list[Any]:
        """The step's formulas as a list."""
        if isinstance(self.content, (list, tuple)):
            return list(self.content)
        return [self.content]

    def to_markdown(self, number: int | None = None) -> str:
        """The step as Markdown: a level-3 heading (numbered when ``number`` is given), the prose,
        each formula as a ``$$ ... $$`` block."""
        head = f"### {number}. {self.title}" if number is not None else f"### {self.title}"
        lines = [head, ""]
        if self.prose:
            lines += [self.prose, ""]
        for formula in self.formulas():
            if _is_truth(formula):
                lines += [TRUTH[bool(formula)], ""]
            else:
                lines += ["$$", latex(formula), "$$", ""]
        return "\n".join(lines)


@dataclass
class Derivation(MarkdownDisplay):
    """An ordered record of derivation steps.

    Parameters
    ----------
    title : str
        Title of the derivation.
    source : str
        The paper (and section) it follows.
    summary : str
        A paragraph put before the steps.
    """

    title: str
    source: str = ""
    summary: str = ""
    steps: list[Step] = field(default_factory=list)

    def add(self, title: str, content: Any, prose: str = "") -> Any:
        """Append a step and return its content (so derivations read as code)."""
        self.steps.append(Step(title, content, prose))
        return content

    def section(self, heading: str) -> None:
        """Start a new section (rendered as a level-2 heading)."""
        self.steps.append(Step(heading, [], "\x00section"))

    def __iter__(self) -> Iterator[Step]:
        return (s for s in self.steps if s.prose != "\x00section")

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getitem__(self, title: str) -> Step:
        for step in self:
            if step.title == title:
                return step
        raise KeyError(f"no step titled {title!r}; steps: {[s.title for s in self]}")

    def to_markdown(self) -> str:
        """Render as Markdown, formulas as ``$$ ... $$`` blocks produced by ``sympy.latex``."""
        lines = [f"# {self.title}", ""]
        if self.source:
            lines += [f"*Source:* {self.source}", ""]
        if self.summary:
            lines += [self.summary, ""]
        number = 0
        for step in self.steps:
            if step.prose == "\x00section":
                lines += [f"## {step.title}", ""]
                continue
            number += 1
            lines.append(step.to_markdown(number))
        return "\n".join(lines).rstrip() + "\n"

    def __str__(self) -> str:
        return self.to_markdown()


def equations(pairs: Sequence[tuple[Any, Any]]) -> list[sp.Eq]:
    """Build a list of ``Eq(lhs, rhs)`` without letting sympy evaluate them to booleans."""
    return [sp.Eq(lhs, rhs, evaluate=False) for lhs, rhs in pairs]
