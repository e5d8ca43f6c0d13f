r"""The public certifier: :func:`certify` and its result, :class:`Certificate`.

:func:`certify` validates the options, runs the exact rules and the numeric stages of
:mod:`symq.me.certification` (retrying undecided numeric steps at 2x and 4x the precision) and
reports the verdict with the pole and residue enclosures it rests on.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from mpmath.libmp import to_float

from symq.core.errors import InvalidParameter
from symq.core.result import Exactness, ResultBase

from .._context import iv, mp, to_global
from ..transform import RationalLST
from .base import lower_end, midpoint, upper_end
from .exact import exact_data, rule_hurwitz, rule_initial_sign
from .exponential import gaussian_poles
from .factorisation import decide_by_factorisation, why_not_exact
from .neighbour import rational_neighbour
from .search import decide, hunt_witness
from .verdict import (
    Decision,
    NeedPrecision,
    Nonnegativity,
    OutOfTime,
    Run,
    at_precision,
)

__all__ = ["Certificate", "certify"]


@dataclass(frozen=True)
class Certificate(ResultBase):
    """Outcome of :func:`certify`.

    A frozen :class:`~symq.core.result.ResultBase`: ``to_dict()`` is JSON-ready (enclosures
    rounded outward to doubles), ``str()`` states the verdict and what it rests on, and Jupyter
    shows a table of the scalar fields.

    Attributes
    ----------
    status : Nonnegativity
        The verdict.
    method : str
        The rule that decided (or the stage that gave up), e.g.
        ``"exact factorisation (x = exp(-t))"``, ``"Descartes sign rule"``,
        ``"order 3 constant numerator"``, ``"dominant pair exact test"``, ``"branch and bound"``,
        ``"f^(j*)(0) < 0"``, ``"Routh-Hurwitz test"``.
    tail_bound : float or None
        For a NONNEGATIVE answer by branch and bound: the time T beyond which f > 0 was proved
        analytically (step 5 of the procedure); None when an exact rule decided.
    boxes : int
        Number of boxes examined by branch and bound.
    witness : mpmath.mpf or None
        For NEGATIVE: a time t > 0 with f(t) < 0.
    enclosure : tuple of mpmath.mpf or None
        For NEGATIVE: an interval (lo, hi) containing f(witness), with hi < 0.
    reason : str or None
        For INVALID and INCONCLUSIVE: why.
    poles : tuple of (complex, float)
        Disks (center, radius) each containing exactly one distinct pole (conjugates listed
        separately), rounded outward to double precision.  Empty when the decision came before
        the pole enclosures.
    multiplicities : tuple of int
        Multiplicity of each pole in ``poles`` (exact, from the factorisation of D).
    residues : tuple of tuple of (complex, float)
        For each pole, enclosures of the Hermite coefficients :math:`c_0, \\dots, c_{m-1}` of
        :math:`\\sum_j c_j t^j e^{zt}` in the density.
    seconds : float
        Wall time spent.
    dps : int
        Decimal precision at which the decision was reached.
    proof : ExactProof or None
        For a decision of the exact factorisation route
        (:mod:`~symq.me.certification.factorisation`): the substitution, the factorisation and the
        root counts it rests on, re-checked by :meth:`verify` and told by :meth:`explain`.
    lst : RationalLST or None
        The exact transform the certificate is about.
    neighbour : Certificate or None
        For INCONCLUSIVE with irrational poles: the certificate of the exact rational neighbour
        (:mod:`~symq.me.certification.neighbour`), a statement about that transform, not about
        this one.
    neighbour_distance : float or None
        The largest relative rounding of a pole or coefficient in that neighbour.
    partition : tuple of (mpmath.mpf, mpmath.mpf)
        For NONNEGATIVE by branch and bound: the boxes proved positive, a tiling of [h, T] that
        :meth:`verify` re-checks box by box.
    exactness : Exactness
        ``certified``: every verdict rests on exact arithmetic or on interval enclosures that
        are guaranteed (never on a floating-point estimate).
    """

    status: Nonnegativity
    method: str
    tail_bound: float | None = None
    boxes: int = 0
    witness: Any = None
    enclosure: tuple[Any, Any] | None = None
    reason: str | None = None
    poles: tuple[tuple[complex, float], ...] = ()
    multiplicities: tuple[int, ...] = ()
    residues: tuple[tuple[tuple[complex, float], ...], ...] = ()
    seconds: float = 0.0
    dps: int = 0
    proof: Any = None
    lst: RationalLST | None = None
    partition: tuple[tuple[Any, Any], ...] = ()
    neighbour: Certificate | None = None
    neighbour_distance: float | None = None
    exactness: Exactness = Exactness.CERTIFIED

    def verify(self) -> bool:
        """Re-check the verdict from the transform alone, without searching again.

        See :func:`~symq.me.certification.recheck.recheck` for what is re-checked for each
        method.  INCONCLUSIVE has nothing to check and gives False.
        """
        from .recheck import recheck

        return recheck(self)

    def explain(self) -> str:
        """What the verdict rests on, in words (the factorisation for an exact proof)."""
        text = str(self)
        if self.proof is not None:
            text += "\n" + self.proof.explain()
        elif self.partition:
            text += (f"\n{len(self.partition)} boxes proved g = e^(-mu t) f > 0 on "
                     f"[{float(self.partition[0][0]):.6g}, {self.tail_bound:.6g}] (interval "
                     "arithmetic, re-checked box by box by verify()); beyond the tail bound the "
                     "dominant term outweighs the others; below it the sign is that of the first "
                     "nonzero derivative at 0 (Taylor bound)")
        elif self.status is Nonnegativity.NEGATIVE:
            text += "\nthe enclosure of f(witness) is an interval with a negative upper end"
        if self.neighbour is not None:
            text += f"\nrational neighbour (within {self.neighbour_distance:.1e}): {self.neighbour}"
        return text

    @property
    def is_density(self) -> bool | None:
        """True for NONNEGATIVE, False for NEGATIVE or INVALID, None for INCONCLUSIVE."""
        if self.status is Nonnegativity.NONNEGATIVE:
            return True
        if self.status is Nonnegativity.INCONCLUSIVE:
            return None
        return False

    def __bool__(self) -> bool:
        raise TypeError("a Certificate has no truth value (it is tri-state); "
                        "use cert.is_density or compare cert.status")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (numbers as floats, complex numbers as [re, im]).

        The enclosure is rounded outward (lower end down, upper end up) to doubles.
        """
        def cplx(z: complex) -> list[float]:
            return [float(z.real), float(z.imag)]

        enclosure = None
        if self.enclosure is not None:
            lo, hi = self.enclosure
            enclosure = [_float_down(lo), _float_up(hi)]
        return {
            "status": self.status.value,
            "is_density": self.is_density,
            "method": self.method,
            "tail_bound": self.tail_bound,
            "boxes": self.boxes,
            "witness": None if self.witness is None else float(self.witness),
            "enclosure": enclosure,
            "reason": self.reason,
            "poles": [{"center": cplx(c), "radius": r, "multiplicity": m}
                      for (c, r), m in zip(self.poles, self.multiplicities)],
            "residues": [[{"center": cplx(c), "radius": r} for c, r in coeffs]
                         for coeffs in self.residues],
            "seconds": self.seconds,
            "dps": self.dps,
            "partition_boxes": len(self.partition),
            "proof": None if self.proof is None else self.proof.to_dict(),
            "neighbour": None if self.neighbour is None else self.neighbour.to_dict(),
            "neighbour_distance": self.neighbour_distance,
        }

    def to_markdown(self) -> str:
        """The certificate as Markdown (Jupyter's display): the fields' table, and for a
        NEGATIVE verdict the witness with its enclosure of f."""
        table = super().to_markdown()
        if self.status is not Nonnegativity.NEGATIVE:
            return table
        return (f"{table}\n\nwitness: $f({mpmath.nstr(self.witness, 8)}) \\in "
                f"[{mpmath.nstr(self.enclosure[0], 6)}, {mpmath.nstr(self.enclosure[1], 6)}]$")

    def __str__(self) -> str:
        text = f"{self.status.value} ({self.method})"
        if self.status is Nonnegativity.NEGATIVE:
            text += (f": f({mpmath.nstr(self.witness, 8)}) in "
                     f"[{mpmath.nstr(self.enclosure[0], 6)}, {mpmath.nstr(self.enclosure[1], 6)}]")
        elif self.reason:
            text += f": {self.reason}"
        elif self.tail_bound is not None:
            text += f": tail bound T = {self.tail_bound:.4g}, {self.boxes} boxes"
        return text

