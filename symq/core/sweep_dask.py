"""The Dask backend of :func:`symq.core.sweep.sweep`: a sweep that never hangs.

* the scheduler address is checked up front: ``tcp://host:port`` or ``host:port`` (and, from
  Python, the ``inproc://`` address of an in-process cluster); other protocols (``tls``, ``ucx``,
  ``ws``) need settings symq does not pass, and are refused before anything starts;
* one deadline, ``connect_timeout`` seconds, covers reaching the scheduler, checking that it is
  a Dask scheduler (a listener that says nothing, or an HTTP server, is told apart) and the first
  worker joining;
* while the points run, a scheduler that goes away, or a cluster left without workers, for
  ``connect_timeout`` seconds ends the sweep with the points already finished
  (:class:`SweepIncomplete`) instead of waiting forever;
* distributed's own log lines and warnings are silenced for the duration of the call, and the
  loggers' levels restored afterwards.

See ``docs/dask.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from symq.core.errors import InvalidParameter, MissingDependency, SchedulerUnreachable
from symq.core.sweep_result import SweepResult, SweepTaskError, progress_bar

__all__ = ["SweepIncomplete", "check_scheduler_address", "run_dask"]

_ALLOWED = "a Dask scheduler address tcp://host:port or host:port, e.g. tcp://127.0.0.1:8786"
#: Seconds between two looks at the tasks, and between two health checks of the cluster.
_POLL, _HEALTH = 0.05, 0.5


class SweepIncomplete(SchedulerUnreachable):
    """A Dask sweep lost its scheduler (or all its workers) after some points had finished.

    ``partial`` is a :class:`~symq.core.sweep_result.SweepResult` holding the finished points
    only, in the order of the sweep; ``lost`` is the number of points without a result (CLI exit
    status 3).
    """

    def __init__(self, message: str, partial: Any, lost: int) -> None:
        super().__init__(message)
        self.partial = partial
        self.lost = lost

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.partial, self.lost))


def check_scheduler_address(address: str, name: str = "scheduler", *,
                            allow_inproc: bool = True) -> str:
    """Check a Dask scheduler address and return it in the form ``tcp://host:port``.

    Parameters
    ----------
    address : str
        ``tcp://host:port`` or ``host:port`` (``[::1]:8786`` for an IPv6 host); the
        ``inproc://`` address of an in-process cluster when ``allow_inproc``.
    name : str, default "scheduler"
        The parameter as the user typed it (``--scheduler`` on the command line).
    allow_inproc : bool, default True
        Whether an ``inproc://`` address (usable only within this process) is accepted.

    Raises
    ------
    InvalidParameter
        A malformed address, or a protocol other than ``tcp`` (``tls``, ``ucx``, ``ws``, ...).

    Examples
    --------
    >>> check_scheduler_address("127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    """
    if not isinstance(address, str):
        raise InvalidParameter(name, address, _ALLOWED, "expected a string")
    text = address.strip()
    protocol, sep, rest = text.partition("://")
    if sep:
        if protocol == "inproc" and allow_inproc and rest:
            return text
        if protocol != "tcp":
            raise InvalidParameter(name, address, _ALLOWED,
                                   f"the {protocol}:// protocol is not supported")
    else:
        rest = text
    _host_port(rest, name, address)
    return "tcp://" + rest


def _host_port(rest: str, name: str, address: str) -> tuple[str, int]:
    host, colon, port = rest.rpartition(":")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not bare or not re.fullmatch(r"\d{1,5}", port) \
            or not 1 <= int(port) <= 65535 or re.search(r"[\s/?#@\[\]]", bare):
        raise InvalidParameter(name, address, _ALLOWED, "expected host:port with a port in "
                               "1..65535")
    return bare, int(port)


@contextlib.contextmanager
def quiet_distributed() -> Iterator[None]:
    """Silence distributed's (and tornado's) loggers and warnings within the block, then
    restore the loggers' levels as they were."""
    with contextlib.suppress(ImportError):  # its import sets the levels of its loggers
        import distributed  # noqa: F401
    manager = logging.root.manager
    names = ["distributed", "tornado", "asyncio"] + [
        n for n in list(manager.loggerDict)
        if n.startswith(("distributed.", "tornado.")) and isinstance(manager.loggerDict[n],
                                                                     logging.Logger)]
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL + 10)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)


