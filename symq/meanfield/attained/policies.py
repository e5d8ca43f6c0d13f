"""Attained-service dispatching policies as ranking scores ``xi(k, l)`` (Hellemans & Van Houdt).

A dispatcher probes ``d`` servers; each reports its queue length ``l`` (jobs present, the one in
service included) and the *age layer* ``k`` of its job in service: with layers of width
``delta`` and ``r = ceil(rep_max / delta)``, ``k = min(r + 1, max(1, ceil(age / delta)))`` and
the lower boundary of layer ``k`` is ``b_k = (k - 1) delta`` (the last layer is
``[r delta, inf)``).  A policy is a ranking score ``xi(k, l)`` of a *busy* server: the job goes
to the probed server with the smallest score, an idle server always wins, ties are broken
uniformly at random (T. Hellemans, B. Van Houdt, "Improved load balancing in large scale
systems using attained service time reporting", IEEE/ACM ToN 2021, arXiv 2011.08250; the
formulas of their ``general_functions/sorted_kl_indxs.m``).

The interface shared by the mean-field analysis (:mod:`~symq.meanfield.attained.cavity`) and
the finite-N simulator is :meth:`Policy.score_table`: a float64 array of shape ``(r + 1, B)``
with ``table[k - 1, l - 1] = xi(k, l)``.

Built-in policies (:func:`get_policy`, names case-insensitive, ``T`` the age threshold):

============  =====================================================================
name          score ``xi(k, l)``
============  =====================================================================
SQ            ``l``
SQ-RTB        ``(r + 1) l + k``  (shortest queue, ties to the least attained service)
SQ-RE         ``l + (B + 1) 1{b_k >= T}``
SQ-RTB-RE     ``(r + 2) l + k + (B + 1)(r + 2) 1{b_k >= T}``
LAS           ``k``
LAS-QTB       ``(B + 1) k + l``
RE            ``1{b_k >= T}``
LEW           ``E[X - b_k | X > b_k] + (l - 1) E[X]``  (least expected workload)
============  =====================================================================

Examples
--------
>>> import numpy as np
>>> table = get_policy("sq-rtb").score_table(np.array([0.0, 1.0, 2.0]), 2)
>>> table.tolist()  # r = 2: (r + 1) l + k
[[4.0, 7.0], [5.0, 8.0], [6.0, 9.0]]
>>> mine = Policy.from_score("half-LEW", lambda l, mrl, mean: mrl + 0.5 * (l - 1) * mean)
>>> mine.variables
('l', 'mrl', 'mean')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from symq.core.display import MarkdownDisplay, markdown
from symq.core.errors import InvalidParameter, UnknownName
from symq.core.parameters import integer_value, real_value
from symq.core.renamed import renamed_keywords
from symq.laws import as_phase_type

from ..sizes import PhaseTypeLaw

__all__ = [
    "Policy", "get_policy", "POLICY_NAMES", "SCORE_VARIABLES", "TIE_RTOL", "mean_residual_life",
]

#: the variables a score function may ask for (by parameter name), see :class:`Policy`.
SCORE_VARIABLES: tuple[str, ...] = ("k", "age", "l", "r", "B", "mrl", "mean")

#: sorted scores closer than this to their predecessor (relative to ``max(1, |score|)``) are
#: merged into exact ties by :meth:`Policy.score_table`, so that numerically equal scores (e.g.
#: LEW with exponential sizes, whose mean residual life is 1 up to rounding) tie exactly.  A
#: chain of such near-equal scores (LEW at ages where the mean residual life has converged)
#: becomes one group of ties.
TIE_RTOL = 1e-9

#: a layer counts as "old" (``b_k >= T``) when ``b_k >= T (1 - AGE_RTOL)``: ``(k-1) delta`` is
#: computed in floating point.
AGE_RTOL = 1e-12


# --------------------------------------------------------------------------------------------
# mean residual life of a phase-type law
# --------------------------------------------------------------------------------------------


@renamed_keywords(service="sizes")
def mean_residual_life(sizes: PhaseTypeLaw, a: ArrayLike) -> NDArray[np.float64]:
    """Mean residual life ``E[X - a | X > a]`` of a phase-type law ``PH(alpha, A)``.

    ``E[X - a | X > a] = alpha e^{A a} (-A)^{-1} 1 / (alpha e^{A a} 1)`` (Hellemans and
    Van Houdt, ``general_functions/E_cond.m``).  The row vector ``alpha e^{A a}`` is
    propagated over the sorted ages in steps ``h`` with ``h max_i |A_ii| <= 50`` and normalised
    after every step; since ``e^{A h} >= e^{diag(A) h}`` entrywise, each step shrinks its sum by
    at most ``e^{-50}``, so nothing underflows and no ``0/0`` occurs however large ``a`` is.
    Once the normalised vector stops changing (quasi-stationary law reached), larger ages
    reuse it.

    Parameters
    ----------
    sizes : PhaseType, (alpha, A) or ME with a phase-type form
        The job-size law (converted by :func:`symq.laws.as_phase_type`).
    a : array_like
        Ages, finite and ``>= 0``; any shape.

    Returns
    -------
    ndarray
        Same shape as ``a``; ``a = 0`` gives ``E[X]``.

    Raises
    ------
    InvalidParameter
        No phase-type form of ``sizes``, or ``a`` negative or not finite.

    Examples
    --------
    >>> float(mean_residual_life(([1.0], [[-2.0]]), 1e6))  # memoryless: 1/2 at every age
    0.5
    >>> from symq.laws import hyperexponential2
    >>> law = hyperexponential2(1.0, 10.0)
    >>> m = mean_residual_life(law, [0.0, 2.0, 1e4])
    >>> bool(abs(m[0] - 1) < 1e-12), bool(m[1] > 1), bool(abs(m[2] - 1 / -law.A[1, 1]) < 1e-9)
    (True, True, True)
    """
    ph = as_phase_type(sizes, "sizes")
    vec, T = ph.alpha, ph.A
    try:
        ages = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameter("a", a, "real ages >= 0") from None
    if not np.all(np.isfinite(ages)) or np.any(ages < 0):
        raise InvalidParameter("a", ages, "finite real ages >= 0")
    if ages.size == 0:
        return np.zeros(ages.shape)
    ones = np.ones(vec.size)
    h_vec = np.linalg.solve(-T, ones)  # (-A)^{-1} 1
    uniq, inverse = np.unique(ages.ravel(), return_inverse=True)
    gaps = np.diff(np.concatenate([[0.0], uniq]))
    rate = float(np.max(-np.diag(T)))
    hmax = 50.0 / rate
    nsteps = np.maximum(1, np.ceil(gaps / hmax)).astype(np.int64)
    nsteps[gaps == 0] = 0
    steps = np.where(nsteps > 0, gaps / np.maximum(nsteps, 1), 0.0)
    mats = scipy.linalg.expm(T[None, :, :] * steps[:, None, None])
    out = np.empty(uniq.size)
    v = vec / vec.sum()
    converged = False
    for i in range(uniq.size):
        if not converged:
            for _ in range(int(nsteps[i])):
                new = v @ mats[i]
                new = new / new.sum()
                if np.max(np.abs(new - v)) <= 1e-16:
                    converged = True
                    v = new
                    break
                v = new
        out[i] = float(v @ h_vec) / float(v.sum())
    return out[inverse].reshape(ages.shape)


# --------------------------------------------------------------------------------------------
# policies
# --------------------------------------------------------------------------------------------


def _merge_ties(table: NDArray[np.float64], rtol: float = TIE_RTOL) -> NDArray[np.float64]:
    """Replace scores within ``rtol`` (relative) of their sorted predecessor by one value."""
    flat = table.ravel()
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    scale = np.maximum(1.0, np.abs(s))
    new_group = np.concatenate([[True], np.diff(s) > rtol * scale[1:]])
    group_first = s[np.flatnonzero(new_group)]
    merged = np.empty_like(flat)
    merged[order] = group_first[np.cumsum(new_group) - 1]
    return merged.reshape(table.shape)


def _score_variables(func: Callable[..., Any], name: str) -> tuple[str, ...]:
    if not callable(func):
        raise InvalidParameter("score", func, "a callable score function",
                               f"the score of policy {name!r}")
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        raise InvalidParameter("score", func, "a callable with an inspectable signature") from None
    names: list[str] = []
    for p in params.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            allowed = ", ".join(SCORE_VARIABLES)
            raise InvalidParameter("score", func, "a function of named variables only",
                                   f"no *args/**kwargs; allowed names: {allowed}")
        if p.name not in SCORE_VARIABLES:
            if p.default is not inspect.Parameter.empty:
                continue  # a parameter with a default (e.g. a bound threshold) is left alone
            raise InvalidParameter("score", func, f"a function of {', '.join(SCORE_VARIABLES)}",
                                   f"unknown variable {p.name!r} in the score of policy {name!r}")
        names.append(p.name)
    return tuple(names)


@dataclass(frozen=True)
class Policy(MarkdownDisplay):
    """A dispatching policy given by a vectorised ranking score ``xi(k, l)`` of busy servers.

    The job goes to the probed server with the smallest score; idle servers always win (they
    are not part of the score); ties are broken uniformly at random.

    Parameters
    ----------
    name : str
        Display name.
    score : callable
        Vectorised score function.  It receives, **by parameter name**, any subset of

        * ``k``: age-layer index ``1..r+1``, array of shape ``(r+1, 1)``;
        * ``age``: lower boundary ``b_k = (k-1) delta`` of the layer, shape ``(r+1, 1)``;
        * ``l``: queue length ``1..B`` (jobs present, the one in service included), shape
          ``(1, B)``;
        * ``r``, ``B``: ints (``r + 1`` layers, queue lengths up to ``B``);
        * ``mrl``: mean residual life ``E[X - b_k | X > b_k]``, shape ``(r+1, 1)``;
        * ``mean``: ``E[X]`` (float);

        and returns an array broadcastable to ``(r+1, B)`` (or a scalar).  ``mrl`` and
        ``mean`` need the job-size law, i.e. ``service`` in :meth:`score_table`.
        Parameters with a default value and another name are not passed (use them to bind
        constants, e.g. a threshold).
    description : str, optional
        One line of explanation.

    Attributes
    ----------
    variables : tuple of str
        The variables the score function asks for (from its signature).

    Examples
    --------
    >>> import numpy as np
    >>> p = Policy("JSQ-then-youngest", lambda l, age: l + age / 1000.0)
    >>> p.score_table(np.array([0.0, 0.5]), 3).tolist()
    [[1.0, 2.0, 3.0], [1.0005, 2.0005, 3.0005]]
    """

    name: str
    score: Callable[..., Any]
    description: str = ""
    variables: tuple[str, ...] = field(init=False, repr=False)

    def to_markdown(self) -> str:
        """The policy as Markdown (Jupyter's display)."""
        return markdown(f"**Policy** {self.name}: the job joins the probed server of least score "
                        r"$\xi(k, l)$, idle servers first",
                        [("description", self.description or "none"),
                         ("score uses", ", ".join(self.variables))])

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidParameter("name", self.name, "a nonempty string", "the policy name")
        object.__setattr__(self, "variables", _score_variables(self.score, self.name))

    @classmethod
    def from_score(cls, name: str, score: Callable[..., Any], description: str = "") -> Policy:
        """A new policy from a score function alone (see the class docstring for the variables).

        Examples
        --------
        >>> import numpy as np
        >>> p = Policy.from_score("LEW-2", lambda l, mrl, mean: mrl + 2.0 * (l - 1) * mean)
        >>> t = p.score_table(np.array([0.0, 0.1]), 2, ([1.0], [[-1.0]]))
        >>> np.round(t, 12).tolist()
        [[1.0, 3.0], [1.0, 3.0]]
        """
        return cls(name, score, description)

    @property
    def needs_sizes(self) -> bool:
        """True if the score uses the job-size law (``mrl`` or ``mean``)."""
        return "mrl" in self.variables or "mean" in self.variables

    @renamed_keywords(service="sizes")
    def score_table(self, lower: ArrayLike, B: int,
                    sizes: PhaseTypeLaw | None = None) -> NDArray[np.float64]:
        """Scores ``xi(k, l)`` of every busy state: the table shared with the simulator.

        Parameters
        ----------
        lower : array_like, shape (r+1,)
            Lower boundaries ``b_k`` of the age layers, increasing, ``lower[0] = 0``
            (``b_k = (k-1) delta``; the last layer is ``[b_{r+1}, inf)``).
        B : int
            Largest queue length, ``>= 1``.  A simulator with longer queues clamps ``l`` to
            ``B``.
        sizes : PhaseType, (alpha, A) or ME with a phase-type form, optional
            The job-size law; required if the score uses ``mrl`` or ``mean``.

        Returns
        -------
        ndarray, shape (r+1, B), float64, finite
            ``table[k-1, l-1] = xi(k, l)``; smaller wins.  Scores within a relative
            :data:`TIE_RTOL` of each other are merged into exact ties.

        Raises
        ------
        InvalidParameter
            Bad ``lower`` or ``B``, missing job-size law, or a score that is not finite or
            does not broadcast to ``(r+1, B)``.
        """
        try:
            b = np.asarray(lower, dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameter("lower", lower, "a 1-d array of layer boundaries") from None
        if b.ndim != 1 or b.size < 1 or not np.all(np.isfinite(b)) or np.any(b < 0) \
                or np.any(np.diff(b) <= 0):
            raise InvalidParameter("lower", b, "a nonempty increasing 1-d array of finite "
                                   "ages >= 0", "the lower boundaries of the age layers")
        B = integer_value("B", B, 1, "the largest queue length")
        K = b.size
        env: dict[str, Any] = {
            "k": np.arange(1, K + 1, dtype=float)[:, None],
            "age": b[:, None],
            "l": np.arange(1, B + 1, dtype=float)[None, :],
            "r": K - 1,
            "B": B,
        }
        if self.needs_sizes:
            if sizes is None:
                raise InvalidParameter("sizes", sizes, "a phase-type job-size law",
                                       f"policy {self.name!r} uses the job-size law")
            ph = as_phase_type(sizes, "sizes")
            env["mean"] = ph.mean()
            if "mrl" in self.variables:
                env["mrl"] = mean_residual_life(ph, b)[:, None]
        raw = self.score(**{name: env[name] for name in self.variables})
        try:
            table = np.array(np.broadcast_to(np.asarray(raw, dtype=float), (K, B)))
        except ValueError:
            raise InvalidParameter("score", np.shape(raw), f"broadcastable to ({K}, {B})",
                                   f"the score of policy {self.name!r}") from None
        if not np.all(np.isfinite(table)):
            raise InvalidParameter("score", table, "finite values",
                                   f"the score of policy {self.name!r}")
        return _merge_ties(table)


def _old(age: NDArray[np.float64], T: float) -> NDArray[np.float64]:
    return (age >= T * (1.0 - AGE_RTOL)).astype(float)


def _builtin(name: str, T: float) -> Policy:
    if name == "SQ":
        return Policy("SQ", lambda l: l, "shortest queue; ties at random")
    if name == "SQ-RTB":
        return Policy("SQ-RTB", lambda k, l, r: (r + 1) * l + k,
                      "shortest queue; ties to the least attained service")
    if name == "SQ-RE":
        return Policy(f"SQ-RE(T={T:g})", lambda age, l, B: l + (B + 1) * _old(age, T),
                      "shortest queue among servers whose job is younger than T, if any")
    if name == "SQ-RTB-RE":
        return Policy(f"SQ-RTB-RE(T={T:g})",
                      lambda k, age, l, r, B: (r + 2) * l + k + (B + 1) * (r + 2) * _old(age, T),
                      "SQ-RTB among servers whose job is younger than T, if any")
    if name == "LAS":
        return Policy("LAS", lambda k: k, "least attained service; ties at random")
    if name == "LAS-QTB":
        return Policy("LAS-QTB", lambda k, l, B: (B + 1) * k + l,
                      "least attained service; ties to the shortest queue")
    if name == "RE":
        return Policy(f"RE(T={T:g})", lambda age: _old(age, T),
                      "any server whose job is younger than T, else at random")
    if name == "LEW":
        return Policy("LEW", lambda l, mrl, mean: mrl + (l - 1) * mean,
                      "least expected workload E[X - b_k | X > b_k] + (l - 1) E[X]")
    raise AssertionError(name)  # pragma: no cover


#: names accepted by :func:`get_policy` (case-insensitive; a "(d)" or "(d,T)" suffix is ignored).
POLICY_NAMES: tuple[str, ...] = ("SQ", "SQ-RTB", "SQ-RE", "SQ-RTB-RE", "LAS", "LAS-QTB", "RE",
                                 "LEW")


def get_policy(name: str | Policy, T: float = 2.0) -> Policy:
    """A built-in policy by name (the paper's policies: types 1-8 of ``sorted_kl_indxs.m``).

    Parameters
    ----------
    name : str or Policy
        One of :data:`POLICY_NAMES`, case-insensitive; ``"SQ(d)-RTB"`` and ``"RE(d,T)"``
        style names are accepted too.  A :class:`Policy` is returned unchanged.
    T : float, default 2.0
        Age threshold of the ``-RE`` policies, ``> 0`` (checked for every policy).

    Returns
    -------
    Policy

    Raises
    ------
    InvalidParameter
        ``T`` not a finite real ``> 0``.
    UnknownName
        Unknown policy name; the message lists the choices.

    Examples
    --------
    >>> get_policy("sq(d)-re", T=3).name
    'SQ-RE(T=3)'
    >>> get_policy("JSQ")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symq.core.errors.UnknownName: unknown policy 'JSQ'; valid choices: SQ, SQ-RTB, SQ-RE, ...
    """
    real_value("T", T, "a finite real number > 0 (the age threshold)", lambda v: v > 0)
    if isinstance(name, Policy):
        return name
    if not isinstance(name, str):
        raise UnknownName("policy", repr(name), POLICY_NAMES)
    key = name.strip().upper().replace(" ", "").replace("_", "-")
    for suffix in ("(D,T)", "(D)"):
        key = key.replace(suffix, "")
    if key not in POLICY_NAMES:
        raise UnknownName("policy", name, POLICY_NAMES)
    return _builtin(key, float(T))
