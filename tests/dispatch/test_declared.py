"""The dispatch-sim model and the dispatch-score model kind against exact values and `dispatch`."""

import tomllib

import numba
import pytest

import symq.core.registry as registry
from symq.core.errors import InvalidParameter, StabilityError
from symq.core.parameters import Parameter, PositiveReal
from symq.core.simstats import ConfidenceInterval
from symq.dispatch.policies.exact import exact_sita
from symq.dispatch.policies.jsq import exact_jsq
from symq.dispatch.sizes import named_sizes
from symq.laws import Exponential

X = Exponential(1.0)


def sim():
    return registry.get_model("dispatch-sim")


def declare(table, parameters=(), name="mine"):
    kind = registry.get_model_kind("dispatch-score")
    return kind.declare(name, table, parameters, f"models.{name}")


BETA = (Parameter("beta", PositiveReal(), typical=1.0),)


# ---------------------------------------------------------------- dispatch-sim


def test_dispatch_sim_reuses_dispatch_parameters():
    dispatch = registry.get_model("dispatch")
    for name in ("m", "rho", "sizes", "scv", "h"):
        assert sim().parameter(name) is dispatch.parameter(name)
    assert set(sim().outputs) == {"ET", "EW"}


def test_dispatch_sim_rnd_is_mm1():
    r = sim().run({"policy": "rnd", "m": 2, "rho": 0.5, "n_jobs": 600_000}, rng=1)
    assert isinstance(r["ET"], ConfidenceInterval) and r["ET"].level == 0.99
    assert r["ET"].contains(1 / (1 - 0.5)), r["ET"]        # M/M/1 per server, E[X] = 1
    assert r["EW"].contains(0.5 / (1 - 0.5)), r["EW"]
    assert r["ET"].relative_half_width < 0.02


def test_dispatch_sim_sita_and_jsq_against_exact():
    r = sim().run({"policy": "sita", "m": 2, "rho": 0.5, "sizes": "h2", "scv": 4, "h": 1.5,
                   "n_jobs": 600_000}, rng=2)
    assert r["ET"].contains(exact_sita(2, 0.5, named_sizes("h2", 4.0), [1.5])), r["ET"]
    j = sim().run({"policy": "jsq", "m": 3, "rho": 0.6, "n_jobs": 600_000}, rng=3)
    assert j["ET"].contains(exact_jsq(3, 0.6, X)), j["ET"]


def test_dispatch_sim_policy_a_beats_policy_b():
    kw = {"m": 2, "rho": 0.7, "n_jobs": 400_000}
    lwl = sim().run({"policy": "lwl", **kw}, rng=4)["ET"]
    rnd = sim().run({"policy": "rnd", **kw}, rng=4)["ET"]
    assert lwl.high < rnd.low


def test_dispatch_sim_bad_input():
    cases = [({"policy": "optimal"}, "policy"), ({"policy": "lwl", "h": 1.0}, "h"),
             ({"policy": "sita"}, "h"), ({"policy": "lwl", "scv": 3.0}, "scv"),
             ({"policy": "sita", "h": 1.0, "m": 3}, "h"), ({"policy": "lwl", "n_jobs": 10},
                                                         "n_jobs")]
    for extra, name in cases:
        params = {"m": 2, "rho": 0.5, **extra}
        with pytest.raises(InvalidParameter, match=f"parameter {name}=") as exc:
            sim().run(params)
        assert exc.value.name == name
    with pytest.raises(StabilityError):
        sim().run({"policy": "lwl", "m": 2, "rho": 1.2})


# ---------------------------------------------------------------- dispatch-score


def test_declared_score_u_agrees_with_dispatch_lwl():
    spec = declare({"score": "u", "description": "least work left"})
    assert [p.name for p in spec.parameters][:2] == ["m", "rho"]
    r = spec.run({"m": 2, "rho": 0.4, "n_jobs": 400_000}, rng=5)
    ref = registry.get_model("dispatch").run({"policy": "lwl", "m": 2, "rho": 0.4})
    assert ref.method == "exact"
    assert r.method == "value-iteration + simulation"
    assert abs(r["ET"] - ref["ET"]) <= r["error_estimate"] < 2e-3     # VI vs M/M/2
    assert r["ET_sim"].contains(ref["ET"]), r["ET_sim"]               # simulation vs M/M/2
    assert r["EW_sim"].contains(ref["ET"] - 1.0)