def _in_thread(coroutine_function: Callable[[], Any], seconds: float) -> Any:
    """Run ``asyncio.run(coroutine_function())`` in a thread of its own (callers may already
    run an event loop), waiting at most ``seconds``; raise TimeoutError after that."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(asyncio.wait_for(coroutine_function(), seconds))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True, name="symq-dask-probe")
    thread.start()
    thread.join(seconds + 1.0)
    if thread.is_alive() or "error" in box and isinstance(box["error"], asyncio.TimeoutError):
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["value"]


def _probe(address: str, deadline: float, timeout: float) -> None:
    """Reach ``tcp://host:port`` and check that a Dask scheduler answers, before ``deadline``."""
    from distributed.comm import connect

    host, port = _host_port(address.partition("://")[2], "scheduler", address)
    remaining = deadline - time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=max(remaining, 0.01)):
            pass
    except OSError as exc:
        raise SchedulerUnreachable(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s "
            f"({exc.strerror or exc}); check the address, or raise --connect-timeout") from None

    async def identity() -> Any:
        comm = await connect(address, timeout=max(deadline - time.monotonic(), 0.01))
        try:
            await comm.write({"op": "identity", "n_workers": 0, "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    not_dask = (f"{address} is not a Dask scheduler: it accepts connections but gave no Dask "
                f"answer within {timeout:g} s; check the address and port")
    try:
        reply = _in_thread(identity, max(deadline - time.monotonic(), 0.01))
    except Exception:  # noqa: BLE001 - silence, an HTTP server's reply, a closed connection, no message
        raise SchedulerUnreachable(not_dask) from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise SchedulerUnreachable(not_dask)


def _client(scheduler: Any, deadline: float, timeout: float) -> tuple[Any, bool, str]:
    """Return ``(client, owned, address)``; ``owned`` clients are closed by the sweep."""
    try:
        from dask.distributed import Client
    except ImportError as exc:
        raise MissingDependency(
            f"scheduler={scheduler!r} needs dask.distributed, which is not installed; "
            'install it with: pip install "symq[distributed]"') from exc
    if isinstance(scheduler, Client):
        return scheduler, False, str(getattr(scheduler.scheduler, "address", "the client"))
    if isinstance(scheduler, str) or hasattr(scheduler, "scheduler_address"):
        address = scheduler if isinstance(scheduler, str) else scheduler.scheduler_address
        address = check_scheduler_address(address)
        if address.startswith("tcp://"):
            _probe(address, deadline, timeout)
        try:
            client = Client(address, timeout=max(deadline - time.monotonic(), 0.1),
                            set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(
                f"cannot reach the Dask scheduler at {address} within "
                f"{timeout:g} s ({exc}); check the address, or raise --connect-timeout"
            ) from None
        return client, True, address
    raise InvalidParameter(
        "scheduler", scheduler,
        "None, a Dask scheduler address such as 'tcp://host:8786', a dask.distributed.Client "
        "or a Dask cluster")


def _n_workers(client: Any, timeout: float) -> int | None:
    """Workers the scheduler knows of, or None when the scheduler does not answer."""
    if client.status != "running":
        return None
    try:
        info = client.sync(client.scheduler.identity, n_workers=0,
                           callback_timeout=max(timeout, 0.1))
        return int(info.get("n_workers", 0))
    except Exception:  # noqa: BLE001 - a lost connection or a timeout: no scheduler
        return None


def run_dask(func: Callable[..., Any], points: list[dict[str, Any]], seeds: list[Any],
             scheduler: Any, progress: bool, desc: str, connect_timeout: float,
             task: Callable[..., Any]) -> list[Any]:
    """Run ``task(func, point, seed)`` for every point on Dask; see the module's docstring.

    Raises
    ------
    SweepTaskError
        A task raised.
    SchedulerUnreachable
        Nothing could start: no scheduler, not a Dask scheduler, no worker within
        ``connect_timeout`` seconds.
    SweepIncomplete
        The scheduler or the workers went away after some points had finished.
    """
    with quiet_distributed():
        deadline = time.monotonic() + connect_timeout
        client, owned, address = _client(scheduler, deadline, connect_timeout)
        try:
            return _gather(client, address, func, points, seeds, progress, desc,
                           connect_timeout, deadline, task)
        finally:
            if owned:
                with contextlib.suppress(Exception):
                    client.close(timeout=2)


def _gather(client, address, func, points, seeds, progress, desc, connect_timeout, deadline,
            task) -> list[Any]:

    n_workers = _n_workers(client, deadline - time.monotonic())
    while not n_workers and time.monotonic() < deadline:
        time.sleep(0.1)
        n_workers = _n_workers(client, deadline - time.monotonic())
    if n_workers is None:
        raise SchedulerUnreachable(f"the Dask scheduler at {address} stopped answering")
    if not n_workers:
        raise SchedulerUnreachable(
            f"the Dask scheduler at {address} has no workers (none joined within "
            f"{connect_timeout:g} s); start some with: dask worker {address}")

    results: list[Any] = [None] * len(points)
    finished = [False] * len(points)
    futures = [client.submit(task, func, point, seed, pure=False)
               for point, seed in zip(points, seeds)]
    pending = dict(enumerate(futures))
    lost: set[int] = set()  # cancelled or lost by the cluster: they will never finish
    trouble_since: float | None = None
    problem = ""
    next_health = time.monotonic() + _HEALTH
    try:
        with progress_bar(len(points), progress, desc) as bar:
            while pending:
                done = [i for i, f in pending.items() if f.status != "pending"]
                for index in done:
                    future = pending.pop(index)
                    if future.status == "error":
                        error = future.exception(timeout=connect_timeout)
                        raise SweepTaskError(points[index], index, error) from error
                    if future.status == "finished":
                        try:
                            results[index] = future.result(timeout=connect_timeout)
                        except Exception:  # noqa: BLE001 - lost between status and result
                            lost.add(index)
                            continue
                        finished[index] = True
                        bar.update(1)
                    else:
                        lost.add(index)
                now = time.monotonic()
                if now >= next_health:
                    n_workers = _n_workers(client, connect_timeout)
                    if n_workers is None:
                        problem = "lost the Dask scheduler"
                    elif n_workers == 0:
                        problem = "the Dask cluster has no workers left"
                    else:
                        problem = ""
                    trouble_since = (trouble_since or now) if problem else None
                    next_health = time.monotonic() + _HEALTH
                if trouble_since is not None and now - trouble_since >= connect_timeout:
                    break
                if not done:
                    time.sleep(_POLL)
    finally:
        with contextlib.suppress(Exception):
            client.cancel([f for f in futures if f.status == "pending"])
    if not pending and not lost:
        return results
    kept = [i for i in range(len(points)) if finished[i]]
    missing = len(points) - len(kept)
    if trouble_since is not None:
        problem += f" (waited {connect_timeout:g} s)"
    else:
        running = client.status == "running" and _n_workers(client, connect_timeout) is not None
        problem = problem or ("the Dask cluster cancelled or lost tasks" if running
                              else "lost the Dask scheduler")
    message = f"{problem} at {address}: {missing} of {len(points)} points lost"
    if not kept:
        raise SchedulerUnreachable(message + " (none had finished)")
    partial = SweepResult([points[i] for i in kept], [results[i] for i in kept], 0.0, "dask",
                          incomplete=message)
    raise SweepIncomplete(message + f"; {len(kept)} finished point{'s' * (len(kept) != 1)} "
                          "kept", partial, missing)
