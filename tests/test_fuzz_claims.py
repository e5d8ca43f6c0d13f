"""Fuzz claims files, formulas and sweeps: every case ends in a result or one line, in bounds.

:mod:`tests.test_fuzz` drives every registered model through its parameters; this harness drives
the two other ways text reaches symq:

* **claims files**: hypothesis draws formulas (large constants, exact towers, constant powers
  such as ``(1 + 1/10^20)^(10^20)``, gamma of large arguments, finite sums of up to ``10^9``
  terms, nested sums, ``max`` of many arguments, huge grids and ``where`` constraints), writes
  them as TOML claims, loads the file and checks each claim;
* **sweeps**: ``symq sweep`` command lines with huge, empty, non-ASCII and malformed axes.

Each case runs in a forked child (so that a hang inside C code, a crash or a runaway allocation
is caught instead of taking the suite down) with :data:`CASE_SECONDS` seconds and an address
space of :data:`MEMORY_BYTES` more than the parent's.  The contract: a loaded claim ends in a
verdict (holds, fails or inconclusive) or a :class:`~symq.core.errors.SymqError` with a one-line
message; a sweep exits 0, 2 or 3 and, when it fails, prints one ``symq: error:`` line.

Verdicts are also checked against the truth where the test knows it.  Each generated formula
comes with its own value, computed here at 60 digits by a small evaluator written for this test
(:func:`_value`, mpmath on the drawn tree, independent of symq's parser and evaluation).  A claim
``F == V`` with ``V`` the true value must not *fail*; a claim ``F == V*(1 + 1e-3)`` must not
*hold* (inconclusive is allowed for both: it is honest).

The quick form runs a few cases per kind in the suite; ``SYMQ_FUZZ_LONG=1`` runs
``SYMQ_FUZZ_EXAMPLES`` cases per kind (default 200) and prints a summary per formula kind and
outcome with ``pytest -s``.
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
import pickle
import re
import resource
import select
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import mpmath
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

LONG = os.environ.get("SYMQ_FUZZ_LONG", "") not in ("", "0")
EXAMPLES = int(os.environ.get("SYMQ_FUZZ_EXAMPLES", "200")) if LONG else 5
#: Wall-clock seconds one case may take (the issue's bound is 10 s on the CLI).
CASE_SECONDS = 10.0 if LONG else 20.0
#: Address space a case may add to the parent's.
MEMORY_BYTES = 2 * 2**30

STATS: dict[str, Counter] = defaultdict(Counter)


# ----------------------------------------------------------------------------- isolation

def _address_space() -> int:
    """The parent's virtual size in bytes (from /proc; 0 where unknown)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def isolated(fn: Callable[[], Any], seconds: float = CASE_SECONDS) -> tuple[str, Any]:
    """Run ``fn()`` in a forked child; return ``("ok", value)``, ``("raised", (type, message))``,
    ``("timeout", seconds)`` or ``("died", signal or status)``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: bounded memory, result through the pipe, never returns
        os.close(read)
        faulthandler.disable()  # a crash is reported by the parent, not dumped here
        try:
            base = _address_space()
            if base:
                limit = base + MEMORY_BYTES
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                payload: Any = ("ok", fn())
            except BaseException as exc:  # noqa: BLE001 - the contract is judged by the parent
                payload = ("raised", (type(exc).__name__, str(exc),
                                      [c.__name__ for c in type(exc).__mro__]))
            data = pickle.dumps(payload)
        except BaseException as exc:  # noqa: BLE001 - e.g. an unpicklable value
            data = pickle.dumps(("raised", (type(exc).__name__, str(exc), [])))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        os._exit(0)
    os.close(write)
    chunks: list[bytes] = []
    deadline = time.monotonic() + seconds
    with os.fdopen(read, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout", seconds
            ready, _, _ = select.select([pipe], [], [], left)
            if ready:
                chunk = os.read(pipe.fileno(), 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return "died", (os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    return pickle.loads(b"".join(chunks))


def test_isolation_catches_hang_crash_and_memory():
    """The harness itself: a hang, a segfault and a runaway allocation are each caught."""
    assert isolated(lambda: 1 + 1) == ("ok", 2)
    assert isolated(lambda: time.sleep(30), seconds=0.5)[0] == "timeout"
    kind, info = isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV))
    assert kind == "died" and info == signal.SIGSEGV
    kind, info = isolated(lambda: bytearray(4 * 2**30))
    assert kind == "raised" and info[0] == "MemoryError"


@pytest.fixture(scope="module", autouse=True)
def _warm(tmp_path_factory):
    """Do the one-time work (lazy imports, the registry) in the parent, so that each forked
    case pays only for itself."""
    path = tmp_path_factory.mktemp("warm") / "warm.toml"
    path.write_text(_claims_toml("warm", "lam == lam", "{ lam = 0.5 }"))
    _check_file(path)
    _run_cli(["sweep", "supermarket", "d=2", "lam=0.5", "--json"])


# ----------------------------------------------------------------------------- formulas

class F:
    """A drawn formula: its text for symq and its true value at the region's point (or None
    where the test cannot evaluate it: then only the contract is checked)."""

    def __init__(self, text: str, value: Callable[[dict[str, Any]], Any]) -> None:
        self.text = text
        self.value = value


POINT = {"lam": mpmath.mpf(1) / 2, "n": 1000, "x": mpmath.mpf(3) / 10}


def _num(text: str, exact: Any) -> F:
    return F(text, lambda p: exact)


_LEAVES = st.one_of(
    st.integers(0, 9).map(lambda i: _num(str(i), mpmath.mpf(i))),
    st.integers(1, 60).map(lambda d: _num(f"10^{d}", mpmath.mpf(10) ** d)),
    st.integers(1, 60).map(lambda d: _num(f"1/10^{d}", mpmath.mpf(10) ** -d)),
    st.sampled_from([("lam", "lam"), ("x", "x"), ("n", "n")]).map(
        lambda t: F(t[0], lambda p, name=t[1]: mpmath.mpf(p[name]))),
    st.sampled_from(["pi", "E"]).map(lambda c: _num(c, mpmath.pi if c == "pi" else mpmath.e)),
    st.sampled_from(["1e-300", "1e300", "2.5", "0.1"]).map(lambda t: _num(t, mpmath.mpf(t))),
)


def _bin(op: str) -> Callable[[F, F], F]:
    def make(a: F, b: F) -> F:
        ops = {"+": lambda u, v: u + v, "-": lambda u, v: u - v, "*": lambda u, v: u * v,
               "/": lambda u, v: u / v, "^": lambda u, v: u ** v}
        return F(f"({a.text}){op}({b.text})", lambda p: ops[op](a.value(p), b.value(p)))
    return make


def _tower(base: F, exponent: int, height: int) -> F:
    text, value = base.text, base.value
    for _ in range(height):
        text = f"({text}+1)^{exponent}"
        value = (lambda v: lambda p: (v(p) + 1) ** exponent)(value)
    return F(text, value)


def _gamma(a: F) -> F:
    return F(f"gamma({a.text})", lambda p: mpmath.gamma(a.value(p)))


def _constant_power(k: int) -> F:
    """``(1 + 1/10^k)^(10^k)``: tends to E; folding it in double precision gives 1."""
    return F(f"(1 + 1/10^{k})^(10^{k})",
             lambda p: (1 + mpmath.mpf(10) ** -k) ** (mpmath.mpf(10) ** k))


def _sum(power: int, high: str) -> F:
    """``sum(1/k^power, k, 1, high)`` with high a number, ``n``, or ``oo``."""
    def value(p: dict[str, Any]) -> Any:
        top = mpmath.inf if high == "oo" else mpmath.mpf(p["n"] if high == "n" else int(high))
        if top == mpmath.inf:
            return mpmath.zeta(power)
        return mpmath.zeta(power) - mpmath.zeta(power, top + 1)  # Hurwitz: the exact tail
    return F(f"sum(1/k^{power}, k, 1, {high})", value)


def _nested_sum(high: int) -> F:
    def value(p: dict[str, Any]) -> Any:
        # grouped by s = i + j, which min(s - 1, 2 high + 1 - s) pairs share
        return mpmath.fsum(mpmath.mpf(min(s - 1, 2 * high + 1 - s)) / mpmath.mpf(s) ** 3
                           for s in range(2, 2 * high + 1))
    return F(f"sum(sum(1/(i + j)^3, j, 1, {high}), i, 1, {high})", value)


def _max_of(items: list[F]) -> F:
    return F("max(" + ", ".join(i.text for i in items) + ")",
             lambda p: max(i.value(p) for i in items))


_KINDS: dict[str, st.SearchStrategy[F]] = {
    "arithmetic": st.recursive(
        _LEAVES, lambda inner: st.one_of(
            st.builds(_bin("+"), inner, inner), st.builds(_bin("*"), inner, inner),
            st.builds(_bin("-"), inner, inner), st.builds(_bin("/"), inner, inner)),
        max_leaves=8),
    "power": st.one_of(
        st.builds(_bin("^"), _LEAVES, _LEAVES),
        st.integers(1, 40).map(_constant_power)),
    "tower": st.builds(_tower, _LEAVES, st.sampled_from([2, 16, 256, 10**6]),
                       st.integers(1, 4)),
    "gamma": st.one_of(
        st.builds(_gamma, _LEAVES),
        st.sampled_from([("10^7", 10**7), ("10^20", 10**20), ("171.5", mpmath.mpf("171.5")),
                         ("1e300", mpmath.mpf("1e300")), ("n", POINT["n"])]).map(
            lambda t: F(f"gamma({t[0]})", lambda p, v=t[1]: mpmath.gamma(v)))),
    "sum": st.builds(_sum, st.integers(2, 4),
                     st.sampled_from(["10", "1000", "10^6", "10^9", "n", "oo"]).map(
                         lambda h: str(10 ** int(h[3:])) if h.startswith("10^") else h)),
    "nested sum": st.sampled_from([3, 30, 300, 3000]).map(_nested_sum),
    "max": st.lists(_LEAVES, min_size=1, max_size=80).map(_max_of),
}


def _claims_toml(name: str, statement: str, region: str, tolerance: str = "1e-9") -> str:
    assert '"' not in statement
    text = (f'[paper]\nkey = "fuzz"\ntitle = "fuzz"\n\n[[claims]]\nname = "{name}"\n'
            f'statement = "{statement}"\ntolerance = {tolerance}\n')
    return text + (f"region = {region}\n" if region.strip("{ }") else "")


def _region_for(text: str) -> str:
    """The region table fixing the test point's variables that ``text`` uses (a claims file
    refuses a region parameter its statement does not use)."""
    used = [name for name in ("lam", "n", "x") if re.search(rf"\b{name}\b", text)]
    return "{ " + ", ".join(f"{name} = {POINT[name]}" for name in used) + " }"


def _check_file(path: Path) -> list[tuple[str, str]]:
    """Load a claims file and check its claims (in the child): (outcome, text) per claim."""
    from symq.core.claimsfile import load_claims_file
    from symq.core.errors import SymqError

    out: list[tuple[str, str]] = []
    try:
        loaded = load_claims_file(path)
    except SymqError as exc:
        return [("refused", str(exc))]
    out += [("refused", str(e)) for e in loaded.errors]
    for claim in loaded.paper.build_claims():
        try:
            verdict = claim.check()
            # every way a verdict is shown must work (JSON, text, Jupyter)
            json.dumps(verdict.to_dict())
            str(verdict)
            verdict._repr_markdown_()
            out.append((str(verdict.status), verdict.detail))
        except SymqError as exc:
            out.append(("refused", str(exc)))
    return out


def _true_value(formula: F) -> Any:
    """The formula's value at POINT at 60 digits, or None where it is not a finite real."""
    try:
        with mpmath.workdps(60):
            v = formula.value(POINT)
            if isinstance(v, mpmath.mpc) or not mpmath.isfinite(v):
                return None
            return +v
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None


