"""The registered ``dispatch`` model: ``symq solve dispatch policy=optimal m=2 rho=0.4 --json``.

``policy`` is one of ``rnd``, ``rr``, ``jsq``, ``lwl``, ``sita`` (with ``h=``), ``sita-e``,
``sita-opt``, ``fpi-rnd``, ``fpi-sita``, ``optimal``.  The mean response time ``ET`` comes from

* an exact formula where one exists (``method: exact``: Pollaczek-Khinchine for RND and SITA,
  E_m/M/1 for round-robin, M/M/m for LWL and the JSQ CTMC with exponential sizes);
* value iteration for ``optimal`` (``method: value-iteration``): Richardson-extrapolated over
  the steps ``delta`` and ``delta/2`` (Hyytiä & Righter, arXiv 2402.08142, Section 3), with

  - ``error_estimate``: the stated error of ``ET``, the sum of ``error_parts``: the Richardson
    correction ``|ET - g(delta/2)|``, the width of the propagated Odoni bracket, and the effect
    of the truncation ``umax`` measured on a coarse grid as ``|g(2 umax) - g(umax)|`` (``umax``
    part ``None`` when that check would cost too much; then the estimate does not cover it);
  - ``grids[i].g_bracket_discrete``: the Odoni bracket of each grid's DISCRETISED MDP, which
    certifies convergence of the iteration on that grid only (it is typically 1e-10 wide
    while the discretisation moves ``g`` by 1e-4): it is not the uncertainty of ``ET``;
* simulation otherwise (``method: simulation``, with a 99% confidence interval).

Parameters that the chosen policy or size law does not use (``scv`` without ``sizes=h2``,
``h`` without ``policy=sita``/``fpi-sita``, ``delta``/``umax`` without ``policy=optimal``) are
refused, and so are grids or CTMCs that would not fit in memory or would run for hours.

Examples
--------
>>> r = solve_dispatch("lwl", 2, 0.4)
>>> r["method"], round(r["ET"], 12)     # M/M/2: 1/(1 - rho^2)
('exact', 1.190476190476)
"""

from __future__ import annotations

import math
import numbers
import re
import time
from typing import Any

from symq.core.errors import MISSING, InvalidParameter, ResourceLimit, SymqError, TruncationError
from symq.core.parameters import Choice, IntegerAtLeast, Parameter, PositiveReal
from symq.core.registry import ModelSpec, register_model
from symq.core.result import Exactness, Result

from .exact import exact_mean_response
from .sizes import SIZE_NAMES, get_sizes

__all__ = ["DISPATCH", "solve_dispatch", "POLICY_CHOICES", "default_truncation"]

POLICY_CHOICES = ("rnd", "rr", "jsq", "lwl", "sita", "sita-e", "sita-opt", "fpi-rnd", "fpi-sita",
                  "optimal")
#: Default SCV of ``sizes=h2`` when ``scv=`` is not given.
DEFAULT_SCV = 4.0
#: Internal parameter names of the solvers -> the names typed on the command line.
USER_NAMES = {"U": "umax", "thresholds": "h"}
#: Largest ``m`` for which the model simulates (``n_jobs`` x ``m`` steps).
SIM_WORK_LIMIT = 4e9
#: Largest ``m`` for SITA-opt's coordinate search (quadratic in ``m``) and SITA-E.
SITA_OPT_M_MAX, SITA_M_MAX = 12, 100_000


def default_truncation(rho: float) -> float:
    """Backlog truncation ``umax`` by load (at high load the optimal policy keeps a long queue)."""
    return 24.0 if rho <= 0.5 else (48.0 if rho <= 0.8 else 96.0)


def _user_error(exc: InvalidParameter) -> InvalidParameter:
    """The same error with internal names (``U``, ``thresholds``) replaced by the typed ones."""
    name = USER_NAMES.get(exc.name, exc.name)
    text = str(exc)
    for inner, outer in USER_NAMES.items():
        text = re.sub(rf"\b{inner}=", f"{outer}=", text)
        text = re.sub(rf"\b{inner}/", f"{outer}/", text)
        text = re.sub(rf"(increase|lower|raise) {inner}\b", rf"\1 {outer}", text)
    if name == exc.name and text == str(exc):
        return exc
    out = InvalidParameter.__new__(type(exc))
    out.__dict__.update(exc.__dict__)
    out.name = name
    out.args = (text,)
    return out


def _unused(name: str, value: Any, applies: str) -> InvalidParameter:
    return InvalidParameter(name, value, f"omitted here: {name}= applies only {applies}",
                            "a parameter the model would ignore is refused")


