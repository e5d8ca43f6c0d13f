"""symq.core.threads: BLAS threads limited for a call and restored after it, cheap when nested,
numba's threads untouched, an opt-out, and nothing loaded by ``import symq`` or ``--help``."""

import subprocess
import sys
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from symq.core.errors import InvalidParameter
from symq.core.threads import ENVIRONMENT_VARIABLE, blas_thread_limit, limit_blas_threads


def blas_threads() -> list[tuple[str, int]]:
    """The thread count of each loaded BLAS library, read by threadpoolctl itself."""
    return sorted((lib["filepath"], lib["num_threads"]) for lib in threadpool_info()
                  if lib["user_api"] == "blas")


@pytest.fixture
def two_blas_threads(monkeypatch):
    """The BLAS libraries at two threads (whatever the machine) for the test, restored after."""
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    import scipy.linalg  # noqa: F401 - scipy's own BLAS loaded too

    if not blas_threads():
        # numpy/scipy built without a BLAS threadpoolctl knows: there is no thread count to set
        pytest.skip("no BLAS library that threadpoolctl can see: no thread count to limit")
    with threadpool_limits(2, user_api="blas"):
        yield


def test_the_limit_holds_inside_and_the_settings_are_restored(two_blas_threads):
    before = blas_threads()
    assert {n for _, n in before} == {2}
    with limit_blas_threads():
        assert {n for _, n in blas_threads()} == {1}
    assert blas_threads() == before


def test_as_a_decorator_and_on_an_exception(two_blas_threads):
    before = blas_threads()
    seen = []

    @limit_blas_threads(threads=1)
    def work(fail):
        seen.append({n for _, n in blas_threads()})
        if fail:
            raise RuntimeError("inside")
        return float(np.linalg.det(np.diag([2.0, 3.0])))

    assert work(False) == pytest.approx(6.0)
    with pytest.raises(RuntimeError, match="inside"):
        work(True)
    assert seen == [{1}, {1}]
    assert blas_threads() == before


def test_nested_calls_do_not_ask_the_libraries_again(two_blas_threads, monkeypatch):
    from symq.core import threads

    calls = []
    controller = threads._LIMITS.controller_now()
    original = type(controller).limit
    monkeypatch.setattr(type(controller), "limit",
                        lambda self, **kw: calls.append(kw) or original(self, **kw))
    before = blas_threads()
    with limit_blas_threads():
        with limit_blas_threads(threads=3):  # the outermost limit holds
            with limit_blas_threads():
                assert {n for _, n in blas_threads()} == {1}
        assert {n for _, n in blas_threads()} == {1}
    assert len(calls) == 1 and calls[0]["user_api"] == "blas"
    assert blas_threads() == before


def test_the_thread_that_set_the_limit_restores_it(two_blas_threads):
    before = blas_threads()
    inside, release, done = threading.Event(), threading.Event(), []

    def worker():
        with limit_blas_threads():  # inside the main thread's limit: changes nothing
            inside.set()
            release.wait(10)
        done.append(blas_threads())

    t = threading.Thread(target=worker)
    with limit_blas_threads():
        t.start()
        assert inside.wait(10)
        assert {n for _, n in blas_threads()} == {1}
    assert blas_threads() == before  # restored, though the worker is still inside
    release.set()
    t.join(10)
    assert done == [before]
    assert blas_threads() == before


def test_a_limit_set_in_another_thread_leaves_the_control_free(monkeypatch):
    # no threadpool_limits around this test: while one holds, only its thread sets a limit
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    import scipy.linalg  # noqa: F401 - scipy's own BLAS loaded too

    before = blas_threads()
    if not before or {n for _, n in before} == {1}:
        # the process runs BLAS on one thread already (OPENBLAS_NUM_THREADS=1 or a one-core
        # machine): nothing to limit, and a threadpool_limits set here to make threads would
        # itself be the outer limit this test must not have
        pytest.skip("BLAS already runs one thread in this process: nothing to limit")
    seen = []

    def worker():
        with limit_blas_threads():
            seen.append({n for _, n in blas_threads()})

    t = threading.Thread(target=worker)
    t.start()
    t.join(10)
    assert seen == [{1}]
    assert blas_threads() == before
    with threadpool_limits(3, user_api="blas"):  # the main thread still controls the libraries
        assert {n for _, n in blas_threads()} == {3}
    with limit_blas_threads():
        assert {n for _, n in blas_threads()} == {1}
    assert blas_threads() == before


def test_opt_out_by_the_environment_or_the_keyword(two_blas_threads, monkeypatch):
    before = blas_threads()
    with limit_blas_threads(threads=0):
        assert blas_threads() == before
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "off")
    with limit_blas_threads():
        assert blas_threads() == before
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "3")
    assert blas_thread_limit() == 3
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, " 0 ")
    assert blas_thread_limit() is None
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    assert blas_thread_limit() == 1


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_bad_thread_counts_are_refused(bad):
    with pytest.raises(InvalidParameter, match=r"parameter threads=.* must be a non-negative"):
        limit_blas_threads(threads=bad)


def test_a_bad_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, "many")
    with pytest.raises(InvalidParameter, match=r"parameter SYMQ_BLAS_THREADS='many' must be"):
        with limit_blas_threads():
            pass


def test_numba_keeps_its_threads(two_blas_threads):
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    with limit_blas_threads():
        assert numba.get_num_threads() == before
    assert numba.get_num_threads() == before


def test_a_model_run_is_limited_and_leaves_the_settings_as_they_were(two_blas_threads):
    from symq.core.registry import ModelSpec
    from symq.core.result import Result

    seen = []

    def solve():
        seen.append({n for _, n in blas_threads()})
        return Result("probe", {}, {"x": 1.0})

    before = blas_threads()
    spec = ModelSpec(name="probe", summary="a probe of the BLAS limit", parameters=(), solve=solve)
    assert spec.run({}).values == {"x": 1.0}
    assert seen == [{1}]
    assert blas_threads() == before


def test_neither_import_symq_nor_help_loads_the_module():
    code = ("import sys; sys.argv = ['symq', '--help']; import symq; from symq.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'symq.core.threads' not in sys.modules\n"
            "assert 'threadpoolctl' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
