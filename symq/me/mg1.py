r"""The ``mg1-sim`` model: an M/G/1 FCFS queue by simulation, with the exact P-K mean
(:data:`MG1_SIM`, listed in :mod:`symq.me.registration`).

``symq solve mg1-sim lam=0.7 sizes=h2 scv=4`` simulates the queue by the Lindley recursion
(:func:`symq.me.queueing.simulate_mg1_waiting`) with sizes of a named law of
:mod:`symq.laws` (mean ``mean``, squared coefficient of variation ``scv``), and returns

* ``EW``, ``ET``: batch-means confidence intervals of the mean waiting and response times
  (``ET = EW + E[X]``: the interval of ``EW`` shifted by the exactly known mean size, a valid
  interval for :math:`E[T] = E[W] + E[X]` with the same coverage);
* ``EW_exact``, ``ET_exact``: the Pollaczek-Khinchine mean (Kleinrock, *Queueing Systems I*,
  1975, eq. 5.76; Asmussen, *Applied Probability and Queues*, 2003, Section VIII.5)

  .. math::

      E[W] = \frac{\lambda E[X^2]}{2(1-\rho)} = \frac{\rho}{1-\rho}\,\frac{1 + c_s^2}{2}\,E[X],
      \qquad \rho = \lambda E[X] < 1,

  computed from ``lam``, ``mean`` and ``scv`` alone (:math:`E[X^2] = E[X]^2 (1 + c_s^2)`), an
  exact reference independent of the simulation;
* ``rho``, the load.

Kingman's heavy-traffic formula for the GI/G/1 queue, :math:`E[W] \approx \frac{\rho}{1-\rho}
\frac{c_a^2 + c_s^2}{2} E[X]`, is exact for Poisson arrivals (:math:`c_a^2 = 1`), so a claims file
can check it against ``mg1-sim:EW`` within the CI and ``mg1-sim:EW_exact`` to rounding.

Examples
--------
>>> r = MG1_SIM.run({"lam": 0.5, "sizes": "det", "n_jobs": 200_000}, rng=1)
>>> r["EW_exact"], r["EW"].distance(r["EW_exact"]) < 4
(0.5, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from symq.core.errors import StabilityError
from symq.core.parameters import Parameter, PositiveReal
from symq.core.randomness import RngLike
from symq.core.registry import ModelSpec
from symq.core.result import Exactness, Result, ResultBase
from symq.core.simrun import run_parameters
from symq.core.simstats import ConfidenceInterval
from symq.laws import law_scv, size_law, size_parameters

from .queueing import simulate_mg1_waiting

__all__ = ["MG1_SIM", "MG1Simulation", "pollaczek_khinchine_EW", "solve_mg1_sim"]

NAME = "mg1-sim"

#: Simulated customers by default (about 0.1 to 0.5 s).
DEFAULT_JOBS = 1_000_000


def pollaczek_khinchine_EW(lam: float, mean: float, scv: float) -> float:
    r"""The Pollaczek-Khinchine mean waiting time :math:`\lambda E[X^2]/(2(1-\rho))` of M/G/1
    FCFS with :math:`E[X^2] = E[X]^2(1 + c_s^2)` (Kleinrock 1975, eq. 5.76).

    Raises
    ------
    StabilityError
        If :math:`\rho = \lambda E[X] \ge 1`.

    Examples
    --------
    >>> pollaczek_khinchine_EW(0.5, 1.0, 1.0)     # M/M/1: rho/(1 - rho) E[X]
    1.0
    """
    rho = lam * mean
    if not rho < 1:
        raise StabilityError(f"load rho = lam*mean = {lam:g}*{mean:g} = {rho:g} must be < 1 for "
                             "a stationary M/G/1 queue")
    return lam * mean * mean * (1.0 + scv) / (2.0 * (1.0 - rho))


@dataclass(frozen=True)
class MG1Simulation(ResultBase):
    """An M/G/1 FCFS simulation beside the exact Pollaczek-Khinchine mean (``mg1-sim``).

    Attributes
    ----------
    EW, ET : ConfidenceInterval
        Batch-means intervals of the mean waiting and response times (``ET`` is the interval
        of ``EW`` shifted by the exactly known mean size).
    EW_exact, ET_exact : float
        The Pollaczek-Khinchine means (:func:`pollaczek_khinchine_EW`).
    rho : float
        The load ``lam * mean``.
    method : str
    exactness : Exactness
        ``simulated``.
    seconds : float
        Wall time of the simulation.
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "EW_exact", "rho")

    EW: ConfidenceInterval
    ET: ConfidenceInterval
    EW_exact: float
    ET_exact: float
    rho: float
    method: str = ("Lindley recursion, batch means (MSER-5 warm-up, lag-1 batch test); exact "
                   "Pollaczek-Khinchine mean")
    exactness: Exactness = Exactness.SIMULATED
    seconds: float = 0.0


