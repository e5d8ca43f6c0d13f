r"""Branch-and-bound and witness search: the numeric stages of the certifier.

Steps 3-6 of the procedure of :mod:`symq.me.certification`, after the exact rules: the dominant
pole (a complex one is INVALID; a complex pair sharing the dominant line with a real pole goes to
exact rule (d), :func:`_rule_dominant_pair`), the sign of the dominant residue, the tail bound and
the branch-and-bound proof of :math:`g = e^{-\mu t} f > 0` on :math:`[h, T]`
(:func:`_branch_and_bound`).  :func:`decide` runs them in order at one precision;
:func:`hunt_witness` searches for a certified negative value when no stage could decide.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction

import mpmath

from .._context import iv, mp, to_mp
from .base import Pole, certain_sign, iv_rational, lower_end, midpoint, upper_end
from .enclosures import attach_coefficients, enclose_poles
from .exact import rule_all_real, rule_order3, shared_pair_exact
from .factorisation import decide_by_factorisation
from .intervals import Evaluator, pole_clusters, tail_bound, taylor_guard
from .verdict import Decision, NeedPrecision, Nonnegativity, Run

__all__ = ["decide", "evaluation_terms", "hunt_witness"]


def _dominant_group(poles: list[Pole]) -> list[Pole]:
    """Poles that may have the largest real part (their real-part intervals reach the max)."""
    floor = max(P.re_lo for P in poles)
    return [P for P in poles if P.re_hi >= floor]


def evaluation_terms(run: Run, mu: mpmath.mpf, excluded: Sequence[Pole] = ()
                      ) -> tuple[Evaluator, list[Pole]]:
    """The evaluator of g = e^{-mu t} f and the term list for tail bounds (clusters in Newton
    form)."""
    scale = abs(mu) if mu != 0 else mp.mpf(1)
    clusters = pole_clusters(run.poles, scale, [iv_rational(c) for c in run.ex.b])
    skip = {id(P) for P in excluded}
    # tail terms: Newton form for clusters away from the dominant line, single poles otherwise
    newton_clusters = [(members, newton) for members, newton in clusters
                       if not any(id(P) in skip for P in members)]
    replaced = {id(P) for members, _ in newton_clusters for P in members}
    terms = [P for P in run.poles if id(P) not in replaced]
    terms += [Q for _, newton in newton_clusters for Q in newton]
    return Evaluator(run.poles, mu, clusters), terms


def _witness_search(run: Run, ev: Evaluator, times: Iterator[mpmath.mpf]
                    ) -> Decision | None:
    """The first t in ``times`` whose enclosure of f(t) is certainly negative."""
    for t in times:
        run.check_time()
        enc = ev.f_point(t)
        if upper_end(enc) < 0:
            return Decision(Nonnegativity.NEGATIVE, "", witness=t,
                            enclosure=(lower_end(enc), upper_end(enc)))
    return None


def _rule_dominant_pair(run: Run, R: Pole, pair: Pole
                        ) -> tuple[Decision | None, mpmath.mpf | None, mpmath.mpf | None]:
    r"""Exact rule (d) (step 3): one real pole and one complex pair on the dominant line.

    :math:`e^{\lambda t} (c_1 e^{-\lambda t} + 2 \operatorname{Re} c_p e^{(-\lambda + i\omega) t})
    = c_1 + 2|c_p| \cos(\omega t + \varphi)`, which is :math:`\ge 0` for all t iff
    :math:`c_1 \ge 2|c_p|` (exact rational test on :math:`c_1^2` and :math:`|c_p|^2`).  With no
    other pole this decides.  With other poles:

    * :math:`c_1 > 2|c_p|` leaves the margin :math:`c_1 - 2|c_p|` for the tail bound;
    * :math:`c_1 = 2|c_p|`: the dominant group G is :math:`\ge 0` with zeros at
      :math:`t_k = (\pi - \varphi + 2\pi k)/\omega`, so the sign of f there is the sign of the
      rest R.  If R has a strictly dominant real pole with a positive residue, R > 0 beyond its
      own tail bound T and f = G + R > 0 there; branch and bound covers [h, T].  If that
      residue is negative, f(t_k) = R(t_k) < 0 for large k;
    * :math:`c_1 < 2|c_p|`: f < 0 near :math:`t_k` for large k.

    Returns
    -------
    verdict, margin, T
        A verdict; or a lower bound of :math:`c_1 - 2|c_p|` for the general path; or a tail
        bound T already established (touching case).
    """
    ex = run.ex
    if R.exact is None or R.multiplicity != 1 or pair.multiplicity != 1:
        raise NeedPrecision("dominant pair exact test",
                             "a complex pair and a real pole (nearly) share the dominant real "
                             "part; no exact test applies (irrational or multiple pole)")
    shared = shared_pair_exact(ex, R)
    if shared is None:
        raise NeedPrecision("dominant pole", "a complex pair and the dominant real pole have "
                             "nearly equal real parts; not separated at this precision")
    c1, cp2, w = shared
    others = len(run.poles) > 2
    ok = c1 > 0 and c1 * c1 >= 4 * cp2
    strict = c1 > 0 and c1 * c1 > 4 * cp2
    method = "dominant pair exact test"
    if ok and not others:
        return Decision(Nonnegativity.NONNEGATIVE, method), None, None
    if strict:
        margin = iv_rational(c1) - 2 * iv.sqrt(iv_rational(cp2))
        return None, lower_end(margin), None

    cp = pair.coeffs[0]
    phi = mp.arg(mp.mpc(midpoint(cp.real), midpoint(cp.imag)))
    omega = mp.sqrt(to_mp(w))
    period = 2 * mp.pi / omega
    first = (mp.pi - phi) % (2 * mp.pi) / omega
    if not first > 0:
        first += period

    def touching_times(start: mpmath.mpf) -> Iterator[mpmath.mpf]:
        k0 = max(0, int(mp.ceil((start - first) / period)))
        return (first + (k0 + k) * period for k in range(200))

    if ok:  # c1 = 2|c_pair| with other poles
        rest = [P for P in run.poles if P is not R and P is not pair]
        group = _dominant_group(rest)
        undecided = Decision(Nonnegativity.INCONCLUSIVE, method,
                             reason="touching zeros: c_1 = 2|c_pair| on the dominant line and the "
                                    "remaining poles have no strictly dominant real pole")
        if len(group) != 1 or not group[0].real:
            return undecided, None, None
        R2 = group[0]
        m2 = R2.multiplicity
        lead = R2.exact_coeffs[m2 - 1] if R2.exact_coeffs is not None else R2.coeffs[m2 - 1]
        sign = certain_sign(lead)
        if sign is None:
            raise NeedPrecision(method, "sign of the residue of the second pole not certain")
        lead_iv = iv_rational(lead) if isinstance(lead, Fraction) else lead
        ev, terms = evaluation_terms(run, R.center, [R, pair, R2])
        T = tail_bound(lower_end(abs(lead_iv)), R2, terms, m2, group=[R, pair])
        if T is None:
            raise NeedPrecision(method, "no tail bound for the remaining poles")
        if sign > 0:
            return None, None, T
        verdict = _witness_search(run, ev, touching_times(T))
        if verdict is None:
            return undecided, None, None
        verdict.method = method
        return verdict, None, None

    # c1 < 2|c_pair|: f < 0 near t_k for large k
    ev, terms = evaluation_terms(run, R.center, [R, pair])
    margin_iv = 2 * iv.sqrt(iv_rational(cp2)) - iv_rational(c1)
    start = mp.mpf(0)
    if others and lower_end(margin_iv) > 0:
        T = tail_bound(lower_end(margin_iv), R, terms, 1, group=[pair])
        start = T if T is not None else start
    verdict = _witness_search(run, ev, touching_times(start))
    if verdict is None:
        return Decision(Nonnegativity.INCONCLUSIVE, method,
                        reason="c_1 < 2|c_pair| but no witness was enclosed"), None, None
    verdict.method = method
    return verdict, None, None


def _branch_and_bound(run: Run, ev: Evaluator, h: mpmath.mpf, T: mpmath.mpf) -> Decision:
    """Step 6: prove g > 0 on [h, T] or find a certified negative value.

    The boxes proved positive are kept in ``run.partition``; in re-check mode (``run.replay``)
    the given partition is checked instead of searched for.
    """
    if run.replay is not None:
        return _check_partition(run, ev, h, T)
    stack = [(h, T)] if h < T else []
    run.partition = []
    min_width = mp.mpf(run.min_width)
    while stack:
        a, b = stack.pop()
        run.boxes += 1
        if run.boxes > run.max_boxes:
            return Decision(Nonnegativity.INCONCLUSIVE, "branch and bound",
                            reason=f"more than max_boxes={run.max_boxes} boxes needed "
                                   f"(last box [{mp.nstr(a, 8)}, {mp.nstr(b, 8)}])")
        if run.boxes % 16 == 0:
            run.check_time()
        m = _box_centre(a, b)
        low, gm = ev.box(a, b, m)
        if low > 0:
            run.partition.append((a, b))
            continue
        if upper_end(gm) < 0:
            enc = ev.f_point(m)
            return Decision(Nonnegativity.NEGATIVE, "branch and bound", witness=m,
                            enclosure=(lower_end(enc), upper_end(enc)))
        if b - a < min_width:
            return Decision(Nonnegativity.INCONCLUSIVE, "branch and bound",
                            reason=f"possible zero near t={mp.nstr(m, 12)} "
                                   f"(box width below min_width={run.min_width:g})")
        stack.append((m, b))
        stack.append((a, m))
    return Decision(Nonnegativity.NONNEGATIVE, "branch and bound")


def _box_centre(a: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    return mp.sqrt(a * b) if a > 0 and b > 4 * a else (a + b) / 2


def _check_partition(run: Run, ev: Evaluator, h: mpmath.mpf, T: mpmath.mpf) -> Decision:
    """Re-check mode of step 6: the stored boxes tile [h, T] and each is proved positive."""
    boxes = sorted(run.replay, key=lambda box: box[0])
    failed = Decision(Nonnegativity.INCONCLUSIVE, "branch and bound",
                      reason="the stored partition does not prove g > 0 on [h, T]")
    if h >= T:
        return Decision(Nonnegativity.NONNEGATIVE, "branch and bound") if not boxes else failed
    ends = [a for a, _ in boxes] + [boxes[-1][1]] if boxes else []
    if not boxes or ends[0] != h or ends[-1] != T or any(
            b != a for (_, b), (a, _) in zip(boxes, boxes[1:])):
        return failed
    for a, b in boxes:
        run.boxes += 1
        if not ev.box(a, b, _box_centre(a, b))[0] > 0:
            return failed
    return Decision(Nonnegativity.NONNEGATIVE, "branch and bound")


def hunt_witness(run: Run) -> Decision | None:
    """Search ``[h, 60/|Re z_1|]`` for a certified negative value when no rule could decide.

    Used only to turn an INCONCLUSIVE answer into NEGATIVE; it never proves nonnegativity.
    """
    if not run.poles or not all(P.coeffs for P in run.poles):
        return None
    mu = max(P.re_lo for P in run.poles)
    if not mu < 0:
        return None
    h, _, _ = taylor_guard(run.ex)
    ev, _ = evaluation_terms(run, mp.mpf(mu))
    scan = Run(run.ex, run.dps, run.deadline, run.max_boxes, run.min_width, run.poles)
    verdict = _branch_and_bound(scan, ev, h, 60 / abs(mu))
    run.boxes += scan.boxes
    if verdict.status is Nonnegativity.NEGATIVE:
        verdict.method = "branch and bound (witness search)"
        return verdict
    return None


def _exact_route(run: Run) -> Decision | None:
    """The exact factorisation decision (:mod:`~symq.me.certification.factorisation`), once
    per run; None when it does not apply."""
    if not run.exact_done and run.sub_certify is not None:
        run.exact_done = True
        outcome = decide_by_factorisation(run, run.sub_certify)
        if outcome is not None:
            verdict, proof = outcome
            verdict.proof = proof
            run.exact = verdict
    return run.exact


def decide(run: Run) -> Decision:
    """Steps 2-7 and the exact rules, in the order of :mod:`symq.me.certification`, at the
    current precision."""
    ex = run.ex
    run.poles = enclose_poles(ex, run.dps)
    attach_coefficients(ex, run.poles)
    verdict = rule_all_real(run) or rule_order3(run)
    if verdict is not None:
        return verdict
    run.check_time()

    group = _dominant_group(run.poles)
    real_group = [P for P in group if P.real]
    complex_group = [P for P in group if not P.real]
    if not real_group:
        return Decision(Nonnegativity.INVALID, "dominant pole",
                        reason="complex dominant pole: f changes sign infinitely often")
    if len(real_group) > 1 or len(complex_group) > 1:
        exact = _exact_route(run)
        if exact is not None:
            return exact
        raise NeedPrecision("dominant pole", "several poles (nearly) share the dominant real "
                                              "part")
    R = real_group[0]
    m = R.multiplicity
    pair_group: list[Pole] = []
    T_touching = None
    if complex_group:
        verdict, margin, T_touching = _rule_dominant_pair(run, R, complex_group[0])
        if verdict is not None:
            return verdict
        pair_group = complex_group
    else:
        lead = R.exact_coeffs[m - 1] if R.exact_coeffs is not None else R.coeffs[m - 1]
        sign = certain_sign(lead)
        if sign is None:
            raise NeedPrecision("dominant residue", "sign of the dominant residue not certain")
        lead_iv = iv_rational(lead) if isinstance(lead, Fraction) else lead
        margin = lower_end(abs(lead_iv))
        if sign < 0:
            ev, terms = evaluation_terms(run, R.center, [R])
            T = tail_bound(margin, R, terms, m)
            if T is None:
                raise NeedPrecision("dominant residue", "no tail bound")
            T = max(T, mp.mpf(2) ** -10)
            verdict = _witness_search(run, ev, (T * 2 ** k for k in range(60)))
            if verdict is None:
                return Decision(Nonnegativity.INCONCLUSIVE, "dominant residue negative",
                                reason="dominant residue < 0 but no witness was enclosed")
            verdict.method = "dominant residue negative"
            return verdict

    exact = _exact_route(run)
    if exact is not None:
        return exact
    ev, terms = evaluation_terms(run, R.center, [R, *pair_group])
    if T_touching is not None:
        T = T_touching
    else:
        T = tail_bound(margin, R, terms, m, group=pair_group)
    if T is None:
        raise NeedPrecision("tail bound", "no tail bound could be established")
    run.tail = float(T)
    h, _, _ = taylor_guard(ex)
    verdict = _branch_and_bound(run, ev, h, T)
    if T_touching is not None:
        verdict.method = "dominant pair exact test + branch and bound"
    return verdict