def _check_given(key: str, sizes: str, scv: Any, h: Any, delta: Any, umax: Any) -> None:
    if scv is not None and str(sizes).lower() != "h2":
        raise _unused("scv", scv, "with sizes=h2 (exp has SCV 1, uniform 1/3)")
    if h is not None and key not in ("sita", "fpi-sita"):
        raise _unused("h", h, "with policy=sita or policy=fpi-sita (the SITA threshold)")
    for name, value in (("delta", delta), ("umax", umax)):
        if value is not None and key != "optimal":
            raise _unused(name, value, "with policy=optimal (the value-iteration grid)")


def _grid_default(step: float, top: float) -> float:
    """``top`` rounded up to a multiple of ``step``."""
    n = math.ceil(top / step - 1e-9)
    while n * step < top:
        n += 1
    return n * step


def _umax_effect(m: int, rho: float, law: Any, step: float, top: float, main_seconds: float,
                 coarse: Any) -> tuple[float | None, dict[str, Any] | str]:
    """``|g(2 umax) - g(umax)|`` on the coarsest admissible grid, or why it was not estimated."""
    from .planning import plan_optimal
    from .vi import solve_optimal

    half = 0.5 * float(law.mean)
    candidates = [c for c in (half, 2 * step, step)
                  if c <= half * (1 + 1e-12) and top / c >= 8
                  and abs(round(top / c) * c - top) <= 1e-9 * top]
    step_t = max(candidates)
    try:
        cost = plan_optimal(m, rho, law, step_t, 2 * top, levels=1, names={"U": "umax"})
    except ResourceLimit as exc:
        return None, f"not estimated: the grid umax={2 * top:g} would not fit ({exc.needed})"
    if cost["seconds"] > max(0.5 * main_seconds, 5.0):
        return None, (f"not estimated: the grid umax={2 * top:g}, delta={step_t:g} would cost "
                      f"about {cost['seconds']:.3g} s; error_estimate does not cover umax")
    base = coarse if abs(step_t - step) <= 1e-12 * step else solve_optimal(
        m, rho, law, delta=step_t, U=top)
    doubled = solve_optimal(m, rho, law, delta=step_t, U=2 * top, warm_start=base)
    effect = abs(doubled.ET - base.ET)
    return effect, {"delta": step_t, "umax": top, "g": base.ET, "umax_doubled": 2 * top,
                    "g_doubled": doubled.ET}


def _solve_optimal(m: int, rho: float, law: Any, delta: float | None, umax: float | None
                   ) -> dict[str, Any]:
    from .multigrid import richardson
    from .planning import min_truncation, plan_optimal, validate_grid
    from .vi import solve_optimal

    names = {"U": "umax"}
    if isinstance(m, numbers.Integral) and not isinstance(m, bool) and m > 3:
        raise InvalidParameter("m", m, "1, 2 or 3 for policy=optimal",
                               "value iteration on the sorted backlog grid is implemented for "
                               "m <= 3 servers; the heuristics (policy=lwl, sita-opt, ...) take "
                               "any m")
    # the fine grid is delta/2; m = 3 has ~N^3/6 sorted states, so it starts coarser
    step = (0.1 if m <= 2 else 0.4) if delta is None else delta
    if umax is None:
        validate_grid(m, rho, law, step, 1e9 * step, names=names)   # m, rho, delta first
        top = _grid_default(step, max(default_truncation(rho), min_truncation(m, rho, law)))
    else:
        top = umax
    blame = "U" if (umax is not None and delta is None) else "delta"
    plan = plan_optimal(m, rho, law, step, top, levels=2, names=names, blame=blame)
    extrapolated = richardson(solve_optimal, m, rho, law, delta=step, U=top)
    effect, check = _umax_effect(m, rho, law, step, top, plan["seconds"],
                                 extrapolated.results[0])
    parts = {"richardson": extrapolated.correction,
             "odoni_bracket_width": extrapolated.ET_high - extrapolated.ET_low,
             "umax": effect}
    total = sum(v for v in parts.values() if v is not None)
    return {
        "ET": extrapolated.ET,
        "method": "value-iteration",
        "error_estimate": total,
        "error_parts": parts,
        "error_note": ("error_estimate = |ET - g(delta/2)| (Richardson) + Odoni bracket width "
                       "+ |g(2 umax) - g(umax)| on a coarse grid"
                       + ("" if effect is not None else " (umax part not estimated)")
                       + "; g_bracket_discrete brackets each grid's discretised MDP only, "
                       "not ET"),
        "umax_check": check,
        "grids": [{"delta": r.delta, "umax": r.U, "g": r.ET,
                   "g_bracket_discrete": [r.ET_low, r.ET_high],
                   "iterations": r.total_iterations}
                  for r in extrapolated.results],
    }