def _judge(kind: str, text: str, outcome: tuple[str, Any], expect_not: str | None) -> str | None:
    """What broke the contract (None if it held); counts the outcome under ``kind``."""
    status, info = outcome
    if status == "timeout":
        STATS[kind]["timeout"] += 1
        return f"{kind}: {text[:200]}: more than {info} s"
    if status == "died":
        STATS[kind]["died"] += 1
        return f"{kind}: {text[:200]}: the process died ({info})"
    if status == "raised":
        STATS[kind][info[0]] += 1
        return f"{kind}: {text[:200]}: {info[0]}: {info[1][:300]}"
    failures = []
    for verdict, detail in info:
        STATS[kind][verdict] += 1
        if "\n" in detail.strip() and verdict == "refused":
            failures.append(f"{kind}: {text[:200]}: a message of several lines: {detail[:300]}")
        if expect_not is not None and verdict == expect_not:
            failures.append(f"{kind}: {text[:200]}: wrongly {verdict}: {detail[:300]}")
    return "; ".join(failures) or None


def _fuzz_kind(kind: str, tmp_path: Path) -> None:
    failures: list[str] = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(_KINDS[kind], st.sampled_from(["true", "off", "le"]))
    def case(formula: F, form: str) -> None:
        truth = _true_value(formula)
        expect_not: str | None = None
        if truth is None or abs(truth) > mpmath.mpf(10) ** 300 or \
                (truth != 0 and abs(truth) < mpmath.mpf(10) ** -300):
            statement = f"{formula.text} == 1"  # only the contract
        else:
            shown = mpmath.nstr(truth, 40, min_fixed=-1, max_fixed=-1) if truth else "0"
            off = mpmath.nstr(truth * (1 + mpmath.mpf("1e-3")) if truth else 1, 40,
                              min_fixed=-1, max_fixed=-1)
            if form == "true":
                statement, expect_not = f"{formula.text} == {shown}", "fails"
            elif form == "off":
                statement, expect_not = f"{formula.text} == {off}", "holds"
            else:
                bound = mpmath.nstr(truth + abs(truth) * mpmath.mpf("1e-3") if truth else 1, 40,
                                    min_fixed=-1, max_fixed=-1)
                statement, expect_not = f"{formula.text} <= {bound}", "fails"
        statement = statement.replace("e+", "e")
        path = tmp_path / f"c{abs(hash(statement)) % 10**9}.toml"
        path.write_text(_claims_toml(kind, statement, _region_for(statement)))
        failure = _judge(kind, statement, isolated(lambda: _check_file(path)), expect_not)
        if failure:
            failures.append(failure)

    case()
    assert not failures, f"{len(failures)} broken cases:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("kind", sorted(_KINDS))
