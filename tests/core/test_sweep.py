"""Tests of symq.core.sweep: grids, axis parsing, sweeps on the serial, process, Dask backends."""

from __future__ import annotations

import functools
import json
import os
import sys

import numpy as np
import pytest

from symq.core.errors import InvalidParameter, SymqError
from symq.core.simstats import ConfidenceInterval
from symq.core.sweep import (
    MissingDependency,
    SweepResult,
    SweepTaskError,
    grid,
    parse_axis,
    sweep,
)

SEED = 12345


# ------------------------------------------------------------------ module-level task functions


def draw(point: dict, rng: np.random.Generator) -> dict:
    """Random draws tagged with the point and the process that ran them."""
    return {"x": point["x"], "values": rng.standard_normal(3), "pid": os.getpid()}


def scaled_uniform(point: dict, rng: np.random.Generator, *, scale: float) -> float:
    return scale * point["x"] + rng.random()


def fail_at_three(point: dict, rng: np.random.Generator) -> int:
    if point["x"] == 3:
        raise ValueError("x=3 is cursed")
    return point["x"]


def make_ci(point: dict, rng: np.random.Generator) -> ConfidenceInterval:
    return ConfidenceInterval(float(point["x"]), 0.5, 0.95, 10, "replications")


def expected_values(n: int, seed: int = SEED) -> list[np.ndarray]:
    """The draws of task i, computed independently from the documented seeding rule."""
    children = np.random.SeedSequence(seed).spawn(n)
    return [np.random.default_rng(child).standard_normal(3) for child in children]


POINTS = grid(x=list(range(8)))


# ------------------------------------------------------------------ grid


def test_grid_is_row_major() -> None:
    points = grid(a=[1, 2], b=["u", "v", "w"])
    assert points == [
        {"a": a, "b": b} for a in (1, 2) for b in ("u", "v", "w")
    ]
    assert [list(p) for p in points] == [["a", "b"]] * 6


def test_grid_three_axes_matches_nested_loops_and_converts_numpy() -> None:
    xs, ys, zs = np.linspace(0, 1, 3), np.array([10, 20]), (True, False)
    points = grid(x=xs, y=ys, z=zs)
    assert points == [{"x": x, "y": y, "z": z} for x in xs for y in ys for z in zs]
    assert all(type(p["x"]) is float and type(p["y"]) is int for p in points)


def test_grid_scalars_and_strings_are_single_values() -> None:
    assert grid(d=2, name="jsq", lam=[0.5, 0.9]) == [
        {"d": 2, "name": "jsq", "lam": 0.5},
        {"d": 2, "name": "jsq", "lam": 0.9},
    ]
    assert grid() == [{}]


def test_grid_empty_axis_is_an_error() -> None:
    with pytest.raises(InvalidParameter, match="parameter lam=.*non-empty"):
        grid(lam=[], d=[1])


# ------------------------------------------------------------------ parse_axis


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0:1:5", np.linspace(0.0, 1.0, 5)),
        (" 0.1 : 0.9 : 3 ", [0.1, 0.5, 0.9]),
        ("2:2:1", [2.0]),
        ("5:1:3", [5.0, 3.0, 1.0]),
        ("1e-3:1e-1:3:log", [1e-3, 1e-2, 1e-1]),
        ("1:16:5:LOG", [1.0, 2.0, 4.0, 8.0, 16.0]),
        ("0:1:3:lin", [0.0, 0.5, 1.0]),
        ("2,3,5", [2.0, 3.0, 5.0]),
        ("0.7", [0.7]),
    ],
)
def test_parse_axis_good(text: str, expected) -> None:
    values = parse_axis(text)
    assert isinstance(values, np.ndarray) and values.ndim == 1
    np.testing.assert_allclose(values, expected, rtol=1e-14)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("0:1", "found 2 ':'-separated fields"),
        ("0:1:2:log:x", "found 5"),
        ("0:1:2.5", "is not an integer"),
        ("0:1:0", "must be >= 1"),
        ("0:1:-3", "is not an integer"),
        ("a:1:3", "'a' is not a number"),
        ("0:inf:3", "not finite"),
        ("0:1:3:log", "both ends > 0"),
        ("1:2:3:cubic", "unknown spacing 'cubic'"),
        ("", "empty text"),
        ("1,,2", "'' is not a number"),
    ],
)
def test_parse_axis_bad(text: str, reason: str) -> None:
    with pytest.raises(InvalidParameter) as info:
        parse_axis(text)
    message = str(info.value)
    assert message.startswith(f"parameter axis={text!r}")
    assert "'a:b:n'" in message and "'a:b:n:log'" in message  # expected format is shown
    assert reason in message


