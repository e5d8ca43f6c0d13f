"""Markov models declared by guarded jumps: finite CTMCs, their state space, their stationary
law (GTH, sparse LU or GMRES; exact rationals and a symbolic form as evidence), transient laws,
passage times, sensitivities, Gillespie simulation, and the classic queue library.

A chain is declared once (:class:`MarkovChain` of :class:`StateVariable` and :class:`Jump`, as
in PRISM's guarded commands); :func:`build_state_space` builds the reachable states and the
generator; :func:`stationary` solves for the stationary law with its residual checked;
:func:`exact_stationary` solves it again in exact rationals for small chains and
:func:`symbolic_stationary` in closed form; :func:`transient`, :func:`passage_time`,
:func:`sensitivity` and :func:`simulate_chain` answer the other questions a paper asks of a
chain.  A level-dependent QBD given by numeric blocks (callables of the level) is solved by
linear level reduction, :class:`LevelDependentQBD` (:mod:`symq.markov.level_reduction`).  A
Markov decision process is declared on the same jumps with actions and costs
(:class:`MarkovDecisionProcess`, :mod:`symq.markov.mdp`) and solved by :func:`solve_mdp`.  See
the guides, ``docs/guide/markov.md`` and ``docs/guide/mdp.md``.
"""

from .chain import Jump, MarkovChain, Output, StateVariable
from .errors import ReducibleChain
from .exact import ExactStationaryLaw, exact_stationary
from .level_reduction import LevelDependentQBD, QBDSolution
from .levels import QBDStationaryLaw, qbd_stationary
from .library import closed_cyclic, engset, erlang_loss, mapm1, mm1k, mmck, mph1, phm1, tandem
from .mdp import (
    Action,
    MarkovDecisionProcess,
    MDPSolution,
    StationaryPolicy,
    evaluate_policy,
    solve_mdp,
)
from .passage import PassageTime, UnreachableTarget, passage_time
from .qbd import MatrixGeometricLaw, solve_qbd
from .sensitivity import StationarySensitivity, sensitivity
from .simulation import CTMCEstimate, simulate_ctmc
from .simulation_declared import simulate_chain
from .statespace import StateSpace, build_state_space
from .stationary import StationaryLaw, stationary
from .symbolic import SymbolicStationaryLaw, is_reversible, product_form, symbolic_stationary
from .transient import TransientLaw, transient

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
    "MatrixGeometricLaw",
    "solve_qbd",
    "QBDStationaryLaw",
    "qbd_stationary",
    "LevelDependentQBD",
    "QBDSolution",
    "TransientLaw",
    "transient",
    "PassageTime",
    "passage_time",
    "UnreachableTarget",
    "SymbolicStationaryLaw",
    "symbolic_stationary",
    "is_reversible",
    "product_form",
    "StationarySensitivity",
    "sensitivity",
    "CTMCEstimate",
    "simulate_ctmc",
    "simulate_chain",
    "mm1k",
    "mmck",
    "erlang_loss",
    "engset",
    "tandem",
    "mph1",
    "phm1",
    "mapm1",
    "closed_cyclic",
    "Action",
    "MarkovDecisionProcess",
    "solve_mdp",
    "evaluate_policy",
    "MDPSolution",
    "StationaryPolicy",
]