def solve_mg1_sim(lam: float, sizes: str = "exp", mean: float = 1.0, scv: float | None = None,
                  n_jobs: int = DEFAULT_JOBS, n_batches: int = 40, level: float = 0.95,
                  rng: RngLike = None, progress: bool = False) -> MG1Simulation:
    """Simulate an M/G/1 FCFS queue and give the exact P-K mean beside the estimates.

    Parameters
    ----------
    lam : float
        Arrival rate; ``lam * mean < 1``.
    sizes, mean, scv
        The job-size law, :func:`symq.laws.size_law`.
    n_jobs, n_batches, level
        Customers simulated (the warm-up is chosen from the data, MSER-5), batches and
        confidence level of the intervals (:func:`symq.core.simoutput.analyse_series`).
    rng : seed or numpy Generator
        Randomness (same seed, same result).
    progress : bool, default False
        A tqdm bar on stderr (same result without).

    Returns
    -------
    MG1Simulation
        ``EW``, ``ET`` (ConfidenceInterval), ``EW_exact``, ``ET_exact``, ``rho``.

    Raises
    ------
    InvalidParameter
        Naming ``sizes``, ``mean``, ``scv``, ``n_batches`` or ``level``; ``n_jobs`` when the
        run is shorter than the relaxation time at the load asks (with the ``n_jobs`` needed,
        :func:`symq.core.simoutput.require_run_length`).
    StabilityError
        If ``lam * mean >= 1``.
    """
    start = time.perf_counter()
    c2 = law_scv(sizes, scv)
    law = size_law(sizes, mean, scv)
    exact = pollaczek_khinchine_EW(lam, mean, c2)
    est = simulate_mg1_waiting(law, lam, n_jobs=n_jobs, rng=rng, n_batches=n_batches,
                               level=level, progress=progress)
    ew = est.EW
    et = ConfidenceInterval(ew.mean + mean, ew.half_width, ew.level, ew.n, ew.method,
                            run_length=ew.run_length, doubt=ew.doubt)
    return MG1Simulation(EW=ew, ET=et, EW_exact=exact, ET_exact=exact + mean, rho=lam * mean,
                         seconds=time.perf_counter() - start)


def _scalar_outputs(result: Result) -> dict[str, Any]:
    v = result.values
    return {"EW": v["EW"].mean, "EW_half_width": v["EW"].half_width, "ET": v["ET"].mean,
            "EW_exact": v["EW_exact"], "rho": v["rho"]}


MG1_SIM = ModelSpec(
    name=NAME,
    summary=("M/G/1 FCFS queue by simulation (Lindley recursion): EW, ET with confidence "
             "intervals, and the exact Pollaczek-Khinchine EW"),
    parameters=(
        Parameter("lam", PositiveReal(), typical=0.5,
                  description="arrival rate; lam*mean must be < 1"),
        *size_parameters("exp"),
        *run_parameters(DEFAULT_JOBS, n_batches=40,
                        jobs="customers simulated (warm-up included, chosen by MSER-5)"),
    ),
    solve=solve_mg1_sim,
    scalar_outputs=_scalar_outputs,
    outputs=("EW", "ET", "EW_exact", "ET_exact", "rho"),
)