# ------------------------------------------------------------------ serial and processes


def test_serial_results_are_ordered_and_follow_the_seeding_rule() -> None:
    result = sweep(draw, POINTS, seed=SEED, processes=1)
    assert result.backend == "serial"
    assert len(result) == 8
    assert [r["x"] for r in result.results] == list(range(8))
    for got, want in zip(result.results, expected_values(8)):
        np.testing.assert_array_equal(got["values"], want)
    assert [(p, r["x"]) for p, r in result] == [({"x": i}, i) for i in range(8)]


def test_processes_match_serial_and_use_other_processes() -> None:
    result = sweep(draw, POINTS, seed=SEED, processes=2)
    assert result.backend == "processes"
    assert [r["x"] for r in result.results] == list(range(8))
    for got, want in zip(result.results, expected_values(8)):
        np.testing.assert_array_equal(got["values"], want)
    assert os.getpid() not in {r["pid"] for r in result.results}


def test_different_tasks_get_different_streams_and_seeds_matter() -> None:
    a = sweep(draw, grid(x=[0] * 6), seed=1, processes=1)
    b = sweep(draw, grid(x=[0] * 6), seed=2, processes=1)
    firsts = {r["values"][0] for r in a.results}
    assert len(firsts) == 6  # identical points, distinct streams
    assert firsts.isdisjoint({r["values"][0] for r in b.results})


def test_partial_function_in_processes() -> None:
    func = functools.partial(scaled_uniform, scale=10.0)
    result = sweep(func, grid(x=[1, 2, 3]), seed=4, processes=2)
    children = np.random.SeedSequence(4).spawn(3)
    expected = [10.0 * x + np.random.default_rng(c).random() for x, c in zip((1, 2, 3), children)]
    assert result.results == expected


@pytest.mark.parametrize("processes", [1, 2])
def test_task_error_names_the_point(processes: int) -> None:
    with pytest.raises(SweepTaskError) as info:
        sweep(fail_at_three, POINTS, seed=0, processes=processes)
    error = info.value
    assert error.point == {"x": 3} and error.index == 3
    assert isinstance(error.__cause__, ValueError)
    assert "{'x': 3}" in str(error) and "x=3 is cursed" in str(error)
    assert isinstance(error, SymqError)


def test_lambda_is_rejected_for_processes_but_fine_serially() -> None:
    with pytest.raises(InvalidParameter, match="parameter func=.*picklable"):
        sweep(lambda p, rng: p["x"], POINTS, processes=2)
    assert sweep(lambda p, rng: p["x"], POINTS, processes=1).results == list(range(8))


def test_single_point_runs_serially_and_empty_sweep() -> None:
    assert sweep(draw, [{"x": 5}], seed=SEED, processes=4).backend == "serial"
    empty = sweep(draw, [], seed=SEED, processes=2)
    assert len(empty) == 0 and empty.results == []


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"processes": 0}, "processes"),
        ({"processes": 1.5}, "processes"),
        ({"seed": -1}, "seed"),
        ({"scheduler": 42}, "scheduler"),
    ],
)
def test_bad_arguments(kwargs: dict, name: str) -> None:
    with pytest.raises(InvalidParameter, match=f"parameter {name}="):
        sweep(draw, POINTS, **kwargs)


def test_bad_points() -> None:
    with pytest.raises(InvalidParameter, match=r"parameter points\[1\]=.*dict"):
        sweep(draw, [{"x": 1}, 2])
    with pytest.raises(InvalidParameter, match="parameter points="):
        sweep(draw, {"x": 1})


def test_progress_bar_is_shown_only_on_request(capsys) -> None:
    sweep(draw, POINTS[:3], seed=SEED, processes=1, progress=True, desc="lam-sweep")
    assert "lam-sweep" in capsys.readouterr().err
    sweep(draw, POINTS[:3], seed=SEED, processes=1, desc="lam-sweep")
    assert "lam-sweep" not in capsys.readouterr().err


def test_to_dict_is_json_serialisable() -> None:
    result = sweep(draw, grid(x=np.array([1, 2])), seed=SEED, processes=1)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["backend"] == "serial" and data["points"] == [{"x": 1}, {"x": 2}]
    assert data["results"][1]["values"] == expected_values(2)[1].tolist()
    cis = sweep(make_ci, grid(x=[1.0, 2.0]), processes=1)
    data = json.loads(json.dumps(cis.to_dict()))
    assert data["results"][1] == make_ci({"x": 2.0}, None).to_dict()
    manual = SweepResult(
        [{"a": np.float64(0.5)}, {"a": 1.0}], [np.int64(3), np.float64("nan")], 0.1, "serial"
    ).to_dict()
    assert json.dumps(manual, allow_nan=False) == (
        '{"backend": "serial", "seconds": 0.1, "points": [{"a": 0.5}, {"a": 1.0}], '
        '"results": [3, "nan"]}'
    )


