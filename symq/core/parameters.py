"""Declared model parameters and their domains.

A :class:`Parameter` couples a sympy symbol (with the matching assumptions) to a
:class:`Domain` that validates numeric values and parses command-line text.  Models
declare their parameters once; the same declaration drives symbolic derivation
(``Parameter.symbol``), validation (``Parameter.validate``) and the CLI
(``Parameter.parse``).

Examples
--------
>>> rho = Parameter("rho", PositiveReal(), typical=0.5, description="total work rate")
>>> rho.validate(0.7)
0.7
>>> rho.validate(-1)
Traceback (most recent call last):
...
symq.core.errors.InvalidParameter: parameter rho=-1 must be a positive real number
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from .display import MarkdownDisplay
from .errors import MISSING, InvalidParameter
from .formula import parse_formula

__all__ = [
    "Domain",
    "PositiveReal",
    "NonNegativeReal",
    "Interval",
    "IntegerAtLeast",
    "PositiveVector",
    "RationalVector",
    "Choice",
    "Expression",
    "parse_formula",
    "Parameter",
    "validate_parameters",
    "real_value",
    "integer_value",
]


def _is_real_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def real_value(name: str, value: Any, domain: str, ok: Any = None, allow_inf: bool = False
               ) -> float:
    """``value`` as a float if it is a real number (not a bool), finite unless ``allow_inf``,
    and ``ok(value)`` holds; else :class:`InvalidParameter` naming ``name`` and ``domain``.

    The one check behind the keyword arguments of the solvers (domains there are conditions
    such as ``0 < beta < 1``, which :class:`Domain` objects do not cover).

    Examples
    --------
    >>> real_value("beta", 0.5, "a number in (0, 1)", lambda b: 0 < b < 1)
    0.5
    >>> real_value("beta", True, "a number in (0, 1)")
    Traceback (most recent call last):
    ...
    symq.core.errors.InvalidParameter: parameter beta=True must be a number in (0, 1)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.floating,
                                                                      np.integer)):
        raise InvalidParameter(name, value, domain)
    out = float(value)
    if math.isnan(out) or (math.isinf(out) and not allow_inf) or (ok is not None and not ok(out)):
        raise InvalidParameter(name, value, domain)
    return out


def integer_value(name: str, value: Any, minimum: int, reason: str = "") -> int:
    """``value`` as an int if it is an integer (an integral float is accepted) ``>= minimum``.

    Examples
    --------
    >>> integer_value("m", 2.0, 1)
    2
    """
    if isinstance(value, (float, np.floating)) and math.isfinite(float(value)) \
            and float(value).is_integer():
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < minimum:
        raise InvalidParameter(name, value, f"an integer >= {minimum}", reason)
    return int(value)


def plain_number_text(name: str, text: str, domain: str, whole: str | None = None) -> str:
    """``text`` if it is written with ASCII characters and no underscores, else InvalidParameter.

    Python's ``float`` and ``int`` read ``"0_5"`` as 5 and ``"\u0662"`` (Arabic-Indic two)
    as 2; a value typed by a user is taken only as it reads: digits 0-9, a sign, a point, an
    exponent.  ``whole``: the full text typed, when ``text`` is one entry of a vector.
    """
    shown = text if whole is None else whole
    if "_" in text:
        raise InvalidParameter(name, shown, domain, "write numbers without underscores")
    if not text.isascii():
        raise InvalidParameter(name, shown, domain,
                               "write numbers with the ASCII digits 0-9 only")
    return text


def split_entries(name: str, text: str, domain: str) -> list[str]:
    """The comma-separated entries of a vector typed as text; an empty entry is refused."""
    pieces = [piece.strip() for piece in text.split(",")]
    for index, piece in enumerate(pieces):
        if piece == "":
            where = "the vector is empty" if len(pieces) == 1 else f"entry {index} is empty"
            raise InvalidParameter(name, text, domain,
                                   f"{where}: write comma-separated numbers, e.g. 4,2,1")
        plain_number_text(name, piece, domain, whole=text)
    return pieces


