"""Job-size laws: the one phase-type type, and the one conversion every domain uses.

A domain that takes job sizes (JSQ(d) mean field, attained service, dispatching, processor-sharing
farms) accepts one *job-size law* and converts it here, in one place:

* :func:`as_phase_type` gives a :class:`PhaseType` where the model needs a phase-type
  representation ``(alpha, A)`` (a cavity fixed point, a CTMC, a numba kernel of phases). It
  accepts a :class:`PhaseType`, a pair ``(alpha, A)``, or an :class:`~symq.me.ME` law that has a
  phase-type form (real poles and nonnegative series weights, Cumani's CF1), and refuses anything
  else with a message that says why;
* :func:`as_sampler` gives an object with ``sample(shape, rng=)`` and ``mean()`` where the model
  only needs to draw sizes (a simulator), and accepts in addition frozen scipy distributions
  (``scipy.stats.lognorm(0.8)``) and scipy's new-API distributions.

A phase-type law (Neuts 1981) is the absorption time of a Markov chain with initial law ``alpha``
and sub-generator ``A``: density ``alpha exp(A x) a`` with exit vector ``a = -A 1``, tail
``alpha exp(A x) 1``, moments ``m_k = k! alpha (-A)^{-k} 1``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from symq.core.errors import InvalidParameter, NumericalFailure
from symq.core.randomness import RngLike, as_generator
from symq.core.threads import limit_blas_threads

from .protocol import (
    Distribution,
    InfiniteMoment,
    _order,
    describe_law,
    distribution_markdown,
)

__all__ = ["PhaseType", "ScipyLaw", "describe_law", "validate_ph"]


def validate_ph(alpha: ArrayLike, A: ArrayLike, name: str = "sizes"
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Check a phase-type representation ``(alpha, A)`` and return it with its mean.

    Parameters
    ----------
    alpha : array_like, shape (m,)
        Initial phase probabilities: nonnegative, summing to 1 (no mass at zero).
    A : array_like, shape (m, m)
        Sub-generator: negative diagonal, nonnegative off-diagonal, nonpositive row sums,
        invertible.
    name : str
        The caller's name of the law (for messages).

    Returns
    -------
    alpha, A : numpy arrays (float64)
    mean : float
        :math:`E[S] = \\alpha (-A)^{-1} \\mathbf 1`.

    Raises
    ------
    InvalidParameter
        Naming the condition that fails.

    Examples
    --------
    >>> validate_ph([1.0], [[-2.0]])[2]
    0.5
    """
    try:
        a = np.asarray(alpha, dtype=float)
        T = np.asarray(A, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter(name, (alpha, A), "a pair (alpha, A) of real arrays") from None
    if a.ndim != 1 or a.size < 1:
        raise InvalidParameter("alpha", a, "a nonempty one-dimensional array")
    m = a.size
    if T.shape != (m, m):
        raise InvalidParameter("A", T, f"a square matrix of shape ({m}, {m}) matching alpha")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(T))):
        raise InvalidParameter(name, (a, T), "finite arrays")
    if np.any(a < 0) or abs(a.sum() - 1.0) > 1e-10:
        raise InvalidParameter("alpha", a, "nonnegative entries summing to 1")
    diag = np.diag(T)
    if np.any(diag >= 0):
        raise InvalidParameter("A", T, "a sub-generator with negative diagonal entries")
    off = T - np.diag(diag)
    if np.any(off < 0):
        raise InvalidParameter("A", T, "a sub-generator with nonnegative off-diagonal entries")
    if np.any(T.sum(axis=1) > 1e-12 * np.abs(diag)):
        raise InvalidParameter("A", T, "a sub-generator with nonpositive row sums")
    try:
        mean_vec = np.linalg.solve(-T, np.ones(m))
    except np.linalg.LinAlgError:
        raise InvalidParameter("A", T, "an invertible sub-generator",
                               "absorption must be certain") from None
    mean = float(a @ mean_vec)
    if not (math.isfinite(mean) and mean > 0) or np.linalg.cond(T) > 1e12:
        raise InvalidParameter("A", T, "an invertible sub-generator", "absorption must be certain")
    return a, T, mean