def test_missing_dask_gives_install_hint(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(MissingDependency, match=r'pip install "symq\[distributed\]"') as info:
        sweep(draw, POINTS, scheduler="tcp://127.0.0.1:8786")
    assert isinstance(info.value, SymqError)


# ------------------------------------------------------------------ Dask (kept last: the
# in-process cluster starts threads, and the process-pool tests above fork)


@pytest.fixture(scope="module")
def dask_cluster():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    )
    client = Client(cluster, set_as_default=False)
    yield cluster, client
    client.close()
    cluster.close()


def test_dask_client_matches_serial(dask_cluster) -> None:
    _, client = dask_cluster
    result = sweep(draw, POINTS, seed=SEED, scheduler=client)
    assert result.backend == "dask"
    assert [r["x"] for r in result.results] == list(range(8))
    for got, want in zip(result.results, expected_values(8)):
        np.testing.assert_array_equal(got["values"], want)
    assert client.status == "running"  # a client passed in is left open


def test_dask_address_matches_serial(dask_cluster) -> None:
    cluster, _ = dask_cluster
    result = sweep(draw, POINTS, seed=SEED, scheduler=cluster.scheduler_address, progress=True)
    for got, want in zip(result.results, expected_values(8)):
        np.testing.assert_array_equal(got["values"], want)
    serial = sweep(draw, POINTS, seed=SEED, processes=1)
    assert [r["values"].tolist() for r in result.results] == [
        r["values"].tolist() for r in serial.results
    ]


def test_dask_task_error_names_the_point(dask_cluster) -> None:
    _, client = dask_cluster
    with pytest.raises(SweepTaskError) as info:
        sweep(fail_at_three, POINTS, seed=0, scheduler=client)
    assert info.value.point == {"x": 3}
    assert isinstance(info.value.__cause__, ValueError)
    # the client is still usable afterwards
    assert sweep(fail_at_three, grid(x=[1, 2]), scheduler=client).results == [1, 2]


def test_linear_axis_values_are_the_decimals_typed() -> None:
    values = parse_axis("0.1:0.9:9")
    assert values.tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert [repr(v) for v in values.tolist()][6] == "0.7"
    # at most an ulp or two from the evenly spaced values, and still evenly spaced
    assert np.allclose(values, np.linspace(0.1, 0.9, 9), rtol=4e-16, atol=0)
    thirds = parse_axis("0:1:4")                         # 1/3 has no short decimal form
    assert np.allclose(thirds, [0, 1 / 3, 2 / 3, 1], rtol=1e-15, atol=0)


def test_rows_are_tidy_and_to_dataframe_needs_pandas(monkeypatch) -> None:
    import sys

    from symq.core.errors import MissingDependency
    from symq.core.sweep import SweepResult

    res = SweepResult(points=[{"lam": 0.5, "d": 2}, {"lam": 0.7, "d": 2}],
                      results=[{"ET": 1.5, "lam": 9.0}, {"ET": 2.5, "lam": 9.0}],
                      seconds=0.0, backend="serial")
    assert res.rows() == [{"lam": 0.5, "d": 2, "ET": 1.5, "result.lam": 9.0},
                          {"lam": 0.7, "d": 2, "ET": 2.5, "result.lam": 9.0}]
    plain = SweepResult(points=[{"x": 1}], results=[3.0], seconds=0.0, backend="serial")
    assert plain.rows() == [{"x": 1, "result": 3.0}]
    from symq.core.simstats import ConfidenceInterval

    estimate = ConfidenceInterval(2.0, 0.25, 0.99, 40, "batch means")
    simulated = SweepResult(points=[{"lam": 0.5}], results=[{"EW": estimate}], seconds=0.0,
                            backend="serial")
    assert simulated.rows() == [{"lam": 0.5, "EW": 2.0, "EW_half_width": 0.25,
                                 "EW_level": 0.99, "EW_lo": 1.75, "EW_hi": 2.25}]
    monkeypatch.setitem(sys.modules, "pandas", None)                  # import fails
    with pytest.raises(MissingDependency, match="needs pandas"):
        res.to_dataframe()