class Domain(ABC):
    """The set of allowed values of a parameter."""

    #: sympy assumptions given to the parameter's symbol.
    assumptions: dict[str, bool] = {}

    @abstractmethod
    def describe(self) -> str:
        """Human-readable description used in error messages."""

    @abstractmethod
    def coerce(self, name: str, value: Any) -> Any:
        """Return ``value`` in canonical form, or raise :class:`InvalidParameter`."""

    def parse(self, name: str, text: str) -> Any:
        """Parse command-line text into a valid value."""
        plain_number_text(name, text, self.describe())
        try:
            value = float(text)
        except ValueError:
            raise InvalidParameter(name, text, self.describe(), "not a number") from None
        return self.coerce(name, value)

    def __str__(self) -> str:
        return self.describe()

    def as_data(self) -> dict[str, Any]:
        """The domain as data: ``kind`` (``positive_real``, ``interval``, ``choice``, ...), its
        fields (bounds, choices, lengths) and ``text``, the sentence error messages use."""
        kind = "".join(f"_{c.lower()}" if c.isupper() else c
                       for c in type(self).__name__).lstrip("_")
        out: dict[str, Any] = {"kind": kind}
        if dataclasses.is_dataclass(self):
            for f in dataclasses.fields(self):
                value = getattr(self, f.name)
                out[f.name] = list(value) if isinstance(value, tuple) else value
        out["text"] = self.describe()
        return out


def _real(name: str, value: Any, domain: Domain) -> float:
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise InvalidParameter(name, value, domain.describe(), "not a number")
        value = float(value)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
    if not _is_real_number(value):
        raise InvalidParameter(name, _brief(value), domain.describe(), "not a real number")
    try:
        finite = math.isfinite(float(value))
    except OverflowError:  # an int beyond the float range
        finite = False
    if not finite:
        raise InvalidParameter(name, _brief(value), domain.describe(), "not finite")
    return value


