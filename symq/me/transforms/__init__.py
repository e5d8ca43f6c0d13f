"""Transforms declared by their formula: Laplace-Stieltjes transforms, moment and probability
generating functions; their moments, cumulants and numerical inversion.

* :mod:`~symq.me.transforms.model`: :class:`Transform` (the safe parser, the checks that it is
  the transform of a probability law);
* :mod:`~symq.me.transforms.moments`: exact moments and cumulants with the existence of each;
* :mod:`~symq.me.transforms.inversion`: density, distribution function and tail by two
  inversion methods (Abate-Whitt's unified Euler and the fixed Talbot contour), their
  disagreement stated as the error;
* :mod:`~symq.me.transforms.operations`: transforms built from others (Pollaczek-Khinchine,
  convolution, mixture, random sums, the residual life, Fuhrmann-Cooper's vacations);
* :mod:`~symq.me.transforms.busy_period`: the M/G/1 busy period's moments from Takács'
  functional equation, exactly;
* :mod:`~symq.me.transforms.priority`: one class of an M/G/1 priority queue (non-preemptive
  or preemptive-resume): exact moments, inversion with the busy period's fixed point;
* :mod:`~symq.me.transforms.tails`: the exponential tail from the dominant pole;
* :mod:`~symq.me.transforms.fitting`: a certified ME fit of the law (:func:`symq.me.fit`);
* :mod:`~symq.me.transforms.declared`: the claims-file kind ``transform``.
"""

from .busy_period import busy_period_moments, invert_busy_period
from .fitting import TransformFit, fit_transform
from .inversion import Inversion, invert
from .model import KINDS, NotATransform, Transform
from .moments import TransformMoments, moment_expressions, moments, probabilities
from .operations import (
    convolve,
    equilibrium,
    mixture,
    pollaczek_khinchine,
    queue_length,
    random_sum,
    sojourn_time,
    vacation_waiting_time,
)
from .priority import PriorityClassTime, priority_class_time
from .tails import PowerTail, TailAsymptotics, power_tail, tail_asymptotics

__all__ = ["Transform", "KINDS", "NotATransform", "moments", "moment_expressions",
           "TransformMoments", "invert", "Inversion", "convolve", "mixture",
           "pollaczek_khinchine", "sojourn_time", "busy_period_moments", "tail_asymptotics",
           "TailAsymptotics", "fit_transform", "TransformFit", "probabilities",
           "queue_length", "power_tail", "PowerTail", "invert_busy_period",
           "priority_class_time", "PriorityClassTime", "random_sum", "equilibrium",
           "vacation_waiting_time"]
