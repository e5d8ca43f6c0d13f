"""Coverage of the simulators' 95% confidence intervals against exact values.

Run: ``nice python benchmarks/bench_coverage.py [--seeds 400] [--quick] [--only jsq-sim,mg1-sim]
[--markdown FILE] [--no-extend] [--max-jobs 2e7]``

Every simulator of symq is run ``--seeds`` times (seeds 1, 2, ...) per setting, through its public
entry point (the registered model, ``get_model(NAME).run(params, rng=seed)``, or for the
attained-service simulator :func:`symq.meanfield.attained.model.simulate_policy`), and its 95%
interval is compared with an exact value computed here, independently of symq:

================  =========================================================================
simulator          exact reference (computed in this file)
================  =========================================================================
``jsq-sim``        JSQ(d=1) over N = 2 queues is 2 independent M/M/1 queues:
                   :math:`E[T] = 1/(1-\\lambda)` (H2 sizes: Pollaczek-Khinchine)
``mg1-sim``        Pollaczek-Khinchine :math:`E[W] = \\lambda E[X^2]/(2(1-\\rho))`
                   (Kleinrock 1975, eq. 5.76) for exp, det, h2, lognormal, uniform sizes
``ps-sim``         M/G/1-PS: :math:`E[T] = E[X]/(1-\\rho)` (insensitive; Kleinrock 1976, 4.4)
``dispatch-sim``   RND: m independent M/G/1 FCFS queues (P-K); RR with exponential sizes:
                   each server is an :math:`E_m/M/1` queue, :math:`E[T] = 1/(\\mu(1-\\sigma))`
                   with :math:`\\sigma = (\\lambda/(\\lambda+\\mu(1-\\sigma)))^m` (Kleinrock 1975,
                   Section 6.4, the G/M/1 root); LWL with exponential sizes is the central-queue
                   M/M/m (Erlang C)
``window-sim``     AIMD, :math:`a = 1`, loss rate :math:`p w`, :math:`W \\to \\beta W`:
                   :math:`E[W^2] = 1/(p(1-\\beta))` (drift balance) and :math:`E[W]` from the
                   q-series of the pre-loss law (Dumas, Guillemin, Robert 2002; Palm inversion)
                   summed here in 50-digit mpmath; NewReno is :math:`\\beta = 1/2`
``attained``       d = 1: every arrival joins its one probed server, N independent M/M/1 queues
================  =========================================================================

Loads: low 0.5, moderate 0.8, high 0.95 (the per-server load :math:`\\lambda E[X]`); for the
window protocol, which has no load, the decrease factor :math:`\\beta` plays the part:
0.5 (NewReno), 0.8, 0.95 (successive pre-loss windows have correlation :math:`\\beta^2`, 0.90
at the "high" setting).

For each setting the table gives: the run length used (jobs, departures or loss cycles), the
intervals refused up front (an ``InvalidParameter`` naming the run length), those with a
non-empty ``doubt`` (the run's own diagnostics question them; they are excluded from the
coverage and reported as the doubt rate), ``covered/trusted``, the coverage, the one-sided
binomial p-value of "coverage >= 0.95" (small: significantly below nominal), the mean
half-width over the standard deviation of the estimates across seeds (about
:math:`t_{0.975,\\,n-1} \\approx 2` for a calibrated interval), and the bias z-score of the
mean estimate.  The pooled coverage over all settings closes the table.

When a setting's run length is refused up front with the ``n_jobs`` needed, or its first run is
doubted with the run length that would do, every seed runs at that length (up to ``--max-jobs``)
and the row says so; ``--no-extend`` counts the refusals and doubts instead.  JSQ(1) and the
attained-service simulator run N = 2 queues: the run-length rule counts relaxation times per
queue, so N = 10 would cost five times as much for the same check.

Cost: the default (39 settings, 400 seeds) took 23 minutes on two cores shared with other work
(three quarters of it at high load, where the run-length rule asks for 1.5e6 to 5e6 jobs);
``--loads low,moderate`` takes about 6 minutes, ``--quick`` (one setting per simulator at
moderate load, 200 seeds) under a minute.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from multiprocessing import Pool
from typing import Any

import mpmath
import numpy as np
from scipy import stats

LEVEL = 0.95
LOADS = {"low": 0.5, "moderate": 0.8, "high": 0.95}


# ------------------------------------------------------------------ exact references


def mm1_ET(lam: float, mu: float = 1.0) -> float:
    """M/M/1 mean response time ``1/(mu - lam)``."""
    return 1.0 / (mu - lam)


def pk_EW(lam: float, mean: float, scv: float) -> float:
    """Pollaczek-Khinchine mean wait ``lam E[X^2] / (2 (1 - lam E[X]))``.

    Here ``E[X^2] = mean^2 (1+scv)``.
    """
    return lam * mean * mean * (1.0 + scv) / (2.0 * (1.0 - lam * mean))


def ps_ET(lam: float, mean: float) -> float:
    """M/G/1 processor sharing (unit capacity): ``E[X] / (1 - rho)``."""
    return mean / (1.0 - lam * mean)


def erlang_c_ET(m: int, lam: float, mu: float = 1.0) -> float:
    """M/M/m mean response time by the Erlang C formula, in exact rational arithmetic
    (the load given as a float is converted exactly)."""
    from fractions import Fraction

    a = Fraction(lam) / Fraction(mu)
    terms = [a ** k / math.factorial(k) for k in range(m)]
    last = a ** m / math.factorial(m) * m / (m - a)
    c = last / (sum(terms) + last)
    return float(1 / Fraction(mu) + c / (m * Fraction(mu) - Fraction(lam)))


def em_m1_ET(m: int, lam_total: float, mu: float = 1.0) -> float:
    """Round robin over m exponential servers: each sees Erlang-m interarrivals of rate
    ``lam_total`` (an E_m/M/1 queue).  ``E[T] = 1/(mu (1 - sigma))`` with ``sigma`` the root in
    (0, 1) of ``sigma = (lam/(lam + mu (1 - sigma)))^m`` (G/M/1, Kleinrock 1975 Sec. 6.4),
    found in 50-digit arithmetic."""
    with mpmath.workdps(50):
        lam, mu_ = mpmath.mpf(lam_total), mpmath.mpf(mu)
        def f(s):
            return (lam / (lam + mu_ * (1 - s))) ** m - s

        lo, hi = mpmath.mpf(0), 1 - mpmath.mpf(10) ** -20   # f(lo) > 0 > f(hi) when lam < m mu
        assert f(lo) > 0 > f(hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        sigma = (lo + hi) / 2
        assert abs(f(sigma)) < mpmath.mpf(10) ** -40
        return float(1 / (mu_ * (1 - sigma)))


def window_moments(beta: float, p: float) -> tuple[float, float]:
    """Time-average ``E[W]``, ``E[W^2]`` of AIMD: ``a = 1``, loss rate ``p w``, ``W -> beta W``.

    Pre-loss windows: ``V = W_pre^2`` follows ``V' = q V + E/mu0`` with ``q = beta^2``,
    ``mu0 = p/2``, so ``U = mu0 V = sum_j q^j E_j`` and ``E[U^s] = Gamma(1+s) sum_j c_j q^(js)``,
    ``c_j = (-1)^j q^(j(j+1)/2) / ((q;q)_j (q;q)_inf)`` (Dumas, Guillemin, Robert 2002).  Palm
    inversion over a cycle (``dW/dt = 1``): ``E[W^s] = I(s+1)/I(1)``, ``I(e) = (1-beta^e)/e
    E[W_pre^e]``.  ``E[W^2]`` is checked against the drift balance ``1/(p (1-beta))``.
    """
    with mpmath.workdps(50):
        b, q, mu0 = mpmath.mpf(beta), mpmath.mpf(beta) ** 2, mpmath.mpf(p) / 2
        qinf = mpmath.qp(q, q)

        def moment_u(s: Any) -> Any:
            total, j = mpmath.mpf(0), 0
            while True:
                c = (-1) ** j * q ** (j * (j + 1) / 2) / (mpmath.qp(q, q, j) * qinf)
                term = c * q ** (j * s)
                total += term
                if j > 5 and abs(term) < mpmath.mpf(10) ** -45 * abs(total):
                    break
                j += 1
            return mpmath.gamma(1 + s) * total

        assert abs(moment_u(1) - 1 / (1 - q)) < mpmath.mpf(10) ** -35  # E[U] = sum q^j

        def pre(e: Any) -> Any:  # E[W_pre^e] = E[U^(e/2)] mu0^(-e/2)
            return moment_u(mpmath.mpf(e) / 2) * mu0 ** (-mpmath.mpf(e) / 2)

        def area(e: int) -> Any:
            return (1 - b ** e) / e * pre(e)

        ew, ew2 = area(2) / area(1), area(3) / area(1)
        drift = 1 / (mpmath.mpf(p) * (1 - b))
        assert abs(ew2 / drift - 1) < mpmath.mpf(10) ** -30, (ew2, drift)
        return float(ew), float(drift)


# ------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Setting:
    """One simulator at one load: what to run and the exact value of one output."""

    sim: str            # simulator name shown in the table
    case: str           # e.g. "exp", "h2 scv=4", "RR m=2"
    load_name: str      # low / moderate / high
    load: float         # the per-server load (window: beta)
    output: str         # the result key compared
    exact: float
    params: dict = field(default_factory=dict)
    jobs_key: str = "n_jobs"
    n_jobs: int | None = None   # None: the model's default

    @property
    def label(self) -> str:
        return f"{self.sim} {self.case} {self.output} {self.load_name} ({self.load:g})"


H2_SCV = 4.0


#: Run length of a setting (jobs, departures or loss cycles) by load, unless --default-lengths.
LENGTHS = {"low": 300_000, "moderate": 300_000, "high": 1_000_000}


def settings(quick: bool, default_lengths: bool = False) -> list[Setting]:
    """The settings of the benchmark (``quick``: moderate load, one per simulator)."""
    out = _settings(quick)
    if default_lengths:
        return out
    return [replace(s, n_jobs=LENGTHS[s.load_name]) for s in out]


def _settings(quick: bool) -> list[Setting]:
    out: list[Setting] = []
    for name, rho in LOADS.items():
        if quick and name != "moderate":
            continue
        # jsq-sim d=1: N independent M/M/1 (or M/H2/1) queues
        out.append(Setting("jsq-sim", "N=2 d=1 exp", name, rho, "ET", mm1_ET(rho),
                           {"N": 2, "d": 1, "lam": rho}))
        if name == "moderate" and not quick:
            out.append(Setting("jsq-sim", f"N=2 d=1 H2 scv={H2_SCV:g}", name, rho, "ET",
                               1.0 + pk_EW(rho, 1.0, H2_SCV),
                               {"N": 2, "d": 1, "lam": rho, "service": "H2", "scv": H2_SCV}))
        # mg1-sim: P-K with several laws
        laws = [("exp", None, 1.0), ("h2", H2_SCV, H2_SCV)]
        if name == "moderate" and not quick:
            laws += [("det", None, 0.0), ("lognormal", 2.0, 2.0), ("uniform", 1 / 3, 1 / 3)]
        if quick:
            laws = [("h2", H2_SCV, H2_SCV)]
        for law, scv, c2 in laws:
            params = {"lam": rho, "sizes": law, **({} if scv is None else {"scv": scv})}
            out.append(Setting("mg1-sim", law + ("" if scv is None else f" scv={scv:.3g}"),
                               name, rho, "EW", pk_EW(rho, 1.0, c2), params))
        # ps-sim: E[X]/(1 - rho), any law
        ps_laws = [("exp", None)] if quick else [("exp", None), ("h2", H2_SCV)]
        if name == "moderate" and not quick:
            ps_laws.append(("det", None))
        for law, scv in ps_laws:
            params = {"lam": rho, "sizes": law, **({} if scv is None else {"scv": scv})}
            out.append(Setting("ps-sim", law + ("" if scv is None else f" scv={scv:g}"), name,
                               rho, "ET", ps_ET(rho, 1.0), params))
        # dispatch-sim: RND (P-K per server), RR (E_m/M/1), LWL (M/M/m)
        base = {"m": 2, "rho": rho, "level": LEVEL}
        out.append(Setting("dispatch-sim", "RND m=2 exp", name, rho, "ET",
                           1.0 + pk_EW(rho, 1.0, 1.0), {"policy": "rnd", **base}))
        if not quick:
            out.append(Setting("dispatch-sim", "RR m=2 exp", name, rho, "ET",
                               em_m1_ET(2, 2 * rho), {"policy": "rr", **base}))
            out.append(Setting("dispatch-sim", "LWL m=2 exp", name, rho, "ET",
                               erlang_c_ET(2, 2 * rho), {"policy": "lwl", **base}))
            if name == "moderate":
                out.append(Setting("dispatch-sim", f"RND m=2 h2 scv={H2_SCV:g}", name, rho,
                                   "ET", 1.0 + pk_EW(rho, 1.0, H2_SCV),
                                   {"policy": "rnd", "sizes": "h2", "scv": H2_SCV, **base}))
        # window-sim: beta plays the load's part
        beta = {"low": 0.5, "moderate": 0.8, "high": 0.95}[name]
        p = 0.01
        ew, ew2 = window_moments(beta, p)
        case = "NewReno p=0.01" if beta == 0.5 else f"AIMD beta={beta:g} p=0.01"
        params = {"power_law": (1.0, 0.0, p, 1.0, beta)}
        out.append(Setting("window-sim", case, name, beta, "mean_window", ew, params,
                           jobs_key="n_losses"))
        if not quick:
            out.append(Setting("window-sim", case, name, beta, "mean_square_window", ew2,
                               params, jobs_key="n_losses"))
        # attained service, d = 1: N independent M/M/1 queues
        out.append(Setting("attained", "N=2 d=1 exp", name, rho, "ET", mm1_ET(rho),
                           {"N": 2, "d": 1, "lam": rho}))
    return out


# ------------------------------------------------------------------ one run


def _run(setting: Setting, seed: int, n_jobs: int | None) -> Any:
    """The interval of ``setting.output`` from one seeded run (raises symq's errors)."""
    if setting.sim == "attained":
        from symq.meanfield.attained.model import simulate_policy

        options = {} if n_jobs is None else {"n_jobs": n_jobs}
        est = simulate_policy("SQ", setting.params["N"], setting.params["d"],
                              setting.params["lam"], ([1.0], [[-1.0]]), delta=1.0, rep_max=2.0,
                              rng=seed, level=LEVEL, **options)
        return getattr(est, setting.output)
    if setting.sim == "window-sim":
        from symq.window.simulation import simulate_window

        options = {} if n_jobs is None else {"n_losses": n_jobs}
        est = simulate_window(None, None, None, power_law=setting.params["power_law"],
                              rng=seed, level=LEVEL, **options)
        return getattr(est, setting.output)
    from symq.core.registry import get_model

    params = dict(setting.params)
    if n_jobs is not None:
        params[setting.jobs_key] = n_jobs
    return get_model(setting.sim).run(params, rng=seed).values[setting.output]


def _needed_jobs(exc: Exception, jobs_key: str) -> int | None:
    """The run length a refusal asks for (``parameter n_jobs=... must be >= 3.2e+06``)."""
    if getattr(exc, "name", None) != jobs_key:
        return None
    found = re.search(r">=\s*([0-9][0-9.]*(?:e[+-]?[0-9]+)?)", str(getattr(exc, "domain", "")))
    # the message rounds to a few digits: ask a little more than it says
    return None if found is None else math.ceil(1.01 * float(found.group(1)))


def _task(args: tuple[int, Setting, int | None, list[int]]) -> tuple[int, list[tuple]]:
    """Run ``seeds`` of one setting: rows ``(seed, status, mean, half_width, doubt, text)``."""
    from symq.core.errors import SymqError

    index, setting, n_jobs, seeds = args
    rows = []
    for seed in seeds:
        try:
            ci = _run(setting, seed, n_jobs)
        except SymqError as exc:
            rows.append((seed, "refused", math.nan, math.nan, "", str(exc)))
            continue
        doubt = str(getattr(ci, "doubt", "") or "")
        rows.append((seed, "ok", float(ci.mean), float(ci.half_width), doubt, ""))
    return index, rows


def _nice() -> None:
    try:
        os.nice(10)
    except OSError:
        pass


# ------------------------------------------------------------------ statistics


@dataclass
class Row:
    setting: Setting
    n_jobs: int | None
    note: str
    refused: int
    doubtful: int
    covered: int
    trusted: int
    p_value: float
    hw_sd: float
    bias_z: float
    covered_all: int
    ran: int


def summarise(setting: Setting, n_jobs: int | None, note: str, rows: list[tuple]) -> Row:
    ok = [r for r in rows if r[1] == "ok"]
    trusted = [r for r in ok if not r[4]]
    covered = sum(abs(r[2] - setting.exact) <= r[3] for r in trusted)
    covered_all = sum(abs(r[2] - setting.exact) <= r[3] for r in ok)
    p_value = (stats.binomtest(covered, len(trusted), LEVEL, alternative="less").pvalue
               if trusted else math.nan)
    means = np.array([r[2] for r in ok])
    halves = np.array([r[3] for r in ok])
    if means.size >= 2 and means.std(ddof=1) > 0:
        sd = float(means.std(ddof=1))
        hw_sd = float(halves.mean()) / sd
        bias_z = (float(means.mean()) - setting.exact) / (sd / math.sqrt(means.size))
    else:
        hw_sd = bias_z = math.nan
    return Row(setting, n_jobs, note, len(rows) - len(ok), len(ok) - len(trusted), covered,
               len(trusted), p_value, hw_sd, bias_z, covered_all, len(ok))


def table(rows: list[Row], seeds: int) -> str:
    head = ("| simulator | case | output | load | exact | run length | refused | doubt | "
            "covered/trusted | coverage | p (< 0.95) | hw/sd | bias z |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        s = r.setting
        cov = r.covered / r.trusted if r.trusted else math.nan
        flag = " **low**" if r.p_value < 0.01 else ""
        jobs = "default" if r.n_jobs is None else f"{r.n_jobs:.3g}"
        if r.note:
            jobs += f" ({r.note})"
        lines.append(f"| {s.sim} | {s.case} | {s.output} | {s.load_name} {s.load:g} | "
                     f"{s.exact:.6g} | {jobs} | {r.refused} | {r.doubtful} | "
                     f"{r.covered}/{r.trusted} | {cov:.3f}{flag} | {r.p_value:.3g} | "
                     f"{r.hw_sd:.2f} | {r.bias_z:+.2f} |")
    covered = sum(r.covered for r in rows)
    trusted = sum(r.trusted for r in rows)
    refused = sum(r.refused for r in rows)
    doubtful = sum(r.doubtful for r in rows)
    ran = sum(r.ran for r in rows)
    covered_all = sum(r.covered_all for r in rows)
    low = sum(r.p_value < 0.01 for r in rows)
    pooled = covered / trusted if trusted else math.nan
    lines.append("")
    lines.append(f"Pooled: {covered}/{trusted} trusted intervals cover ({pooled:.4f}); "
                 f"{doubtful} of {ran} runs doubtful ({doubtful / max(ran, 1):.2%}), "
                 f"{refused} refused; all runs, doubtful included: {covered_all}/{ran} "
                 f"({covered_all / max(ran, 1):.4f}); {low} of {len(rows)} settings significantly "
                 f"below 0.95 (one-sided binomial, 1% level); {seeds} seeds per setting.")
    return "\n".join(lines)


# ------------------------------------------------------------------ driver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds per setting "
                        "(default 400; 200 with --quick)")
    parser.add_argument("--quick", action="store_true", help="moderate load, one setting per "
                        "simulator")
    parser.add_argument("--only", default="", help="comma-separated simulators to run")
    parser.add_argument("--loads", default="", help="comma-separated load names (low, "
                        "moderate, high)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--no-extend", action="store_true", help="count refused runs instead "
                        "of retrying at the run length the refusal asks for")
    parser.add_argument("--max-jobs", type=float, default=2e7, help="longest run tried")
    parser.add_argument("--default-lengths", action="store_true", help="run each model at its "
                        "default run length (else 3e5 at low and moderate load, 1e6 at high)")
    parser.add_argument("--markdown", default="", help="also write the table to this file")
    args = parser.parse_args(argv)
    seeds = args.seeds if args.seeds is not None else (200 if args.quick else 400)
    _nice()
    chosen = settings(args.quick, args.default_lengths)
    if args.only:
        keep = {s.strip() for s in args.only.split(",")}
        chosen = [s for s in chosen if s.sim in keep]
    if args.loads:
        keep = {s.strip() for s in args.loads.split(",")}
        chosen = [s for s in chosen if s.load_name in keep]
    start = time.perf_counter()
    print(f"{len(chosen)} settings x {seeds} seeds, {args.processes} processes", flush=True)

    # the run length of each setting: the default, or the one a refusal asks for
    lengths: list[tuple[int | None, str]] = []
    from symq.core.errors import SymqError

    for s in chosen:
        n_jobs, note = s.n_jobs, ""
        for _ in range(2):
            try:
                ci = _run(s, 1, n_jobs)
            except SymqError as exc:
                need = _needed_jobs(exc, s.jobs_key)
                if need is not None and not args.no_extend and need <= args.max_jobs:
                    note = f"{n_jobs or 'default'} refused, needs {need:.3g}"
                    n_jobs = need
                    continue
                note = "refused: " + str(exc).splitlines()[0][:120]
                break
            # a doubt that names the run length that would do: run at that length
            found = re.search(r"a run of about ([0-9][0-9.]*(?:e[+-]?[0-9]+)?)",
                              str(getattr(ci, "doubt", "") or ""))
            if found and not args.no_extend and not note:
                need = math.ceil(1.01 * float(found.group(1)))
                if (n_jobs or 0) < need <= args.max_jobs:
                    note = f"{n_jobs or 'default'} doubted, asks {need:.3g}"
                    n_jobs = need
                    continue
            break
        lengths.append((n_jobs, note))

    chunk = max(1, seeds // 8)
    tasks = [(i, s, lengths[i][0], list(range(lo, min(lo + chunk, seeds + 1))))
             for i, s in enumerate(chosen) for lo in range(1, seeds + 1, chunk)]
    results: dict[int, list[tuple]] = {i: [] for i in range(len(chosen))}
    with Pool(args.processes, initializer=_nice) as pool:
        for index, rows in pool.imap_unordered(_task, tasks):
            results[index].extend(rows)
            if len(results[index]) == seeds:
                r = summarise(chosen[index], *lengths[index], results[index])
                print(f"  {chosen[index].label}: {r.covered}/{r.trusted} "
                      f"(refused {r.refused}, doubt {r.doubtful}) hw/sd {r.hw_sd:.2f} "
                      f"z {r.bias_z:+.2f}  [{time.perf_counter() - start:.0f} s]", flush=True)
    summary = [summarise(s, *lengths[i], results[i]) for i, s in enumerate(chosen)]
    text = table(summary, seeds)
    print()
    print(text)
    print(f"\n{time.perf_counter() - start:.0f} s")
    for i, s in enumerate(chosen):
        notes = {r[5].splitlines()[0] for r in results[i] if r[1] == "refused"}
        for n in sorted(notes)[:2]:
            print(f"refused ({s.label}): {n}", file=sys.stderr)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(f"Coverage of the 95% intervals ({seeds} seeds per setting; "
                     f"`python benchmarks/bench_coverage.py"
                     f"{' --quick' if args.quick else ''} --seeds {seeds}`)\n\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
