"""Tests of SweepResult.to_xarray (symq.core.sweep_xarray): a sweep as a labelled grid.

xarray comes with the test extra (``symq[xarray]``); the values of the Dataset are checked
against :meth:`SweepResult.rows` at every grid point, and an exact model's against its closed
form.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np
import pytest
import xarray as xr

from symq.core import registry
from symq.core.errors import InvalidParameter, MissingDependency, ResourceLimit
from symq.core.simstats import ConfidenceInterval
from symq.core.sweep import SweepResult, grid, sweep
from symq.core.sweep_xarray import MISSING_REASON


def solve_point(model: str, point: dict, rng: np.random.Generator) -> dict:
    """A registered model's sweep values at a point (as ``symq sweep`` computes them)."""
    spec = registry.get_model(model)
    return spec.summary_values(spec.run(point, rng=rng))


def supermarket_ET(d: int, lam: float) -> float:
    """E[T] = sum_k lam^((d^k - d)/(d - 1)) (Vvedenskaya, Dobrushin, Karpelevich 1996); d = 1:
    the M/M/1 queue, 1/(1 - lam)."""
    if d == 1:
        return 1 / (1 - lam)
    return sum(lam ** ((d ** k - d) / (d - 1)) for k in range(1, 40))


def at(dataset: xr.Dataset, row: dict, dims: list[str], name: str) -> object:
    return dataset[name].sel({d: row[d] for d in dims}).item()


def test_an_exact_model_on_two_list_axes_equals_its_rows_and_its_closed_form() -> None:
    result = sweep(functools.partial(solve_point, "supermarket"),
                   grid(d=[1, 2], lam=[0.5, 0.7, 0.9]), processes=1)
    ds = result.to_xarray()
    assert isinstance(ds, xr.Dataset)
    assert ds["ET"].dims == ("d", "lam") and ds["ET"].shape == (2, 3)
    assert ds["d"].values.tolist() == [1, 2] and ds["lam"].values.tolist() == [0.5, 0.7, 0.9]
    rows = result.rows()
    outputs = [k for k in rows[0] if k not in ("d", "lam")]
    assert set(outputs) == {"ET", "EQ", "EW", "P_wait"} == set(ds.data_vars)
    for row in rows:                                   # every value at every grid point
        for key in outputs:
            assert at(ds, row, ["d", "lam"], key) == row[key], (row, key)
        assert at(ds, row, ["d", "lam"], "ET") == pytest.approx(
            supermarket_ET(row["d"], row["lam"]), rel=1e-9)
    assert ds.attrs["points"] == 6 and ds.attrs["missing"] == 0
    assert ds.attrs["backend"] == "serial" and MISSING_REASON not in ds


def test_a_simulated_model_keeps_its_half_widths_level_and_the_rows_values() -> None:
    result = sweep(functools.partial(solve_point, "gg1-sim"),
                   grid(lam=[0.4, 0.5], n_jobs=30_000), seed=7, processes=1)
    ds = result.to_xarray()
    assert ds["EW"].dims == ("lam",) and float(ds["n_jobs"]) == 30_000   # fixed: a scalar
    for key in ("EW", "P_wait", "ccdf"):
        assert f"{key}_half_width" in ds
        for suffix in ("level", "lo", "hi"):                   # the attributes say these
            assert f"{key}_{suffix}" not in ds
        assert ds[key].attrs["level"] == 0.95 == ds[f"{key}_half_width"].attrs["level"]
        assert ds[key].attrs["half_width"] == f"{key}_half_width"
    for row in result.rows():
        for key in ("EW", "EW_half_width", "P_wait_half_width", "EW_exact"):
            assert at(ds, row, ["lam"], key) == row[key]
        assert row["EW_lo"] == pytest.approx(row["EW"] - at(ds, row, ["lam"], "EW_half_width"))
    assert 0 < float(ds["EW_half_width"].sel(lam=0.5)) < 0.2


def interval(point: dict, rng: np.random.Generator) -> dict:
    """A confidence interval and a plain number per point (the method is kept)."""
    x = point["x"]
    return {"m": ConfidenceInterval(x, 0.1 * x, 0.99, 20, "replications"), "twice": 2 * x}


