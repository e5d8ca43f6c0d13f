r"""Priority classes of the M/G/1 queue: the waiting and sojourn times of one class.

Classes :math:`1, \dots, K` (1 the highest) arrive in independent Poisson streams of rates
:math:`\lambda_i` with service LSTs :math:`S_i^*`, FCFS within a class.  For a tagged class
:math:`p` write :math:`H` for the classes above it and :math:`L` for those below, with the
aggregated rates :math:`\lambda_H = \sum_{i<p}\lambda_i` and service LSTs
:math:`S_H^* = \sum_{i<p}\lambda_i S_i^*/\lambda_H` (likewise :math:`L`), the loads
:math:`\sigma_p = \sum_{i \le p}\lambda_i E[S_i]`, :math:`\rho = \sigma_K`, and
:math:`\Theta_H` the LST of a busy period of the classes :math:`H` alone (Takács' equation,
:mod:`~symq.me.transforms.busy_period`).  Every interruption by :math:`H` stretches an interval
into a *delay cycle*, which the substitution :math:`s \mapsto \omega(s) = s + \lambda_H(1 -
\Theta_H(s))` accounts for (Kleinrock 1976, *Queueing Systems* II, ch. 3; Takagi 1991,
*Queueing Analysis* vol. 1, ch. 3):

* **non-preemptive** (a service, once begun, is finished):

  .. math::

      W_p^*(s) = \frac{(1-\rho)\,\omega(s) + \lambda_L\big(1 - S_L^*(\omega(s))\big)}
                      {s - \lambda_p + \lambda_p S_p^*(\omega(s))},
      \qquad T_p^* = W_p^* S_p^*,

  which needs :math:`\rho < 1`;
* **preemptive-resume** (a higher arrival interrupts; the service resumes where it stopped):
  the classes below :math:`p` are invisible, the wait is the P-K wait of the classes
  :math:`\le p` together stretched by :math:`H`, and the service is stretched too,

  .. math::

      W_p^*(s) = \frac{(1-\sigma_p)\,\omega}{\omega - \Lambda_p + \Lambda_p S_{\le p}^*(\omega)},
      \qquad T_p^*(s) = W_p^*(s)\, S_p^*(\omega(s)),

  with :math:`\Lambda_p = \sum_{i\le p}\lambda_i`; it needs :math:`\sigma_p < 1`.

Their means are Cobham's (1954): :math:`E[W_p] = R/((1-\sigma_{p-1})(1-\sigma_p))` with
:math:`R = \sum_i \lambda_i E[S_i^2]/2` (non-preemptive).  :math:`\Theta_H` has no closed form,
so neither has :math:`W_p^*` for :math:`p > 1`; :class:`PriorityClassTime` gives what the
busy period gives: the moments exactly (power series composed in the exact field of the
parameter values, :math:`\Theta_H`'s by Takács' recursion), and the density, cdf and tail by
the unified Euler algorithm at :math:`M` and :math:`3M/2` terms with :math:`\Theta_H` by its
fixed point at each node (the Euler contour stays in :math:`\mathrm{Re}\,s > 0`, where the
iteration converges).

Examples
--------
>>> from symq.me.transforms import Transform
>>> exp1 = Transform("mu1/(mu1 + s)", parameters=("mu1",))
>>> exp2 = Transform("mu2/(mu2 + s)", parameters=("mu2",))
>>> low = priority_class_time([exp1, exp2], ["lam1", "lam2"], 2)
>>> v = {"mu1": 1, "mu2": 1, "lam1": 0.25, "lam2": 0.25}
>>> low.moments(1, v).moments      # Cobham: (0.25 + 0.25)/((1 - 0.25)(1 - 0.5))
(1.3333333333333333,)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from sympy.polys.constructor import construct_domain

from symq.core.compiler import compile as compile_exprs
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.precision import local_mp

from .busy_period import multiply_series, takacs_fixed_point, takacs_series
from .inversion import Inversion, checked_request, mass_at_zero, multiple_euler
from .model import Transform, exact_value
from .moments import (
    MAX_ORDER,
    TransformMoments,
    cumulants_from_moments,
    moment_expressions,
    rounded,
)

__all__ = ["PriorityClassTime", "priority_class_time", "DISCIPLINES", "QUANTITIES"]

DISCIPLINES = ("non-preemptive", "preemptive-resume")
QUANTITIES = ("waiting-time", "sojourn-time")


def _compose(b: list[Any], u: list[Any], n: int, zero: Any) -> list[Any]:
    """``sum_j b_j u^j`` truncated after ``s^n`` (``u_0 = 0``), by Horner's rule."""
    out = [zero] * (n + 1)
    for j in range(n, -1, -1):
        out = multiply_series(out, u, n, zero)
        out[0] += b[j]
    return out


