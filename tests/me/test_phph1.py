"""The PH/PH/1 queue by matrix-geometric methods (symq.me.phph1) against the GI/M/1 root, the
Pollaczek-Khinchine mean and the spectral factorisation (an independent route); the gg1-sim
model's simulation against its exact values."""

from __future__ import annotations

import pytest

from symq.core.errors import InvalidParameter, StabilityError
from symq.laws import Erlang, Exponential, Hyperexponential, size_law
from symq.me.gg1 import gi_m1_waiting
from symq.me.gg1_sim import GG1_SIM, law_transform
from symq.me.gg1_spectral import gi_g1_waiting
from symq.me.phph1 import ph_ph1_waiting
from symq.me.transforms import Transform


def test_erlang_arrivals_exponential_service_is_gi_m1():
    r = ph_ph1_waiting(Erlang(2, 1 / 0.8), Exponential(1.0))
    g = gi_m1_waiting(Transform("(2*lam/(2*lam + s))^2", parameters=("lam",)), 1.0,
                      {"lam": 0.8})
    assert r.P_wait == pytest.approx(g.sigma, rel=1e-11)
    assert r.EW == pytest.approx(g.EW, rel=1e-11)
    assert r.residual < 1e-12


def test_poisson_arrivals_give_pollaczek_khinchine():
    lam, mean, scv = 0.9, 1.0, 4.0          # H2 service of SCV 4 at load 0.9
    r = ph_ph1_waiting(Exponential(1 / lam), Hyperexponential.balanced(mean, scv))
    assert r.EW == pytest.approx(lam * mean ** 2 * (1 + scv) / (2 * (1 - lam * mean)),
                                 rel=1e-10)
    assert r.P_wait == pytest.approx(lam * mean, rel=1e-11)          # PASTA


@pytest.mark.parametrize("arrivals, a_scv, sizes, s_scv, lam", [
    ("erlang", 0.5, "erlang", 1 / 3, 0.9),
    ("h2", 4.0, "erlang", 0.5, 0.7),
    ("erlang", 0.25, "h2", 2.0, 0.95),
])
def test_matrix_geometric_agrees_with_spectral_factorisation(arrivals, a_scv, sizes, s_scv,
                                                             lam):
    a, s = size_law(arrivals, 1 / lam, a_scv), size_law(sizes, 1.0, s_scv)
    qbd = ph_ph1_waiting(a, s)
    spectral = gi_g1_waiting(law_transform(a, "a"), law_transform(s, "s"))
    assert qbd.EW == pytest.approx(spectral.EW, rel=1e-9)
    assert qbd.P_wait == pytest.approx(spectral.P_wait, rel=1e-9)


def test_refusals_are_named():
    with pytest.raises(StabilityError, match="rho"):
        ph_ph1_waiting(Exponential(1.0), Erlang(2, 1.0))
    with pytest.raises(InvalidParameter, match="sizes"):
        ph_ph1_waiting(Exponential(2.0), size_law("lognormal", 1.0, 1.0))


def test_gg1_sim_covers_its_exact_values():
    """D/E2/1 at load 0.8: the 99.9% intervals contain the spectral values (one seed); no
    matrix-geometric value for deterministic arrivals, no exact one for lognormal service."""
    r = GG1_SIM.run({"lam": 0.8, "arrivals": "det", "sizes": "erlang", "scv": 0.5, "t": 2.0,
                     "n_jobs": 1_000_000, "level": 0.999}, rng=11)
    assert "EW_matrix" not in r.values
    assert r["EW"].contains(r["EW_exact"])
    assert r["P_wait"].contains(r["P_wait_exact"])
    assert r["ccdf_exact"].error < 1e-6
    assert r["ccdf"].contains(r["ccdf_exact"].value)
    other = GG1_SIM.run({"lam": 0.5, "sizes": "lognormal", "scv": 1.0, "n_jobs": 200_000},
                        rng=1)
    assert "EW_exact" not in other.values and "EW_matrix" not in other.values
    assert other["EW"].mean <= other["kingman_upper"]