def test_confidence_intervals_give_the_estimate_the_half_width_and_the_method() -> None:
    result = sweep(interval, grid(x=[1.0, 2.0], y=["a", "b"]), processes=1)
    ds = result.to_xarray()
    assert ds["m"].attrs == {"level": 0.99, "method": "replications", "half_width": "m_half_width"}
    assert ds["m_half_width"].attrs["method"] == "replications"
    assert ds["y"].values.tolist() == ["a", "b"]
    for row in result.rows():
        for key in ("m", "m_half_width", "twice"):
            assert at(ds, row, ["x", "y"], key) == row[key]
    # levels that differ between points: a variable, not an attribute
    mixed = SweepResult([{"x": 1}, {"x": 2}],
                        [{"m": ConfidenceInterval(1.0, 0.1, 0.95, 9, "batch_means")},
                         {"m": ConfidenceInterval(2.0, 0.1, 0.99, 9, "batch_means")}],
                        0.0, "serial")
    ds = mixed.to_xarray()
    assert ds["m_level"].values.tolist() == [0.95, 0.99] and "level" not in ds["m"].attrs


def test_missing_grid_points_are_nan_and_say_why() -> None:
    points = [{"a": 1, "b": 10}, {"a": 1, "b": 20}, {"a": 2, "b": 10}]
    reason = "lost the Dask scheduler at tcp://127.0.0.1:1: 1 of 4 points lost"
    partial = SweepResult(points, [{"x": 1.0, "n": 3, "s": "u"}, {"x": 2.0, "n": 4, "s": "v"},
                                   {"x": 3.0, "n": 5, "s": "w"}], 0.1, "dask",
                          incomplete=reason)
    ds = partial.to_xarray()
    assert ds["x"].shape == (2, 2) and ds.attrs["missing"] == 1
    assert ds.attrs["incomplete"] == reason
    assert math.isnan(ds["x"].sel(a=2, b=20)) and math.isnan(ds["n"].sel(a=2, b=20))
    assert bool(ds["s"].isnull().sel(a=2, b=20))
    assert ds[MISSING_REASON].sel(a=2, b=20).item() == reason
    for row in partial.rows():
        assert ds[MISSING_REASON].sel(a=row["a"], b=row["b"]).item() == ""
        for key in ("x", "n", "s"):
            assert at(ds, row, ["a", "b"], key) == row[key]
    assert partial.to_dict()["incomplete"] == reason
    assert "incomplete" in partial.to_markdown()
    assert "incomplete" not in SweepResult([], [], 0.0, "serial").to_dict()
    # points that do not fill the product of their axes, in a complete sweep
    diagonal = SweepResult([{"a": 1, "b": 1}, {"a": 2, "b": 2}], [5.0, 6.0], 0.0, "serial")
    ds = diagonal.to_xarray()
    assert ds["result"].values.tolist()[0] == [5.0, pytest.approx(float("nan"), nan_ok=True)]
    assert ds[MISSING_REASON].sel(a=1, b=2).item() == "not a point of the sweep"


def test_dims_names_clashes_and_vector_parameters() -> None:
    result = SweepResult([{"lam": 0.5, "speeds": (1, 2)}, {"lam": 0.7, "speeds": (1, 2)}],
                         [{"lam": 9.0, "ET": 2.0}, {"lam": 9.0, "ET": 3.0}], 0.0, "serial")
    ds = result.to_xarray()
    assert ds["result.lam"].values.tolist() == [9.0, 9.0]     # as rows() names it
    assert ds["speeds"].item() == (1, 2) and ds["speeds"].dims == ()
    one = SweepResult([{"lam": 0.5, "d": 2}], [{"ET": 2.0}], 0.0, "serial")
    assert one.to_xarray()["ET"].dims == () and one.to_xarray(dims=["lam"])["ET"].dims == ("lam",)
    with pytest.raises(InvalidParameter, match="mu"):
        one.to_xarray(dims=["mu"])
    with pytest.raises(InvalidParameter, match="points 0 and 1 fall on the same cell"):
        result.to_xarray(dims=["speeds"])
    # a parameter that varies but is not a dimension: a coordinate over the dimensions
    paired = SweepResult([{"lam": 0.5, "rho": 0.25}, {"lam": 0.7, "rho": 0.35}], [1.0, 2.0],
                         0.0, "serial")
    ds = paired.to_xarray(dims=["lam"])
    assert ds["rho"].dims == ("lam",) and ds["rho"].values.tolist() == [0.25, 0.35]
    assert paired.to_xarray()["result"].shape == (2, 2)      # both vary: a 2 x 2 grid


def test_a_grid_too_large_is_refused(monkeypatch) -> None:
    import symq.core.sweep_xarray as module

    monkeypatch.setattr(module, "MAX_CELLS", 3)
    points = [{"a": i, "b": -i} for i in range(3)]          # 3 x 3 cells for 3 points
    with pytest.raises(ResourceLimit, match="9 cells"):
        SweepResult(points, [0.0] * 3, 0.0, "serial").to_xarray()


def test_without_xarray_the_error_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "xarray", None)                  # import fails
    with pytest.raises(MissingDependency, match="pip install xarray"):
        SweepResult([{"x": 1}], [1.0], 0.0, "serial").to_xarray()
