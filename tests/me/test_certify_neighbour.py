"""The rational neighbour of undecided float data, and the size guard of the exact route.

Independent evidence: the exact transforms are written in the time domain and transformed by
:func:`laplace_of`; the float data are their coefficients rounded to doubles, so the neighbour
the certifier reconstructs from pole and residue enclosures must be that exact transform.
"""

from __future__ import annotations

import sympy as sp
from me_references import irrational_touching

from symq.me.certification import Nonnegativity, certify
from symq.me.certification.corpus import laplace_of, t
from symq.me.transform import RationalLST


def _floats(lst: RationalLST) -> RationalLST:
    return RationalLST.from_coefficients([float(v) for v in lst.numerator],
                                         [float(v) for v in lst.denominator])


def test_undecided_float_data_report_the_certified_rational_neighbour():
    x = sp.exp(-t / 3)
    exact = laplace_of(x * (1 - 5 * x) ** 2)   # touching zero at t = 3 ln 5
    rounded = _floats(exact)
    assert rounded != exact and len(rounded.D.factor_list()[1]) == 1   # irreducible over Q
    cert = certify(rounded, max_boxes=3)          # too few boxes: INCONCLUSIVE for the floats
    assert cert.status is Nonnegativity.INCONCLUSIVE
    assert cert.neighbour is not None and cert.neighbour.lst == exact
    assert cert.neighbour.status is Nonnegativity.NONNEGATIVE and cert.neighbour.verify()
    assert 0 < cert.neighbour_distance < 1e-14
    assert "rational neighbour" in cert.reason and "NONNEGATIVE" in cert.reason
    assert cert.to_dict()["neighbour"]["status"] == "NONNEGATIVE"


def test_irrational_poles_without_a_close_rational_neighbour_say_so():
    cert = certify(irrational_touching())
    assert cert.status is Nonnegativity.INCONCLUSIVE and cert.neighbour is None
    assert "no rational neighbour" in cert.reason


def test_rates_with_a_large_common_denominator_leave_the_decision_to_the_numeric_stages():
    # e^{-t} (1 - (4/3) e^{-(1 + 1/1000) t})^2: touching, but x = e^{-t/1000} would need degree
    # 3002 in x (the rate 1 + 2(1 + 1/1000) times q = 1000); the numeric stages cannot certify
    # the double zero, and the reason says why the exact route did not run -- within the budget
    x = sp.exp(-(1 + sp.Rational(1, 1000)) * t)
    cert = certify(laplace_of(sp.exp(-t) * (1 - sp.Rational(4, 3) * x) ** 2), time_budget=5)
    assert cert.status is Nonnegativity.INCONCLUSIVE and cert.proof is None
    assert "degree 3002" in cert.reason and cert.seconds < 6
