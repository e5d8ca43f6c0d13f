"""The starting claims file written by ``symq new-claims NAME``."""

from __future__ import annotations

__all__ = ["new_claims_text"]

_TOML = '''# Claims of a paper, checked by `symq check {file}`.
# Nothing in this file runs as code: formulas are parsed, never evaluated.
# Formulas use + - * / ^ (or **), exp log sqrt sin cos tan atan sinh cosh tanh gamma erf erfc
# abs min max, pi, E, and sum(term, k, low, high) (high may be oo).

[paper]
key = "{key}"                     # used by `symq check` and in the verdict table
title = "Title of the paper"
authors = ["A. Author", "B. Author"]
year = 2026
doi = ""                          # or arxiv = "2401.00000"

[constants]                       # optional: names shared by every claim
# c = "sqrt(8/3)"

# A claim compares a formula with a reference: a symq model and one of its results,
# MODEL:KEY (see `symq list`; e.g. supermarket:ET, supermarket:tail[k], awp:EW,
# dispatch:ET, jsq-sim:ET, mg1-sim:EW).  The model gets the region's parameters it declares.
[[claims]]
name = "mean response time of JSQ(2)"
source = "Section 3, eq. (5)"     # where the paper states it
formula = "sum(lam^((d^i - d)/(d - 1)), i, 1, oo)"
reference = "supermarket:ET"
tolerance = {{ relative = 1e-9 }}
[claims.region]
lam = "0.1:0.9:9"                 # 9 points from 0.1 to 0.9 (a:b:n, or a:b:n:log)
d = [2, 3]                        # listed values; also {{ uniform = [a, b] }} with samples = N

# A general claim: a relation (==, <=, >=, <, >, or -> for a limit) between named quantities.
[[claims]]
name = "least work left beats random routing"
statement = "ET_lwl <= ET_rnd"
let.ET_lwl = {{ ref = "dispatch:ET", policy = "lwl" }}
let.ET_rnd = {{ ref = "dispatch:ET", policy = "rnd" }}
tolerance = 0                     # a number is a relative tolerance
region = {{ m = 2, rho = [0.3, 0.6, 0.9] }}

# A claim against a simulation: holds when the whole (family-level) interval lies within
# the tolerance band (here 5%); "ci" sets the confidence level.
# [[claims]]
# name = "..."
# statement = "ET_sim == 1/(1 - lam^d)"
# let.ET_sim = {{ ref = "jsq-sim:ET", N = 100 }}
# tolerance = {{ relative = 0.05, ci = 0.95 }}
# region = {{ lam = [0.5, 0.8], d = 2 }}

# A model of your own: [models.NAME] with a kind of `symq list` (population, window,
# dispatch-score, routing-cost, ...), then refer to NAME:KEY in claims.
# [models.my-tcp]
# kind = "window"
# parameters = {{ beta = "(0, 1)" }}
# increase = "1"
# loss = "p*w"
# after_loss = "beta*w"
'''

_PYTHON = '''"""Claims of a paper, checked by `symq check {file}`.

A Python claims file is a program: `symq check {file}` runs it (in a folder, only with
`symq check --allow-python FOLDER`; `symq list` never runs it). It defines the same tables as a
TOML claims file (PAPER, CONSTANTS, MODELS, CLAIMS), and may use Python functions of the point
where a TOML file writes formulas.
"""

import math

PAPER = {{
    "key": "{key}",
    "title": "Title of the paper",
    "authors": ["A. Author"],
    "year": 2026,
}}


def erlang_c_wait(point):
    """Mean waiting time of M/M/1 with arrival rate lam and unit service rate."""
    lam = point["lam"]
    return lam / (1 - lam)


CLAIMS = [
    {{
        "name": "M/M/1 waiting time against the M/G/1 simulation",
        "statement": "EW_sim == EW",
        "let": {{"EW": erlang_c_wait, "EW_sim": {{"ref": "mg1-sim:EW", "sizes": "exp"}}}},
        "tolerance": {{"relative": 0.05, "ci": 0.95}},
        "region": {{"lam": [0.3, 0.6]}},
    }},
]
'''


def new_claims_text(key: str, file: str, python: bool = False) -> str:
    """The text of a starting claims file for the paper ``key`` written to ``file``."""
    return (_PYTHON if python else _TOML).format(key=key, file=file)
