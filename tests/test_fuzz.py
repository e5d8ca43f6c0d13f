"""Fuzz every registered model through the command-line path and the Python API.

For each model of the registry, hypothesis draws parameter sets from the declared domains: values
inside them (around the typical values and across scales), on their edges and outside (NaN, inf,
empty entries, unicode digits and letters, huge and tiny magnitudes, unknown keys).  Each case must
end in either

* a result whose numbers are all finite and whose probabilities (the result names of
  ``symq.core.result.PROBABILITY_NAMES``) lie in [0, 1], with tails that do not increase (checked
  here by the test's own code, not by the library's check), or
* a :class:`~symq.core.errors.SymqError` with a one-line message,

never another exception, and within :data:`CASE_SECONDS` seconds and a bounded memory (the memory
guards get a budget of :data:`MEMORY_BUDGET` bytes through ``SYMQ_MEMORY_LIMIT``).

The quick form (a few cases per model) runs in the suite; ``SYMQ_FUZZ_LONG=1`` runs the long form
(``SYMQ_FUZZ_EXAMPLES`` cases per model, default 200) and prints a summary per model with
``pytest -s``.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import time
import warnings
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from symq.core import registry
from symq.core.errors import SymqError
from symq.core.parameters import (
    Choice,
    Expression,
    IntegerAtLeast,
    Interval,
    NonNegativeReal,
    PositiveReal,
    PositiveVector,
    RationalVector,
)
from symq.core.result import PROBABILITY_NAMES, TAIL_NAMES  # the glossary of probability names
from symq.core.simstats import ConfidenceInterval

LONG = os.environ.get("SYMQ_FUZZ_LONG", "") not in ("", "0")
EXAMPLES = int(os.environ.get("SYMQ_FUZZ_EXAMPLES", "200")) if LONG else 6
#: Wall-clock seconds one case may take.
CASE_SECONDS = 60.0 if LONG else 30.0
#: Memory the solvers' guards may plan for in one case.
MEMORY_BUDGET = 2 * 2**30
#: Peak resident memory of the test process that counts as runaway.
PEAK_LIMIT_KIB = 6 * 2**20


#: Text that no numeric domain accepts (or accepts only at its edge).
EDGE_TEXT = ["nan", "NaN", "inf", "-inf", "", " ", "0", "-0", "-1", "1e-300", "1e308", "1e999",
             "-1e308", "9" * 40, "0.999999999", "1.0000001", "٣", "λ", "1,2,,3", "1;2", "0x10",
             "1_000", "None", "True", "[1]", "1/0", "oo", "1e-320", "5e-324", "\u200b1"]
EDGE_FORMULAS = ["w", "0", "-w", "1/0", "w**w**w", "exp(w)", "oo", "nan", "w/0", "1e308*w",
                 "log(w)", "sqrt(w)", "0.5*w", "w^2", "()", "__import__('os')", "λ*w", "x"]


#: Multiples of the typical value tried for a real parameter (the quick form: those <= 1).
_SCALES = [1e-3, 0.1, 0.5, 0.9, 1.0] + ([1.1, 1.5, 2.0, 10.0, 1e3] if LONG else [])


def _fmt(x: float) -> str:
    return repr(float(x))


def _inside(domain: Any, typical: Any) -> st.SearchStrategy[str]:
    """Text of values inside ``domain`` (near ``typical`` and across scales)."""
    if isinstance(domain, Choice):
        return st.sampled_from(domain.choices)
    if isinstance(domain, IntegerAtLeast):
        low = domain.minimum
        near = int(typical) if isinstance(typical, (int, float)) else low
        return st.one_of(st.integers(low, low + 3), st.integers(max(low, near - 2), near + 2)
                         ).map(str)
    if isinstance(domain, Interval):
        lo = domain.low if math.isfinite(domain.low) else -1e6
        hi = domain.high if math.isfinite(domain.high) else 1e6
        return st.floats(lo, hi, exclude_min=domain.left_open, exclude_max=domain.right_open,
                         allow_nan=False).map(_fmt)
    if isinstance(domain, (PositiveReal, NonNegativeReal)):
        base = float(typical) if isinstance(typical, (int, float)) and typical else 1.0
        scaled = st.sampled_from(_SCALES).map(lambda f: _fmt(base * f))
        if not LONG:  # the quick form stays at or below the typical scale (fast solves)
            return scaled
        return st.one_of(scaled, st.floats(1e-6, 1e6).map(_fmt))
    if isinstance(domain, (PositiveVector, RationalVector)):
        entry = st.one_of(st.floats(1e-3, 1e3).map(_fmt), st.sampled_from(["1", "2/3", "0.5"]))
        size = max(1, getattr(domain, "min_length", 1))
        if typical is not None:
            base = ",".join(f"{float(v):g}" for v in np.ravel(np.asarray(typical, dtype=float)))
            return st.one_of(st.just(base),
                             st.lists(entry, min_size=size, max_size=6).map(",".join))
        return st.lists(entry, min_size=size, max_size=6).map(",".join)
    if isinstance(domain, Expression):
        return st.sampled_from(["0.5*w", "1", "w/2", "0.01*w", "1e-4*w", "1e-3*w**2"])
    raise AssertionError(f"no strategy for {type(domain).__name__}")


def _value_text(domain: Any, typical: Any) -> st.SearchStrategy[str]:
    edge = st.sampled_from(EDGE_FORMULAS if isinstance(domain, Expression) else EDGE_TEXT)
    junk = st.text(max_size=12)
    return st.one_of(_inside(domain, typical), _inside(domain, typical), edge, junk)


@st.composite
def _case(draw: Any, model: Any) -> dict[str, str]:
    """A ``key=value`` mapping: the model's example (the typical values of its required
    parameters, as ``symq solve MODEL --help`` shows them; optional typicals may belong to
    other options, such as ``scv`` to ``service=H2``; every typical value where nothing is
    required) with a few parameters changed, added or dropped."""
    texts: dict[str, str] = {}
    required = any(p.required for p in model.parameters)
    for p in model.parameters:  # where nothing is required (awp), every typical value
        if (p.required or not required) and p.typical is not None:
            texts[p.name] = _typical_text(p.typical)
    names = [p.name for p in model.parameters]
    inside_only = draw(st.booleans())  # half the cases stay inside the declared domains
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True)):
        p = model.parameter(name)
        action = draw(st.sampled_from(["set", "set", "set", "drop"]))
        if action == "drop" and not (inside_only and p.required):
            texts.pop(name, None)
        elif inside_only:
            texts[name] = draw(_inside(p.domain, p.typical))
        else:
            texts[name] = draw(_value_text(p.domain, p.typical))
    if not inside_only and draw(st.integers(0, 9)) == 0:
        texts[draw(st.sampled_from(["foo", "LAM", "λ", "x y"]))] = "1"
    return texts


def _typical_text(typical: Any) -> str:
    if isinstance(typical, (list, tuple, np.ndarray)):
        return ",".join(f"{float(v):g}" for v in np.ravel(np.asarray(typical, dtype=float)))
    return str(typical)


class _CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _CaseTimeout


def _numbers(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [item for k, v in value.items() for item in _numbers(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)) and not isinstance(value, str):
        return [(path, v) for v in value] if not any(isinstance(v, (dict, list, tuple))
                                                     for v in value) else \
            [item for i, v in enumerate(value) for item in _numbers(v, f"{path}[{i}]")]
    if isinstance(value, np.ndarray):
        return [(path, v) for v in value.ravel().tolist()]
    return [(path, value)]


def check_result(values: dict[str, Any]) -> None:
    """Finite numbers, probabilities in [0, 1], tails nonincreasing."""
    for path, v in _numbers(values):
        if isinstance(v, (bool, np.bool_, str)) or v is None:
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            assert math.isfinite(float(v)), f"{path} = {v} is not finite"
        elif isinstance(v, complex):
            assert math.isfinite(v.real) and math.isfinite(v.imag), f"{path} = {v}"
    for key, v in values.items():
        if key in PROBABILITY_NAMES and v is not None:
            if isinstance(v, ConfidenceInterval):       # an estimate: its point must be one
                v = v.mean
            array = np.asarray(v, dtype=float).ravel()
            assert np.all((array >= -1e-12) & (array <= 1 + 1e-12)), \
                f"{key} is not a probability: {array[(array < 0) | (array > 1)][:5]}"
            if key in TAIL_NAMES and array.size > 1:
                assert np.all(np.diff(array) <= 1e-12 * max(1.0, float(array.max()))), \
                    f"{key} increases"


STATS: dict[str, Counter] = defaultdict(Counter)


def _shown(texts: Any) -> str:
    text = repr(texts)
    return text if len(text) < 300 else text[:300] + "..."


def run_case(model: Any, texts: dict[str, str], api_values: bool = False) -> str | None:
    """Run one case; return what broke the contract (None if it held)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    start = time.perf_counter()
    failure: str | None = None
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # library code warns nothing
            warnings.simplefilter("always")
            if api_values:
                result = model.run(texts)
            else:
                result = model.run(model.parse(texts))
        check_result(result.values)
        outcome = "result"
    except SymqError as exc:
        message = str(exc)
        outcome = type(exc).__name__
        if not message or "\n" in message:
            outcome = f"multi-line message {message!r}"
            failure = f"{model.name} {_shown(texts)}: {outcome}"
    except _CaseTimeout:
        outcome = "timeout"
        failure = f"{model.name} {_shown(texts)}: more than {CASE_SECONDS} s"
    except AssertionError as exc:
        outcome = "invalid result"
        failure = f"{model.name} {_shown(texts)}: invalid result: {exc}"
    except Exception as exc:  # noqa: BLE001 - the contract under test: never another exception
        outcome = f"{type(exc).__name__}"
        failure = f"{model.name} {_shown(texts)}: {type(exc).__name__}: {str(exc)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    elapsed = time.perf_counter() - start
    shown = [w for w in caught if not issubclass(w.category, (DeprecationWarning,
                                                              PendingDeprecationWarning))]
    if shown and failure is None:
        first = shown[0]
        failure = (f"{model.name} {_shown(texts)}: a warning reached the user: "
                   f"{first.category.__name__}: {first.message} ({first.filename}:{first.lineno})")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if peak >= PEAK_LIMIT_KIB and failure is None:
        failure = f"{model.name} {_shown(texts)}: peak memory {peak / 2**20:.1f} GiB"
    STATS[model.name][outcome] += 1
    STATS[model.name]["seconds"] += elapsed
    return failure


