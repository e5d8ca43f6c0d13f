"""Markov models declared by guarded jumps: finite CTMCs, their state space, their stationary
law (sparse LU, and exact rationals as evidence), and the classic queue library.

A chain is declared once (:class:`MarkovChain` of :class:`StateVariable` and :class:`Jump`, as
in PRISM's guarded commands); :func:`build_state_space` builds the reachable states and the
generator; :func:`stationary` solves for the stationary law with its residual checked;
:func:`exact_stationary` solves it again in exact rationals for small chains.  See the guide,
``docs/guide/markov.md``.
"""

from .chain import Jump, MarkovChain, Output, StateVariable
from .errors import ReducibleChain
from .exact import ExactStationaryLaw, exact_stationary
from .library import engset, erlang_loss, mm1k, mmck, tandem
from .statespace import StateSpace, build_state_space
from .stationary import StationaryLaw, stationary

__all__ = [
    "StateVariable",
    "Jump",
    "MarkovChain",
    "Output",
    "StateSpace",
    "build_state_space",
    "StationaryLaw",
    "stationary",
    "ExactStationaryLaw",
    "exact_stationary",
    "ReducibleChain",
    "mm1k",
    "mmck",
    "erlang_loss",
    "engset",
    "tandem",
]
