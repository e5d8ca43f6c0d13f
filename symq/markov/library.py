"""Classic finite queues as declarations: each builder is a few lines of guarded jumps.

The sizes (servers ``c``, capacity ``K``, sources ``N``, buffers) are integers fixed when the
chain is built (they shape the state space); the rates are symbolic parameters given when
solving.  Every chain has the outputs ``EN`` (mean number in the system), ``P_block`` (the
stationary probability that an arrival is blocked: the time congestion) and ``X`` (throughput
of departures), and ``X_in`` (throughput of accepted arrivals).  The textbook formulas these
must match (Erlang B, Engset, M/M/c/K) are in Kleinrock (1975), *Queueing Systems*, Vol. 1,
ch. 3, and Gross & Harris, *Fundamentals of Queueing Theory*, ch. 2.

The queues with phase-type or Markovian arrival laws (M/PH/1, PH/M/1, MAP/M/1: an unbounded
number in system, solved as QBDs) and the closed cyclic network are in
:mod:`symq.markov.library_phase`, and exported here too.

Examples
--------
>>> erlang_loss(3)
MarkovChain(name='M/M/3/3', variables=(n in [0, 3]), jumps=2, parameters=(lam, mu))
"""

from __future__ import annotations

from symq.core.errors import InvalidParameter
from symq.core.parameters import integer_value

from .chain import Jump, MarkovChain, StateVariable
from .library_phase import closed_cyclic, mapm1, mph1, phm1

__all__ = ["mm1k", "mmck", "erlang_loss", "engset", "tandem", "mph1", "phm1", "mapm1",
           "closed_cyclic"]


def mm1k(K: int) -> MarkovChain:
    """M/M/1/K: arrivals at rate ``lam`` (lost when ``K`` jobs are present), one server at rate
    ``mu``; the state ``n`` is the number in the system."""
    K = integer_value("K", K, 1)
    return mmck(1, K)


def mmck(c: int, K: int) -> MarkovChain:
    """M/M/c/K: arrivals at rate ``lam`` (lost at ``n == K``), ``c`` servers at rate ``mu``
    each; ``EN_queue`` is the mean number waiting."""
    c = integer_value("c", c, 1)
    K = integer_value("K", K, c)
    return MarkovChain(
        [StateVariable("n", 0, K)],
        [Jump("lam", {"n": "n + 1"}, guard=f"n < {K}", label="arrive"),
         Jump(f"mu*min(n, {c})", {"n": "n - 1"}, guard="n > 0", label="serve")],
        parameters=("lam", "mu"),
        outputs={"EN": "n", "EN_queue": f"max(n - {c}, 0)", "P_block": f"n == {K}",
                 "X": "throughput:serve", "X_in": "throughput:arrive"},
        name=f"M/M/{c}/{K}")


def erlang_loss(c: int) -> MarkovChain:
    """M/M/c/c, the Erlang loss system: ``P_block`` is Erlang's B formula at load
    ``lam/mu``."""
    c = integer_value("c", c, 1)
    return mmck(c, c)


def engset(N: int, c: int) -> MarkovChain:
    """Engset's finite-source loss system: ``N`` sources, each idle one requesting at rate
    ``lam``; ``c <= N`` servers at rate ``mu``; a request finding all servers busy is lost.
    ``P_block`` is the time congestion; the call congestion is ``P_block`` of ``N - 1``
    sources."""
    N = integer_value("N", N, 1)
    c = integer_value("c", c, 1)
    if c > N:
        raise InvalidParameter("c", c, f"an integer in [1, N = {N}]",
                               "no more than N servers can be busy")
    return MarkovChain(
        [StateVariable("n", 0, c)],
        [Jump(f"lam*({N} - n)", {"n": "n + 1"}, guard=f"n < {c}", label="arrive"),
         Jump("mu*n", {"n": "n - 1"}, guard="n > 0", label="serve")],
        parameters=("lam", "mu"),
        outputs={"EN": "n", "P_block": f"n == {c}", "X": "throughput:serve",
                 "X_in": "throughput:arrive"},
        name=f"Engset N={N} c={c}")


def tandem(B1: int, B2: int) -> MarkovChain:
    """Two single-server nodes in tandem with finite buffers: arrivals at rate ``lam`` are lost
    when node 1 holds ``B1`` jobs; node 1 serves at rate ``mu1`` only while node 2 has room
    (blocking), node 2 at rate ``mu2``.  Not reversible, and not of product form."""
    B1 = integer_value("B1", B1, 1)
    B2 = integer_value("B2", B2, 1)
    return MarkovChain(
        [StateVariable("n1", 0, B1), StateVariable("n2", 0, B2)],
        [Jump("lam", {"n1": "n1 + 1"}, guard=f"n1 < {B1}", label="arrive"),
         Jump("mu1", {"n1": "n1 - 1", "n2": "n2 + 1"}, guard=f"n1 > 0 and n2 < {B2}",
              label="move"),
         Jump("mu2", {"n2": "n2 - 1"}, guard="n2 > 0", label="serve")],
        parameters=("lam", "mu1", "mu2"),
        outputs={"EN": "n1 + n2", "EN1": "n1", "EN2": "n2", "P_block": f"n1 == {B1}",
                 "X": "throughput:serve", "X_in": "throughput:arrive"},
        name=f"tandem B1={B1} B2={B2}")
