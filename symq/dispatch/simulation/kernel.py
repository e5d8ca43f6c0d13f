r"""The numba kernel of the dispatching simulator and one run of it.

:func:`run_policy` simulates ``n_jobs`` jobs of a :class:`~symq.dispatch.policies.BoundPolicy`
(Poisson arrivals, backlogs drained by the server speeds, the decision of
:func:`~symq.dispatch.policies.decisions.choose_server` or of a compiled score) and returns
:class:`RunSums`: per-batch means of the response and waiting times and the fraction of jobs
that wait (P(wait): the job finds its server's backlog positive), per-server loads and the
per-size-bin sums; :func:`~symq.dispatch.simulation.simulate.simulate_dispatch` turns runs into
intervals.  The kernel keeps its state in arrays, so a run continues across the chunks of
:func:`symq.core.simrun.run_chunked` and is the same with and without a progress bar.  It is
compiled once per policy code, with or without speeds and job counts (these three are constants
of the compiled loop, so that one policy's decision, inlined, is all that is left of the
branches; tests/dispatch/test_simulation_kernels.py checks that each code reaches its own),
typed for a first-class score (:data:`~symq.dispatch.policies.score.SCORE_TYPE`) and cached on
disk.

Examples
--------
>>> import numpy as np
>>> from symq.dispatch.policies import get_policy
>>> from symq.laws import Exponential
>>> pol = get_policy("rnd").bind(2, 0.5, Exponential(1.0))
>>> sums = run_policy(pol, Exponential(1.0), 200_000, 20_000, 10, np.random.default_rng(1), False,
...                   "rnd", 64, np.empty(0))
>>> bool(abs(sums.T.mean() - 2.0) < 0.1)      # M/M/1 per server: 1/(1 - rho)
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import types

from symq.core.errors import InvalidParameter
from symq.core.simrun import kernel_seed, run_chunked, seed_numba
from symq.laws import Distribution, Hyperexponential

from ..policies import BoundPolicy

# compiled with the decisions (and simplex_value) inside: numba's cache does not track those
# files, so a change to them needs a change here too (the capped simplex's table_cap)
from ..policies.decisions import LOOKUP_SIMPLEX, RR, SCORE, choose_general, choose_unit
from ..policies.score import SCORE_TYPE, nan_score, null_score, score_argmin
from ..policies.speeds import score_argmin_speeds

__all__ = ["RunSums", "run_policy"]

_CHUNK = 1 << 20
_OK, _OVERFLOW, _NAN_SCORE = 0, 1, 2


def _make_kernel(CODE: int, HET: bool, TRACK: bool) -> Any:
    """The kernel's Python function for policy code ``CODE``, speeds (``HET``: non-empty
    ``spd``) and job counts (``TRACK``): compile-time constants of the closure, so that one
    policy's decision, inlined, is all that is left of the branches in the job loop."""

    def kernel(code, lam, xs, exp_mean, n_do, n_warm, batch_size, n_batches, thr, lam_i,
               rho_i, v, delta, c_M, vp, B, spd, cum, tail_slope, tail_cross, u, cnt, head, comp,
               state_i,
               state_f, sum_T, sum_W, sum_P, work, track, score, score_params, edges, bin_T,
               bin_n):  # pragma: no cover - numba
        """Simulate ``n_do`` more jobs; the state lives in the arrays (runs continue across
        chunks).

        ``state_i = [jobs done, rr pointer]``, ``state_f = [t, t at the first post-warm-up
        arrival, t at the last arrival]``.  Sizes come from ``xs`` unless ``exp_mean > 0``.
        ``code`` and ``track`` are this kernel's ``CODE`` and ``TRACK`` (keep the job counts:
        JSQ, JIQ-JSQ, a score reading ``n``).  ``score`` (a first-class function of
        :data:`~symq.dispatch.policies.score.SCORE_TYPE`) decides for ``SCORE``.  ``spd``:
        server speeds (empty: unit speeds, the unit-speed arithmetic exactly as without
        speeds; non-empty exactly when ``HET``).  ``sum_T``, ``sum_W``, ``sum_P``: per batch,
        the sums of T, of W and of the jobs that wait (find their server's backlog positive).
        ``bin_T``, ``bin_n`` (batches x bins, zero
        bins: off): the sums of T and the job counts per size bin
        ``edges[q] <= x < edges[q + 1]``.
        """
        m = u.shape[0]
        cap = comp.shape[1]
        nbins = bin_T.shape[1]
        k = state_i[0]
        rr = state_i[1]
        t = state_f[0]
        status = _OK
        # the batch of job k >= n_warm and its place in it, counted instead of divided
        b = (k - n_warm) // batch_size if k > n_warm else 0
        r = (k - n_warm) - b * batch_size if k > n_warm else 0
        # the open batch's sums and the last arrival in registers, stored when it closes
        acc_T = sum_T[b] if b < n_batches else 0.0
        acc_W = sum_W[b] if b < n_batches else 0.0
        acc_P = sum_P[b] if b < n_batches else 0.0
        last = state_f[2]
        for j in range(n_do):
            a = -math.log(1.0 - np.random.random()) / lam
            t += a
            if HET:
                for i in range(m):
                    w = u[i] - a * spd[i]
                    u[i] = w if w > 0.0 else 0.0
            else:
                for i in range(m):
                    w = u[i] - a
                    u[i] = w if w > 0.0 else 0.0
            if TRACK:
                for i in range(m):
                    while cnt[i] > 0 and comp[i, head[i]] <= t:
                        h = head[i] + 1
                        head[i] = h if h < cap else 0
                        cnt[i] -= 1
            if exp_mean > 0.0:
                x = -math.log(1.0 - np.random.random()) * exp_mean
            else:
                x = xs[j]
            if CODE == SCORE:
                if HET:
                    s = score_argmin_speeds(score, score_params, u, cnt, spd, x)
                else:
                    s = score_argmin(score, score_params, u, cnt, x)
                if s < 0:
                    status = _NAN_SCORE
                    break
            elif HET or CODE == LOOKUP_SIMPLEX:
                s = choose_general(CODE, u, cnt, x, rr, thr, lam_i, rho_i, v, delta, c_M, vp,
                                   B, spd, cum, tail_slope, tail_cross)
            else:   # the unit-speed decision of CODE alone (choose_unit is inlined)
                s = choose_unit(CODE, u, cnt, x, rr, thr, lam_i, rho_i, v, delta, c_M,
                                tail_slope, tail_cross)
            if CODE == RR:
                rr = rr + 1 if rr + 1 < m else 0
            wait = u[s]
            if HET:
                resp = (wait + x) / spd[s]
                queued = wait / spd[s]
            else:
                resp = wait + x
                queued = wait
            if TRACK:
                if cnt[s] >= cap:
                    status = _OVERFLOW
                    break
                p = head[s] + cnt[s]
                comp[s, p if p < cap else p - cap] = t + resp if HET else t + wait + x
                cnt[s] += 1
            u[s] = wait + x
            if k >= n_warm:
                if k == n_warm:
                    state_f[1] = t
                if b < n_batches:
                    acc_T += resp
                    acc_W += queued
                    acc_P += 1.0 if wait > 0.0 else 0.0
                    work[s] += x
                    last = t
                    if nbins > 0 and x >= edges[0] and x < edges[nbins]:
                        lo = 0
                        hi = nbins
                        while hi - lo > 1:      # edges[lo] <= x < edges[hi]
                            mid = (lo + hi) // 2
                            if x >= edges[mid]:
                                lo = mid
                            else:
                                hi = mid
                        bin_T[b, lo] += resp
                        bin_n[b, lo] += 1.0
                r += 1
                if r == batch_size:
                    if b < n_batches:
                        sum_T[b] = acc_T
                        sum_W[b] = acc_W
                        sum_P[b] = acc_P
                    r = 0
                    b += 1
                    acc_T = sum_T[b] if b < n_batches else 0.0
                    acc_W = sum_W[b] if b < n_batches else 0.0
                    acc_P = sum_P[b] if b < n_batches else 0.0
            k += 1
        if b < n_batches:
            sum_T[b] = acc_T
            sum_W[b] = acc_W
            sum_P[b] = acc_P
        state_f[2] = last
        state_i[0] = k
        state_i[1] = rr
        state_f[0] = t
        return status

    return kernel


