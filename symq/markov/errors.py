"""Errors of the markov domain (subclasses of :class:`symq.core.errors.SymqError`)."""

from __future__ import annotations

from collections.abc import Sequence

from symq.core.errors import SymqError

__all__ = ["ReducibleChain"]


class ReducibleChain(SymqError, ValueError):
    """The chain has more than one closed class, so no unique stationary law: the limit depends
    on the initial state (Kelly 1979, *Reversibility and Stochastic Networks*, ch. 1).

    Parameters
    ----------
    classes : sequence of sequence of str
        Each closed class as a few of its states (``"n=0, m=1"``).
    sizes : sequence of int
        The number of states of each class.
    name : str
        The chain, for the message.
    """

    def __init__(self, classes: Sequence[Sequence[str]], sizes: Sequence[int],
                 name: str = "the chain") -> None:
        self.classes = tuple(tuple(c) for c in classes)
        self.sizes = tuple(int(s) for s in sizes)
        shown = []
        for states, size in zip(self.classes[:6], self.sizes[:6], strict=False):
            listed = "; ".join(f"({s})" for s in states)
            more = f" and {size - len(states)} more" if size > len(states) else ""
            shown.append(f"{{{listed}{more}}}")
        extra = f" and {len(self.classes) - 6} more" if len(self.classes) > 6 else ""
        super().__init__(
            f"{name} is reducible: {len(self.classes)} closed classes reachable from the "
            f"initial state, {', '.join(shown)}{extra}; it has no unique stationary law (the "
            "limit depends on the initial state): change the initial state or the jumps so "
            "that one closed class is reachable")