def test_fuzz_formula_kind(kind, tmp_path):
    _fuzz_kind(kind, tmp_path)


#: The issue's own cases: the outcomes each may end in ("refused": one line), and what a
#: refusal must name (the limit it hit, not a side issue of the test's file).
ISSUE_CASES = [
    ("(1 + 1/10^20)^(10^20) == E", {"holds"}, "{}", ""),
    ("gamma(10^7) > 0", {"holds", "refused"}, "{}", r"gamma\(10000000\)"),
    ("sum(1/k^2, k, 1, n) <= pi^2/6", {"holds"}, "{ n = [1000000000] }", ""),
    ("sum(1/k^2, k, 1, n) <= pi^2/6 + lam", {"holds", "refused"},
     '{ n = [1000000], lam = "0.1:0.9:10000" }', r"at most \d+ term evaluations"),
    ("((((lam+1)^256+1)^256+1)^256+1)^256 > 0", {"holds"}, "{ lam = 0.5 }", ""),
    ("k > 0", {"holds", "refused"}, '{ k = [1, 2], where = "(k^1000000)^1000000 > 0" }',
     r"exponent 1000000000000 .*too large"),
    ("lam >= 0", {"refused"}, '{ lam = "0:1:100000000" }', r"at most 10000 points"),
    ("((n+1)^1000000+1)^1000000 > 10^(10^6)", {"holds", "refused"}, "{ n = 1000 }",
     r"too large|at most|exceeds 2\^1024"),
    ("((pi+1)^16+1)^16 == 9.891992364198713784565004440303674574185e157", {"fails"}, "{}", ""),
    ("((pi+1)^16+1)^16 <= 9.88211025394477e157", {"holds"}, "{}", ""),
    ("sum(sum(1/(i + j)^3, j, 1, n), i, 1, n) > 0", {"refused"}, "{ n = 3 }",
     r"a sum inside a sum"),
    ("max(" + ", ".join(f"lam^{i + 1}" for i in range(60)) + ") >= lam", {"holds", "refused"},
     "{ lam = 0.5 }", r"max\(\) of 60"),
    ("sum(mpf^2, mpf, 1, n) == n*(n+1)*(2*n+1)/6", {"holds"}, "{ n = [3, 10] }", ""),
    ("(((n+1)^16+1)^16+1)^16 == 1", {"fails"}, "{ n = 1000 }", ""),  # 12,289 exact digits
]