def _float_down(x: Any) -> float:
    x = mp.mpf(x)
    return to_float(x._mpf_, rnd="d")


def _float_up(x: Any) -> float:
    x = mp.mpf(x)
    return to_float(x._mpf_, rnd="u")


# ====================================================================== front door
def _as_lst(obj: Any) -> RationalLST:
    if isinstance(obj, RationalLST):
        return obj
    inner = getattr(obj, "lst", None)
    if isinstance(inner, RationalLST):
        return inner
    if isinstance(obj, sp.Expr):
        return RationalLST.from_expr(obj)
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        return RationalLST.from_coefficients(obj[0], obj[1])
    raise InvalidParameter(
        "obj", type(obj).__name__,
        "a RationalLST, an object with a .lst RationalLST, a sympy rational function of s, or "
        "a pair (numerator, denominator) of ascending coefficient sequences")


def _report(run: Run) -> dict[str, Any]:
    poles, mults, residues = [], [], []

    def disk(x: Any) -> tuple[complex, float]:
        if isinstance(x, iv.mpc):
            re, im = x.real, x.imag
        else:
            re, im = x, iv.mpf(0)
        cr, ci = float(midpoint(re)), float(midpoint(im))
        dr = max(abs(lower_end(re) - cr), abs(upper_end(re) - cr))
        di = max(abs(lower_end(im) - ci), abs(upper_end(im) - ci))
        return complex(cr, ci), _float_up(mp.sqrt(dr * dr + di * di))

    for P in run.poles:
        copies = [False] if P.real else [False, True]
        for conj in copies:
            c, r = disk(P.box)
            poles.append((c.conjugate() if conj else c, r))
            mults.append(P.multiplicity)
            coeffs = []
            for x in P.coeffs:
                cc, rr = disk(x)
                coeffs.append((cc.conjugate() if conj else cc, rr))
            residues.append(tuple(coeffs))
    return {"poles": tuple(poles), "multiplicities": tuple(mults), "residues": tuple(residues)}