def _divide(a: list[Any], b: list[Any], n: int) -> list[Any]:
    """``a / b`` truncated after ``s^n`` (``b_0 != 0``)."""
    out: list[Any] = []
    for k in range(n + 1):
        out.append((a[k] - sum((out[i] * b[k - i] for i in range(k)), a[k] * 0)) / b[0])
    return out


@dataclass(frozen=True)
class PriorityClassTime:
    """The waiting or sojourn time of one class of an M/G/1 priority queue (module docstring).

    Build it with :func:`priority_class_time`.

    Attributes
    ----------
    services : tuple of Transform
        The service LSTs, the highest class first.
    arrival_rates : tuple of str
        The parameter names of the classes' Poisson rates.
    priority_class : int
        The tagged class, 1 the highest.
    discipline : str
        One of :data:`DISCIPLINES`.
    quantity : str
        One of :data:`QUANTITIES`.
    """

    services: tuple[Transform, ...]
    arrival_rates: tuple[str, ...]
    priority_class: int
    discipline: str = "non-preemptive"
    quantity: str = "waiting-time"

    @property
    def parameters(self) -> tuple[str, ...]:
        """The services' parameters, then the arrival rates."""
        names: list[str] = []
        for t in self.services:
            names += [p for p in t.parameters if p not in names]
        return tuple(names) + self.arrival_rates

    @property
    def name(self) -> str:
        """What it is, in words."""
        return (f"M/G/1 {self.discipline} priority, class {self.priority_class} of "
                f"{len(self.services)}: {self.quantity}")

    def _point(self, values: Mapping[str, Any]) -> tuple[list[dict[str, sp.Expr]],
                                                        list[sp.Expr]]:
        """Each service's own exact values and the exact rates, checked."""
        values = dict(values)
        missing = [p for p in self.parameters if p not in values]
        if missing:
            raise InvalidParameter(missing[0], None, "a value")
        rates = [exact_value(r, values[r]) for r in self.arrival_rates]
        for r, v in zip(self.arrival_rates, rates, strict=True):
            if not v > 0:
                raise InvalidParameter(r, values[r], "a positive arrival rate")
        own = []
        for i, service in enumerate(self.services):
            mine = {p: values[p] for p in service.parameters}
            service.check(mine)
            if mass_at_zero(service, mine) != 0.0:
                raise InvalidParameter(f"services[{i}]", str(service.expr),
                                       "a service law without an atom at zero")
            own.append({p: exact_value(p, v) for p, v in mine.items()})
        return own, rates

    def _coefficients(self, own: list[dict[str, sp.Expr]], n: int) -> list[list[sp.Expr]]:
        """Each service LST's Taylor coefficients ``b_0..b_n`` at the values."""
        out = []
        for i, (service, point) in enumerate(zip(self.services, own, strict=True)):
            raw, bad = moment_expressions(service, n)
            if bad is not None:
                raise InvalidParameter(f"services[{i}]", str(service.expr),
                                       f"a service law with {n} finite moments (the "
                                       f"expansion has the term {bad[1]})")
            b = [sp.Integer(1)] + [(-1) ** j * raw[j - 1] / sp.factorial(j)
                                   for j in range(1, n + 1)]
            out.append([sp.nsimplify(e.xreplace({x: point[x.name] for x in e.free_symbols}))
                        for e in b])
        return out

    def _stable(self, loads: list[sp.Expr]) -> None:
        p = self.priority_class
        total = sum(loads) if self.discipline == "non-preemptive" else sum(loads[:p])
        if not total < 1:
            what = ("rho = sum_i lam_i E[S_i]" if self.discipline == "non-preemptive"
                    else f"sigma_{p} = sum_(i<={p}) lam_i E[S_i]")
            raise StabilityError(f"load {what} = {rounded(total):.6g} must be < 1 for class "
                                 f"{p} to have a finite {self.quantity}")

    def moments(self, n: int = 4, values: Mapping[str, Any] | None = None
                ) -> TransformMoments:
        """Moments ``1..n``, exact at the values (module docstring).

        Raises
        ------
        InvalidParameter
            ``n`` out of range; a missing value; a service law without ``n`` moments.
        StabilityError
            The load the discipline needs below 1 is not.
        """
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ORDER:
            raise InvalidParameter("n", n, f"an integer in 1..{MAX_ORDER}")
        own, rates = self._point(values or {})
        N = n + 1
        coeffs = self._coefficients(own, N)
        self._stable([-lam * b[1] for lam, b in zip(rates, coeffs, strict=True)])
        domain, flat = construct_domain([c for b in coeffs for c in b] + rates, field=True)
        width = N + 1
        b_el = [flat[i * width:(i + 1) * width] for i in range(len(coeffs))]
        lam_el = flat[len(coeffs) * width:]
        series = self._series(b_el, lam_el, N, domain)
        exprs = [(-1) ** k * sp.factorial(k) * domain.to_sympy(series[k])
                 for k in range(1, n + 1)]
        numbers = [rounded(e) for e in exprs]
        return TransformMoments(tuple(numbers), cumulants_from_moments(numbers), (),
                                tuple(str(e) for e in exprs), None, "", "lst",
                                "delay-cycle power series composed exactly (Takacs' "
                                "recursion for the higher classes' busy period)")

    def _series(self, b: list[list[Any]], lam: list[Any], N: int, domain: Any) -> list[Any]:
        zero, one = domain.zero, domain.one
        p = self.priority_class - 1

        def aggregate(classes: range) -> tuple[Any, list[Any]]:
            rate = sum((lam[i] for i in classes), zero)
            if rate == zero:
                return zero, [one] + [zero] * N
            return rate, [sum((lam[i] * b[i][k] for i in classes), zero) / rate
                          for k in range(N + 1)]

        lam_h, b_h = aggregate(range(p))
        theta = takacs_series(b_h, lam_h, N, domain) if lam_h != zero \
            else [one] + [zero] * N
        omega = [zero] + [(one if k == 1 else zero) - lam_h * theta[k] for k in range(1, N + 1)]
        if self.discipline == "non-preemptive":
            lam_l, b_l = aggregate(range(p + 1, len(b)))
            rho = -sum((lam[i] * b[i][1] for i in range(len(b))), zero)
            s_p = _compose(b[p], omega, N, zero)
            s_l = _compose(b_l, omega, N, zero)
            top = [(one - rho) * w - lam_l * x for w, x in zip(omega, s_l, strict=True)]
            top[0] += lam_l
            bottom = [lam[p] * x for x in s_p]
            bottom[0] -= lam[p]
            bottom[1] += one
            wait = _divide(top[1:], bottom[1:], N - 1)
            service = b[p]
        else:
            big, b_le = aggregate(range(p + 1))
            sigma = -big * b_le[1]
            pk = _divide([(one - sigma) if k == 0 else zero for k in range(N)],
                         [(one if k == 0 else zero) + big * b_le[k + 1] for k in range(N)],
                         N - 1)                    # (1 - sigma) u / (u - L + L S(u)), over u
            wait = _compose(pk + [zero], omega, N, zero)[:N]
            service = _compose(b[p], omega, N, zero)
        if self.quantity == "sojourn-time":
            return multiply_series(wait, service[:N], N - 1, zero)
        return wait

    def atom(self, values: Mapping[str, Any]) -> float:
        """The mass at zero: :math:`1-\\rho` (non-preemptive) or :math:`1-\\sigma_p` for the
        waiting time, 0 for the sojourn time (service laws have no atom at zero)."""
        if self.quantity == "sojourn-time":
            return 0.0
        own, rates = self._point(values)
        coeffs = self._coefficients(own, 1)
        loads = [-lam * b[1] for lam, b in zip(rates, coeffs, strict=True)]
        self._stable(loads)
        used = loads if self.discipline == "non-preemptive" else loads[:self.priority_class]
        return rounded(1 - sum(used))

    def _evaluator(self, values: Mapping[str, Any]) -> Callable[[Any], Any]:
        """``z -> F*(z)`` in the thread's mpmath context (``Re z > 0``)."""
        own, rates = self._point(values)
        laplace = [compile_exprs(t.expr.xreplace({t.symbols[k]: v for k, v in point.items()
                                                  if k in t.symbols}), (t.variable,), "mpmath")
                   for t, point in zip(self.services, own, strict=True)]
        loads = [float(-lam * b[1]) for lam, b in
                 zip(rates, self._coefficients(own, 1), strict=True)]
        lam = [float(r) for r in rates]
        p, np_ = self.priority_class - 1, self.discipline == "non-preemptive"

        def mix(classes: range, u: Any) -> Any:
            total = sum(lam[i] for i in classes)
            return sum(lam[i] * laplace[i](u) for i in classes) / total

        def value(z: Any) -> Any:
            mp = local_mp()
            lam_h = mp.mpf(sum(lam[:p]))
            omega = z
            if p > 0:
                theta = takacs_fixed_point(lambda u: mix(range(p), u), lam_h, z)
                omega = z + lam_h * (1 - theta)
            if np_:
                lam_l = mp.mpf(sum(lam[p + 1:]))
                low = lam_l * (1 - mix(range(p + 1, len(lam)), omega)) if lam_l else 0
                wait = ((1 - mp.mpf(sum(loads))) * omega + low) \
                    / (z - lam[p] + lam[p] * laplace[p](omega))
                service = laplace[p](z)
            else:
                big = mp.mpf(sum(lam[:p + 1]))
                wait = (1 - mp.mpf(sum(loads[:p + 1]))) * omega \
                    / (omega - big + big * mix(range(p + 1), omega))
                service = laplace[p](omega)
            return wait * service if self.quantity == "sojourn-time" else wait

        return value

    def invert(self, t: Any, values: Mapping[str, Any], what: str = "density",
               digits: int = 10) -> Inversion:
        """The density (of the part above zero), distribution function or tail at ``t``: the
        unified Euler algorithm at ``M`` against ``3M/2`` terms (module docstring).

        Raises
        ------
        InvalidParameter
            ``what``, ``digits`` or a point out of range; a missing value.
        StabilityError
            The load the discipline needs below 1 is not.
        NotConverged
            The busy-period iteration does not settle at a node.
        """
        points = checked_request(t, what, digits, 30)
        atom = self.atom(values)
        transform = self._evaluator(values)

        def target(z: Any) -> Any:
            f = transform(z)
            if what == "density":
                return f - atom
            return f / z if what == "cdf" else (1 - f) / z

        M = math.ceil(digits / 0.6) + 2
        more = math.ceil(1.5 * M)
        euler = multiple_euler(target, points, [], M)
        second = multiple_euler(target, points, [], more)
        return Inversion(points, euler, np.abs(euler - second), second, what, atom, M, M + 15,
                         f"unified Euler at M = {M} vs M = {more}, the higher classes' busy "
                         "period by Takacs' fixed point")