class PhaseType(Distribution):
    """A phase-type law ``PH(alpha, A)``: the absorption time of a finite Markov chain.

    Parameters
    ----------
    alpha : array_like, shape (m,)
        Initial phase probabilities (summing to 1).
    A : array_like, shape (m, m)
        Sub-generator (checked by :func:`validate_ph`).
    name : str, optional
        A label ("H2(scv=4)", "Erlang-3", ...).

    Notes
    -----
    ``alpha, A = law`` unpacks the representation, so code written for ``(alpha, A)`` pairs
    keeps working.

    Examples
    --------
    >>> law = PhaseType([1.0], [[-2.0]])
    >>> law.mean(), law.variance()
    (0.5, 0.25)
    """

    def __init__(self, alpha: ArrayLike, A: ArrayLike, name: str = "PH") -> None:
        self._set(*validate_ph(alpha, A), name)

    @classmethod
    def _validated(cls, alpha: NDArray[np.float64], A: NDArray[np.float64],
                   mean: float, name: str = "PH") -> PhaseType:
        """A law from a representation :func:`validate_ph` has already checked."""
        law = cls.__new__(cls)
        law._set(alpha, A, mean, name)
        return law

    def _set(self, a: NDArray[np.float64], T: NDArray[np.float64], mean: float,
             name: str) -> None:
        a.setflags(write=False)
        T.setflags(write=False)
        self.alpha: NDArray[np.float64] = a
        self.A: NDArray[np.float64] = T
        self.name = name
        self._mean = mean

    # -- representation -----------------------------------------------------------------------
    @property
    def order(self) -> int:
        """Number of phases."""
        return int(self.alpha.size)

    @property
    def exit_rates(self) -> NDArray[np.float64]:
        """The exit vector ``a = -A 1``."""
        return -self.A.sum(axis=1)

    def __iter__(self) -> Iterator[NDArray[np.float64]]:
        return iter((self.alpha, self.A))

    def phase_type(self) -> PhaseType:
        """The law itself (a phase-type law is its own phase-type form)."""
        return self

    @property
    def is_exponential(self) -> bool:
        """True for one phase (an exponential law)."""
        return self.order == 1

    @limit_blas_threads()   # one expm per point: small matrices (x56 with one BLAS thread)
    def partial_moment(self, order: int, x: ArrayLike) -> Any:
        r"""The partial moment :math:`E[X^k; X \le x]`, vectorised over ``x``.

        As the full moment less the tail
        :math:`E[X^k; X > x] = \alpha e^{Ax} \sum_{j=0}^{k} \frac{k!}{(k-j)!} x^{k-j}
        (-A)^{-j} \mathbf 1` (one ``expm`` per point); where that difference would lose more
        than six digits (``E[X^k; X <= x] < 1e-6 E[X^k]``, small ``x``) it is computed directly
        as :math:`k!\,\alpha \big[e^{Mx}\big]_{0,k+1} a`, the corner block of the exponential
        of the block bidiagonal matrix ``M`` with ``A`` on the first ``k + 1`` diagonal blocks,
        identities above them and a zero last block (Van Loan 1978), which has no cancellation.

        Examples
        --------
        >>> law = PhaseType([1.0], [[-1.0]])
        >>> round(float(law.partial_moment(1, 1.0)), 12)   # 1 - 2/e
        0.264241117657
        """
        import scipy.linalg

        order = _order(order)
        if order == 0:
            return self.cdf(x)
        points = np.asarray(x, dtype=float)
        a, T = self.alpha, self.A
        inv = np.linalg.inv(-T)
        ones = np.ones(a.size)
        if order == 1:
            full = float(a @ inv @ ones)
        elif order == 2:
            full = float(2 * a @ inv @ inv @ ones)
        else:
            row = a.copy()
            for _ in range(order):
                row = row @ inv
            full = math.factorial(order) * float(row.sum())

        def tail_vector(v: float) -> NDArray[np.float64]:
            if order == 1:
                return v * ones + inv @ ones
            if order == 2:
                return v * v * ones + 2 * v * inv @ ones + 2 * inv @ inv @ ones
            out, power = np.zeros(a.size), ones
            for j in range(order + 1):
                out += math.factorial(order) / math.factorial(order - j) * v ** (order - j) * power
                power = inv @ power
            return out

        flat = points.ravel()
        out = np.empty(flat.shape)
        for i, v in enumerate(flat):
            v = float(v)
            if math.isnan(v) or v <= 0.0 or math.isinf(v):
                out[i] = math.nan if math.isnan(v) else (full if v > 0 else 0.0)
                continue
            value = full - float(a @ scipy.linalg.expm(T * v) @ tail_vector(v))
            if value < 1e-6 * full:
                value = self._partial_directly(order, v)
            out[i] = value
        return out.reshape(points.shape)[()] if points.ndim == 0 else out.reshape(points.shape)

    def _partial_directly(self, order: int, x: float) -> float:
        """``E[X^k; X <= x] = k! alpha [exp(M x)]_{0,k+1} a`` (Van Loan's block exponential)."""
        import scipy.linalg

        m, blocks = self.order, order + 2
        M = np.zeros((blocks * m, blocks * m))
        for j in range(blocks - 1):
            M[j * m:(j + 1) * m, j * m:(j + 1) * m] = self.A
            M[j * m:(j + 1) * m, (j + 1) * m:(j + 2) * m] = np.eye(m)
        corner = scipy.linalg.expm(M * x)[:m, (blocks - 1) * m:]
        return math.factorial(order) * float(self.alpha @ corner @ self.exit_rates)

    def __repr__(self) -> str:
        return f"PhaseType(order={self.order}, mean={self._mean:.6g}, name={self.name!r})"

    def to_markdown(self) -> str:
        """The law as Markdown: mean, variance, SCV, support, and ``alpha`` and ``A`` in LaTeX."""
        import sympy as sp

        return distribution_markdown(
            self, f"**PhaseType** {self.name} ({self.order} phases)",
            [(r"$\alpha$", sp.Matrix([self.alpha.tolist()])), ("$A$", sp.Matrix(self.A.tolist()))])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PhaseType):
            return NotImplemented
        return bool(np.array_equal(self.alpha, other.alpha) and np.array_equal(self.A, other.A))

    def __hash__(self) -> int:
        return hash((self.alpha.tobytes(), self.A.tobytes()))

    # -- distribution verbs -------------------------------------------------------------------
    def _raw_moment(self, order: int) -> float:
        inv = np.linalg.inv(-self.A)
        row = self.alpha.copy()
        for _ in range(order):
            row = row @ inv
        return math.factorial(order) * float(row.sum())

    def mean(self) -> float:
        """``E[X] = alpha (-A)^{-1} 1``."""
        return self._mean

    def _each(self, x: ArrayLike, vector: NDArray[np.float64]) -> Any:
        import scipy.linalg

        points = np.asarray(x, dtype=float)
        flat = points.ravel()
        out = np.zeros(flat.shape)
        for i, v in enumerate(flat):
            if v >= 0:
                out[i] = float(self.alpha @ scipy.linalg.expm(self.A * v) @ vector)
        return out.reshape(points.shape)[()] if points.ndim == 0 else out.reshape(points.shape)

    def pdf(self, x: ArrayLike) -> Any:
        """Density ``alpha exp(A x) a`` (0 for ``x < 0``)."""
        return self._each(x, self.exit_rates)

    def ccdf(self, x: ArrayLike) -> Any:
        """Tail ``P(X > x) = alpha exp(A x) 1`` (1 for ``x < 0``)."""
        points = np.asarray(x, dtype=float)
        tail = self._each(points, np.ones(self.order))
        return np.where(points < 0, 1.0, tail)[()] if points.ndim == 0 else \
            np.where(points < 0, 1.0, tail)

    def cdf(self, x: ArrayLike) -> Any:
        """``P(X <= x) = 1 - alpha exp(A x) 1``."""
        return 1.0 - np.asarray(self.ccdf(x), dtype=float)

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        """Draw absorption times by running the chains (all samples advance together).

        Parameters
        ----------
        shape : int or tuple of int
            Shape of the returned array (``()``: one float).
        rng : None, int, SeedSequence or numpy Generator
            Randomness; the same seed gives the same sample.
        """
        generator = as_generator(rng)
        size = int(np.prod(shape)) if np.iterable(shape) else int(shape)
        alpha_cum, rates, jump_cum = self.jump_tables()
        m = self.order
        phase = np.minimum(np.searchsorted(alpha_cum, generator.random(size), side="right"), m - 1)
        total = np.zeros(size)
        alive = np.arange(size)
        every_phase_exits = not jump_cum[:, :m].any()   # a mixture of exponentials (H2, ...)
        while alive.size:
            current = phase[alive]
            total[alive] += generator.exponential(1.0, size=alive.size) / rates[current]
            if every_phase_exits:   # absorbed after one holding time: no jump to draw
                break
            u = generator.random(alive.size)
            nxt = (u[:, None] >= jump_cum[current]).sum(axis=1)
            phase[alive] = nxt
            alive = alive[nxt < m]
        out = total.reshape(shape if np.iterable(shape) else (size,))
        return float(out) if shape == () else out

    # -- tables for numba kernels -------------------------------------------------------------
    def jump_tables(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Cumulative initial law, holding rates and cumulative embedded jump law.

        Row ``i`` of the jump table is the cumulative law of the next phase after phase ``i``
        (columns ``0..m-1``) or absorption (column ``m``, where the row reaches exactly 1); a
        row that surely exits has zeros in its phase columns.
        """
        m = self.order
        rates = -np.diag(self.A).copy()
        P = self.A / rates[:, None]
        np.fill_diagonal(P, 0.0)
        P[P < 1e-15] = 0.0
        exit_ = np.clip(self.exit_rates / rates, 0.0, None)
        table = np.hstack([P, exit_[:, None]])
        table /= table.sum(axis=1, keepdims=True)
        jump_cum = np.cumsum(table, axis=1)
        jump_cum[:, -1] = 1.0
        sure_exit = table[:, :m].sum(axis=1) <= 0.0
        jump_cum[sure_exit, :m] = 0.0
        alpha_cum = np.cumsum(self.alpha)
        alpha_cum[-1] = 1.0
        return (np.ascontiguousarray(alpha_cum), np.ascontiguousarray(rates),
                np.ascontiguousarray(jump_cum))

    def uniformised_tables(self) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """Cumulative initial law, cumulative uniformised jump law and the uniformisation rate.

        With ``q = max_i -A_ii``, ``P = I + A/q`` plus the exit column ``a/q``: a phase change
        (possibly to itself) happens at the epochs of a Poisson process of rate ``q``.
        """
        m = self.order
        q = float(np.max(-np.diag(self.A)))
        P = np.eye(m) + self.A / q
        P[np.abs(P) < 1e-15] = 0.0
        exit_ = np.clip(self.exit_rates / q, 0.0, None)
        table = np.hstack([P, exit_[:, None]])
        table /= table.sum(axis=1, keepdims=True)
        trans_cum = np.cumsum(table, axis=1)
        trans_cum[:, -1] = 1.0
        alpha_cum = np.cumsum(self.alpha)
        alpha_cum[-1] = 1.0
        return np.ascontiguousarray(alpha_cum), np.ascontiguousarray(trans_cum), q


class ScipyLaw(Distribution):
    """A scipy distribution (frozen ``rv_continuous`` or new-API) seen through symq's verbs.

    Every verb computes through the scipy object ``dist`` (``pdf``, ``cdf``, ``sf``/``ccdf``,
    ``ppf``/``icdf``, moments, and samples from ``rvs``/``sample`` with the given generator, so
    the random stream is the scipy object's).  It has no phase-type form; its
    :meth:`partial_moment` is the checked quadrature of
    :meth:`~symq.laws.protocol.Distribution.partial_moment`.  The named laws of
    :mod:`symq.laws.continuous` are subclasses with closed forms.

    Parameters
    ----------
    dist : frozen scipy distribution or scipy new-API distribution
        The law.
    name : str
        The caller's parameter name, used in messages (a moment that is infinite, ...).

    Examples
    --------
    >>> from scipy import stats
    >>> law = ScipyLaw(stats.lognorm(0.5))
    >>> round(float(law.partial_moment(1, 1.0)), 9)   # E[X; X <= 1] = e^{1/8} Phi(-1/2)
    0.349618835
    """

    def __init__(self, dist: Any, name: str = "scipy") -> None:
        self.dist = dist
        self.name = name
        self._parameter = name
        self._frozen = hasattr(dist, "rvs")


    def __repr__(self) -> str:
        return f"ScipyLaw({describe_law(self.dist)})"

    def pdf(self, x: ArrayLike) -> Any:
        return self.dist.pdf(x)

    def cdf(self, x: ArrayLike) -> Any:
        return self.dist.cdf(x)

    def ccdf(self, x: ArrayLike) -> Any:
        return self.dist.sf(x) if self._frozen else self.dist.ccdf(x)

    def icdf(self, p: ArrayLike) -> Any:
        return self.dist.ppf(p) if self._frozen else self.dist.icdf(p)

    def support(self) -> tuple[float, float]:
        low, high = self.dist.support()
        return float(low), float(high)

    def _raw_moment(self, order: int) -> float:
        """``E[X^order]``: the first two from scipy's closed-form mean and variance where it
        has them (its quadrature of ``moment(2)`` fails near a Pareto shape of 2, giving inf);
        a value scipy computed with a quadrature warning is refused, not returned."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if self._frozen and order in (1, 2):
                mean, variance = (float(v) for v in self.dist.stats(moments="mv"))
                value = mean if order == 1 else variance + mean * mean
            else:
                value = float(self.dist.moment(order)) if self._frozen else \
                    float(self.dist.moment(order, kind="raw"))
        if caught:
            raise NumericalFailure(f"E[X^{order}] of {describe_law(self.dist)} could not be "
                                   f"computed reliably: {caught[0].category.__name__}: "
                                   f"{' '.join(str(caught[0].message).split())}")
        if not math.isfinite(value):
            raise InfiniteMoment(self._parameter, describe_law(self.dist), "a law with a finite "
                                 f"moment of order {order}", f"E[X^{order}] = {value}")
        return value

    def sample(self, shape: int | tuple[int, ...] = (), rng: RngLike = None) -> Any:
        generator = as_generator(rng)
        if self._frozen:
            return self.dist.rvs(size=shape if shape != () else None, random_state=generator)
        return self.dist.sample(shape, rng=generator)