def certify(obj: Any, *, dps: int = 40, max_boxes: int = 20000, min_width: float = 1e-12,
            time_budget: float | None = 5.0) -> Certificate:
    r"""Decide, with a certificate, whether an ME transform has a nonnegative density.

    Parameters
    ----------
    obj : RationalLST, object with ``.lst``, sympy expression or (numerator, denominator)
        The exact rational Laplace transform :math:`N(s)/D(s)` (ascending coefficients for the
        pair form; floats are taken at their exact binary value).
    dps : int
        Working decimal precision of the interval arithmetic (at least 40 digits are advised
        for separating the pole disks).  Undecided numeric steps are retried at 2x and 4x this
        precision.
    max_boxes : int
        Budget of branch-and-bound boxes; beyond it the answer is INCONCLUSIVE.
    min_width : float
        Smallest box width in t; a box of this width that is neither proved positive nor
        proved negative gives INCONCLUSIVE ("possible zero near t").
    time_budget : float or None
        Wall-time budget in seconds (INCONCLUSIVE when exceeded, with that reason), None for
        no limit.  The default of 5 s bounds the rare inputs no stage decides (irrational poles
        with a touching zero); the corpus of :mod:`~symq.me.certification.corpus` is decided in
        well under a second per case.

    Returns
    -------
    Certificate
        ``status`` NONNEGATIVE (proof), NEGATIVE (witness t and an enclosure of f(t) with a
        negative upper end), INVALID (a pole with Re >= 0, or a complex dominant pole) or
        INCONCLUSIVE (with the reason).

    Raises
    ------
    InvalidParameter
        For input that is not a normalised rational transform (see
        :meth:`RationalLST.from_coefficients`) and for out-of-range options.

    Notes
    -----
    Rules, in order (the procedure and the exact rules (a)-(d) of :mod:`symq.me.certification`):

    1. exact Routh-Hurwitz test; failure -> INVALID (pole with Re >= 0).  It comes first:
       such a transform is not that of a distribution at all, whatever f does near 0;
    2. exact :math:`f^{(j)}(0)`; the first nonzero one negative -> NEGATIVE near 0;
    3. certified pole disks; residues/Hermite coefficients (exact for rational poles);
    4. all poles real: constant numerator, nonnegative coefficients, Descartes' rule;
    5. order 3 with constant numerator: dominant pole real <=> density (exact);
    6. complex dominant pole -> INVALID; a pair sharing the dominant line with a real pole:
       exact test :math:`c_1 \ge 2|c_{pair}|`;
    7. dominant residue < 0 -> NEGATIVE at large t; else tail bound T, Taylor guard h and
       branch-and-bound on [h, T].  Before the tail bound, for rational and Gaussian-rational
       poles, the exact factorisation of :mod:`~symq.me.certification.factorisation` (touching
       zeros, exact sign changes); it is also tried after any INCONCLUSIVE answer.

    A tangential zero with irrational poles cannot be certified by interval methods and ends
    INCONCLUSIVE.  All arithmetic runs in the calling thread's private mpmath contexts
    (:mod:`symq.core.precision`): mpmath's global precision is never changed and concurrent calls
    from several threads give the same certificates as serial ones.

    Examples
    --------
    >>> certify(([6], [6, 11, 6, 1])).method    # hypoexponential with rates 1, 2, 3
    'all poles real, constant numerator (hypoexponential)'
    >>> certify(([2, 1], [2, -1, 1])).status.value   # poles 1/2 ± i sqrt(7)/2
    'INVALID'
    """
    lst = _as_lst(obj)
    if isinstance(dps, bool) or not isinstance(dps, (int, np.integer)) or not 15 <= dps <= 2000:
        raise InvalidParameter("dps", dps, "an integer in [15, 2000]")
    if isinstance(max_boxes, bool) or not isinstance(max_boxes, (int, np.integer)) \
            or max_boxes < 1:
        raise InvalidParameter("max_boxes", max_boxes, "a positive integer")
    try:
        min_width_ok = float(min_width) > 0 and math.isfinite(float(min_width))
    except (TypeError, ValueError):
        min_width_ok = False
    if not min_width_ok:
        raise InvalidParameter("min_width", min_width, "a positive finite number")
    if time_budget is not None:
        try:
            budget_ok = float(time_budget) > 0
        except (TypeError, ValueError):
            budget_ok = False
        if not budget_ok:
            raise InvalidParameter("time_budget", time_budget,
                                   "a positive number of seconds or None")

    start = time.perf_counter()
    deadline = None if time_budget is None else start + float(time_budget)
    return _certify(lst, int(dps), int(max_boxes), float(min_width), deadline, start)


