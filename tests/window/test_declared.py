"""Window protocols declared in a claims file (model kind ``window``) against the ``awp`` presets
they reproduce and against closed forms computed here independently; the derivation of a
declared protocol; every declaration error names ``models.NAME.KEY``."""

from __future__ import annotations

import functools
import math
import tomllib

import mpmath
import pytest
import sympy as sp
from scipy.optimize import brentq

from symq.core import registry
from symq.core.errors import InvalidParameter
from symq.core.parameters import Interval, Parameter, PositiveReal
from symq.window.model import OUTPUTS, solve_awp

NEWRENO = {"increase": "1", "loss": "p*w", "after_loss": "w/2"}
SCALABLE = {"increase": "0.01*w", "loss": "p*w", "after_loss": "7*w/8"}
C = Parameter("c", Interval(0.0, 1.0, left_open=True, right_open=True), typical=0.5)


def declare(table, parameters=(), name="t"):
    return registry.get_model_kind("window").declare(name, table, parameters, f"models.{name}")


@functools.lru_cache(maxsize=1)
def newreno_sqrt_moment() -> float:
    """``E[sqrt(U)]`` for ``U = sum_j 4^-j E_j`` (``E_j`` iid Exp(1)), from the Laplace
    transform ``prod_j 1/(1 + s 4^-j)`` of ``U``: ``E[U^(1/2)] = (1/(2 sqrt(pi))) int_0^oo
    (1 - phi(s)) s^(-3/2) ds`` (the fractional-moment formula), by mpmath quadrature in a
    private context.  Independent of symq's q-series coefficients."""
    ctx = mpmath.MPContext()
    ctx.dps = 20
    q = ctx.mpf(1) / 4

    def transform(s):
        out, j = ctx.mpf(1), 0
        while s * q ** j > ctx.mpf(10) ** -25:
            out *= 1 + s * q ** j
            j += 1
        return 1 / out

    integral = ctx.quad(lambda s: (1 - transform(s)) * s ** ctx.mpf(-1.5),
                        [0, 1, 10, 100, 1e4, ctx.inf])
    return float(integral / (2 * ctx.sqrt(ctx.pi)))


def newreno_constant() -> float:
    """``E[W] sqrt(p)`` for NewReno with Poisson losses ``p w`` per RTT (Altman et al., INFOCOM
    2005; Ott, Kemperman, Mathis 1996: 1.31): Palm inversion over a loss cycle gives
    ``E[W] = (3/4) E_0[W_pre^2] / E_0[W_pre]`` with ``p W_pre^2 / 2 = U`` in law, so
    ``E[W] sqrt(p) = sqrt(2) / E[sqrt(U)]``."""
    return math.sqrt(2.0) / newreno_sqrt_moment()


def test_the_constant_is_the_published_one() -> None:
    assert newreno_constant() == pytest.approx(1.3098, abs=5e-5)


@pytest.mark.parametrize("p", [1e-2, 1e-3, 1e-4, 1e-6])
def test_declared_newreno_equals_the_preset_and_the_closed_form(p: float) -> None:
    declared = declare(NEWRENO).run({"p": p})
    preset = solve_awp(protocol="newreno", p=p)
    assert declared["stable"] and declared.model == "t"
    assert declared["EW"] == pytest.approx(preset.EW, rel=1e-10)
    assert declared["EW2"] == pytest.approx(2 / p, rel=1e-10)      # mean drift: E[W^2] = 2/p
    # the fluid model is scale invariant (W -> W sqrt(p)), so the limit p -> 0 of E[W] sqrt(p)
    # is attained at every p
    assert declared["EW"] * math.sqrt(p) == pytest.approx(newreno_constant(), rel=1e-10)
    assert set(declared.values) == set(OUTPUTS)


def test_declared_newreno_numeric_solver_agrees_with_the_closed_form() -> None:
    spec = declare(NEWRENO)
    numeric = spec.run({"p": 1e-3, "method": "numeric"})
    assert numeric.method.startswith("numeric")
    assert numeric["EW"] == pytest.approx(newreno_constant() / math.sqrt(1e-3), rel=1e-6)


@pytest.mark.parametrize("p", [1e-2, 1e-4])
def test_declared_mimd_equals_the_scalable_preset(p: float) -> None:
    declared = declare(SCALABLE).run({"p": p})
    preset = solve_awp(protocol="scalable", p=p)
    assert declared["EW"] == pytest.approx(preset.EW, rel=1e-10)
    # log drift balance E[a(W)/W] = E[lam(W) ln(W/d(W))]: 0.01 = p ln(8/7) E[W]
    assert declared["EW"] == pytest.approx(0.01 / (p * math.log(8 / 7)), rel=1e-10)


