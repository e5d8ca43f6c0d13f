r"""Transforms built from others by operations that keep the algebra exact.

* :func:`convolve`: the law of :math:`X + Y` for independent :math:`X, Y` (the product of the
  transforms);
* :func:`mixture`: :math:`X` with probability :math:`p`, else :math:`Y` (the affine combination);
* :func:`pollaczek_khinchine`: the FCFS waiting time of the M/G/1 queue with Poisson
  (:math:`\lambda`) arrivals and a declared service transform :math:`B^*`,

  .. math::

      W^*(s) = \frac{(1-\rho)\, s}{s - \lambda + \lambda B^*(s)}, \qquad
      \rho = \lambda E[S] < 1

  (Kleinrock 1975, *Queueing Systems* I, ch. 5), with the stability condition carried by
  the result, and its sojourn time :math:`T^* = W^* B^*`;
* :func:`queue_length`: the PGF of the number in an M/G/1 system (at departures, arrivals and
  in time alike), :math:`\Pi(z) = (1-\rho)(1-z)B^*(\lambda(1-z))/(B^*(\lambda(1-z)) - z)`
  (the Pollaczek-Khinchine transform equation, Kleinrock 1975, ch. 5);
* :func:`random_sum`: :math:`Y_1 + \dots + Y_N` for i.i.d. :math:`Y_i` independent of a count
  :math:`N` with PGF :math:`P`: the LST :math:`P(Y^*(s))` (Feller 1968, vol. I, ch. XI);
* :func:`equilibrium`: the residual life (stationary excess) of a renewal interval,
  :math:`(1 - F^*(s))/(s E[X])`, with the mean's existence checked;
* :func:`vacation_waiting_time`: the M/G/1 wait with multiple vacations (exhaustive service),
  :math:`W^* = W^*_{M/G/1} \cdot (1 - V^*(s))/(s E[V])`: Fuhrmann & Cooper's decomposition
  (1985, Oper. Res. 33:1117-1129).

Each result is a :class:`~symq.me.transforms.model.Transform` whose parameters are the union
of the operands'; a parameter of one name in both operands is one parameter.

Examples
--------
>>> from symq.me.transforms import Transform, moments
>>> service = Transform("mu/(mu + s)", parameters=("mu",))
>>> waiting = pollaczek_khinchine(service, "lam")
>>> moments(waiting, 1, {"mu": 1, "lam": 0.5}).moments     # M/M/1: rho/(mu - lam)
(1.0,)
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from symq.core.errors import InvalidParameter

from .model import Transform
from .moments import moment_expressions

__all__ = ["convolve", "mixture", "pollaczek_khinchine", "sojourn_time", "queue_length",
           "random_sum", "equilibrium", "vacation_waiting_time"]


def _joined(first: Transform, second: Transform, what: str) -> tuple[str, ...]:
    if first.kind != second.kind:
        raise InvalidParameter(what, second.kind, f"a transform of the same kind as the first "
                               f"({first.kind})")
    return first.parameters + tuple(p for p in second.parameters if p not in first.parameters)


def _in_terms_of(transform: Transform, variable: sp.Symbol) -> sp.Expr:
    """The formula with its variable and parameters as the shared positive symbols."""
    return transform.expr.xreplace({x: variable if x == transform.variable
                                    else sp.Symbol(x.name, positive=True)
                                    for x in transform.expr.free_symbols})


def _conditions(*transforms: Transform) -> tuple[tuple[sp.Expr, str], ...]:
    return tuple(c for t in transforms for c in t.conditions)


def convolve(first: Transform, second: Transform) -> Transform:
    """The transform of the sum of independent variables with these transforms."""
    params = _joined(first, second, "second")
    x = sp.Symbol(first.variable.name, positive=True)
    expr = _in_terms_of(first, x) * _in_terms_of(second, x)
    return Transform(expr, first.kind, params, f"{first.name} * {second.name}",
                     _conditions(first, second))


def mixture(weight: Any, first: Transform, second: Transform) -> Transform:
    """The transform of the first law with probability ``weight``, else the second.

    ``weight`` is a number in ``[0, 1]`` or the name of a parameter (declared by the result).
    """
    params = _joined(first, second, "second")
    if isinstance(weight, str):
        if not weight.isidentifier() or weight == first.variable.name:
            raise InvalidParameter("weight", weight, "a number in [0, 1] or a parameter name")
        p = sp.Symbol(weight, positive=True)
        params = params + ((weight,) if weight not in params else ())
        conditions = ((1 - p, f"the weight {weight} < 1"),)
    else:
        try:
            value = float(weight)
        except (TypeError, ValueError):
            raise InvalidParameter("weight", weight, "a number in [0, 1] or a parameter "
                                   "name") from None
        if not 0.0 <= value <= 1.0:
            raise InvalidParameter("weight", weight, "a probability in [0, 1]")
        p, conditions = sp.nsimplify(value), ()
    x = sp.Symbol(first.variable.name, positive=True)
    expr = p * _in_terms_of(first, x) + (1 - p) * _in_terms_of(second, x)
    return Transform(expr, first.kind, params, f"mixture of {first.name} and {second.name}",
                     _conditions(first, second) + conditions)


def pollaczek_khinchine(service: Transform, arrival_rate: str = "lam") -> Transform:
    r"""The M/G/1 FCFS waiting-time LST from the service LST (module docstring).

    Parameters
    ----------
    service : Transform
        The LST of the service time (its mean must exist).
    arrival_rate : str
        The name of the Poisson arrival rate, a new parameter of the result.

    Returns
    -------
    Transform
        An LST with the parameters of ``service`` and ``arrival_rate``, and the condition
        :math:`1 - \lambda E[S] > 0` (checked at parameter values).

    Raises
    ------
    InvalidParameter
        Not an LST, an arrival-rate name already used, or a service law without a mean.
    """
    if service.kind != "lst":
        raise InvalidParameter("service", service.kind, "an LST (kind='lst')")
    if not isinstance(arrival_rate, str) or not arrival_rate.isidentifier() \
            or arrival_rate in service.parameters or arrival_rate == "s":
        raise InvalidParameter("arrival_rate", arrival_rate, "a new parameter name (not s, "
                               "not one of " + ", ".join(service.parameters) + ")")
    (mean,), bad = moment_expressions(service, 1)
    if bad is not None and (not bad[0].is_number or bad[0] <= 1):
        raise InvalidParameter("service", str(service.expr), "a service law with a finite "
                               f"mean (the expansion has the term {bad[1]})")
    s = sp.Symbol("s", positive=True)
    lam = sp.Symbol(arrival_rate, positive=True)
    B = _in_terms_of(service, s)
    m1 = mean.xreplace({x: sp.Symbol(x.name, positive=True) for x in mean.free_symbols})
    rho = lam * m1
    expr = (1 - rho) * s / (s - lam + lam * B)
    return Transform(expr, "lst", service.parameters + (arrival_rate,),
                     f"M/G/1 waiting time ({service.name})",
                     _conditions(service) + ((1 - rho, "stability (rho = lam E[S] < 1)"),))


def queue_length(service: Transform, arrival_rate: str = "lam") -> Transform:
    r"""The M/G/1 number-in-system PGF from the service LST (module docstring); the
    condition :math:`1 - \lambda E[S] > 0` is carried as with :func:`pollaczek_khinchine`."""
    waiting = pollaczek_khinchine(service, arrival_rate)       # the checks and the condition
    z = sp.Symbol("z", positive=True)
    lam = sp.Symbol(arrival_rate, positive=True)
    B = _in_terms_of(service, sp.Symbol("s", positive=True)).xreplace(
        {sp.Symbol("s", positive=True): lam * (1 - z)})
    (condition, text), = waiting.conditions[-1:]
    expr = condition * (1 - z) * B / (B - z)
    return Transform(expr, "pgf", waiting.parameters, f"M/G/1 number in system ({service.name})",
                     waiting.conditions)


def sojourn_time(service: Transform, arrival_rate: str = "lam") -> Transform:
    """The M/G/1 FCFS sojourn-time LST :math:`W^*(s) B^*(s)`."""
    waiting = pollaczek_khinchine(service, arrival_rate)
    return Transform(waiting.expr * _in_terms_of(service, sp.Symbol("s", positive=True)),
                     "lst", waiting.parameters, f"M/G/1 sojourn time ({service.name})",
                     waiting.conditions)


def random_sum(count: Transform, summand: Transform) -> Transform:
    """The LST of a sum of ``N`` i.i.d. copies of ``summand``, ``N`` independent with the PGF
    ``count``: ``count`` at ``z = summand(s)`` (module docstring).

    Raises
    ------
    InvalidParameter
        ``count`` not a PGF or ``summand`` not an LST.
    """
    if count.kind != "pgf":
        raise InvalidParameter("count", count.kind, "a PGF (kind='pgf')")
    if summand.kind != "lst":
        raise InvalidParameter("summand", summand.kind, "an LST (kind='lst')")
    params = count.parameters + tuple(p for p in summand.parameters
                                      if p not in count.parameters)
    s = sp.Symbol("s", positive=True)
    z = sp.Symbol(count.variable.name, positive=True)
    expr = _in_terms_of(count, z).xreplace({z: _in_terms_of(summand, s)})
    return Transform(expr, "lst", params, f"random sum ({count.name} of {summand.name})",
                     _conditions(count, summand))


def equilibrium(transform: Transform) -> Transform:
    """The LST of the stationary excess (residual life) of a law on ``[0, inf)``:
    ``(1 - F*(s))/(s E[X])``.

    Raises
    ------
    InvalidParameter
        Not an LST, or a law without a finite mean.
    """
    if transform.kind != "lst":
        raise InvalidParameter("transform", transform.kind, "an LST (kind='lst')")
    (mean,), bad = moment_expressions(transform, 1)
    if bad is not None and (not bad[0].is_number or bad[0] <= 1):
        raise InvalidParameter("transform", str(transform.expr), "a law with a finite mean "
                               f"(the expansion has the term {bad[1]})")
    s = sp.Symbol("s", positive=True)
    m1 = mean.xreplace({x: sp.Symbol(x.name, positive=True) for x in mean.free_symbols})
    expr = (1 - _in_terms_of(transform, s)) / (s * m1)
    return Transform(expr, "lst", transform.parameters, f"equilibrium of {transform.name}",
                     transform.conditions)


def vacation_waiting_time(service: Transform, vacation: Transform,
                          arrival_rate: str = "lam") -> Transform:
    """The M/G/1 FCFS wait with exhaustive service and multiple vacations: the P-K wait
    convolved with the equilibrium vacation (Fuhrmann & Cooper's decomposition; module
    docstring).  The stability condition is the P-K one.

    Raises
    ------
    InvalidParameter
        As :func:`pollaczek_khinchine` and :func:`equilibrium`; the arrival-rate name used by
        the vacation law.
    """
    if arrival_rate in vacation.parameters:
        raise InvalidParameter("arrival_rate", arrival_rate, "a new parameter name (not one "
                               "of the vacation law's: " + ", ".join(vacation.parameters) + ")")
    waiting = pollaczek_khinchine(service, arrival_rate)
    out = convolve(waiting, equilibrium(vacation))
    return Transform(out.expr, "lst", out.parameters,
                     f"M/G/1 waiting time with vacations ({service.name}, {vacation.name})",
                     out.conditions)