def _certify(lst: RationalLST, dps: int, max_boxes: int, min_width: float,
             deadline: float | None, start: float, exact: bool = True) -> Certificate:
    """The procedure of :mod:`symq.me.certification` on validated options.

    ``exact=False`` (the square-free part handed back by the exact factorisation route) skips
    that route, so that it is never re-entered.
    """
    ex = exact_data(lst)
    verdict: Decision | None = None
    run = Run(ex, dps, deadline, max_boxes, min_width)
    if exact:
        # the square-free part has no touching zero in (0, inf) (factorisation module), so its
        # boxes may shrink to the working precision; max_boxes and the deadline still bound it
        fine = min(min_width, max(10.0 ** -(dps - 8), 1e-300))
        run.sub_certify = lambda sub: _certify(sub, dps, max_boxes, fine, deadline,
                                               time.perf_counter(), exact=False)
    last: NeedPrecision | None = None
    neighbour, distance = None, None
    try:
        with at_precision(run.dps):
            verdict = rule_hurwitz(run) or rule_initial_sign(run)
        if verdict is None:
            for factor in (1, 2, 4):
                run.dps = dps * factor
                run.boxes = 0
                run.tail = None
                try:
                    with at_precision(run.dps):
                        verdict = decide(run)
                    break
                except NeedPrecision as exc:
                    last = exc
            if verdict is None:
                assert last is not None
                verdict = Decision(Nonnegativity.INCONCLUSIVE, last.method,
                                   reason=f"{last.reason} (tried up to dps={run.dps})")
            if verdict.status is Nonnegativity.INCONCLUSIVE and run.sub_certify is not None:
                with at_precision(run.dps):
                    verdict = _exact_fallback(run) or verdict
            if (verdict.status is Nonnegativity.INCONCLUSIVE
                    and verdict.method != "branch and bound"):
                try:
                    with at_precision(run.dps):
                        verdict = hunt_witness(run) or verdict
                except OutOfTime:  # keep the reason of the INCONCLUSIVE answer
                    pass
            if verdict.status is Nonnegativity.INCONCLUSIVE and exact \
                    and (why := why_not_exact(run)) is not None:
                verdict.reason = f"{verdict.reason}; {why}"
            elif verdict.status is Nonnegativity.INCONCLUSIVE and exact \
                    and gaussian_poles(ex.factors) is None:
                with at_precision(run.dps):
                    found = rational_neighbour(run, lambda near: _certify(
                        near, dps, max_boxes, min_width, deadline, time.perf_counter()))
                if found is not None:
                    neighbour, distance = found
                    verdict.reason = (f"{verdict.reason}; the rational neighbour within "
                                      f"{distance:.1e} (relative, poles and coefficients) is "
                                      f"{neighbour}")
                elif run.poles:
                    verdict.reason = (f"{verdict.reason}; the poles are irrational and no "
                                      "rational neighbour (denominators <= 10^4) lies within "
                                      "1e-10")
    except OutOfTime:
        budget = "" if deadline is None else f" of {deadline - start:.3g} s"
        verdict = Decision(Nonnegativity.INCONCLUSIVE, "time budget",
                           reason=f"time budget{budget} exceeded")
    with at_precision(run.dps):
        report = _report(run)
    nonneg_bb = (verdict.status is Nonnegativity.NONNEGATIVE
                 and verdict.method.endswith("branch and bound"))
    return Certificate(
        status=verdict.status,
        method=verdict.method,
        tail_bound=run.tail if nonneg_bb else None,
        boxes=run.boxes,
        witness=to_global(verdict.witness),
        enclosure=to_global(verdict.enclosure),
        reason=verdict.reason,
        seconds=time.perf_counter() - start,
        dps=run.dps,
        proof=verdict.proof,
        lst=lst,
        partition=tuple(to_global(run.partition)) if nonneg_bb else (),
        neighbour=neighbour,
        neighbour_distance=distance,
        **report,
    )


def _exact_fallback(run: Run) -> Decision | None:
    """After an INCONCLUSIVE numeric answer: the exact route, also for a square-free G in several
    variables (handed to the numeric stages with boxes down to the working precision)."""
    outcome = decide_by_factorisation(run, run.sub_certify, only_if_informative=False)
    if outcome is None or outcome[0].status is Nonnegativity.INCONCLUSIVE:
        return None
    verdict, proof = outcome
    verdict.proof = proof
    return verdict
