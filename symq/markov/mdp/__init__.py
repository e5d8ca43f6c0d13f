"""Markov decision processes declared by actions on guarded jumps: the Bellman equation's model
kind.

A process is declared once (:class:`MarkovDecisionProcess` of state variables, uncontrolled
:class:`~symq.markov.Jump` s and :class:`Action` s with their own jumps and costs, as PRISM labels
an MDP's commands by actions); :func:`solve_mdp` finds the optimal average (or discounted) cost,
bracketed, by policy iteration, relative value iteration or the linear program (three
independent methods that the tests make meet), on a checked truncation when a variable is
countable; the :class:`StationaryPolicy` it returns keeps every optimal action at each state and
reads its structure (threshold, switching curve, priority rule).  :func:`evaluate_policy`
gives the gain of
any stated policy, :func:`simulate_policy` its simulated cost (a confidence interval) as
independent evidence.  :mod:`symq.markov.mdp.library` holds the classic controlled queues (Naor,
c-mu, routing to two queues, service-rate control).  See ``docs/guide/mdp.md``.
"""

from .model import Action, MarkovDecisionProcess
from .policies import evaluate_policy, simulate_policy
from .results import MDPSolution, StationaryPolicy
from .solve import solve_mdp
from .space import DecisionSpace, build_decision_space
from .structure import PriorityRule, SwitchingCurve, ThresholdStructure

__all__ = ["Action", "MarkovDecisionProcess", "DecisionSpace", "build_decision_space",
           "solve_mdp", "evaluate_policy", "simulate_policy", "MDPSolution", "StationaryPolicy",
           "ThresholdStructure", "SwitchingCurve", "PriorityRule"]