def _brief(value: Any) -> Any:
    """``value`` for an error message: huge integers and long reprs shortened."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return f"an integer of {len(str(abs(value)))} digits"
    text = repr(value)
    return value if len(text) <= 80 else text[:60] + "..."


@dataclass(frozen=True)
class PositiveReal(Domain):
    """Real numbers x > 0."""

    assumptions = {"positive": True, "real": True}

    def describe(self) -> str:
        return "a positive real number"

    def coerce(self, name: str, value: Any) -> Any:
        value = _real(name, value, self)
        if not value > 0:
            raise InvalidParameter(name, value, self.describe())
        return value


@dataclass(frozen=True)
class NonNegativeReal(Domain):
    """Real numbers x >= 0."""

    assumptions = {"nonnegative": True, "real": True}

    def describe(self) -> str:
        return "a nonnegative real number"

    def coerce(self, name: str, value: Any) -> Any:
        value = _real(name, value, self)
        if not value >= 0:
            raise InvalidParameter(name, value, self.describe())
        return value


@dataclass(frozen=True)
class Interval(Domain):
    """Real numbers in an interval; each end open or closed.

    Parameters
    ----------
    low, high : float
        End points (``-inf``/``inf`` allowed).
    left_open, right_open : bool
        Whether each end is excluded.
    """

    low: float
    high: float
    left_open: bool = False
    right_open: bool = False

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"empty interval [{self.low}, {self.high}]")

    @property
    def assumptions(self) -> dict[str, bool]:  # type: ignore[override]
        out = {"real": True}
        if self.low > 0 or (self.low == 0 and self.left_open):
            out["positive"] = True
        elif self.low >= 0:
            out["nonnegative"] = True
        return out

    def describe(self) -> str:
        left = "(" if self.left_open else "["
        right = ")" if self.right_open else "]"
        return f"a real number in {left}{self.low:g}, {self.high:g}{right}"

    def coerce(self, name: str, value: Any) -> Any:
        value = _real(name, value, self)
        below = value <= self.low if self.left_open else value < self.low
        above = value >= self.high if self.right_open else value > self.high
        if below or above:
            raise InvalidParameter(name, value, self.describe())
        return value


#: Integers beyond this are refused by :class:`IntegerAtLeast` (floats lose them; no count of
#: servers, phases or levels is that large).
_LARGEST_INTEGER = 2**53


@dataclass(frozen=True)
class IntegerAtLeast(Domain):
    """Integers ``minimum <= n <= maximum`` (``maximum`` defaults to 2**53)."""

    minimum: int = 1
    maximum: int | None = None

    @property
    def assumptions(self) -> dict[str, bool]:  # type: ignore[override]
        out = {"integer": True}
        if self.minimum >= 1:
            out["positive"] = True
        elif self.minimum >= 0:
            out["nonnegative"] = True
        return out

    def describe(self) -> str:
        if self.maximum is not None:
            return f"an integer in {self.minimum}..{self.maximum}"
        return f"an integer >= {self.minimum}"

    def coerce(self, name: str, value: Any) -> Any:
        if isinstance(value, (np.integer,)):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, sp.Integer):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameter(name, value, self.describe(), "not an integer")
        if value < self.minimum:
            raise InvalidParameter(name, value, self.describe())
        top = self.maximum if self.maximum is not None else _LARGEST_INTEGER
        if value > top:
            raise InvalidParameter(name, _brief(value), self.describe(), f"at most {top}")
        return value

    def parse(self, name: str, text: str) -> Any:
        if len(text.strip()) > 30:
            raise InvalidParameter(name, text[:30] + "...", self.describe(), "too large")
        plain_number_text(name, text, self.describe())
        try:
            value = int(text)
        except ValueError:
            # 1e15 or 2.0 written for an integer: exact, so taken when it is one
            try:
                exact = _exact_fraction(text)
            except (ValueError, ZeroDivisionError):
                exact = None
            if exact is None or exact.denominator != 1:
                raise InvalidParameter(name, text, self.describe(), "not an integer") from None
            top = self.maximum if self.maximum is not None else _LARGEST_INTEGER
            if exact > top:
                raise InvalidParameter(name, text, self.describe(), f"at most {top}") from None
            value = int(exact)
        return self.coerce(name, value)


@dataclass(frozen=True)
class PositiveVector(Domain):
    """Non-empty vectors of positive finite reals (returned as a float numpy array)."""

    min_length: int = 1

    assumptions = {"positive": True, "real": True}

    def describe(self) -> str:
        if self.min_length <= 1:
            return "a non-empty vector of positive real numbers"
        return f"a vector of at least {self.min_length} positive real numbers"

    def coerce(self, name: str, value: Any) -> Any:
        if isinstance(value, str):
            return self.parse(name, value)
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise InvalidParameter(name, _brief(value), self.describe(), "not numeric or not "
                                   "finite") from None
        if array.ndim == 0:
            array = array.reshape(1)
        if array.ndim != 1:
            raise InvalidParameter(name, value, self.describe(), f"has {array.ndim} dimensions")
        if array.size < self.min_length:
            raise InvalidParameter(name, value, self.describe(), f"has length {array.size}")
        if not np.all(np.isfinite(array)):
            raise InvalidParameter(name, value, self.describe(), "contains a non-finite entry")
        bad = np.flatnonzero(array <= 0)
        if bad.size:
            i = int(bad[0])
            raise InvalidParameter(
                name, value, self.describe(), f"entry {i} is {array[i]:g}"
            )
        return array

    def parse(self, name: str, text: str) -> Any:
        pieces = split_entries(name, text, self.describe())
        try:
            values = [float(p) for p in pieces]
        except ValueError:
            raise InvalidParameter(
                name, text, self.describe(), "write it as comma-separated numbers, e.g. 4,2,1"
            ) from None
        return self.coerce(name, values)


#: Text of an exact number: at most this many characters, and a decimal exponent of at most
#: this magnitude (``Fraction("1e100000000")`` would build a 330-million-bit integer).
_MAX_NUMBER_TEXT = 200
_MAX_DECIMAL_EXPONENT = 10_000


def _exact_fraction(text: str) -> Fraction:
    """``text`` (a decimal or p/q) as an exact Fraction, refusing sizes that would hang."""
    text = text.strip()
    if len(text) > _MAX_NUMBER_TEXT:
        raise ValueError("too long")
    mantissa, sep, exponent = text.lower().partition("e")
    if sep:
        try:
            if abs(int(exponent.split("/")[0])) > _MAX_DECIMAL_EXPONENT:
                raise ValueError("exponent too large")
        except ValueError:
            raise ValueError("bad exponent") from None
    return Fraction(text)


@dataclass(frozen=True)
class RationalVector(Domain):
    """Non-empty vectors of finite numbers kept exact: returned as a tuple of sympy Rationals.

    Text such as ``"1, 3/2, 0.1"`` is parsed exactly (``0.1`` is 1/10); binary floats are
    converted exactly.  With ``positive=True`` every entry must be > 0.
    """

    positive: bool = True
    min_length: int = 1

    def describe(self) -> str:
        kind = "positive numbers" if self.positive else "finite numbers"
        size = ("a non-empty vector" if self.min_length <= 1
                else f"a vector of at least {self.min_length}")
        return f"{size} of {kind} (decimals or fractions such as 2/3)"

    def _entry(self, name: str, value: Any, index: int, whole: Any) -> sp.Rational:
        try:
            if isinstance(value, str):
                q = sp.Rational(_exact_fraction(value))
            elif isinstance(value, sp.Rational):
                q = value
            elif isinstance(value, (int, Fraction, np.integer)) and not isinstance(value, bool):
                q = sp.Rational(Fraction(int(value)) if isinstance(value, np.integer) else value)
            elif isinstance(value, sp.Float):
                q = sp.Rational(value)
            elif _is_real_number(value) or isinstance(value, np.floating):
                if not math.isfinite(float(value)):
                    raise ValueError
                q = sp.Rational(Fraction(float(value)))
            else:
                q = sp.Rational(Fraction(str(value)))
        except (ValueError, TypeError, ZeroDivisionError):
            raise InvalidParameter(name, whole, self.describe(),
                                   f"entry {index} = {value!r} is not a finite number") from None
        if self.positive and not q > 0:
            raise InvalidParameter(name, whole, self.describe(), f"entry {index} is {value}")
        return q

    def coerce(self, name: str, value: Any) -> Any:
        if isinstance(value, str):
            return self.parse(name, value)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            value = [value]
        if len(value) < self.min_length:
            raise InvalidParameter(name, value, self.describe(), f"has length {len(value)}")
        return tuple(self._entry(name, v, i, value) for i, v in enumerate(value))

    def parse(self, name: str, text: str) -> Any:
        return self.coerce(name, split_entries(name, text, self.describe()))


@dataclass(frozen=True)
class Choice(Domain):
    """One of a finite set of names (case-insensitive)."""

    choices: tuple[str, ...]

    def describe(self) -> str:
        return "one of " + ", ".join(self.choices)

    def coerce(self, name: str, value: Any) -> Any:
        if isinstance(value, str):
            for choice in self.choices:
                if choice.lower() == value.lower():
                    return choice
        raise InvalidParameter(name, value, self.describe())

    def parse(self, name: str, text: str) -> Any:
        return self.coerce(name, text)


@dataclass(frozen=True)
class Expression(Domain):
    """A formula in the given symbols: text parsed by :func:`symq.core.formula.parse_formula`
    (a whitelisted syntax tree, never evaluated), a sympy expression or a finite number."""

    symbols: tuple[str, ...] = ("w",)

    def describe(self) -> str:
        return "an expression in " + ", ".join(self.symbols)

    def coerce(self, name: str, value: Any) -> Any:
        if isinstance(value, str):
            return parse_formula(name, value, self.symbols)
        if isinstance(value, sp.Expr):
            unknown = sorted(str(s) for s in value.free_symbols if str(s) not in self.symbols)
            if unknown:
                raise InvalidParameter(name, value, self.describe(),
                                       "unknown name " + ", ".join(unknown))
            if value.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
                raise InvalidParameter(name, value, self.describe(), "not finite")
            return value
        if _is_real_number(value):
            return sp.Float(_real(name, value, self))
        raise InvalidParameter(name, value, self.describe())

    def parse(self, name: str, text: str) -> Any:
        return parse_formula(name, text, self.symbols)


@dataclass(frozen=True)
class Parameter(MarkdownDisplay):
    """A declared model parameter.

    Parameters
    ----------
    name : str
        Name used in formulas, the CLI (``name=value``) and error messages.
    domain : Domain
        Allowed values.
    typical : object, optional
        A typical value, used by examples, ``symq list`` and claim samples.
    description : str
        One line saying what the parameter is.
    symbol_name : str, optional
        Name of the sympy symbol when it differs from ``name``.
    required : bool
        Whether a value must be given; an optional parameter takes ``default`` when omitted.
    default : object
        Value of an optional parameter when omitted (``None`` means "decided by the model").
    """

    name: str
    domain: Domain
    typical: Any = None
    description: str = ""
    symbol_name: str | None = field(default=None, compare=False)
    required: bool = True
    default: Any = None

    @property
    def symbol(self) -> sp.Symbol:
        """The sympy symbol of this parameter, carrying the domain's assumptions."""
        return sp.Symbol(self.symbol_name or self.name, **self.domain.assumptions)

    def indexed(self) -> sp.IndexedBase:
        """The parameter as an indexed base (for vector parameters: ``C[j]``)."""
        return sp.IndexedBase(self.symbol_name or self.name, **self.domain.assumptions)

    def to_markdown(self) -> str:
        """The parameter as Markdown: one row of :func:`~symq.core.display.parameters_table`
        (Jupyter shows it as Markdown and as HTML: :class:`~symq.core.display.MarkdownDisplay`)."""
        from .display import parameters_table

        return "\n".join([f"**Parameter** `{self.name}`", "", *parameters_table([self])])

    def validate(self, value: Any) -> Any:
        """Return the value in canonical form or raise :class:`InvalidParameter`."""
        return self.domain.coerce(self.name, value)

    def parse(self, text: str) -> Any:
        """Parse command-line text (``"4,2,1"``, ``"0.5"``) into a valid value."""
        return self.domain.parse(self.name, text)

    def as_data(self) -> dict[str, Any]:
        """The parameter as data (``symq list --json``): name, structured domain
        (:meth:`Domain.as_data`), required, default, typical, description, and the sentence
        :meth:`__str__` prints."""
        from .result import to_jsonable

        return {"name": self.name, "domain": to_jsonable(self.domain.as_data()),
                "required": self.required, "default": to_jsonable(self.default),
                "typical": to_jsonable(self.typical), "description": self.description,
                "text": str(self)}

    def __str__(self) -> str:
        text = f"{self.name}: {self.domain.describe()}"
        if self.description:
            text += f" — {self.description}"
        if self.typical is not None:
            typical = self.typical
            if isinstance(typical, (list, tuple, np.ndarray)):
                typical = ",".join(f"{v:g}" for v in np.asarray(typical, dtype=float))
            text += f" (typical {typical})"
        return text


