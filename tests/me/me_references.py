"""Independent references shared by the ME certification tests (not a test module).

They never call the certifier: a transform is inverted by sympy's 60-digit roots and residues,
the classical Padé fit is solved as its own linear system, and the irrational touching case is
written term by term.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from symq.me.transform import RationalLST

s = sp.Symbol("s")


def density_by_residues(lst: RationalLST):
    """f(t) from the transform alone: sympy's 60-digit roots of D and residues N(z)/D'(z)
    (simple poles only), evaluated in mpmath -- independent of the certifier's pole disks."""
    N, D = lst.N, lst.D
    roots = D.nroots(n=60, maxsteps=200)
    assert len(set(sp.N(r, 30) for r in roots)) == D.degree(), "test helper needs simple poles"
    dD = D.diff(s)
    with mpmath.workdps(60):
        out = []
        for r in roots:
            z = mpmath.mpc(str(sp.re(r)), str(sp.im(r)))
            num = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in N.all_coeffs()], z)
            den = mpmath.polyval([mpmath.mpf(c.p) / c.q for c in dD.all_coeffs()], z)
            out.append((z, num / den))

    def f(t):
        t = mpmath.mpf(t)
        return mpmath.re(sum(c * mpmath.exp(z * t) for z, c in out))

    return f


def classical_pade(moments, n):
    """[n-1/n] Padé of the moment series in the s-form (derivations/me-pade.md, step 4;
    independent solve)."""
    c = [sp.Integer(1)] + [(-1) ** k * moments[k - 1] / sp.factorial(k) for k in range(1, 2 * n)]
    rows, rhs = [], []
    for k in range(2 * n):  # unknowns a_0..a_{n-1}, b_0..b_{n-1}
        row = [-(c[k - i] if 0 <= k - i else 0) for i in range(n)]
        row += [1 if k == j else 0 for j in range(n)]
        rows.append(row)
        rhs.append(c[k - n] if k >= n else 0)
    sol = sp.Matrix(rows).LUsolve(sp.Matrix(rhs))
    return RationalLST.from_coefficients(list(sol[n:]), list(sol[:n]) + [1])


def irrational_touching() -> RationalLST:
    """(1 + cos t)(e^{-t} + e^{-(3 - sqrt 2) t} + e^{-(3 + sqrt 2) t}), normalised: >= 0 with
    zeros at odd multiples of pi; the poles -3 -+ sqrt(2) (-+ i) are not Gaussian rational."""
    F = 1 / (s + 1) + (s + 1) / ((s + 1) ** 2 + 1)
    for a in (3 - sp.sqrt(2), 3 + sp.sqrt(2)):
        F += 1 / (s + a) + (s + a) / ((s + a) ** 2 + 1)
    F = sp.cancel(sp.expand(sp.together(F)))
    return RationalLST.from_expr(sp.cancel(F / F.subs(s, 0)))
