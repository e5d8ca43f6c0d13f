r"""The numba draws of a phase-type law, for the simulators' kernels.

A phase-type law :math:`PH(\alpha, A)` (Neuts 1981) is the absorption time of a Markov chain
with initial law :math:`\alpha` and sub-generator :math:`A`.  A numba kernel cannot call
:meth:`PhaseType.sample <symq.laws.phase_type.PhaseType.sample>`; it draws from the tables of
:meth:`~symq.laws.phase_type.PhaseType.jump_tables` (the embedded chain
:math:`P_{ij} = A_{ij} / (-A_{ii})` with absorption, and the holding rates :math:`-A_{ii}`) or
:meth:`~symq.laws.phase_type.PhaseType.uniformised_tables` (the uniformised chain
:math:`I + A/q` with the exit column :math:`-A \mathbf 1 / q`) with the functions here, which
draw from numba's own random stream (seeded by :func:`symq.core.simrun.seed_numba`).  Each
function draws the same uniforms in the same order as the loops it replaced in the JSQ(d) and
attained-service kernels, so that their random streams are unchanged, and is inlined into
its caller by numba (``inline="always"``), so that a kernel runs as fast as with the loops
written in place.

This module imports numba: only simulators import it, never ``import symq``.

Examples
--------
>>> import numpy as np
>>> from symq.core.simrun import seed_numba
>>> from symq.laws import PhaseType
>>> alpha_cum, rates, jump_cum = PhaseType([1.0], [[-2.0]]).jump_tables()
>>> seed_numba(1)
>>> x = np.array([ph_absorption_time(alpha_cum, rates, jump_cum) for _ in range(20_000)])
>>> bool(abs(x.mean() - 0.5) < 0.02)
True
>>> bool(first_phase(np.array([0.25, 1.0])) in (0, 1))
True
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["exponential", "first_phase", "next_phase", "ph_absorption_time"]


@numba.njit(cache=True, inline="always")
def exponential(rate: float) -> float:
    """One exponential time of rate ``rate``: ``-log(1 - U) / rate`` (one uniform ``U``)."""
    return -math.log(1.0 - np.random.random()) / rate


@numba.njit(cache=True, inline="always")
def first_phase(alpha_cum: np.ndarray) -> int:
    """The initial phase, drawn from the cumulative initial law ``alpha_cum`` (one uniform).

    ``alpha_cum`` is the first table of :meth:`~symq.laws.phase_type.PhaseType.jump_tables`
    or :meth:`~symq.laws.phase_type.PhaseType.uniformised_tables` (last entry exactly 1).
    """
    m = alpha_cum.shape[0]
    v = np.random.random()
    ph = 0
    while ph < m - 1 and v >= alpha_cum[ph]:
        ph += 1
    return ph


@numba.njit(cache=True, inline="always")
def next_phase(table_cum: np.ndarray, ph: int, v: float) -> int:
    """The phase after ``ph`` for the uniform ``v`` (given, not drawn), or ``m`` for absorption.

    ``table_cum`` has shape ``(m, m + 1)``: row ``ph`` is the cumulative law of the next phase
    ``0..m-1`` followed by absorption (last entry exactly 1), the jump table of
    :meth:`~symq.laws.phase_type.PhaseType.jump_tables` or the transition table of
    :meth:`~symq.laws.phase_type.PhaseType.uniformised_tables` (where ``ph`` itself is a
    possible answer: a self-loop).  The caller draws ``v``, so that one uniform may serve
    several choices (the JSQ(d) kernel's event type, server and phase).
    """
    m = table_cum.shape[0]
    nxt = 0
    while nxt < m and v >= table_cum[ph, nxt]:
        nxt += 1
    return nxt


@numba.njit(cache=True, inline="always")
def ph_absorption_time(alpha_cum: np.ndarray, rates: np.ndarray, jump_cum: np.ndarray) -> float:
    """One phase-type time by walking the chain: an initial phase, then in each visited phase
    an exponential holding time of rate ``rates[ph]`` and a jump of the embedded chain, until
    absorption.

    The tables are those of :meth:`~symq.laws.phase_type.PhaseType.jump_tables`; a phase whose
    row surely exits (zeros in its phase columns) absorbs without drawing the jump.
    """
    m = alpha_cum.shape[0]
    ph = first_phase(alpha_cum)
    x = 0.0
    while True:
        x += exponential(rates[ph])
        if jump_cum[ph, m - 1] <= 0.0:  # absorption is certain from this phase
            return x
        nxt = next_phase(jump_cum, ph, np.random.random())
        if nxt >= m:
            return x
        ph = nxt