def _check_m_for(key: str, m: int, law: Any, n_jobs: int) -> None:
    if key == "sita-opt" and m > SITA_OPT_M_MAX:
        raise InvalidParameter("m", m, f"<= {SITA_OPT_M_MAX} for policy=sita-opt",
                               "its coordinate search costs ~m^2 evaluations per sweep; use "
                               "policy=sita-e for more servers")
    if key in ("sita-e", "fpi-sita") and m > SITA_M_MAX:
        raise InvalidParameter("m", m, f"<= {SITA_M_MAX} for policy={key}",
                               "one threshold per server is solved for")


def _check_sita_h(key: str, m: int, h: float | None) -> None:
    """``h`` is the one threshold of SITA with two servers, required by ``policy=sita``."""
    if key in ("sita", "fpi-sita") and h is not None and m != 2:
        raise InvalidParameter("h", h, "given only with m=2 (one threshold between two "
                               "servers)", f"m={m} needs {max(m - 1, 0)} thresholds; use "
                               "policy=sita-e or sita-opt")
    if key == "sita" and h is None:
        raise InvalidParameter("h", MISSING, "the SITA threshold for policy=sita (m=2); "
                               "or use policy=sita-e or sita-opt")


def _check_simulation(key: str, m: int, rho: float, law: Any, n_jobs: int,
                      sizes: str, scv_typed: float | None, n_batches: int = 30) -> None:
    """Refuse simulations that would take hours or whose confidence interval is not reliable."""
    if m * n_jobs > SIM_WORK_LIMIT:
        raise InvalidParameter("m", m, f"<= {int(SIM_WORK_LIMIT // n_jobs)} for a simulated "
                               f"policy ({key} with sizes={sizes})",
                               f"the simulation of {n_jobs} jobs costs m steps per job")
    # batch means need batches much longer than the relaxation time ~(1 + scv)/(1 - rho)^2 jobs
    batch = 0.9 * n_jobs / n_batches
    scv = float(law.scv)
    need = 10 * (1 + scv) / (1 - rho) ** 2
    if need > batch:
        exp_need = 10 * 2 / (1 - rho) ** 2
        if sizes == "h2" and exp_need <= batch:
            scv_max = batch * (1 - rho) ** 2 / 10 - 1
            raise InvalidParameter("scv", scv if scv_typed is None else scv_typed,
                                   f"<= {scv_max:.4g} for a simulated policy at "
                                   f"rho={rho:g}",
                                   f"{n_jobs} simulated jobs cannot resolve the relaxation time "
                                   f"~(1 + scv)/(1 - rho)^2 = {need / 10:.3g} jobs")
        rho_max = 1 - math.sqrt(10 * (1 + scv) / batch)
        raise InvalidParameter("rho", rho, f"<= {rho_max:.4g} for a simulated policy "
                               f"({key} with sizes={sizes})",
                               f"{n_jobs} simulated jobs cannot resolve the relaxation time "
                               f"~(1 + scv)/(1 - rho)^2 = {need / 10:.3g} jobs")


def solve_dispatch(policy: str, m: int, rho: float, sizes: str = "exp",
                   scv: float | None = None, h: float | None = None,
                   delta: float | None = None, umax: float | None = None,
                   n_jobs: int = 2_000_000, seed: int = 1, rng: Any = None) -> Result:
    """Mean response time of one dispatching policy (the module docstring describes the methods).

    Parameters
    ----------
    policy : str
        One of :data:`POLICY_CHOICES`.
    m : int
        Number of servers.
    rho : float
        Load per server, in (0, 1).
    sizes : {"exp", "uniform", "h2"}
        Size law with mean 1.
    scv : float, optional
        SCV of ``sizes="h2"`` (default 4); refused with another law.
    h : float, optional
        The SITA threshold (``policy="sita"`` or ``"fpi-sita"``, ``m = 2``).
    delta, umax : float, optional
        Value-iteration step (the fine grid is ``delta/2``) and backlog truncation
        (``policy="optimal"`` only).
    n_jobs, seed, rng
        Simulation length and seed (``rng``, e.g. the CLI's ``--seed``, overrides ``seed``).

    Raises
    ------
    InvalidParameter, ResourceLimit, StabilityError, NotConverged
        With the parameter named as typed on the command line.
    """
    try:
        return _solve_dispatch(policy, m, rho, sizes, scv, h, delta, umax, n_jobs,
                               seed if rng is None else rng)
    except InvalidParameter as exc:
        raise _user_error(exc) from None


