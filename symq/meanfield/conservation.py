"""Linear quantities a population process conserves, and the coordinates that remain.

When every jump ``l`` of a population process satisfies ``c . l = 0`` (fractions of one
population that add up to one: susceptible + infected + recovered), ``c . X^N(t)`` never
changes: the process lives on the affine subspace through its initial state spanned by the
jumps.  The drift ``F = sum_l l beta_l`` lies in that span, so its Jacobian is singular along
the conserved directions (``c^T DF = 0``): a fixed point is not isolated in the full space and
``DF`` has an eigenvalue 0 whatever the dynamics.  Every solve then works in the coordinates
``y`` of ``x = x* + P y``, ``P`` an orthonormal basis of the span of the jumps (rmf_tool's
dimension reduction does the same): Newton's step, the eigenvalues that decide stability and
the size expansion (whose tensors transform linearly: ``A -> P^T A P``, ``V -> P V_y``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sympy as sp
from numpy.typing import NDArray

if TYPE_CHECKING:
    from .population import PopulationProcess

__all__ = ["Conservation", "conservation"]


@dataclass(frozen=True)
class Conservation:
    """The conserved linear combinations of a process and the basis of its jumps' span.

    Attributes
    ----------
    conserved : tuple of tuple of int
        Integer vectors ``c`` with ``c . l = 0`` for every jump (a basis of them, exact).
    basis : ndarray, shape (n, r), or None
        An orthonormal basis of the span of the jumps; ``None`` when it is the whole space.
    """

    conserved: tuple[tuple[int, ...], ...]
    basis: NDArray[np.float64] | None

    def describe(self, names: tuple[str, ...]) -> str:
        """The conserved sums in the variables' names (``x1 + x2 + x3``)."""
        parts = []
        for c in self.conserved:
            terms = [(f"{'' if abs(k) == 1 else abs(k)}{v}", k) for k, v in zip(c, names) if k]
            text = ""
            for i, (term, k) in enumerate(terms):
                text += (term if k > 0 else f"-{term}") if i == 0 else \
                    (f" + {term}" if k > 0 else f" - {term}")
            parts.append(text)
        return ", ".join(parts)


def conservation(process: PopulationProcess) -> Conservation:
    """The conserved combinations of the declared jumps (exact null space, computed once)."""
    cache = process._derived
    if "conservation" not in cache:
        jumps = sp.Matrix([list(jump) for jump, _ in process.transitions])
        exact = jumps.nullspace()
        conserved = []
        for vector in exact:
            scale = sp.ilcm(*[sp.fraction(e)[1] for e in vector])
            ints = [int(e * scale) for e in vector]
            if next(k for k in ints if k) < 0:
                ints = [-k for k in ints]
            conserved.append(tuple(ints))
        basis = None
        if conserved:
            L = np.array([list(jump) for jump, _ in process.transitions], dtype=float)
            _u, s, vh = np.linalg.svd(L, full_matrices=False)
            rank = int(np.sum(s > s[0] * 1e-12 * max(L.shape)))
            basis = np.ascontiguousarray(vh[:rank].T)
        cache["conservation"] = Conservation(conserved=tuple(conserved), basis=basis)
    return cache["conservation"]