def _fuzz(model: Any, strategy: Any, api_values: bool) -> None:
    """Run the cases of one model; fail once at the end, listing every broken case."""
    failures: list[str] = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(strategy)
    def case(values: Any) -> None:
        failure = run_case(model, values, api_values=api_values)
        if failure is not None:
            failures.append(failure)

    case()
    assert not failures, f"{len(failures)} broken cases:\n" + "\n".join(failures[:25])


MODELS = sorted(registry.models())


@pytest.fixture(autouse=True)
def _memory_budget(monkeypatch):
    monkeypatch.setenv("SYMQ_MEMORY_LIMIT", str(MEMORY_BUDGET))
    # value iteration refuses (from its own estimate) what would not end within a case
    monkeypatch.setenv("SYMQ_VI_TIME_LIMIT", str(CASE_SECONDS / 10))


@pytest.mark.parametrize("name", MODELS)
def test_fuzz_model_text(name):
    model = registry.get_model(name)
    _fuzz(model, _case(model), api_values=False)


_API_JUNK = [float("nan"), float("inf"), -1.0, 0, None, True, "x", [], [float("nan")], 10**400,
             1e-300, np.float64(1e308), complex(1, 1), {"a": 1}]


@st.composite
def _api_case(draw: Any, model: Any) -> dict[str, Any]:
    values = {p.name: p.typical for p in model.parameters if p.typical is not None}
    values[draw(st.sampled_from([p.name for p in model.parameters]))] = draw(
        st.sampled_from(_API_JUNK))
    return values


@pytest.mark.parametrize("name", MODELS)
def test_fuzz_model_python_values(name):
    """The Python API with values no parser has seen (None, bool, complex, huge ints, ...)."""
    model = registry.get_model(name)
    _fuzz(model, _api_case(model), api_values=True)


def teardown_module(module: Any) -> None:
    if LONG:
        print("\nfuzz summary (cases per model and outcome):")
        for name in sorted(STATS):
            counts = dict(STATS[name])
            seconds = counts.pop("seconds", 0.0)
            total = sum(counts.values())
            print(f"  {name:<16} {total:>5} cases, {seconds:7.1f} s: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
