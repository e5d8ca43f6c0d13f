r"""Re-checking a :class:`~symq.me.certification.Certificate` without searching again.

What :meth:`Certificate.verify` re-checks, from the certificate's exact transform ``lst``:

* an **exact proof** (:class:`~symq.me.certification.factorisation.ExactProof`): the transform of
  the substituted polynomial equals ``lst``, the factorisation multiplies back, the root counts and
  signs of the sign-definite factors, and the sub-certificate of the rest
  (:meth:`ExactProof.verify`);
* **NEGATIVE**: a fresh interval enclosure of :math:`f(\text{witness})` has a negative upper end
  and meets the stated enclosure, whose upper end is negative.
  For rational and Gaussian-rational poles it comes from the exact time-domain form
  (:func:`~symq.me.certification.exponential.enclose_density`), independent of the pole disks;
  otherwise from freshly computed pole and residue enclosures;
* the **exact rules** (hypoexponential, positive residues, Descartes, order 3, dominant pair) and
  **INVALID** (Routh-Hurwitz, complex dominant pole): the rule's closed-form test is re-run; these
  are finite exact tests, not searches;
* **branch and bound**: the pole enclosures, the tail bound T and the Taylor guard h are
  recomputed, and the stored partition (``Certificate.partition``) is checked to tile [h, T] with
  every box proved positive; nothing is bisected.

INCONCLUSIVE has nothing to check: ``verify()`` is False.
"""

from __future__ import annotations

from typing import Any

from .._context import mp
from .base import lower_end, upper_end
from .enclosures import attach_coefficients, enclose_poles
from .exact import exact_data, rule_hurwitz, rule_initial_sign
from .exponential import enclose_density, gaussian_poles, hermite_terms
from .search import decide, evaluation_terms
from .verdict import NeedPrecision, Nonnegativity, Run, at_precision

__all__ = ["recheck"]


def recheck(cert: Any) -> bool:
    """Re-check ``cert`` against ``cert.lst`` (module docstring)."""
    if cert.lst is None or cert.status is Nonnegativity.INCONCLUSIVE:
        return False
    if cert.proof is not None:  # an exact proof is a proof of NONNEGATIVE
        return cert.status is Nonnegativity.NONNEGATIVE and bool(cert.proof.verify(cert.lst))
    ex = exact_data(cert.lst)
    run = Run(ex, cert.dps, None, max(cert.boxes, 1), 1e-300)
    try:
        with at_precision(cert.dps):
            if cert.status is Nonnegativity.NEGATIVE:
                return _negative_value(run, cert.witness, cert.enclosure)
            run.replay = tuple((mp.mpf(a), mp.mpf(b)) for a, b in cert.partition)
            verdict = rule_hurwitz(run) or rule_initial_sign(run) or decide(run)
    except NeedPrecision:
        return False
    return verdict.status is cert.status and verdict.method == cert.method


def _negative_value(run: Run, witness: Any, enclosure: Any) -> bool:
    """A fresh enclosure of f(witness) is negative and meets the stated one, which is < 0."""
    if witness is None or not witness > 0 or enclosure is None:
        return False
    lo, hi = (mp.mpf(v) for v in enclosure)
    if not lo <= hi < 0:
        return False
    t = mp.mpf(witness)
    poles = gaussian_poles(run.ex.factors)
    if poles is not None:
        fresh = enclose_density(hermite_terms(run.ex.b, run.ex.a, poles), t)
    else:
        run.poles = enclose_poles(run.ex, run.dps)
        attach_coefficients(run.ex, run.poles)
        mu = max(P.re_lo for P in run.poles)
        fresh = evaluation_terms(run, mp.mpf(mu))[0].f_point(t)
    return bool(upper_end(fresh) < 0 and lower_end(fresh) <= hi and lo <= upper_end(fresh))
