r"""Density check, quantiles and random variates of an ME law.

An ME *function* need not be a density (a Padé fit may be negative somewhere), so the verbs that
need a distribution first check it numerically (:func:`sampling_table`: the necessary pole
conditions, then the sign of :math:`f` and the monotonicity of :math:`F` on a grid) and raise
:class:`~symq.me.evaluation.NotADistribution` otherwise.  The grid then brackets every quantile;
safeguarded Newton steps on :math:`F(t) = p` (lower half) or :math:`\log \bar F(t) = \log q`
(upper half) refine it to a few ulps, so :func:`sample` is the exact inversion of :math:`F` up to
float64 rounding.  Certified nonnegativity is the job of :mod:`symq.me.certification`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from symq.core.errors import InvalidParameter, NotConverged
from symq.core.randomness import RngLike, as_generator
from symq.laws import probabilities_in_unit_interval

from ._context import mp
from .evaluation import (
    EPS,
    FLOAT_DPS,
    NotADistribution,
    finite_array,
    float_form,
    float_values,
    pole_problem,
)
from .polynomials import hermite_form
from .transform import RationalLST

__all__ = ["sampling_table", "inverse", "sample"]


def sampling_table(lst: RationalLST, cache: dict[Any, Any]) -> dict[str, Any]:
    """Sampling grid with cdf/ccdf values; raises NotADistribution if f is not a density.

    The outcome (the table, or the error) is cached in ``cache``.
    """
    if "table" in cache:
        table = cache["table"]
        if isinstance(table, NotADistribution):
            raise table
        return table
    try:
        table = _build_table(lst, cache)
    except NotADistribution as exc:
        cache["table"] = exc
        raise
    cache["table"] = table
    return table


def _build_table(lst: RationalLST, cache: dict[Any, Any]) -> dict[str, Any]:
    prefix = "ME is not a distribution: "
    problem = pole_problem(lst, cache)
    if problem:
        raise NotADistribution(prefix + problem)
    F = float_form(lst, cache)
    herm = hermite_form(lst, cache, FLOAT_DPS + 15)
    lam = -max(float(mp.re(p)) for p, _, _, _ in herm)
    im_max = max(abs(float(mp.im(p))) for p, _, _, _ in herm)
    t_end = max(abs(float(lst.moments(1)[0])), 1.0 / lam)
    for _ in range(400):
        _, _, ccdf, _, _ = float_values(lst, cache, np.array([t_end]))
        if ccdf[0] <= 1e-16:
            break
        t_end *= 1.5
    else:
        raise NotConverged("ME sampling grid (ccdf <= 1e-16)", float(ccdf[0]), 1e-16, 400)
    t_lo = min(1e-3 * F["tau"], 1e-8 * t_end)
    decades = math.log10(t_end / t_lo)
    n_uniform = int(min(max(16 * t_end * im_max / (2 * math.pi), 4096), 2**16))
    grid = np.unique(np.concatenate([
        [0.0], np.geomspace(t_lo, t_end, int(64 * decades) + 2),
        np.linspace(0.0, t_end, n_uniform)]))
    pdf, cdf, ccdf, err_pdf, err_ccdf = float_values(lst, cache, grid)
    if not (np.isfinite(pdf).all() and np.isfinite(ccdf).all()):
        raise NotADistribution(prefix + "non-finite values on the sampling grid")
    negative = pdf < -(err_pdf + 1e-300)
    if negative.any():
        i = int(np.argmin(np.where(negative, pdf / (err_pdf + 1e-300), 0)))
        raise NotADistribution(prefix + f"the density is negative, f({grid[i]:.6g}) = "
                               f"{pdf[i]:.6g} (round-off bound {err_pdf[i]:.2g})")
    drop = np.diff(cdf) < -(err_ccdf[1:] + err_ccdf[:-1] + 1e-300)
    if drop.any():
        i = int(np.flatnonzero(drop)[0])
        raise NotADistribution(prefix + f"the cdf decreases between t={grid[i]:.6g} and "
                               f"t={grid[i + 1]:.6g}")
    return {"t": grid, "cdf": np.maximum.accumulate(np.clip(cdf, 0.0, 1.0)),
            "ccdf": np.minimum.accumulate(np.clip(ccdf, 0.0, 1.0)), "t_end": t_end,
            "lam": lam}


def _solve(lst: RationalLST, cache: dict[Any, Any], target: np.ndarray, tail: bool
           ) -> np.ndarray:
    """Solve cdf(t) = target (tail=False) or ccdf(t) = target (tail=True), 0 < target <= 1/2."""
    table = sampling_table(lst, cache)
    grid = table["t"]
    if tail:
        values = table["ccdf"]
        # values[idx - 1] > target >= values[idx]
        idx = np.searchsorted(-values, -target, side="left")
    else:
        values = table["cdf"]
        # values[idx - 1] < target <= values[idx]
        idx = np.searchsorted(values, target, side="left")
    idx = np.clip(idx, 1, None)
    beyond = idx >= len(grid)
    lo = grid[np.minimum(idx, len(grid) - 1) - 1].copy()
    hi = grid[np.minimum(idx, len(grid) - 1)].copy()
    if beyond.any():  # only possible in the tail
        lo[beyond] = table["t_end"]
        hi_b = np.full(int(beyond.sum()), table["t_end"])
        need = np.ones(hi_b.shape, dtype=bool)
        for _ in range(2000):
            if not need.any():
                break
            hi_b[need] *= 2.0
            _, _, cc, _, _ = float_values(lst, cache, hi_b[need])
            sub = np.flatnonzero(need)
            need[sub[cc <= target[beyond][need]]] = False
        hi[beyond] = hi_b
    t = 0.5 * (lo + hi)
    inside = ~beyond & (idx < len(grid))
    if inside.any():  # interpolation within the table bracket
        v_lo, v_hi = values[idx[inside] - 1], values[idx[inside]]
        with np.errstate(divide="ignore", invalid="ignore"):
            if tail:
                frac = (np.log(v_lo) - np.log(target[inside])) / (np.log(v_lo) - np.log(v_hi))
            else:
                frac = (target[inside] - v_lo) / (v_hi - v_lo)
        frac = np.where(np.isfinite(frac), np.clip(frac, 0.0, 1.0), 0.5)
        t[inside] = lo[inside] + frac * (hi[inside] - lo[inside])
    # Newton on phi = log(target) - log ccdf(t) in t (tail: ccdf ~ C e^{-lambda t}), or on
    # phi = log cdf(t) - log(target) in x = log t (cdf ~ c t^k near 0); bisection (geometric
    # in the lower branch) whenever the step leaves the bracket or |phi| does not halve.
    active = np.arange(len(target))
    result = t.copy()
    log_target = np.log(target)
    previous = np.full(len(target), np.inf)  # |phi| of the previous iterate
    for iteration in range(400):
        if active.size == 0:
            return result
        ta = t[active]
        pdf, cdf, ccdf, _, _ = float_values(lst, cache, ta)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if tail:
                positive = np.where(ccdf > 0, ccdf, 1.0)
                phi = np.where(ccdf > 0, log_target[active] - np.log(positive), np.inf)
                newton = ta - phi * ccdf / pdf
            else:
                phi = np.where(cdf > 0, np.log(np.where(cdf > 0, cdf, 1)) - log_target[active],
                               -np.inf)
                newton = ta * np.exp(-phi * cdf / (ta * pdf))
            exact = phi == 0
            lo[active] = np.where(phi < 0, ta, lo[active])
            hi[active] = np.where(phi > 0, ta, hi[active])
        la, ha = lo[active], hi[active]
        slow = np.abs(phi) > 0.5 * previous[active]
        previous[active] = np.abs(phi)
        ok = np.isfinite(newton) & (newton > la) & (newton < ha) & ~(slow & (iteration >= 2))
        if tail:
            middle = 0.5 * (la + ha)
        else:
            middle = np.where(la > 0, np.sqrt(la * ha), ha * 2.0**-32)
        t_new = np.where(ok, newton, middle)
        t_new = np.where(exact, ta, t_new)
        done = exact | (np.abs(t_new - ta) <= 2 * EPS * np.abs(t_new)) | (
            ha - la <= 4 * EPS * ha)
        t[active] = t_new
        result[active[done]] = t_new[done]
        active = active[~done]
    width = float(np.max(hi[active] - lo[active]))
    raise NotConverged("ME inversion (safeguarded Newton)", width, 4 * EPS, 400)


def inverse(lst: RationalLST, cache: dict[Any, Any], y: Any, name: str, upper: bool) -> Any:
    """The quantile :math:`F^{-1}(y)` (``upper=False``) or :math:`\\bar F^{-1}(y)` (``upper=True``)
    for probabilities ``y`` in [0, 1], each half solved where its probability is <= 1/2."""
    arr, scalar = finite_array(y, name)
    try:
        probabilities_in_unit_interval(y)
    except InvalidParameter as exc:  # the shared check names p; this argument may be q
        raise InvalidParameter(name, y, exc.domain, exc.reason) from None
    flat = arr.ravel()
    sampling_table(lst, cache)
    out = np.empty_like(flat)
    # lower/upper tail probabilities, each exact where it is <= 1/2
    lower_end, upper_end = (flat == 1, flat == 0) if upper else (flat == 0, flat == 1)
    out[lower_end] = 0.0
    out[upper_end] = np.inf
    inner = ~lower_end & ~upper_end
    if upper:
        use_cdf = inner & (flat >= 0.5)
        use_ccdf = inner & (flat < 0.5)
        cdf_target, ccdf_target = 1.0 - flat[use_cdf], flat[use_ccdf]
    else:
        use_cdf = inner & (flat <= 0.5)
        use_ccdf = inner & (flat > 0.5)
        cdf_target, ccdf_target = flat[use_cdf], 1.0 - flat[use_ccdf]
    if use_cdf.any():
        out[use_cdf] = _solve(lst, cache, cdf_target, tail=False)
    if use_ccdf.any():
        out[use_ccdf] = _solve(lst, cache, ccdf_target, tail=True)
    out = out.reshape(arr.shape)
    return out[()] if scalar else out


def sample(lst: RationalLST, cache: dict[Any, Any], shape: int | tuple[int, ...],
           rng: RngLike) -> Any:
    r"""Random variates by exact inversion: :math:`F^{-1}(U)` for :math:`U < 1/2`, else
    :math:`\bar F^{-1}(1 - U)`, with ``U`` uniform on [0, 1) from
    :func:`symq.core.randomness.as_generator` (``rng``)."""
    gen = as_generator(rng)
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(k) for k in shape)
    if any(k < 0 for k in shape):
        raise InvalidParameter("shape", shape, "nonnegative integers")
    sampling_table(lst, cache)
    u = gen.random(shape).ravel()
    out = np.empty_like(u)
    low = u < 0.5
    if low.any():
        out[low] = inverse(lst, cache, u[low], "p", upper=False)
    if (~low).any():
        out[~low] = inverse(lst, cache, 1.0 - u[~low], "q", upper=True)
    out = out.reshape(shape)
    return out[()] if shape == () else out