def priority_class_time(services: Sequence[Transform], arrival_rates: Sequence[str],
                        priority_class: int, discipline: str = "non-preemptive",
                        quantity: str = "waiting-time") -> PriorityClassTime:
    """One class of an M/G/1 priority queue (module docstring).

    Parameters
    ----------
    services : sequence of Transform
        The classes' service LSTs, the highest priority first.
    arrival_rates : sequence of str
        New parameter names for the classes' Poisson rates (one per class, distinct, not a
        service parameter).
    priority_class : int
        The tagged class, ``1..K``.
    discipline : {"non-preemptive", "preemptive-resume"}
    quantity : {"waiting-time", "sojourn-time"}

    Raises
    ------
    InvalidParameter
        Naming the argument that is out of its domain.
    """
    services = tuple(services)
    if not services or not all(isinstance(t, Transform) and t.kind == "lst"
                               for t in services):
        raise InvalidParameter("services", services, "a non-empty sequence of LSTs")
    rates = tuple(arrival_rates)
    used = {p for t in services for p in t.parameters}
    if len(rates) != len(services) or len(set(rates)) != len(rates) or not all(
            isinstance(r, str) and r.isidentifier() and r not in used and r != "s"
            for r in rates):
        raise InvalidParameter("arrival_rates", arrival_rates,
                               f"{len(services)} distinct new parameter names (not s, not a "
                               "service parameter)")
    if isinstance(priority_class, bool) or not isinstance(priority_class, int) \
            or not 1 <= priority_class <= len(services):
        raise InvalidParameter("priority_class", priority_class,
                               f"an integer in 1..{len(services)} (1 the highest)")
    if discipline not in DISCIPLINES:
        raise InvalidParameter("discipline", discipline, "one of " + ", ".join(DISCIPLINES))
    if quantity not in QUANTITIES:
        raise InvalidParameter("quantity", quantity, "one of " + ", ".join(QUANTITIES))
    return PriorityClassTime(services, rates, priority_class, discipline, quantity)