def _solve_dispatch(policy: str, m: int, rho: float, sizes: str, scv: float | None,
                    h: float | None, delta: float | None, umax: float | None, n_jobs: int,
                    seed: Any) -> Result:
    start = time.perf_counter()
    key = str(policy).lower()
    if key not in POLICY_CHOICES:
        raise InvalidParameter("policy", policy, "one of " + ", ".join(POLICY_CHOICES))
    _check_given(key, sizes, scv, h, delta, umax)
    size_key = str(sizes).lower()
    law = get_sizes(sizes, DEFAULT_SCV if scv is None else scv)
    values: dict[str, Any]
    if key == "optimal":
        try:
            values = _solve_optimal(m, rho, law, delta, umax)
        except InvalidParameter as exc:
            if exc.name != "sizes" or size_key != "h2":
                raise
            raise InvalidParameter("scv", DEFAULT_SCV if scv is None else scv,
                                   "smaller for policy=optimal", str(exc)) from None
        exactness = Exactness.NUMERIC
    else:
        values = {}
        _check_sita_h(key, m, h)
        _check_m_for(key, m, law, n_jobs)
        thresholds = None if h is None else [float(h)]
        try:
            if key == "fpi-rnd":  # FPI from an equal split is LWL (symq.dispatch.symbolic)
                et = exact_mean_response("lwl", m, rho, law).ET
            elif key == "fpi-sita":
                raise InvalidParameter("policy", key, "a policy with an exact formula")
            else:
                et = exact_mean_response(key, m, rho, law, thresholds=thresholds).ET
            values.update(ET=float(et), method="exact")
            exactness = Exactness.EXACT
        except (InvalidParameter, TruncationError) as exc:
            # no exact formula (or, for JSQ, a CTMC too large to solve): simulate
            if isinstance(exc, InvalidParameter) and exc.name not in ("policy", "sizes") \
                    and not (key == "jsq" and exc.name == "m"):
                raise
            from .policies import get_policy
            from .simulation import simulate_dispatch

            _check_simulation(key, m, rho, law, n_jobs, size_key, scv)
            params = {} if h is None else {"h": float(h)}
            est = simulate_dispatch(get_policy(key, **params), m, rho, law, n_jobs=n_jobs,
                                    rng=seed, level=0.99)
            values.update(ET=float(est.ET.mean), ET_half_width=float(est.ET.half_width),
                          method="simulation", level=0.99)
            exactness = Exactness.SIMULATED
    if not (math.isfinite(values["ET"]) and values["ET"] > 0):
        raise SymqError(f"dispatch: the mean response time came out as {values['ET']!r}; the "
                        f"parameters (m={m}, rho={rho}, sizes={sizes}) are beyond the solver's "
                        "numerical range")
    return Result(model="dispatch",
                  params={"policy": key, "m": m, "rho": rho, "sizes": law.name},
                  values=values, method=str(values["method"]), exactness=exactness,
                  timings={"solve": time.perf_counter() - start})


DISPATCH = register_model(ModelSpec(
    name="dispatch",
    summary=("size-aware dispatching to m FCFS servers: mean response time of RND, RR, JSQ, "
             "LWL, SITA, FPI or the optimal policy by value iteration (Hyytiä & Righter 2024)"),
    parameters=(
        Parameter("policy", Choice(POLICY_CHOICES), typical="optimal",
                  description="dispatching policy: " + ", ".join(POLICY_CHOICES)),
        Parameter("m", IntegerAtLeast(1), typical=2, description="number of servers"),
        Parameter("rho", PositiveReal(), typical=0.4,
                  description="load per server, lam E[X]/m; must be < 1"),
        Parameter("sizes", Choice(SIZE_NAMES), required=False, default="exp",
                  description="job-size law with mean 1: " + ", ".join(SIZE_NAMES)),
        Parameter("scv", PositiveReal(), required=False,
                  description="SCV of the h2 size law (sizes=h2 only; default 4)"),
        Parameter("h", PositiveReal(), required=False,
                  description="SITA threshold (policy=sita or fpi-sita, m = 2)"),
        Parameter("delta", PositiveReal(), required=False,
                  description="value-iteration step (policy=optimal; delta/2 is the fine grid)"),
        Parameter("umax", PositiveReal(), required=False,
                  description="backlog truncation of value iteration (policy=optimal)"),
    ),
    solve=solve_dispatch,
    scalar_outputs=lambda r: {"ET": float(r.values["ET"])},
    paper="hyytia-righter",
))
