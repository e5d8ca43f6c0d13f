"""Issue 11 for ps-routing: one-line errors naming C, w, rho; no text reaches sympify;
simulators refuse absurd runs before allocating."""

from __future__ import annotations

import pytest
import sympy as sp

from symq.cli import main
from symq.core.errors import InvalidParameter, ResourceLimit
from symq.routing.exact import exact_zero
from symq.routing.simulation import simulate_farm, simulate_ps_queue


@pytest.mark.parametrize("args, needle, status", [
    (("C=4,2,1", "w=1,2", "rho=5"), "parameter w=", 2),
    (("C=4,2,1", "w=1,2,4", "rho=7"), "rho=7", 2),
    (("C=4,2,1", "w=1,2,4", "rho=8"), "rho=8", 2),
    (("C=4,2,1", "w=0,2,4", "rho=5"), "parameter w=", 2),
    (("C=nan,2,1", "w=1,2,4", "rho=5"), "parameter C=", 2),
    (("C=4,2,1", "w=1,2,4", "rho=nan"), "parameter rho=", 2),
    (("C=4,2,1", "w=1,2,4"), "parameter rho=<missing>", 2),
])
def test_cli_one_line(capsys, args, needle, status) -> None:
    code = main(["solve", "ps-routing", *args])
    _, err = capsys.readouterr()
    assert code == status and needle in err and err.count("\n") == 1


def test_exact_zero_refuses_text() -> None:
    with pytest.raises(InvalidParameter, match="not text"):
        exact_zero("__import__('os')")
    assert exact_zero(sp.sqrt(8) - 2 * sp.sqrt(2))
    assert not exact_zero(0.5) and exact_zero(0)


def test_simulators_refuse_absurd_runs() -> None:
    with pytest.raises(ResourceLimit, match="parameter n_jobs="):
        simulate_ps_queue(0.5, 1.0, n_jobs=1e15, rng=1)
    with pytest.raises(InvalidParameter, match="parameter n_batches="):
        simulate_ps_queue(0.5, 1.0, n_jobs=1000, n_batches=0, rng=1)
    with pytest.raises(InvalidParameter, match="n_batches"):
        simulate_ps_queue(0.5, 1.0, n_jobs=1000, n_batches=10**9, rng=1)
    with pytest.raises(ResourceLimit, match="parameter n_jobs_per_server="):
        simulate_farm([1.0, 2.0], [1.0, 1.0], [0.3, 1.0], n_jobs_per_server=1e15, rng=1)