@functools.cache
def _kernel(code: int, het: bool, track: bool) -> Any:
    """The simulation kernel of one policy code, with or without speeds and job counts, typed
    for a first-class score (compiled once, cached on disk)."""
    f8, i8 = types.float64, types.int64
    a1, a2, i1 = f8[::1], f8[:, ::1], i8[::1]
    r1, r2 = (types.Array(f8, d, "C", readonly=True) for d in (1, 2))   # inputs: any array
    rb = types.Array(i8, 2, "C", readonly=True)
    sig = i8(i8, f8, r1, f8, i8, i8, i8, i8, r1, r1, r1, r2, f8, f8, r1, rb, r1, r1, f8, r1, a1, i1,
             i1, a2, i1, a1, a1, a1, a1, a1, types.boolean, SCORE_TYPE, a1, r1, a2, a2)
    return numba.njit(sig, cache=True)(_make_kernel(int(code), bool(het), bool(track)))


@dataclass
class RunSums:
    """Per-batch outputs of one run: means of T and W and the fraction of jobs that wait
    (``P``), per-server loads, per-bin sums of T and job counts (``n_batches`` rows)."""

    T: np.ndarray
    W: np.ndarray
    P: np.ndarray
    loads: np.ndarray
    bin_T: np.ndarray
    bin_n: np.ndarray