def test_declared_parameter_enters_the_profiles() -> None:
    spec = declare({"increase": "1", "loss": "p*w", "after_loss": "c*w"}, (C,))
    assert [q.name for q in spec.parameters] == ["c", "p", "method"]
    for c in (0.3, 0.7):
        declared = spec.run({"p": 1e-3, "c": c})
        general = solve_awp(a="1", loss="0.001*w", after_loss=f"{c}*w")
        assert declared["EW"] == pytest.approx(general.EW, rel=1e-10)
        assert declared["EW2"] == pytest.approx(1 / (1e-3 * (1 - c)), rel=1e-10)


def test_declared_floor_and_cap_as_formulas_in_the_parameters() -> None:
    lam, a = Parameter("lam", PositiveReal()), Parameter("a", PositiveReal())
    floor = Parameter("floor", PositiveReal())
    spec = declare({"increase": "a*w", "loss": "lam", "after_loss": "0.875*w",
                    "w_min": "floor"}, (a, lam, floor))
    law = spec.run({"a": 0.01, "lam": 0.3, "floor": 2.0})
    # Z = ln(W/w_min) ~ Exp(theta), a theta = lam (1 - beta^theta)
    theta = brentq(lambda t: 0.01 * t - 0.3 * (1 - 0.875 ** t), 1e-3, 1e3)
    assert law["EW"] == pytest.approx(2.0 * theta / (theta - 1), rel=1e-10)
    capped = declare({**NEWRENO, "w_max": 60, "rtt": 0.1}).run({"p": 1e-3})
    reference = solve_awp(protocol="newreno", p=1e-3, w_max=60, rtt=0.1)
    assert capped["EW"] == pytest.approx(reference.EW, rel=1e-12)
    assert capped["throughput"] == pytest.approx(10 * capped["EW"], rel=1e-12)
    assert 0 < capped["atom_at_cap"] < 1


def test_unstable_declaration_reports_it_and_an_infinite_second_moment_is_allowed() -> None:
    unstable = declare({"increase": "w**2", "loss": "w**0.5", "after_loss": "w/2"}).run({})
    assert unstable["stable"] is False and unstable["stability"] == "transient"
    # MIMD with a constant loss rate and a floor: 1 < theta < 2, E[W] finite, E[W^2] = oo
    heavy = registry.get_model("awp").run({"a": "0.01*w", "loss": "0.082",
                                            "after_loss": "0.875*w", "w_min": 1.0})
    theta = brentq(lambda t: 0.01 * t - 0.082 * (1 - 0.875 ** t), 1e-3, 1e3)
    assert 1 < theta < 2 and heavy["EW2"] == math.inf
    assert heavy["EW"] == pytest.approx(theta / (theta - 1), rel=1e-10)


def test_sympy_expressions_and_numbers_are_accepted() -> None:
    w, p, c = sp.symbols("w p c")
    spec = declare({"increase": 1, "loss": p * w, "after_loss": c * w}, (C,))
    assert spec.run({"p": 1e-3, "c": 0.5})["EW"] == pytest.approx(
        newreno_constant() / math.sqrt(1e-3), rel=1e-10)


def test_the_kind_and_its_example() -> None:
    kind = registry.get_model_kind("window")
    assert set(kind.keys) == {"increase", "loss", "after_loss", "w_min", "w_max", "rtt",
                              "method"}
    assert kind.outputs == OUTPUTS == registry.get_model("awp").outputs
    table = tomllib.loads(kind.example)["models"]["my-tcp"]
    assert table.pop("kind") == "window" and table.pop("parameters") == {"c": "positive"}
    spec = kind.declare("my-tcp", table, (Parameter("c", PositiveReal()),), "models.my-tcp")
    result = spec.run({"p": 1e-3, "c": 0.5})
    assert result["EW"] == pytest.approx(solve_awp(protocol="newreno", p=1e-3, w_min=1.0).EW,
                                         rel=1e-10)


# ------------------------------------------------------------------ derivation

