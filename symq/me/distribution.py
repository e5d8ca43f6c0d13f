r"""Matrix-exponential (ME) distributions as objects with the verbs of scipy's distribution API.

An ME distribution (Angius, Horváth, Halawani, Barukab, Ahmad, Balbo, "Constructing Matrix
Exponential Distributions by Moments and Behavior around Zero", Math. Probl. Eng. 2014, ID 610907;
derivations/me-pade.md, steps 1-3) has

.. math::

    f(t) = \alpha e^{At}(-A)\mathbf 1, \qquad F(t) = 1 - \alpha e^{At}\mathbf 1, \qquad
    f^*(s) = \frac{N(s)}{D(s)}.

The defining datum of :class:`ME` is the exact rational transform
:class:`~symq.me.transform.RationalLST`; everything else is derived from it, and :class:`ME` is a
thin facade over the modules that compute it:

* **exact** (sympy rationals): moments, central moments, derivatives at zero, the transform, an
  exact :math:`(\alpha, A)` realisation (:mod:`symq.me.realisation`);
* **high precision** (mpmath, :mod:`symq.me.polynomials`): poles with multiplicities detected
  exactly from the square-free factorisation of :math:`D`, the Hermite (partial-fraction)
  coefficients :math:`f^*(s) = \sum_k \sum_j c_{k,j} (s - p_k)^{-(j+1)}`, so that
  :math:`f(t) = \sum_k \sum_j c_{k,j} t^j e^{p_k t} / j!`, and :meth:`ME.pdf_mp` etc.;
* **float64, vectorised** (:mod:`symq.me.evaluation`, :mod:`symq.me.sampling`): :meth:`ME.pdf`,
  :meth:`ME.cdf`, :meth:`ME.ccdf`, :meth:`ME.icdf`, :meth:`ME.iccdf`, :meth:`ME.sample`, and
  :meth:`ME.to_scipy` through :func:`scipy.stats.make_distribution`.

An ME *function* is not always a density: ``pdf`` and ``cdf`` return its values, negative ones
included (the Padé fits of the paper may be invalid); ``icdf``, ``iccdf``, ``sample`` and
``to_scipy`` first check that it behaves as a distribution (:meth:`ME.check_density`) and raise
:class:`NotADistribution` otherwise.  Certified nonnegativity is the job of
:mod:`symq.me.certification`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from symq.core import printing
from symq.core.errors import InvalidParameter
from symq.core.randomness import RngLike
from symq.laws import Distribution, PhaseType, distribution_markdown

from ._context import to_global, working_dps
from .evaluation import NotADistribution, mp_values, numeric
from .phase_type import to_phase_type
from .polynomials import hermite_form, pole_data
from .realisation import MASS_TOL, is_float_like, matrix_of_transform, transform_of_matrix
from .sampling import inverse, sample, sampling_table
from .transform import RationalLST, s, to_rational

__all__ = ["ME", "NotADistribution"]


class ME(Distribution):
    r"""A matrix-exponential distribution given by its exact rational LST :math:`N(s)/D(s)`.

    Immutable; equality and hashing are by the exact (normalised) transform.  Implements the
    distribution protocol of :class:`symq.laws.Distribution` (``pdf``, ``cdf``,
    ``ccdf``, ``icdf``, ``moment(order, kind)``, ``mean()``, ``variance()``,
    ``sample(shape, rng=)``, ``support()``, ``to_scipy()``), with exact sympy values for the
    moments and float64 arrays for the values of the functions.

    Parameters
    ----------
    lst : RationalLST
        The Laplace-Stieltjes transform (strictly proper, :math:`N(0) = D(0)`, reduced).

    Notes
    -----
    Convention (Angius, Horváth et al. 2014; derivations/me-pade.md, step 1):
    :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`, :math:`F(t) = 1 - \alpha e^{At}\mathbf 1`, no atom at
    zero.  An object of this class is an ME *function* with total mass one; it is a distribution
    only if :math:`f \ge 0`, which :meth:`check_density` tests numerically and
    :mod:`symq.me.certification` certifies.

    Examples
    --------
    >>> X = ME.erlang(2, 3)
    >>> X.mean(), X.variance()
    (2/3, 2/9)
    >>> float(X.cdf(1.0))  # 1 - 4 e^{-3}
    0.8008517265285442
    """

    __slots__ = ("_lst", "_cache")

    def __init__(self, lst: RationalLST) -> None:
        if not isinstance(lst, RationalLST):
            raise InvalidParameter("lst", lst, "a RationalLST (use ME.from_transform or "
                                   "ME.from_expr for coefficients or expressions)")
        object.__setattr__(self, "_lst", lst)
        object.__setattr__(self, "_cache", {})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ME objects are immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (ME, (self._lst,))

    # ================================================================== constructors
    @classmethod
    def from_transform(cls, numerator: Iterable[Any], denominator: Iterable[Any]) -> ME:
        """From ascending coefficient lists of :math:`N` and :math:`D` (exact or float).

        Floats are converted exactly (:func:`~symq.me.transform.to_rational`); the fraction is
        reduced and :math:`D` made monic.

        Raises
        ------
        InvalidParameter
            See :meth:`RationalLST.from_coefficients`.
        """
        return cls(RationalLST.from_coefficients(numerator, denominator))

    @classmethod
    def from_expr(cls, expr: Any) -> ME:
        """From a sympy rational function of ``s`` such as ``2/((s + 1)*(s + 2))``."""
        return cls(RationalLST.from_expr(expr))

    @classmethod
    def from_matrix(cls, alpha: Any, A: Any) -> ME:
        r"""From a representation :math:`(\alpha, A)`, :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`.

        Computed exactly: :math:`D(s) = \det(sI - A)` and
        :math:`N(s) = \alpha\,\mathrm{adj}(sI - A)(-A)\mathbf 1`, with the adjugate from the
        Faddeev-LeVerrier recursion :math:`M_{n-1} = I`, :math:`M_{k-1} = A M_k + a_k I`; the
        fraction is then cancelled to its minimal form, so the order may be lower than the size
        of ``A`` (:func:`symq.me.realisation.transform_of_matrix`).

        Parameters
        ----------
        alpha : array_like or sympy.Matrix
            Initial row vector, shape ``(n,)`` or ``(1, n)``.  Must sum to 1: an atom at zero is
            not supported.  Float entries are converted exactly; if any entry is a float the sum
            may differ from 1 by at most 1e-12 and ``alpha`` is then divided by its exact sum.
        A : array_like or sympy.Matrix
            Square ``(n, n)`` invertible matrix.

        Raises
        ------
        InvalidParameter
            Wrong shapes, non-finite entries, ``sum(alpha) != 1`` or singular ``A``.
        """
        return cls(transform_of_matrix(alpha, A))

    @classmethod
    def from_moments(cls, moments: Iterable[Any], order: int | None = None,
                     zero: Iterable[Any] = (), *, dps: int = 50) -> ME:
        """Classical or two-point Padé fit to moments (and values at zero).

        Delegates to :func:`symq.me.pade.pade_fit`; the result is not certified, so call
        :func:`symq.me.certify` (or use :func:`symq.me.fit`) before using it as a density.
        """
        from .pade import pade_fit

        return cls(pade_fit(list(moments), order=order, zero=list(zero), dps=dps).lst)

    @classmethod
    def exponential(cls, rate: Any) -> ME:
        r"""Exponential distribution, :math:`f^*(s) = \lambda/(s + \lambda)`."""
        lam = cls._positive(rate, "rate")
        return cls(RationalLST.from_coefficients([lam], [lam, 1]))

    @classmethod
    def erlang(cls, k: int, rate: Any) -> ME:
        r"""Erlang distribution with ``k`` phases, :math:`f^*(s) = (\lambda/(s + \lambda))^k`."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameter("k", k, "an integer >= 1")
        lam = cls._positive(rate, "rate")
        den = sp.Poly((s + lam) ** int(k), s)
        return cls(RationalLST.from_coefficients([lam ** int(k)], reversed(den.all_coeffs())))

    @classmethod
    def hyperexponential(cls, probs: Sequence[Any], rates: Sequence[Any]) -> ME:
        r"""Mixture of exponentials, :math:`f^*(s) = \sum_i p_i \lambda_i/(s + \lambda_i)`.

        ``probs`` must be nonnegative and sum to 1 (exactly, or within 1e-12 for float input,
        which is then renormalised exactly); ``rates`` positive.  Equal rates merge.
        """
        probs, rates = list(probs), list(rates)
        if len(probs) == 0 or len(probs) != len(rates):
            raise InvalidParameter("probs", probs, f"a non-empty vector of the same length as "
                                   f"rates ({len(rates)})")
        p = [to_rational(x, "probs") for x in probs]
        if any(x < 0 for x in p):
            raise InvalidParameter("probs", probs, "nonnegative probabilities")
        lam = [cls._positive(r, "rates") for r in rates]
        total = sum(p, sp.Integer(0))
        if total != 1:
            if any(is_float_like(x) for x in probs) and abs(total - 1) <= MASS_TOL:
                p = [x / total for x in p]
            else:
                raise InvalidParameter("probs", probs, "probabilities summing to 1",
                                       f"sum = {total}")
        D = sp.Poly(1, s, domain=sp.QQ)
        for r in lam:
            D = D * sp.Poly(s + r, s, domain=sp.QQ)
        N = sp.Poly(0, s, domain=sp.QQ)
        for pi, r in zip(p, lam):
            N = N + sp.Poly(pi * r, s, domain=sp.QQ) * sp.div(D, sp.Poly(s + r, s, domain=sp.QQ))[0]
        return cls(RationalLST.from_coefficients(reversed(N.all_coeffs()),
                                                 reversed(D.all_coeffs())))

    @staticmethod
    def _positive(value: Any, name: str) -> sp.Rational:
        q = to_rational(value, name)
        if not q > 0:
            raise InvalidParameter(name, value, "a positive number")
        return q

    # ================================================================== exact properties
    @property
    def lst(self) -> RationalLST:
        """The defining exact transform."""
        return self._lst

    @property
    def order(self) -> int:
        """The order n = deg D of the (minimal) transform."""
        return self._lst.order

    @property
    def numerator(self) -> tuple[sp.Rational, ...]:
        """Ascending coefficients :math:`b_0, b_1, \\dots` of :math:`N(s)`."""
        return self._lst.numerator

    @property
    def denominator(self) -> tuple[sp.Rational, ...]:
        """Ascending coefficients :math:`a_0, \\dots, a_{n-1}, 1` of :math:`D(s)` (monic)."""
        return self._lst.denominator

    @property
    def transform(self) -> sp.Expr:
        """:math:`f^*(s) = N(s)/D(s)` as a sympy expression in ``s``."""
        return self._lst.expr

    def moments(self, K: int) -> list[sp.Rational]:
        """Exact raw moments :math:`m_1, \\dots, m_K` (:math:`m_k = k!\\,r_k`;
        derivations/me-pade.md, step 2)."""
        self._check_order(K, "K")
        return self._lst.moments(int(K)) if int(K) > 0 else []

    def moment(self, order: int = 1, kind: str = "raw") -> sp.Expr:
        r"""Exact moment, following ``scipy.stats`` (new API) semantics for ``kind``.

        Parameters
        ----------
        order : int
            Nonnegative integer.
        kind : {"raw", "central", "standardized"}
            ``raw`` :math:`E[X^k]`; ``central`` :math:`E[(X - \mu)^k]`; ``standardized``
            :math:`E[(X - \mu)^k]/\sigma^k` (so order 3 is the skewness and order 4 the
            non-excess kurtosis).

        Returns
        -------
        sympy.Expr
            A Rational for ``raw`` and ``central``; for ``standardized`` an exact algebraic
            number (a Rational for even orders).  Moments are the coefficients of the transform
            at 0; for an ME function that is not a density but has all poles in Re < 0 they are
            still :math:`\int_0^\infty t^k f(t)\,dt`.
        """
        self._check_order(order, "order")
        k = int(order)
        if kind not in ("raw", "central", "standardized"):
            raise InvalidParameter("kind", kind, "one of 'raw', 'central', 'standardized'")
        m = [sp.Integer(1)] + (self._lst.moments(k) if k > 0 else [])
        if kind == "raw":
            return m[k]
        mu = m[1] if k >= 1 else self.mean()
        central = sum((sp.binomial(k, i) * m[i] * (-mu) ** (k - i) for i in range(k + 1)),
                      sp.Integer(0))
        if kind == "central":
            return sp.Rational(central)
        var = self.variance()
        if var <= 0:
            raise NotADistribution(f"variance {var} <= 0: the standardized moment is undefined "
                                   "(the ME function is not a density)")
        return sp.Rational(central) / var ** sp.Rational(k, 2)

    @staticmethod
    def _check_order(order: Any, name: str) -> None:
        ok = (isinstance(order, (int, np.integer)) and not isinstance(order, bool)) or (
            isinstance(order, (float, np.floating)) and float(order).is_integer())
        if not ok or order < 0:
            raise InvalidParameter(name, order, "a nonnegative integer")

    def _raw_moment(self, order: int) -> sp.Rational:
        """Exact :math:`E[X^k] = m_k` for ``order = k >= 1`` (the :class:`Distribution` hook)."""
        return self._lst.moments(int(order))[int(order) - 1]

    def mean(self) -> sp.Rational:
        """Exact mean :math:`m_1` (a sympy Rational)."""
        return self._lst.moments(1)[0]

    def variance(self) -> sp.Rational:
        """Exact variance :math:`m_2 - m_1^2` (a sympy Rational)."""
        m1, m2 = self._lst.moments(2)
        return m2 - m1**2

    @property
    def scv(self) -> sp.Rational:
        """Exact squared coefficient of variation :math:`\\sigma^2/m_1^2`."""
        return self.variance() / self.mean()**2

    def derivatives_at_zero(self, J: int) -> list[sp.Rational]:
        r"""Exact :math:`f(0), \dots, f^{(J-1)}(0)` (expansion at infinity, derivations/me-pade.md,
        step 3)."""
        self._check_order(J, "J")
        return self._lst.derivatives_at_zero(int(J))

    # ================================================================== poles and residues
    def poles(self, dps: int = 30) -> list[tuple[mpmath.mpf | mpmath.mpc, int]]:
        """Poles of :math:`f^*` (roots of :math:`D`) with their exact multiplicities.

        Multiplicities come from the square-free factorisation of :math:`D` over the rationals
        (``sympy.sqf_list``), never from numerical clustering; each square-free factor is solved
        with ``mpmath.polyroots``.

        Parameters
        ----------
        dps : int
            Decimal digits of the returned values.

        Returns
        -------
        list of (mpf or mpc, int)
            Sorted by decreasing real part (dominant pole first); real poles are ``mpf``,
            complex poles come in exact conjugate pairs (positive imaginary part first).
        """
        self._check_dps(dps)
        data = pole_data(self._lst, self._cache, dps + 10)
        with working_dps(dps):
            return to_global([(+p, mult) for p, mult, _ in data])

    @staticmethod
    @staticmethod
    def _check_dps(dps: Any) -> None:
        if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or dps < 5:
            raise InvalidParameter("dps", dps, "an integer >= 5")

    def residues(self, dps: int = 30) -> list[tuple[mpmath.mpf | mpmath.mpc,
                                                    tuple[mpmath.mpf | mpmath.mpc, ...]]]:
        r"""Hermite partial-fraction coefficients :math:`c_{k,j}` of each pole.

        :math:`f^*(s) = \sum_k \sum_{j=0}^{\mu_k - 1} c_{k,j}/(s - p_k)^{j+1}`, hence
        :math:`f(t) = \sum_k \sum_j c_{k,j} t^j e^{p_k t}/j!`.  For a simple pole
        :math:`c_{k,0} = N(p_k)/D'(p_k)`; for a pole of multiplicity :math:`\mu` on the
        square-free factor :math:`P` (:math:`D = P^\mu R`), :math:`c_{k,j}` is the coefficient
        of :math:`h^{\mu-1-j}` of the power series
        :math:`N(p+h) / [(P(p+h)/h)^\mu R(p+h)]`, computed at ``dps + 15`` digits.

        Returns
        -------
        list of (pole, tuple of coefficients)
            In the order of :meth:`poles`; the tuple holds :math:`c_{k,0}, \dots, c_{k,\mu_k-1}`
            (mpf for real poles).
        """
        self._check_dps(dps)
        data = hermite_form(self._lst, self._cache, dps + 15)
        with working_dps(dps):
            return to_global([(+p, tuple(+x for x in c)) for p, _, c, _ in data])

    # ================================================================== float values
    def pdf(self, t: Any) -> Any:
        r"""Density :math:`f(t) = \alpha e^{At}(-A)\mathbf 1` (0 for t < 0), vectorised, float64.

        Values of the ME *function*: negative where the function is negative.  Accuracy: absolute
        error a few ulps of :math:`\sum_{k,j} |c_{k,j}| t^j e^{\Re p_k t}/j!` (a few ulps of
        :math:`f` itself when all terms have one sign); relative accuracy near ``t = 0`` from the
        Taylor series with exact derivatives.  NaN input raises :class:`InvalidParameter`.
        """
        return numeric(self._lst, self._cache, t, "pdf")

    def cdf(self, t: Any) -> Any:
        r""":math:`F(t) = \int_0^t f` (0 for t < 0, 1 at +inf), vectorised, float64."""
        return numeric(self._lst, self._cache, t, "cdf")

    def ccdf(self, t: Any) -> Any:
        r""":math:`1 - F(t)`, with relative accuracy in the tail (Hermite form of the ccdf)."""
        return numeric(self._lst, self._cache, t, "ccdf")

    # ================================================================== high precision
    def _mp_vector(self, t: Any, what: str, dps: int) -> Any:
        self._check_dps(dps)
        return mp_values(self._lst, self._cache, t, what, dps)

    def pdf_mp(self, t: Any, dps: int = 50) -> Any:
        r"""The density at ``dps`` significant digits (mpmath), from the same Hermite form.

        ``t`` may be a number (exact sympy Rationals and strings are taken exactly) or a sequence
        (then a list is returned).  The working precision is raised automatically until the
        cancellation between terms costs fewer than the guard digits, so the result carries
        ``dps`` correct digits except within :math:`10^{-dps}` of an exact zero of :math:`f`.
        """
        return self._mp_vector(t, "pdf", dps)

    def cdf_mp(self, t: Any, dps: int = 50) -> Any:
        """:math:`F(t)` at ``dps`` digits; see :meth:`pdf_mp`."""
        return self._mp_vector(t, "cdf", dps)

    def ccdf_mp(self, t: Any, dps: int = 50) -> Any:
        """:math:`1 - F(t)` at ``dps`` digits; see :meth:`pdf_mp`."""
        return self._mp_vector(t, "ccdf", dps)

    # ================================================================== validity, inversion
    def check_density(self) -> None:
        """Check numerically that the ME function is a probability density; raise if not.

        Tests the necessary pole conditions (all poles in Re < 0, a real dominant pole with a
        positive leading coefficient: :func:`symq.me.evaluation.pole_problem`), then the sign
        of :math:`f` and the monotonicity of :math:`F` on the sampling grid (about 5000-70000
        points up to the time where :math:`1 - F \\le 10^{-16}`), each beyond its float
        round-off bound.
        This is a numerical check, not a certificate: see :mod:`symq.me.certification`.

        Raises
        ------
        NotADistribution
            Naming the failing condition (and a point t where f < 0).
        """
        sampling_table(self._lst, self._cache)

    def icdf(self, p: Any) -> Any:
        r"""Quantile :math:`F^{-1}(p)` for p in [0, 1], vectorised.

        A bracket from the sampling table (monotone cdf checked by :meth:`check_density`), then
        safeguarded Newton steps on :math:`F(t) = p` for :math:`p \le 1/2` and on
        :math:`\log \bar F(t) = \log(1 - p)` otherwise, to a few ulps in t.

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        return inverse(self._lst, self._cache, p, "p", upper=False)

    def iccdf(self, q: Any) -> Any:
        r"""Inverse of the ccdf, :math:`\bar F^{-1}(q)`: accurate for tiny tail probabilities q."""
        return inverse(self._lst, self._cache, q, "q", upper=True)

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        r"""Random variates by exact inversion of the cdf.

        With :math:`U` uniform on [0, 1) from :func:`symq.core.randomness.as_generator`
        (``rng``), returns :math:`F^{-1}(U)` for :math:`U < 1/2` and :math:`\bar F^{-1}(1 - U)`
        otherwise (both ends at full float resolution), solved by :meth:`icdf`/:meth:`iccdf` to
        a few ulps: the sample is the exact inversion of :math:`F` up to float64 rounding (no
        interpolation error).  The same seed gives the same sample.  Valid for any ME density, PH
        or not.

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        return sample(self._lst, self._cache, shape, rng)

    # ================================================================== realisations
    def to_matrix(self) -> tuple[sp.Matrix, sp.Matrix]:
        r"""An exact representation :math:`(\alpha, A)`, :math:`f(t) = \alpha e^{At}(-A)\mathbf 1`.

        Companion construction (:func:`symq.me.realisation.matrix_of_transform`): :math:`A_c`
        with ones on the superdiagonal and last row :math:`(-a_0, \dots, -a_{n-1})`,
        :math:`\beta = (b_0, \dots, b_{n-1})`, :math:`v = (-A_c)^{-1} e_n = e_1/a_0`,
        :math:`T = I + (v - \mathbf 1) e_1^T`, :math:`A = T^{-1} A_c T`, :math:`\alpha = \beta T`
        (so :math:`\alpha\mathbf 1 = 1`).
        Representations are not unique; compare transforms, not matrices.

        Returns
        -------
        (sympy.Matrix, sympy.Matrix)
            ``alpha`` of shape (1, n) and ``A`` of shape (n, n), exact rationals.
        """
        return matrix_of_transform(self._lst)

    def to_matrix_float(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`to_matrix` as float64 numpy arrays (``alpha`` of shape (n,), ``A`` (n, n))."""
        alpha, A = self.to_matrix()
        return (np.array([float(x) for x in alpha], dtype=float),
                np.array(A.tolist(), dtype=float))

    def to_scipy(self) -> Any:
        """A ``scipy.stats`` distribution (new infrastructure) built by ``make_distribution``.

        The shared path of :meth:`symq.laws.Distribution.to_scipy` (its
        ``ScipyAdapter``, plus this law's ``iccdf``:
        :class:`~symq.me.scipy_adapter.MEScipyAdapter`).  Its ``pdf``, ``cdf``, ``ccdf``,
        ``icdf``, ``iccdf``, ``moment`` and ``sample`` are this object's; scipy supplies
        everything else (``logpdf``, ``median``, ``entropy``, plots, shifting/scaling
        ``X * 2 + 1``).

        Raises
        ------
        NotADistribution
            If the ME function is not a density (see :meth:`check_density`).
        """
        if "scipy" not in self._cache:
            self.check_density()
            from scipy import stats

            from .scipy_adapter import MEScipyAdapter

            self._cache["scipy"] = stats.make_distribution(MEScipyAdapter(self))()
        return self._cache["scipy"]

    # ================================================================== dunder
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ME):
            return NotImplemented
        return self._lst == other._lst

    def __hash__(self) -> int:
        return hash(("ME", self._lst))

    def __repr__(self) -> str:
        """``ME(N(s)/D(s))`` with long coefficients (a fit from decimal data) shortened to 6
        significant digits (:func:`symq.core.printing.text`); the exact transform is
        :attr:`transform` (and :meth:`to_dict`)."""
        return f"ME({printing.text(self.transform)})"

    def to_dict(self) -> dict[str, Any]:
        """The exact coefficients as text, ``{"numerator": [...], "denominator": [...]}``
        (ascending powers of ``s``; :meth:`RationalLST.to_dict`)."""
        return self._lst.to_dict()

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle f^*(s) = {printing.latex(self.transform, digits=printing.DIGITS)}$"

    def to_markdown(self) -> str:
        """The law as Markdown: mean, variance, SCV, support and its transform in LaTeX."""
        return distribution_markdown(self, f"**ME** of order {self.order}",
                                     [("$f^*(s)$", self.transform)])

    def phase_type(self, dps: int = 30) -> PhaseType:
        """This law as a :class:`~symq.laws.PhaseType`: Cumani's series form CF1
        (:func:`symq.me.phase_type.to_phase_type`), which exists when every pole is real and every
        entry weight nonnegative (Cumani 1982).

        Raises
        ------
        InvalidParameter
            Complex poles or a negative entry weight: the law has no phase-type form of its order.
        """
        alpha, A = to_phase_type(self, dps)
        return PhaseType(alpha, A, name=f"PH of {self!r}")
