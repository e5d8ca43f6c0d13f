"""Classic controlled queues declared as MDPs: the models of the structural results that
textbooks state (each also in ``examples/claims/classic_mdps.toml``).

* :func:`naor`: admission to an M/M/1 queue with a reward per admitted customer and a holding
  cost (Naor 1969, Econometrica 37:15-24);
* :func:`cmu`: one server, two classes, preemptive choice of the class served (Cox & Smith 1961,
  *Queues*: serve the class of largest ``c mu``);
* :func:`routing`: arrivals routed to one of two exponential servers, holding costs (Winston
  1977, J. Appl. Probab. 14:181-189, for identical servers: join the shortest queue; Hajek 1984,
  IEEE Trans. Autom. Control 29:491-499: a monotone switching curve in general);
* :func:`service_rate`: an M/M/1 queue choosing a slow or a fast service rate, each with its cost
  rate (Lippman 1975, Oper. Res. 23:687-710; Stidham & Weber 1989: a threshold in the queue
  length).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..chain import Jump, StateVariable
from .model import Action, MarkovDecisionProcess

__all__ = ["naor", "cmu", "routing", "service_rate"]


def naor() -> MarkovDecisionProcess:
    """Admission control of an M/M/1 queue (parameters ``lam, mu, R, C``).

    Each admitted customer brings the reward ``R`` (a lump cost ``-R``), each customer present
    costs ``C`` per unit time; the socially optimal policy admits below a threshold.

    Examples
    --------
    >>> naor().action_names
    ('admit', 'reject')
    """
    return MarkovDecisionProcess(
        [StateVariable("n", 0, None)],
        actions=[Action("admit", [Jump("lam", {"n": "n + 1"}, cost="-R")]), Action("reject")],
        jumps=[Jump("mu", {"n": "n - 1"}, guard="n > 0")],
        cost="C*n", parameters=("lam", "mu", "R", "C"),
        outputs={"threshold": "threshold:admit"}, name="naor")


def cmu() -> MarkovDecisionProcess:
    """One server, two classes of Poisson arrivals (``lam1, lam2``), exponential services
    (``mu1, mu2``), holding costs ``c1, c2`` per job per unit time; the action is the class
    served (preemptive), or idling.

    Examples
    --------
    >>> cmu().action_names
    ('serve1', 'serve2', 'idle')
    """
    return MarkovDecisionProcess(
        [StateVariable("n1", 0, None), StateVariable("n2", 0, None)],
        actions=[Action("serve1", [Jump("mu1", {"n1": "n1 - 1"})], guard="n1 > 0"),
                 Action("serve2", [Jump("mu2", {"n2": "n2 - 1"})], guard="n2 > 0"),
                 Action("idle")],
        jumps=[Jump("lam1", {"n1": "n1 + 1"}), Jump("lam2", {"n2": "n2 + 1"})],
        cost="c1*n1 + c2*n2", parameters=("lam1", "lam2", "mu1", "mu2", "c1", "c2"),
        policies={"cmu": {"serve1": "c1*mu1 >= c2*mu2 or n2 == 0", "serve2": "true",
                          "idle": "true"},
                  "reverse": {"serve2": "c1*mu1 >= c2*mu2 or n1 == 0", "serve1": "true",
                              "idle": "true"}},
        outputs={"mismatch_cmu": "mismatch:cmu", "mismatch_reverse": "mismatch:reverse"},
        name="cmu")


def routing(outputs: Mapping[str, Any] | None = None) -> MarkovDecisionProcess:
    """Poisson arrivals (``lam``) routed on arrival to one of two exponential servers
    (``mu1, mu2``), holding cost ``h1, h2`` per job per unit time.

    The action is where the next arrival goes; the declared policy ``jsq`` joins the shorter
    queue (ties to server 1), ``jsq_by_rate`` the queue of least expected delay.  ``outputs``
    adds declared outputs to ``mismatch_jsq`` (``{"curve": "curve:to1:n1:n2"}``).

    Examples
    --------
    >>> routing().action_names
    ('to1', 'to2')
    """
    return MarkovDecisionProcess(
        [StateVariable("n1", 0, None), StateVariable("n2", 0, None)],
        actions=[Action("to1", [Jump("lam", {"n1": "n1 + 1"})]),
                 Action("to2", [Jump("lam", {"n2": "n2 + 1"})])],
        jumps=[Jump("mu1", {"n1": "n1 - 1"}, guard="n1 > 0"),
               Jump("mu2", {"n2": "n2 - 1"}, guard="n2 > 0")],
        cost="h1*n1 + h2*n2", parameters=("lam", "mu1", "mu2", "h1", "h2"),
        policies={"jsq": {"to1": "n1 <= n2", "to2": "true"}},
        outputs={"mismatch_jsq": "mismatch:jsq", **(outputs or {})}, name="routing")


def service_rate() -> MarkovDecisionProcess:
    """An M/M/1 queue (arrival rate ``lam``) that serves at the slow rate ``mu1`` (cost rate
    ``c1``) or the fast rate ``mu2`` (cost rate ``c2``) while busy; holding cost ``h`` per job.

    Examples
    --------
    >>> service_rate().action_names
    ('slow', 'fast')
    """
    return MarkovDecisionProcess(
        [StateVariable("n", 0, None)],
        actions=[Action("slow", [Jump("mu1", {"n": "n - 1"}, guard="n > 0")],
                        cost="c1*min(n, 1)"),
                 Action("fast", [Jump("mu2", {"n": "n - 1"}, guard="n > 0")],
                        cost="c2*min(n, 1)", guard="n > 0")],
        jumps=[Jump("lam", {"n": "n + 1"})],
        cost="h*n", parameters=("lam", "mu1", "mu2", "c1", "c2", "h"),
        outputs={"threshold": "threshold:slow"}, name="service_rate")