def test_derivation_of_declared_newreno() -> None:
    der = declare(NEWRENO).derivation()
    p, w = sp.Symbol("p", positive=True), sp.Symbol("w", positive=True)
    kolmogorov = der["Stationary Kolmogorov equation (level crossing)"].formulas()[0]
    assert kolmogorov.rhs.limits[0][2] == 2 * w                    # d^-1(w) = 2w
    closed = der["Moment identities"].formulas()[-1]
    assert sp.simplify(closed.rhs - 2 / p) == 0                    # E[W^2] = 2/p
    # E[W] in the q-series moment E_U(1/2) = E[sqrt(U)]: the constant computed above
    mean = der["Mean window by Palm inversion"].formulas()[2].rhs
    value = mean.replace(lambda e: isinstance(e, sp.core.function.AppliedUndef),
                         lambda e: sp.Float(newreno_sqrt_moment()))
    assert float(value.subs(p, 1e-4)) * 1e-2 == pytest.approx(newreno_constant(), rel=1e-12)
    assert "$$" in der.to_markdown()


def test_derivation_of_declared_mimd_gives_the_log_drift_closed_form() -> None:
    der = declare(SCALABLE).derivation()
    closed = der["Moment identities"].formulas()[-1]
    assert float(closed.rhs.subs(sp.Symbol("p", positive=True), 1e-3)) == pytest.approx(
        0.01 / (1e-3 * math.log(8 / 7)), rel=1e-12)


def test_derivation_with_a_floor_gives_the_pareto_exponent() -> None:
    lam = Parameter("lam", PositiveReal())
    der = declare({"increase": "0.01*w", "loss": "lam", "after_loss": "0.875*w",
                   "w_min": 2}, (lam,)).derivation()
    theta_eq = der["Exponent and moments of the Pareto law"].formulas()[0]
    theta = brentq(lambda t: 0.01 * t - 0.3 * (1 - 0.875 ** t), 1e-3, 1e3)
    residual = (theta_eq.lhs - theta_eq.rhs).subs({sp.Symbol("lambda", positive=True): 0.3,
                                                   sp.Symbol("lam", positive=True): 0.3,
                                                   sp.Symbol("theta", positive=True): theta})
    assert abs(float(residual)) < 1e-12


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("change, key, needle", [
    ({"loss": "q*w"}, "loss", "unknown name q"),
    ({"increase": "x"}, "increase", "unknown name x"),
    ({"after_loss": "().__class__"}, "after_loss", "attribute access"),
    ({"decrease": "0.5*w"}, "decrease", "must be one of the keys increase, loss"),
    ({"w_min": "w"}, "w_min", "unknown name w"),
    ({"w_min": -1}, "w_min", "window floor in [0"),
    ({"w_min": 5, "w_max": 2}, "w_min", "the floor must lie below the cap"),
    ({"method": "fast"}, "method", "one of auto, closed form, numeric"),
    ({"increase": lambda w: 1.0}, "increase", "must be symbolic"),
    ({"increase": sp.Symbol("z") * sp.Symbol("w")}, "increase", "undeclared symbol z"),
    ({"increase": True}, "increase", "a formula in w, c, p"),
])
def test_a_bad_declaration_is_one_error_naming_the_key(change, key, needle) -> None:
    with pytest.raises(InvalidParameter) as info:
        declare({**NEWRENO, **change}, (C,))
    assert info.value.name == f"models.t.{key}"
    assert str(info.value).startswith(f"parameter models.t.{key}=") and needle in str(info.value)


def test_a_missing_key_is_named() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter models\.t\.after_loss=<missing> must "
                                               r"be given: d\(w\): the window right after"):
        declare({"increase": "1", "loss": "p*w"})


def test_a_reserved_parameter_name_is_refused() -> None:
    for name in ("w", "method"):
        with pytest.raises(InvalidParameter, match=rf"parameter models\.t\.parameters\.{name}="
                                                   f"'{name}' must be a name other than w"):
            declare(NEWRENO, (Parameter(name, PositiveReal()),))


def test_a_profile_invalid_at_a_point_names_the_key_and_the_values() -> None:
    spec = declare({"increase": "1", "loss": "p*w", "after_loss": "c*w"},
                   (Parameter("c", PositiveReal()),))
    with pytest.raises(InvalidParameter, match=r"parameter models\.t\.after_loss='c\*w' must be "
                                               r"a window 0 < d\(w\) < w .*; at c=1\.5, p=0\.01"):
        spec.run({"p": 0.01, "c": 1.5})
    with pytest.raises(InvalidParameter, match=r"parameter p=2 must be a real number in \(0, 1\)"):
        spec.run({"p": 2, "c": 0.5})
