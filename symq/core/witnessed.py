"""An exact integer that says where it comes from: a count with its first witness.

A model may report a count (the states where a stated policy is not optimal, say) as a
:class:`Witnessed` integer: claims compare it as the integer it is, and print it with its
witness (``2 (first at n1=3, n2=0: ...)``), so that a verdict names the state that refutes a
claim, not only the parameters.

Examples
--------
>>> w = Witnessed(2, "first at n=3")
>>> w == 2, w + 1, str(w)
(True, 3, '2 (first at n=3)')
"""

from __future__ import annotations

__all__ = ["Witnessed"]


class Witnessed(int):
    """An integer with a ``witness`` text (shown by ``str``; arithmetic gives plain ints)."""

    witness: str

    def __new__(cls, value: int, witness: str = "") -> Witnessed:
        self = super().__new__(cls, value)
        self.witness = witness
        return self

    def __str__(self) -> str:
        return f"{int(self)} ({self.witness})" if self.witness else str(int(self))

    __repr__ = __str__

    def __reduce__(self) -> tuple[type, tuple[int, str]]:
        return (Witnessed, (int(self), self.witness))
