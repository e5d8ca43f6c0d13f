r"""The PH/PH/1 FCFS queue by matrix-geometric methods: a second exact route to the GI/G/1 wait.

With phase-type interarrival times :math:`PH(\alpha, T)` (exit rates :math:`t = -T\mathbf 1`)
and services :math:`PH(\beta, S)` (:math:`s = -S\mathbf 1`), the number in system and the two
phases form a level-independent QBD (Neuts 1981, *Matrix-Geometric Solutions in Stochastic
Models*, ch. 3; Latouche & Ramaswami 1999, ch. 6): level 0 has the arrival phase only, level
:math:`n \ge 1` the pair (arrival phase, service phase), and

.. math::

    B_1 = T,\quad B_0 = t\alpha \otimes \beta,\quad B_2 = I \otimes s,\qquad
    A_0 = t\alpha \otimes I,\quad A_1 = T \oplus S,\quad A_2 = I \otimes s\beta.

:func:`symq.markov.qbd.solve_qbd` gives :math:`\pi_n = \pi_1 R^{n-1}` with its residual.  By
Little's law on the waiting room, :math:`E[W] = (E[N] - P(N \ge 1))/\lambda` with
:math:`\lambda = 1/E[A]`; an arrival comes from arrival phase :math:`j` at rate :math:`t_j`,
so it finds the server busy with probability :math:`P(W > 0) = \sum_{n \ge 1} \pi_n (t \otimes
\mathbf 1)/\lambda = \pi_1 (I - R)^{-1} (t \otimes \mathbf 1)/\lambda`.  It is independent of the
spectral factorisation of :mod:`symq.me.gg1_spectral` (roots of :math:`A^*(-s) S^*(s) = 1`),
which it checks.

Examples
--------
>>> from symq.laws import Erlang, Exponential
>>> r = ph_ph1_waiting(Erlang(2, 1 / 0.8), Exponential(1.0))   # E2/M/1: rho = 0.8
>>> round(r.P_wait, 9), round(r.EW, 9)                         # sigma, sigma/(mu (1 - sigma))
(0.739852949, 2.843979767)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from symq.core.errors import StabilityError
from symq.core.result import Exactness, ResultBase
from symq.laws import as_phase_type
from symq.markov.qbd import solve_qbd

__all__ = ["PHPH1Waiting", "ph_ph1_waiting"]


@dataclass(frozen=True)
class PHPH1Waiting(ResultBase):
    """The PH/PH/1 FCFS queue's waiting time and number in system (module docstring).

    Attributes
    ----------
    EW : float
        Mean waiting time.
    P_wait : float
        Probability that an arrival waits.
    EN : float
        Mean number in system (time average).
    rho : float
        Load :math:`E[S]/E[A]`.
    eta : float
        Caudal characteristic: :math:`P(N \\ge n)` decays like :math:`\\eta^n`.
    residual : float
        The QBD solver's largest relative residual.
    phases : int
        Phases per level (``m_a m_s``).
    method, exactness, seconds
    """

    summary: ClassVar[tuple[str, ...]] = ("EW", "P_wait", "rho", "residual")

    EW: float
    P_wait: float
    EN: float
    rho: float
    eta: float
    residual: float
    phases: int
    method: str = "QBD of (number in system, phases): logarithmic reduction, Little's law"
    exactness: Exactness = Exactness.NUMERIC
    seconds: float = 0.0


def ph_ph1_waiting(interarrivals: Any, sizes: Any) -> PHPH1Waiting:
    """The PH/PH/1 FCFS waiting time by matrix-geometric methods (module docstring).

    Parameters
    ----------
    interarrivals, sizes : law
        Phase-type laws (anything :func:`symq.laws.as_phase_type` takes: a ``PhaseType``, an
        ``(alpha, A)`` pair, an exponential, Erlang or hyperexponential law).

    Raises
    ------
    InvalidParameter
        Naming ``interarrivals`` or ``sizes`` for a law without a phase-type form.
    StabilityError
        :math:`\\rho = E[S]/E[A] \\ge 1`.
    NotConverged
        The QBD solver's residual is above its acceptance level.
    """
    start = time.perf_counter()
    arrivals = as_phase_type(interarrivals, "interarrivals")
    service = as_phase_type(sizes, "sizes")
    alpha, T = arrivals.alpha, arrivals.A
    beta, S = service.alpha, service.A
    t, s = -T.sum(axis=1), -S.sum(axis=1)
    lam = 1.0 / float(arrivals.mean())
    rho = float(service.mean()) * lam
    if not rho < 1.0:
        raise StabilityError(f"load rho = E[S]/E[A] = {rho:.6g} must be < 1 for a stationary "
                             "PH/PH/1 queue")
    ia, is_ = np.eye(alpha.size), np.eye(beta.size)
    renew = np.outer(t, alpha)
    law = solve_qbd(B1=T, B0=np.kron(renew, beta[None, :]), B2=np.kron(ia, s[:, None]),
                    A0=np.kron(renew, is_), A1=np.kron(T, is_) + np.kron(ia, S),
                    A2=np.kron(ia, np.outer(s, beta)))
    busy = np.linalg.solve((np.eye(law.R.shape[0]) - law.R).T, law.pi1)   # sum_{n>=1} pi_n
    p_busy = float(busy.sum())
    p_wait = float(busy @ np.kron(t, np.ones(beta.size))) / lam
    ew = (law.mean_level - p_busy) / lam
    return PHPH1Waiting(ew, p_wait, law.mean_level, rho, law.eta, law.residual,
                        alpha.size * beta.size, seconds=time.perf_counter() - start)