def test_declared_parameter_reaches_vi_and_simulation():
    # beta large: every job to server 1, an M/M/1 queue at load m rho = 0.6
    spec = declare({"score": "u + beta*i"}, BETA)
    assert [p.name for p in spec.parameters][:3] == ["beta", "m", "rho"]
    r = spec.run({"beta": 100.0, "m": 2, "rho": 0.3, "umax": 24.0, "n_jobs": 400_000}, rng=6)
    assert abs(r["ET"] - 2.5) < 2e-3
    assert r["ET_sim"].contains(2.5), r["ET_sim"]


def test_declared_counts_score_is_simulated_only():
    spec = declare({"score": "n"})
    r = spec.run({"m": 3, "rho": 0.6, "n_jobs": 600_000}, rng=7)
    assert "ET" not in r.values and r.method == "simulation"
    assert r["ET_sim"].contains(exact_jsq(3, 0.6, X)), r["ET_sim"]   # any tie rule: exact JSQ
    with pytest.raises(InvalidParameter, match="parameter method=") as exc:
        spec.run({"m": 2, "rho": 0.5, "method": "vi"})
    assert "job counts" in str(exc.value)
    with pytest.raises(InvalidParameter, match="parameter m=3"):
        declare({"score": "u"}).run({"m": 3, "rho": 0.5, "method": "vi"})
    with pytest.raises(InvalidParameter, match="parameter delta="):
        declare({"score": "u"}).run({"m": 2, "rho": 0.5, "method": "simulation",
                                     "delta": 0.1})


def test_declared_numba_function():
    @numba.njit
    def least_work(u, n, x, i, p):
        return u + p[3] * i

    spec = declare({"score": least_work, "uses_counts": False}, BETA)
    r = spec.run({"beta": 100.0, "m": 2, "rho": 0.3, "umax": 24.0, "method": "vi"})
    f = declare({"score": "u + beta*i"}, BETA).run({"beta": 100.0, "m": 2, "rho": 0.3,
                                                    "umax": 24.0, "method": "vi"})
    assert r["ET"] == pytest.approx(f["ET"], abs=1e-9)
    assert "ET_sim" not in r.values


def test_bad_declarations_name_the_key():
    bad = {"u + q": "unknown name q", "__import__('os')": "__import__",
           "u.real": "attribute access", "u*(": "syntax error"}
    for text, reason in bad.items():
        with pytest.raises(InvalidParameter) as exc:
            declare({"score": text}, name="bad")
        assert exc.value.name == "models.bad.score" and reason in str(exc.value)
    with pytest.raises(InvalidParameter, match="models.bad.colour"):
        declare({"score": "u", "colour": "red"}, name="bad")
    with pytest.raises(InvalidParameter, match="models.bad.score"):
        declare({"description": "no score"}, name="bad")
    with pytest.raises(InvalidParameter, match="models.bad.uses_counts"):
        declare({"score": "u", "uses_counts": True}, name="bad")
    with pytest.raises(InvalidParameter, match="models.bad.parameters"):
        declare({"score": "u"}, (Parameter("rho", PositiveReal()),), name="bad")
    with pytest.raises(InvalidParameter, match="models.bad.score"):
        declare({"score": lambda u: u}, name="bad")


def test_kind_example_declares_and_runs():
    kind = registry.get_model_kind("dispatch-score")
    table = tomllib.loads(kind.example)["models"]["size-aware-lwl"]
    params = tuple(Parameter(k, PositiveReal(), typical=0.5) for k in table.pop("parameters"))
    assert table.pop("kind") == "dispatch-score"
    spec = kind.declare("size-aware-lwl", table, params, "models.size-aware-lwl")
    r = spec.run({"beta": 0.5, "m": 2, "rho": 0.4, "method": "simulation", "n_jobs": 100_000},
                 rng=8)
    assert r["ET_sim"].mean > 1.0
    assert "score" in spec.derivation().to_markdown()
    assert set(kind.outputs) == {"ET", "error_estimate", "ET_sim", "EW_sim"}