def draw_sizes(sizes: Distribution, n: int, gen: np.random.Generator) -> np.ndarray:
    """``n`` job sizes from ``gen``: the law's own ``sample``, except for a two-phase
    hyperexponential law, drawn as the simulator always drew its ``h2`` sizes (the phase by
    ``u < p_2``, then an exponential holding time), so that its random stream stays the same."""
    if isinstance(sizes, Hyperexponential) and sizes.rates.size == 2:
        phase = (gen.random(n) < sizes.probabilities[1]).astype(np.int64)
        return gen.exponential(1.0, size=n) / sizes.rates[phase]
    return np.asarray(sizes.sample(n, rng=gen), dtype=float)


def run_policy(pol: BoundPolicy, sizes: Distribution, n_jobs: int, n_warm: int, n_batches: int,
               gen: np.random.Generator, progress: bool, desc: str, max_queue: int,
               edges: np.ndarray) -> RunSums:
    """One run of ``n_jobs`` jobs: batch means of T, W and of waiting (the fraction of jobs
    that find their server's backlog positive), per-server loads, bin sums.

    The kernel keeps its state between calls of :func:`symq.core.simrun.run_chunked`; sizes
    other than exponential are drawn in blocks of ``2**20`` whatever the chunks, so the run is
    the same with and without a progress bar.
    """
    m = pol.m
    batch_size = (n_jobs - n_warm) // n_batches
    n_warm = n_jobs - batch_size * n_batches  # leftover jobs are extra warm-up
    u = np.zeros(m)
    track = pol.tracks_counts
    score = pol.score if pol.code == SCORE else null_score()
    score_params = np.ascontiguousarray(pol.score_params, dtype=float)
    kernel = _kernel(pol.code, pol.speeds is not None, track)
    cnt = np.zeros(m, dtype=np.int64)
    head = np.zeros(m, dtype=np.int64)
    comp = np.zeros((m, max_queue if track else 1))
    state_i = np.zeros(2, dtype=np.int64)
    state_f = np.zeros(3)
    sum_T = np.zeros(n_batches)
    sum_W = np.zeros(n_batches)
    sum_P = np.zeros(n_batches)
    work = np.zeros(m)
    nbins = max(edges.size - 1, 0)
    bin_T = np.zeros((n_batches, nbins))
    bin_n = np.zeros((n_batches, nbins))
    exp_mean = float(sizes.mean()) if sizes.is_exponential else 0.0
    arrays = pol.arrays()
    seed_numba(kernel_seed(gen))
    block = {"xs": np.empty(0), "pos": 0, "drawn": 0}
    done = 0

    def step(stop: int) -> tuple[int, bool]:
        nonlocal done
        while done < stop:
            if exp_mean > 0:
                xs, n_do = block["xs"], stop - done
            else:
                if block["pos"] == block["xs"].size:       # next block of pre-drawn sizes
                    n_new = min(_CHUNK, n_jobs - block["drawn"])
                    xs = draw_sizes(sizes, n_new, gen)
                    block.update(xs=np.ascontiguousarray(xs, dtype=float),
                                 pos=0, drawn=block["drawn"] + n_new)
                n_do = min(stop - done, block["xs"].size - block["pos"])
                xs = block["xs"][block["pos"]:block["pos"] + n_do]
                block["pos"] += n_do
            status = kernel(pol.code, pol.lam, xs, exp_mean, n_do, n_warm, batch_size,
                            n_batches, *arrays, u, cnt, head, comp, state_i, state_f,
                            sum_T, sum_W, sum_P, work, track, score, score_params, edges,
                            bin_T, bin_n)
            if status == _NAN_SCORE:
                raise nan_score(pol.name, f"backlogs u={u.tolist()}, job {int(state_i[0])}")
            if status != _OK:
                raise InvalidParameter("max_queue", max_queue, "larger than the longest queue "
                                       "whose jobs are counted", "a server held max_queue jobs; "
                                       "increase max_queue")
            done += n_do
        return done, False

    run_chunked(step, n_jobs, progress=progress, desc=desc, unit="job")
    with np.errstate(invalid="ignore"):
        span = state_f[2] - state_f[1]  # inf - inf at a load below 1e-300: the loads are 0
    loads = work / span if span > 0 else np.zeros(m) if math.isnan(span) else np.full(m, np.nan)
    if pol.speeds is not None:
        loads = loads / pol.speeds
    return RunSums(sum_T / batch_size, sum_W / batch_size, sum_P / batch_size, loads, bin_T,
                   bin_n)