@pytest.mark.parametrize("statement, allowed, region, reason", ISSUE_CASES)
def test_issue_formula_cases(statement, allowed, region, reason, tmp_path):
    """Each ends, within 10 s, in the right verdict or one line naming its limit."""
    path = tmp_path / "issue.toml"
    path.write_text(_claims_toml("issue case", statement, region))
    outcome = isolated(lambda: _check_file(path), seconds=10.0)
    failure = _judge("issue", statement, outcome, None)
    assert failure is None, failure
    got = {verdict for verdict, _ in outcome[1]}
    assert got and got <= allowed, f"{statement}: {outcome[1]}"
    for verdict, detail in outcome[1]:
        if verdict == "refused":
            assert re.search(reason, detail), detail


def test_many_claims_load_fast(tmp_path):
    """20,000 claims in one file load (and build) in well under the case bound."""
    path = tmp_path / "many.toml"
    body = "".join(f'[[claims]]\nname = "c{i}"\nstatement = "lam + {i} >= {i}"\n'
                   f"region = {{ lam = 0.5 }}\n\n" for i in range(20000))
    path.write_text('[paper]\nkey = "many"\ntitle = "many"\n\n' + body)

    def load() -> int:
        from symq.core.claimsfile import load_claims_file

        loaded = load_claims_file(path)
        return len(loaded.paper.build_claims()) + len(loaded.errors)

    assert isolated(load, seconds=30.0) == ("ok", 20000)


