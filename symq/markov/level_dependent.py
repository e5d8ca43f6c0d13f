"""A declared chain with one unbounded level whose rates depend on the level: linear level
reduction on a truncation whose effect is checked.

The chain is read as in :mod:`symq.markov.levels` (the unbounded variable is the level, level
``n`` is the value ``low + n``; the phases of level 0 and of the levels ``n >= 1`` are found
there), but the blocks ``A0(n)`` (up), ``A1(n)`` (within the level) and ``A2(n)`` (down) are
evaluated at every level ``n`` from the declaration.  A jump that moves the level by more than
one is refused, and so is a move into a phase that the search of the first levels did not meet.

Solve at a truncation level ``L``.  The chain is *blocked* at ``L`` (the up moves of level
``L`` are left out) and solved by linear level reduction (Gaver, Jacobs & Latouche 1984,
"Finite birth-and-death models in randomly changing environments", Adv. Appl. Prob. 16:715-731):
backward from ``T(L) = A1(L)``, ``R(n) = A0(n) (-T(n+1))^{-1}`` and
``T(n) = A1(n) + R(n) A2(n+1)``; ``pi_0`` is the stationary law of the censored generator
``T(0)`` (GTH) and ``pi_(n+1) = pi_n R(n)``, normalized over the levels ``0 .. L``.  The
recursion is :func:`symq.markov.level_reduction.reduce_levels`, the one that
:class:`~symq.markov.level_reduction.LevelDependentQBD` (blocks given as numbers) calls too.

Truncation, what is checked.  ``L`` starts at :data:`START_LEVELS` (or higher, above the initial
level) and doubles, up to ``max_levels``, until both

* every output (and the mean level) changed from the solve at ``L/2`` by at most
  ``eps * max(1, |value|)``, and
* the mass near the truncation, ``P(level >= L - L/4)``, is below ``eps``.

Only then are the values returned; each output's bound is the larger of its change and that
mass (the checked quantities: a measure of the truncation's effect, not a proven bound).  If
``max_levels`` is reached first: :class:`~symq.core.errors.StabilityError` when the drift at the
largest level built is not negative, else :class:`~symq.core.errors.TruncationError`.

Drift.  At the largest level built, ``alpha A0(L) 1 - alpha A2(L) 1`` with ``alpha`` the
stationary law of ``A0(L) + A1(L) + A2(L)``; it must be negative (else ``StabilityError``
naming it), the mark of a chain that comes back from its high levels.

Examples
--------
M/M/infinity at ``lam/mu = 3``: ``E[N] = 3``, ``P(N = 0) = e^-3``.

>>> import math
>>> from symq.markov.chain import Jump, MarkovChain, StateVariable
>>> mminf = MarkovChain([StateVariable("n", 0, None)],
...                     [Jump("lam", {"n": "n + 1"}),
...                      Jump("n*mu", {"n": "n - 1"}, guard="n > 0", label="serve")],
...                     parameters=("lam", "mu"), outputs={"EN": "n", "P0": "n == 0"})
>>> law = level_dependent_stationary(mminf, {"lam": 3.0, "mu": 1.0})
>>> round(law["EN"], 10), abs(law["P0"] - math.exp(-3)) < 1e-12
(3.0, True)
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter, NotConverged, StabilityError, TruncationError

from .chain import MarkovChain
from .level_reduction import reduce_levels
from .levels import QBDStationaryLaw, _Levels, _phases, _rows, check_level_chain
from .qbd import DRIFT_TOL, _drift
from .statespace import evaluate, parameter_values

__all__ = ["level_dependent_stationary", "START_LEVELS"]

#: The first truncation level tried (above the initial level).
START_LEVELS = 64
#: The largest ``max |pi Q|`` accepted, relative to the largest exit rate of the levels built.
RESIDUAL_TOL = 1e-9


class _Blocks:
    """The blocks of the levels ``0 .. L`` of the chain blocked at ``L``, and the per-jump rates.

    ``up[n]``, ``local[n]`` (diagonal included) and ``down[n]`` for ``n = 1 .. L`` are
    ``(m, m)`` (``down[1]`` is unused: ``down1`` is ``(m, m0)``; ``up[top]`` holds the moves
    left out, for the drift only, and is not in ``local[top]``'s diagonal); level 0 has ``up0``
    and ``local0``.  ``rates`` are the per-jump rates at each state of the blocked chain."""

    def __init__(self, lv: _Levels, phases0: np.ndarray, phases: np.ndarray, top: int) -> None:
        m0, m = phases0.shape[0], phases.shape[0]
        at0, at = _rows(phases0), _rows(phases)
        states = np.vstack([lv.states(0, phases0)]
                           + [lv.states(n, phases) for n in range(1, top + 1)])
        self.states = states
        level = np.concatenate([np.zeros(m0, dtype=np.int64),
                                np.repeat(np.arange(1, top + 1), m)])
        row = np.concatenate([np.arange(m0), np.tile(np.arange(m), top)])
        self.level, self.row = level, row
        self.up0, self.local0 = np.zeros((m0, m)), np.zeros((m0, m0))
        self.down1 = np.zeros((m, m0))
        self.up = np.zeros((top + 1, m, m))
        self.local = np.zeros((top + 1, m, m))
        self.down = np.zeros((top + 1, m, m))
        self.rates: list[np.ndarray] = []
        for jump, (rate, delta, target) in zip(lv.chain.jumps, lv.moves(states), strict=True):
            # blocked at the top: its up moves stay in ``up[top]`` (for the drift) only
            self.rates.append(np.where((level == top) & (delta == 1), 0.0, rate))
            moving = np.flatnonzero(rate > 0)
            if moving.size == 0:
                continue
            n, d, r, v = level[moving], delta[moving], row[moving], rate[moving]
            width = target.shape[1]
            unique, inverse = np.unique(target[moving].reshape(moving.size, width), axis=0,
                                        return_inverse=True)
            inverse = inverse.reshape(-1)
            keys = [tuple(int(x) for x in u) for u in unique]
            into0 = n + d == 0
            col = np.empty(moving.size, dtype=np.int64)
            for u, key in enumerate(keys):
                for zero, index in ((True, at0), (False, at)):
                    pick = (inverse == u) & (into0 == zero)
                    if not pick.any():
                        continue
                    if key not in index:
                        i = int(moving[np.flatnonzero(pick)[0]])
                        raise InvalidParameter(
                            f"{jump.where}.update", lv.chain.describe(states[i]),
                            "a move into a phase met at the first levels (the phases are the "
                            f"same at every level {lv.name} >= {lv.low + 1})",
                            f"at {lv.chain.describe(states[i])} it moves to the phase {key}")
                    col[pick] = index[key]
            at_zero = n == 0
            for mask, block in ((at_zero & (d == 1), self.up0), (at_zero & (d == 0), self.local0),
                                ((n == 1) & (d == -1), self.down1)):
                np.add.at(block, (r[mask], col[mask]), v[mask])
            for step, stack in ((1, self.up), (0, self.local), (-1, self.down)):
                mask = ~at_zero & (d == step) & ~((n == 1) & (d == -1))
                np.add.at(stack, (n[mask], r[mask], col[mask]), v[mask])
        np.fill_diagonal(self.local0, np.diag(self.local0) - self.local0.sum(axis=1)
                         - self.up0.sum(axis=1))
        out = self.up.sum(axis=2) + self.local.sum(axis=2) + self.down.sum(axis=2)
        out[1] += self.down1.sum(axis=1)
        out[top] -= self.up[top].sum(axis=1)
        idx = np.arange(m)
        self.local[:, idx, idx] -= out

    def drift(self, n: int) -> tuple[float, float, float]:
        """``(alpha A0 1 - alpha A2 1, alpha A0 1, alpha A2 1)`` with the unblocked blocks of
        level ``n`` (``n >= 2``)."""
        A0, A2 = self.up[n], self.down[n]
        A1 = self.local[n].copy()
        np.fill_diagonal(A1, 0.0)
        np.fill_diagonal(A1, -(A1.sum(axis=1) + A0.sum(axis=1) + A2.sum(axis=1)))
        return _drift(A0, A1, A2)


def _law(b: _Blocks, top: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """``pi_0`` and ``pi_1 .. pi_top`` of the chain blocked at ``top``, by linear level
    reduction (:func:`symq.markov.level_reduction.reduce_levels`, which refuses an ``R(n)``
    below 0; the solve is also checked by its change between truncations)."""
    return reduce_levels(b.up0, b.local0, b.down1, b.up[:top], b.local[:top + 1],
                         b.down[:top + 1])


def _residual(b: _Blocks, pi0: np.ndarray, pis: np.ndarray) -> float:
    """``max |pi Q|`` of the blocked chain (``pis`` stacked: row ``n - 1`` is level ``n``)."""
    top = pis.shape[0]
    flow = np.einsum("ni,nij->nj", pis, b.local[1:])
    flow[0] += pi0 @ b.up0
    flow[1:] += np.einsum("ni,nij->nj", pis[:-1], b.up[1:top])
    if top > 1:
        flow[:-1] += np.einsum("ni,nij->nj", pis[1:], b.down[2:])
    flow0 = pi0 @ b.local0 + pis[0] @ b.down1
    return float(max(np.abs(flow).max(initial=0.0), np.abs(flow0).max(initial=0.0)))


def _outputs(lv: _Levels, b: _Blocks, pi: np.ndarray) -> dict[str, float]:
    """Each declared output and the mean level (key ``None``) under the flat law ``pi``."""
    chain = lv.chain
    found: dict[Any, float] = {}
    for name, out in chain.outputs.items():
        if out.kind == "throughput":
            found[name] = float(sum(pi @ b.rates[j] for j, jump in enumerate(chain.jumps)
                                    if jump.label == out.label))
            continue
        with np.errstate(all="ignore"):
            values = evaluate(out.expr, chain, b.states, lv.values)
        if out.kind == "probability":
            found[name] = min(max(float(pi @ (values != 0).astype(float)), 0.0), 1.0)
            continue
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameter(f"outputs.{name}", out.text, "a finite reward at every "
                                   "state", f"it is not finite at {chain.describe(b.states[i])}")
        found[name] = float(pi @ values)
    found[None] = lv.low + float(pi @ b.level)
    return found


def level_dependent_stationary(chain: MarkovChain, params: Mapping[str, Any] | None = None, *,
                               eps: float = 1e-12, max_levels: int = 100_000
                               ) -> QBDStationaryLaw:
    """The stationary law of a chain with one unbounded, level-dependent level, and its outputs.

    Parameters
    ----------
    chain : MarkovChain
        A declaration with exactly one variable of ``high=None`` (the level); its rates may
        depend on the level.
    params : mapping
        A value for every declared parameter.
    eps : float
        The accuracy checked: the change of every output from the solve at half the levels
        (relative to ``max(1, |value|)``) and the mass ``P(level >= L - L/4)``.
    max_levels : int
        The largest truncation level tried.

    Returns
    -------
    QBDStationaryLaw
        ``values``, ``bounds`` (per output the larger of its last change and the mass near the
        truncation), ``truncation_bound``, ``level``, the phases, ``drift`` (at the largest
        level built), ``mean_level``, ``levels_summed`` (the truncation level ``L``),
        ``residual`` (``max |pi Q|`` of the chain blocked at ``L``); ``eta`` is None (a
        level-dependent chain has no one caudal characteristic) and ``solution`` is None (no
        matrix-geometric form).

    Raises
    ------
    InvalidParameter
        No unbounded variable; a jump moving the level by more than one (named), or into a
        phase not met at the first levels; a rate, update or reward out of its domain.
    StabilityError
        The drift at the largest level built is not negative (the chain does not come back).
    TruncationError
        ``max_levels`` reached with a negative drift but the checks above not met.
    NotConverged
        The law found leaves ``max |pi Q|`` above :data:`RESIDUAL_TOL` times the largest exit
        rate (the balance equations are checked on the blocked chain, apart from the
        recursion).
    """
    started = time.perf_counter()
    check_level_chain(chain, eps)
    if not (isinstance(max_levels, int) and max_levels >= 8):
        raise InvalidParameter("max_levels", max_levels, "an integer >= 8")
    lv = _Levels(chain, parameter_values(chain, params))
    phases0, phases = _phases(lv)
    start = int(chain.initial[lv.k]) - lv.low + 1
    top = min(max(START_LEVELS, 4 * start), max_levels)
    previous: dict[Any, float] | None = None
    while True:
        b = _Blocks(lv, phases0, phases, top)
        pi0, levels = _law(b, top)
        pis = np.array(levels)
        pi = np.concatenate([pi0, pis.ravel()])
        found = _outputs(lv, b, pi)
        near = float(pis[top - top // 4 - 1:].sum())
        change = ({k: abs(v - previous[k]) for k, v in found.items()} if previous is not None
                  else None)
        if change is not None and near < eps and all(
                change[k] <= eps * max(1.0, abs(v)) for k, v in found.items()):
            break
        if top >= max_levels:
            drift, up, down = b.drift(top)
            if drift >= -DRIFT_TOL * max(up, down):
                _unstable(drift, up, down, lv.name, lv.low + top)
            worst = near if change is None else max(near, *change.values())
            raise TruncationError(
                "linear level reduction", f"{lv.name} (levels)", worst, eps, lv.low + top,
                "raise max_levels or eps")
        previous, top = found, min(2 * top, max_levels)
    drift, up, down = b.drift(top)
    if drift >= -DRIFT_TOL * max(up, down):
        _unstable(drift, up, down, lv.name, lv.low + top)
    residual = _residual(b, pi0, pis)
    scale = max(float(np.abs(b.local0).max(initial=0.0)), float(np.abs(b.local).max(initial=0.0)))
    if not residual <= RESIDUAL_TOL * max(scale, 1e-300):
        raise NotConverged(
            f"linear level reduction of the chain blocked at {lv.name} = {lv.low + top} "
            "(max |pi Q| relative to the largest exit rate)", residual / scale, RESIDUAL_TOL, top,
            "the law does not solve the balance equations; report this chain")
    mean_level = found.pop(None)
    bounds = {k: max(change[k], near) for k in found}
    return QBDStationaryLaw(
        values=found, bounds=bounds,
        truncation_bound=max([near, *bounds.values()]), level=lv.name,
        phase_variables=tuple(chain.variables[i].name for i in lv.bounded),
        phases0=phases0, phases=phases, eta=None, drift=drift, mean_level=mean_level,
        levels_summed=top, residual=residual,
        solution=None,  # type: ignore[arg-type]  # no matrix-geometric form
        method=f"linear level reduction, truncated at level {lv.name} = {lv.low + top}",
        seconds=time.perf_counter() - started)


def _unstable(drift: float, up: float, down: float, name: str, level: int) -> None:
    error = StabilityError(
        f"the level-dependent chain is not positive recurrent: its drift alpha A0 1 - alpha A2 1 "
        f"= {drift:.6g} >= 0 at {name} = {level} (mean up rate {up:.6g}, mean down rate "
        f"{down:.6g}, alpha the stationary law of A0 + A1 + A2 there); it needs a negative "
        "drift at large levels")
    error.drift = drift  # type: ignore[attr-defined]
    raise error
