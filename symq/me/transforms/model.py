r"""A transform declared by its formula: Laplace-Stieltjes transform, generating function, MGF.

A researcher states the transform a paper prints, e.g. the Pollaczek-Khinchine waiting-time
transform or an Erlang service law, as text in the transform variable and the parameters.
:class:`Transform` parses it by the safe formula parser (:func:`symq.core.formula.parse_formula`:
a whitelisted syntax tree, never ``eval``), keeps it exact in sympy and checks that it is the
transform of a probability law:

* ``kind="lst"``: :math:`F^*(s) = E[e^{-sX}]` of a law on :math:`[0, \infty)` (an atom at 0
  allowed), with :math:`F^*(0) = 1` (as a limit: P-K forms are 0/0 there);
* ``kind="mgf"``: :math:`M(\theta) = E[e^{\theta X}] = F^*(-\theta)` of such a law;
* ``kind="pgf"``: :math:`P(z) = E[z^N]` of a law on :math:`\{0, 1, \dots\}`, with
  :math:`P(1) = 1` and every coefficient in :math:`[0, 1]`.

Moments come from :mod:`symq.me.transforms.moments`, densities and distribution functions from
:mod:`symq.me.transforms.inversion`, transforms built from others (P-K, convolution, mixture)
from :mod:`symq.me.transforms.operations`.

Examples
--------
>>> erlang = Transform("(mu/(mu + s))**2", parameters=("mu",))
>>> erlang
Transform(lst: mu**2/(mu + s)**2; parameters mu)
>>> erlang.bind({"mu": 2}).expr
4/(s + 2)**2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from symq.core.compiler import compile as compile_exprs
from symq.core.display import MarkdownDisplay, markdown
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.formula import parse_formula

__all__ = ["Transform", "KINDS", "VARIABLES", "NotATransform", "exact_value"]

#: The transform kinds and their variable.
KINDS = ("lst", "mgf", "pgf")
VARIABLES = {"lst": "s", "mgf": "theta", "pgf": "z"}
#: The coefficients of a PGF checked to lie in [0, 1].
PGF_CHECKED = 16
#: Where each kind equals one: the LST and the MGF at 0, the PGF at 1.
_ANCHOR = {"lst": 0, "mgf": 0, "pgf": 1}
_WHAT = {"lst": "Laplace-Stieltjes transform E[exp(-s X)]", "mgf": "moment generating "
         "function E[exp(theta X)]", "pgf": "probability generating function E[z^N]"}


class NotATransform(InvalidParameter):
    """The formula is not the transform of a probability law (named, with the failed check)."""


class Transform(MarkdownDisplay):
    r"""The transform of a probability law, exact in its variable and its parameters.

    Parameters
    ----------
    formula : str or sympy expression
        The transform in its variable (``s`` for an LST, ``theta`` for an MGF, ``z`` for a
        PGF) and the parameters: ``"(1 - rho)*s/(s - lam + lam*mu/(mu + s))"``.
    kind : {"lst", "mgf", "pgf"}
        What the formula is (module docstring).
    parameters : sequence of str
        The names it may use besides its variable (positive reals unless bound).
    name : str, optional
        The name errors use for the formula (default ``"transform"``).
    conditions : sequence of (sympy expression, str), optional
        Expressions in the parameters that must be positive for the formula to be a transform
        (``1 - lam*m1``: a stable queue), each with the name of what it states; checked at
        parameter values by :meth:`check` (:class:`~symq.core.errors.StabilityError`).

    Raises
    ------
    InvalidParameter
        An unknown kind, a parameter named like the variable, a formula that does not parse.
    NotATransform
        The formula does not equal one at its anchor (``F*(0)``, ``M(0)`` or ``P(1)``), when
        that is decided symbolically; with parameter values it is checked again by
        :meth:`bind`.
    """

    def __init__(self, formula: str | sp.Expr, kind: str = "lst",
                 parameters: Sequence[str] = (), name: str | None = None,
                 conditions: Sequence[tuple[sp.Expr, str]] = ()) -> None:
        if kind not in KINDS:
            raise InvalidParameter("kind", kind, "one of " + ", ".join(KINDS))
        self.kind = kind
        self.name = name or "transform"
        var = VARIABLES[kind]
        params = tuple(parameters)
        for p in params:
            if not isinstance(p, str) or not p.isidentifier():
                raise InvalidParameter("parameters", p, "names (letters, digits, _)")
            if p == var:
                raise InvalidParameter("parameters", p, f"names other than {var}, the "
                                       f"variable of a {kind}")
        self.parameters = params
        if isinstance(formula, str):
            expr = parse_formula(self.name, formula, (var, *params))
        elif isinstance(formula, sp.Basic):
            expr = self._adopt(formula, (var, *params))
        else:
            raise InvalidParameter(self.name, formula, "a formula (text or sympy expression)")
        self.expr: sp.Expr = expr
        self.variable: sp.Symbol = next((x for x in expr.free_symbols if x.name == var),
                                        sp.Symbol(var, positive=True))
        self.symbols = {x.name: x for x in expr.free_symbols}
        self.conditions = tuple((self._adopt(sp.sympify(c), params), str(text))
                                for c, text in conditions)
        self._anchor_value = self.value_at(_ANCHOR[kind])
        self._check_anchor()

    def _adopt(self, expr: sp.Basic, allowed: tuple[str, ...]) -> sp.Expr:
        unknown = sorted(x.name for x in expr.free_symbols if x.name not in allowed)
        if unknown:
            raise InvalidParameter(self.name, str(expr), "an expression in "
                                   + ", ".join(allowed), "unknown names: " + ", ".join(unknown))
        return sp.sympify(expr).xreplace({x: sp.Symbol(x.name, positive=True)
                                          for x in expr.free_symbols})

    def _check_anchor(self) -> None:
        anchor = _ANCHOR[self.kind]
        at = self._anchor_value
        # undecided, or depending on the parameters: checked again when they are bound
        if at is not None and at.is_number and (
                abs(complex(at) - 1) > 1e-12 if at.has(sp.Float) else sp.simplify(at - 1) != 0):
            raise NotATransform(self.name, str(self.expr), f"a {_WHAT[self.kind]} (equal to 1 "
                                f"at {VARIABLES[self.kind]} = {anchor})",
                                f"it is {at} there")

    def value_at(self, point: Any) -> sp.Expr | None:
        """The transform at ``point`` (a limit where the formula is 0/0), or None if sympy
        cannot decide it."""
        try:
            direct = self.expr.subs(self.variable, point)
            if direct.is_finite and not direct.has(sp.nan, sp.zoo):
                return sp.simplify(direct)
            return sp.limit(self.expr, self.variable, point)
        except (NotImplementedError, ValueError, TypeError):   # pragma: no cover - sympy
            return None

    @property
    def free_parameters(self) -> tuple[str, ...]:
        """The declared parameters the formula still uses."""
        return tuple(p for p in self.parameters if p in self.symbols)

    def check(self, values: Mapping[str, Any]) -> dict[str, float]:
        """Check parameter values (declared, finite reals, one for each parameter the formula
        uses) and the transform's value at its anchor there; the values as floats.

        Raises
        ------
        InvalidParameter
            A value for an undeclared name, a missing or non-finite value.
        NotATransform
            Not equal to one at its anchor at these values.
        StabilityError
            A declared condition fails at these values (an unstable queue).
        """
        numbers: dict[str, float] = {}
        for key, value in values.items():
            if key not in self.parameters:
                raise InvalidParameter(key, value, "a declared parameter: "
                                       + (", ".join(self.parameters) or "(none)"))
            numbers[key] = float(exact_value(key, value))
        for p in self.free_parameters:
            if p not in numbers:
                raise InvalidParameter(p, None, "a value (a parameter of the transform)")
        for condition, text in self.conditions:
            value = float(condition.xreplace({x: numbers[x.name]
                                              for x in condition.free_symbols}))
            if not value > 0:
                raise StabilityError(f"{text} fails at " + ", ".join(
                    f"{k}={v:g}" for k, v in numbers.items()) + f": {condition} = {value:.6g} "
                    "must be > 0")
        at = self._anchor_value
        if at is not None:
            used = tuple(x for x in at.free_symbols)
            value = complex(at.xreplace({x: numbers[x.name] for x in used}).evalf(15)) \
                if used else complex(at)
            if abs(value - 1) > 1e-12:
                raise NotATransform(self.name, str(self.expr), f"a {_WHAT[self.kind]} (equal "
                                    f"to 1 at {VARIABLES[self.kind]} = {_ANCHOR[self.kind]})",
                                    f"it is {value.real:.12g} there at " + ", ".join(
                                        f"{k}={v:g}" for k, v in numbers.items()))
        self._probe(numbers)
        return numbers

    def _probe(self, numbers: Mapping[str, float]) -> None:
        """Numerical checks of a transform of a probability law at parameter values.

        A PGF's first :data:`PGF_CHECKED` coefficients (by the discrete Cauchy integral on the
        circle of radius 1/2) lie in ``[0, 1]``; an LST (an MGF at ``theta = -s``) is real,
        in ``[0, 1]`` and nonincreasing on ``s > 0`` and bounded by 1 in the right half-plane
        (a pole there, or a value above 1, is not a transform)."""
        where = ", ".join(f"{k}={v:g}" for k, v in numbers.items())
        at = f" at {where}" if where else ""
        args = [numbers[p] for p in self.free_parameters]
        if self.kind == "pgf":
            fn = self._compiled(self.expr, self.variable)
            n = 4 * PGF_CHECKED
            z = 0.5 * np.exp(2j * np.pi * np.arange(n) / n)
            with np.errstate(all="ignore"):
                coeff = np.fft.fft(np.broadcast_to(fn.scalar(z, *args), z.shape)) / n
                coeff = (coeff / 0.5 ** np.arange(n)).real[:PGF_CHECKED]
            bad = np.flatnonzero(~np.isfinite(coeff) | (coeff < -1e-9) | (coeff > 1 + 1e-9))
            if bad.size:
                k = int(bad[0])
                raise NotATransform(self.name, str(self.expr), "a probability generating "
                                    "function (every coefficient a probability in [0, 1])",
                                    f"the coefficient of z^{k} is {coeff[k]:.6g}{at}")
            return
        lst = self.lst()
        s = next((x for x in lst.free_symbols if x.name == "s"), sp.Symbol("s", positive=True))
        fn = self._compiled(lst, s)
        real = 10.0 ** np.linspace(-3, 3, 25)
        plane = (np.array([1e-3, 0.1, 1.0, 10.0])[:, None]
                 + 1j * np.array([-50, -10, -2, -0.5, 0.5, 2, 10, 50])[None, :]).ravel()
        with np.errstate(all="ignore"):
            on_axis = np.broadcast_to(fn.scalar(real.astype(complex), *args), real.shape)
            off_axis = np.broadcast_to(fn.scalar(plane, *args), plane.shape)
        what = "a Laplace-Stieltjes transform of a law on [0, oo)"
        if not (np.all(np.isfinite(on_axis)) and np.all(np.isfinite(off_axis))):
            raise NotATransform(self.name, str(self.expr), what, "it is not finite in the "
                                f"right half-plane (a pole there){at}")
        values = on_axis.real
        if np.any(np.abs(on_axis.imag) > 1e-9) or values.min() < -1e-12 \
                or values.max() > 1 + 1e-9 or np.any(np.diff(values) > 1e-9):
            k = int(np.argmax((values < -1e-12) | (values > 1 + 1e-9)
                              | np.r_[False, np.diff(values) > 1e-9]))
            raise NotATransform(self.name, str(self.expr), what + " (real, in [0, 1] and "
                                "nonincreasing on s > 0)", f"it is {values[k]:.6g} at "
                                f"s={real[k]:.3g}{at}")
        big = np.abs(off_axis) > 1 + 1e-9
        if big.any():
            k = int(np.argmax(big))
            raise NotATransform(self.name, str(self.expr), what + " (|F(s)| <= 1 for "
                                "Re s > 0)", f"|F({plane[k]:.3g})| = {abs(off_axis[k]):.6g}{at}")

    def _compiled(self, expr: sp.Expr, variable: sp.Symbol) -> Any:
        used = tuple(self.symbols[p] for p in self.free_parameters)
        return compile_exprs(expr, (variable, *used), "numpy")

    def bind(self, values: Mapping[str, Any]) -> Transform:
        """The transform with parameter values substituted exactly (floats become the rational
        they are), checked again at its anchor.

        Raises
        ------
        InvalidParameter
            A value for an undeclared name, or a value that is not a finite real.
        NotATransform
            Not equal to one at its anchor at these values.
        StabilityError
            A declared condition fails at these values.
        """
        subs: dict[sp.Symbol, sp.Expr] = {}
        for key, value in values.items():
            if key not in self.parameters:
                raise InvalidParameter(key, value, "a declared parameter: "
                                       + (", ".join(self.parameters) or "(none)"))
            number = exact_value(key, value)
            if key in self.symbols:
                subs[self.symbols[key]] = number
        if all(p in values for p in self.free_parameters):
            self.check(values)          # the conditions and the anchor at the values
        return Transform(self.expr.xreplace(subs), self.kind,
                         tuple(p for p in self.parameters if p not in values), self.name,
                         tuple((c.xreplace(subs), text) for c, text in self.conditions))

    def lst(self) -> sp.Expr:
        """The Laplace-Stieltjes transform in ``s`` (an MGF at ``theta = -s``).

        Raises
        ------
        InvalidParameter
            A PGF (a law on the integers has probabilities, not a density to invert).
        """
        if self.kind == "lst":
            return self.expr
        if self.kind == "mgf":
            s = sp.Symbol("s", positive=True)
            return self.expr.xreplace({self.variable: -s})
        raise InvalidParameter("kind", self.kind, "lst or mgf for a density",
                               "a PGF gives probabilities: use probabilities()")

    def to_markdown(self) -> str:
        """The transform in LaTeX (Jupyter's display)."""
        return markdown(f"**Transform** ({_WHAT[self.kind]})",
                        [("parameters", ", ".join(self.parameters) or "none")],
                        [("", self.expr)])

    def __repr__(self) -> str:
        params = f"; parameters {', '.join(self.parameters)}" if self.parameters else ""
        return f"Transform({self.kind}: {self.expr}{params})"


def exact_value(name: str, value: Any) -> sp.Expr:
    """A parameter value as an exact sympy number (a float is the rational it is).

    Raises
    ------
    InvalidParameter
        Not a finite real number (named ``name``).
    """
    if isinstance(value, bool):
        raise InvalidParameter(name, value, "a finite real number")
    if isinstance(value, sp.Basic) and value.is_number and value.is_real:
        return sp.nsimplify(value) if value.is_Float else value
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, "a finite real number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise InvalidParameter(name, value, "a finite real number")
    if isinstance(value, int):
        return sp.Integer(value)
    return sp.Rational(number)