# ----------------------------------------------------------------------------- sweeps

def _run_cli(argv: list[str]) -> tuple[int, str]:
    """``symq ARGV`` in the child: exit status and stderr."""
    from symq.cli import main

    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


_AXES = st.one_of(
    st.sampled_from(["0.1:0.9:3", "0.1:0.9:100000000", "0.1:0.9:10^20", "0.1:0.9:1e20",
                     "0.1:0.9:0", "0.1:0.9:-3", "0.9:0.1:2", "0.1::3", "0.1,0.5", "0.1,,0.5",
                     "", ",", "٠.5", "0_5", "1e-320:0.5:2", "0.1:0.9:2:log", "0:0.9:2:log",
                     "nan:0.5:2", "0.1:inf:2", "0.5:0.5:99999999999999999999999"]),
    st.lists(st.floats(0.05, 0.95).map(lambda v: f"{v:.3g}"), min_size=1, max_size=4).map(
        ",".join))

_SWEEPS = {
    "supermarket": (["d=2"], "lam"),
    "ps-routing": (["C=4,2,1", "w=1,2,4"], "rho"),
    "dispatch": (["policy=lwl", "m=2"], "rho"),
}


@pytest.mark.parametrize("model", sorted(_SWEEPS))
def test_fuzz_sweep_axes(model):
    fixed, axis = _SWEEPS[model]
    failures: list[str] = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
              phases=(Phase.explicit, Phase.generate), suppress_health_check=list(HealthCheck))
    @given(_AXES, st.sampled_from([[], ["--processes", "2"]]))
    def case(spec: str, extra: list[str]) -> None:
        argv = ["sweep", model, *fixed, f"{axis}={spec}", "--json", *extra]
        kind, info = isolated(lambda: _run_cli(argv))
        label = f"sweep {model}"
        if kind != "ok":
            STATS[label][kind] += 1
            failures.append(f"symq {' '.join(argv)}: {kind} {str(info)[:300]}")
            return
        code, err = info
        STATS[label][f"exit {code}"] += 1
        lines = [line for line in err.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("symq: error:")]
        if code not in (0, 2, 3):
            failures.append(f"symq {' '.join(argv)}: exit {code}: {err[:300]}")
        elif code != 0 and (len(errors) != 1 or len(lines) > 2):
            failures.append(f"symq {' '.join(argv)}: exit {code} with stderr {err[:300]!r}")

    case()
    assert not failures, f"{len(failures)} broken cases:\n" + "\n".join(failures[:20])


def teardown_module(module: Any) -> None:
    if LONG:
        print("\nclaims/formula/sweep fuzz summary (cases per kind and outcome):", file=sys.stderr)
        for name in sorted(STATS):
            counts = dict(STATS[name])
            print(f"  {name:<14} {sum(counts.values()):>5}: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