def validate_parameters(
    parameters: tuple[Parameter, ...] | list[Parameter],
    values: Mapping[str, Any],
    *,
    use_typical: bool = False,
) -> dict[str, Any]:
    """Validate a mapping of values against declared parameters.

    Parameters
    ----------
    parameters : sequence of Parameter
        The declaration.
    values : mapping
        Values by parameter name.
    use_typical : bool
        Fill missing values with the typical value instead of raising.

    Returns
    -------
    dict
        Canonical values by name, in declaration order.

    Raises
    ------
    InvalidParameter
        For an unknown name, a missing value or a value outside its domain.
    """
    declared = {p.name: p for p in parameters}
    for name in values:
        if name not in declared:
            raise InvalidParameter(
                name, values[name], "one of the declared parameters " + ", ".join(declared),
                "unknown parameter",
            )
    out: dict[str, Any] = {}
    for p in parameters:
        if p.name in values and not (values[p.name] is None and not p.required):
            out[p.name] = p.validate(values[p.name])
        elif use_typical and p.typical is not None:
            out[p.name] = p.validate(p.typical)
        elif not p.required:
            out[p.name] = p.default if p.default is None else p.validate(p.default)
        else:
            raise InvalidParameter(p.name, MISSING, p.domain.describe())
    return out
