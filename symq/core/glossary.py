"""One glossary of result names, shared by every domain.

A user who reads ``ET`` in a JSQ(d) fixed point reads ``ET`` in a dispatching policy, a
processor-sharing farm and an attained-service estimate, with the same meaning.  The glossary is
written once, here; ``tests/core/test_glossary.py`` scans every public result type of symq and fails
on a field named by a retired synonym (:data:`RETIRED`).

Quantities that belong to one domain only (a window's mean ``EX`` in a TCP model, a price of
anarchy ``PoA``) keep their domain's name; the glossary fixes the names of the concepts that every
domain shares.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["GLOSSARY", "RETIRED", "retired_names"]

#: Shared result names and their meaning.
GLOSSARY: Mapping[str, str] = {
    "ET": "mean response (sojourn) time of a job: waiting plus service",
    "EW": "mean waiting time of a job before its service starts",
    "EQ": "mean number of jobs in the system per server",
    "tail": "tail probabilities P(X >= k), k = 0, 1, ... (nonincreasing, in [0, 1])",
    "n_jobs": "number of jobs (departures) simulated",
    "n_batches": "number of batches of the batch-means confidence intervals",
    "rng": "randomness: None, a seed, a SeedSequence or a numpy Generator",
    "progress": "show a tqdm progress bar (off by default in the library)",
    "method": "the numerical method that produced the values",
    "exactness": "how the values were obtained: exact, numeric, certified or simulated",
    "residual": "the last residual of an iterative solver (what convergence was measured on)",
    "seconds": "wall time in seconds that the result took to compute",
    "sizes": "the job-size law (a symq.laws law, or its name in a vocabulary)",
    "mean_size": "mean job size E[X] (with unit-rate servers, the mean service time)",
}

#: Synonyms that are no longer used as result fields, with the glossary name to use instead.
RETIRED: Mapping[str, str] = {
    "mean_response": "ET",
    "mean_response_time": "ET",
    "mean_sojourn": "ET",
    "mean_sojourn_time": "ET",
    "ER": "ET",
    "response_time": "ET",
    "mean_waiting": "EW",
    "mean_wait": "EW",
    "mean_waiting_time": "EW",
    "mean_queue": "EQ",
    "mean_number": "EQ",
    "batches": "n_batches",
    "num_batches": "n_batches",
    "n_samples_jobs": "n_jobs",
    "seed": "rng",
    "show_progress": "progress",
    "timings": "seconds",
    "mean_service": "mean_size",
}


def retired_names(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The retired synonyms among ``names``, each with the glossary name that replaces it.

    Examples
    --------
    >>> retired_names(["ET", "mean_queue", "batches"])
    {'mean_queue': 'EQ', 'batches': 'n_batches'}
    """
    return {name: RETIRED[name] for name in names if name in RETIRED}
