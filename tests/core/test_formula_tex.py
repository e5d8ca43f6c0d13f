r"""Formulas in LaTeX (claims files' ``tex`` keys): symq's own TeX grammar.

Each construct is checked against the same formula written independently in the text grammar
(:func:`symq.core.formula.parse_formula`): both must give the same sympy tree (or trees whose
difference simplifies to 0).  A property test builds random formulas in both notations side by
side.  The cost bounds of the text grammar must still refuse huge or deep input, bad TeX must be
refused with the key, the token and its position, and claims files with TeX formulas are checked
end to end against the M/M/1 queue (the supermarket model at d = 1), whose mean number in system
rho/(1 - rho) and mean response time 1/(1 - lam) are known exactly.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symq.cli import main
from symq.core.claims import Status
from symq.core.claimsfile import ClaimsFileError, load_claims_file
from symq.core.errors import InvalidParameter, SymqError
from symq.core.formula import parse_formula, parse_relation
from symq.core.formula_tex import (
    MAX_TEX_DEPTH,
    MAX_TEX_LENGTH,
    TexFormulaError,
    check_symbol_map,
    parse_tex_formula,
    parse_tex_relation,
    tex_has_relation,
)
from symq.core.report_html import write_html_report

NAMES = ("a", "b", "c", "d", "f", "x", "y", "n", "rho", "lam", "mu", "lam2", "x_1", "x_k",
         "epsilon", "Lambda", "xbar", "ET", "theta")


def same(tex: str, text: str, names: tuple[str, ...] = NAMES, **kw) -> None:
    got = parse_tex_formula("t", tex, names, **kw)
    want = parse_formula("t", text, names, sums=True)
    assert got == want or sp.simplify(got - want) == 0, (tex, got, want)


CONSTRUCTS = [
    # numbers, symbols, subscripts, greek letters
    ("12", "12"), ("0.5", "0.5"), ("x_1", "x_1"), ("x_{1}", "x_1"), ("x_{k}", "x_k"),
    (r"\lambda_{2}", "lam2"), (r"\lambda_2", "lam2"), (r"\rho", "rho"), (r"\lambda", "lam"),
    (r"\varepsilon", "epsilon"), (r"\Lambda", "Lambda"), (r"\bar{x}", "xbar"),
    (r"\mathrm{ET}", "ET"), (r"\pi x", "pi*x"), (r"e^{x}", "exp(x)"), (r"\mathrm{e}", "E"),
    # operators and precedence
    ("a + b - c", "a + b - c"), ("a*b", "a*b"), ("a/b", "a/b"), ("x^2", "x**2"),
    ("a+b-c*d/f^2", "a + b - c*d/f**2"), ("-x^2", "-(x**2)"), ("2^{-1}", "1/2"),
    ("x^{y^{2}}", "x**(y**2)"), ("a/bc", "(a/b)*c"), ("x^2 3", "x**2*3"),
    (r"a \cdot b", "a*b"), (r"a \times b", "a*b"), (r"a \div b", "a/b"),
    # implicit multiplication
    (r"2\rho", "2*rho"), (r"\rho(1-\rho)", "rho*(1 - rho)"), (r"\lambda \mu", "lam*mu"),
    (r"2 x y", "2*x*y"), (r"(a+b)(a-b)", "(a + b)*(a - b)"), (r"a[b + c]", "a*(b + c)"),
    # fractions, roots, groups
    (r"\frac{\rho}{1-\rho}", "rho/(1 - rho)"), (r"\dfrac{a}{b}", "a/b"),
    (r"\tfrac{1}{2}\lambda", "lam/2"), (r"\frac12 x", "x/2"), (r"\frac\pi2", "pi/2"),
    (r"\frac{a}{b}^{2}", "(a/b)**2"), (r"\frac{1}{{a+b}}", "1/(a + b)"),
    (r"\sqrt{x}", "sqrt(x)"), (r"\sqrt x", "sqrt(x)"), (r"\sqrt[3]{x}", "x**(1/3)"),
    (r"\left( a + b \right)^{2}", "(a + b)**2"), (r"\left[ a \right]", "a"),
    (r"\{a + b\} c", "(a + b)*c"), (r"2^{a+b}", "2**(a + b)"),
    # functions
    (r"\exp(-x)", "exp(-x)"), (r"\exp\left(-\frac{x^2}{2}\right)", "exp(-x**2/2)"),
    (r"\log x", "log(x)"), (r"\ln(1+x)", "log(1 + x)"), (r"\log x + 1", "log(x) + 1"),
    (r"\log_{2} x", "log(x)/log(2)"), (r"\sin 2\pi x", "sin(2*pi*x)"),
    (r"\sin^{2} x + \cos^2 x", "sin(x)**2 + cos(x)**2"), (r"\tan\theta", "tan(theta)"),
    (r"\sinh x \cosh y", "sinh(x)*cosh(y)"), (r"\tanh(x)", "tanh(x)"),
    (r"\arctan x", "atan(x)"), (r"\min(a, b)", "min(a, b)"), (r"\max\{a, b, c\}", "max(a, b, c)"),
    (r"\Gamma(x)", "gamma(x)"), (r"\operatorname{erf}(x)", "erf(x)"),
    (r"\mathrm{erfc}(x)", "erfc(x)"),
    # factorial, binomial, absolute value
    ("n!", "gamma(n + 1)"), ("5!", "120"), (r"(a+b)!", "gamma(a + b + 1)"),
    (r"\binom{n}{2}", "gamma(n + 1)/(gamma(3)*gamma(n - 1))"), (r"\binom{5}{2}", "10"),
    ("|x - y|", "abs(x - y)"), (r"\left| x \right|", "abs(x)"), (r"\lvert a \rvert", "abs(a)"),
    ("|a||b|", "abs(a)*abs(b)"), ("||x| - 1|", "abs(abs(x) - 1)"),
    # sums and integrals
    (r"\sum_{k=0}^{n} \frac{x^k}{k!}", "sum(x**k/gamma(k + 1), k, 0, n)"),
    (r"\sum_{k=1}^{\infty} \frac{1}{k^2}", "sum(1/k**2, k, 1, oo)"),
    (r"\sum\limits_{j=1}^{n} j x + 1", "sum(j*x, j, 1, n) + 1"),
    (r"\int_{0}^{\infty} e^{-t x} \, dt", "integral(exp(-t*x), t, 0, oo)"),
    (r"\int_{-\infty}^{\infty} e^{-s^2} \,\mathrm{d}s", "integral(exp(-s**2), s, -oo, oo)"),
    (r"\int_0^1 s^2 + s \, ds", "integral(s**2 + s, s, 0, 1)"),
    # spacing, delimiters, Unicode operators
    (r"a \, b \; c \! d \: f \quad x", "a*b*c*d*f*x"), (r"$\frac{a}{b}$", "a/b"),
    (r"\displaystyle \big( a \big)", "a"), ("1 \u2212 x", "1 - x"), ("a \u00b7 b", "a*b"),
    ("a~b", "a*b"),
]


@pytest.mark.parametrize(("tex", "text"), CONSTRUCTS, ids=[c[0] for c in CONSTRUCTS])
def test_each_construct_reads_as_the_same_formula_in_the_text_grammar(tex, text):
    same(tex, text)


@pytest.mark.parametrize(("tex", "text"), [
    (r"\frac{1}{1-\rho} \ge 1", "1/(1 - rho) >= 1"), (r"a \le b", "a <= b"),
    (r"a \leq b", "a <= b"), (r"a \geq b", "a >= b"), ("a < b", "a < b"), ("a > b", "a > b"),
    (r"E[T] = \frac{1}{\mu - \lambda}", "ET == 1/(mu - lam)"), (r"x \to 0", "x -> 0"),
    (r"\sum_{k=0}^{n} k = \frac{n(n+1)}{2}", "sum(k, k, 0, n) == n*(n + 1)/2"),
])
def test_relations_read_as_the_text_grammar_reads_them(tex, text):
    got = parse_tex_relation("s", tex, NAMES, symbols={"E[T]": "ET"})
    want = parse_relation("s", text, NAMES)
    assert (got.lhs, got.op, got.rhs) == (want.lhs, want.op, want.rhs)
    assert got.text == f"${tex}$"  # printed back as typed
    assert tex_has_relation("s", tex)


# Random formulas, written side by side in TeX and in the text grammar by the strategy itself.
_LEAVES = st.sampled_from([("x", "x"), ("y", "y"), (r"\rho", "rho"), (r"\lambda", "lam"),
                           ("2", "2"), ("3", "3"), ("0.5", "0.5")])


def _extend(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: (f"{p[0][0]} + {p[1][0]}", f"({p[0][1]}) + ({p[1][1]})")),
        pair.map(lambda p: (f"{p[0][0]} - \\left({p[1][0]}\\right)",
                            f"({p[0][1]}) - ({p[1][1]})")),
        pair.map(lambda p: (f"\\left({p[0][0]}\\right) \\cdot \\left({p[1][0]}\\right)",
                            f"({p[0][1]})*({p[1][1]})")),
        pair.map(lambda p: (f"\\left({p[0][0]}\\right)\\left({p[1][0]}\\right)",
                            f"({p[0][1]})*({p[1][1]})")),
        pair.map(lambda p: (f"\\frac{{{p[0][0]}}}{{1 + ({p[1][0]})^{{2}}}}",
                            f"({p[0][1]})/(1 + ({p[1][1]})**2)")),
        children.map(lambda c: (f"\\sqrt{{1 + ({c[0]})^2}}", f"sqrt(1 + ({c[1]})**2)")),
        children.map(lambda c: (f"\\exp\\left(-\\left|{c[0]}\\right|\\right)",
                                f"exp(-abs({c[1]}))")),
        children.map(lambda c: (f"-\\left({c[0]}\\right)^{{3}}", f"-(({c[1]})**3)")),
    )


@settings(max_examples=40, deadline=None)
@given(st.recursive(_LEAVES, _extend, max_leaves=6))
def test_random_formulas_read_the_same_in_both_notations(pair):
    same(*pair, names=("x", "y", "rho", "lam"))


# ----------------------------------------------------------------------------- symbols

def test_the_symbol_map_names_any_tex_and_a_subscript_extends_a_mapped_symbol():
    symbols = {"E[T]": "ET", r"\mathbb{E}[N]": "EN", r"\lambda": "arrival", "x_1": "first"}
    names = ("ET", "EN", "arrival", "arrival2", "first")
    got = parse_tex_formula("t", r"E\left[T\right] + \mathbb{E}[N] + \lambda + \lambda_{2} "
                            "+ x_{1}", names, symbols=symbols)
    assert got == parse_formula("t", "ET + EN + arrival + arrival2 + first", names)


def test_an_unknown_symbol_names_what_it_tried_and_how_to_map_it():
    with pytest.raises(TexFormulaError) as err:
        parse_tex_formula("claims[0].tex", r"\frac{1}{\mu_{3} - \lambda}", ("mu", "lam"))
    message = str(err.value)
    assert "claims[0].tex" in message and "character 10" in message
    assert "mu_3, mu3" in message and "names: lam, mu" in message and "map it" in message
    with pytest.raises(TexFormulaError, match=r"in TeX ET is a product of letters: write "
                       r"\\mathrm\{ET\}"):
        parse_tex_formula("t", "ET", ("ET",))


def test_symbol_maps_are_checked():
    assert check_symbol_map("tex.symbols", {r"\lambda": "lam"}) == {r"\lambda": "lam"}
    with pytest.raises(InvalidParameter, match="a name"):
        check_symbol_map("tex.symbols", {r"\lambda": "lam + 1"})
    with pytest.raises(TexFormulaError, match=r"tex\.symbols"):
        check_symbol_map("tex.symbols", {"\\frac{": "x", "&": "y"})
    with pytest.raises(InvalidParameter, match="a table"):
        check_symbol_map("tex.symbols", ["lam"])


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize(("tex", "token", "position", "why"), [
    (r"\foo + x", r"'\foo'", 1, "a command outside the grammar"),
    (r"\prod_{k=1}^{n} k", r"'\prod'", 1, "products are not in the formula grammar"),
    (r"\frac{1}{x", "the end of the formula", 11, r"expected '}' to close"),
    ("x + )", "')'", 5, "expected a number, a symbol or a group"),
    ("x & y", "'&'", 3, "one formula, not an aligned environment"),
    ("x^-1", "'-'", 3, r"write \^\{\.\.\.\} with braces"),
    ("\u03bb x", "'\u03bb'", 1, r"write greek letters as \\lambda"),
    (r"\infty", r"'\infty'", 1, r"allowed only as a bound"),
    ("x = 1", "'='", 3, "a formula has no relation"),
    (r"\sum_{k} x", "'}'", 8, "expected '=' after the index"),
    (r"\int_0^1 x", "'x'", 10, r"integrand to end with dx"),
    (r"x^{2}^{3}", "'^'", 6, "a second script"),
    ("2 3", "'3'", 3, "two numbers in a row"),
    ("x^10", "'10'", 3, r"TeX reads one digit here: write \^\{10\}"),
    (r"\min x", "'x'", 6, "takes its arguments in parentheses"),
])
def test_bad_tex_names_the_key_the_token_and_its_position(tex, token, position, why):
    with pytest.raises(TexFormulaError) as err:
        parse_tex_formula("claims[2].let.EN.tex", tex, ("x", "n"))
    message = str(err.value)
    assert isinstance(err.value, InvalidParameter) and isinstance(err.value, SymqError)
    assert message.startswith("parameter claims[2].let.EN.tex=")
    assert f"at character {position}, {token}: " in message, message
    assert re.search(why, message), message
    assert r"\frac, \sqrt, \binom" in message  # what is accepted


def test_a_relation_needs_exactly_one_relation():
    with pytest.raises(TexFormulaError, match="expected a relation"):
        parse_tex_relation("s", "a + b", ("a", "b"))
    with pytest.raises(TexFormulaError, match=r"at character 7, '<'"):
        parse_tex_relation("s", "a < b < 1", ("a", "b"))


@pytest.mark.parametrize("payload", [
    "().__class__.__base__.__subclasses__()",
    "__import__('os').system('touch {p}')",
    r"\operatorname{eval}('1')",
    r"\mathrm{open}('{p}')",
    r"\text{__import__}",
])
def test_code_is_refused_and_never_run(payload, tmp_path):
    marker = tmp_path / "PWNED"
    with pytest.raises(InvalidParameter):
        parse_tex_formula("t", payload.replace("{p}", str(marker)), ("x",))
    assert not marker.exists()


@pytest.mark.parametrize(("tex", "kind", "why"), [
    ("x^{10^{10}}", InvalidParameter, r"the exponent 10000000000 of x is too large"),
    ("x^{x^{x^{x}}}", InvalidParameter, "an exponent tower of height 4"),
    ("1000000!", InvalidParameter, "exceeds the floating-point range"),
    (r"\frac{1}{0}", InvalidParameter, "not finite"),
    (r"\exp(\exp(\exp(100)))", InvalidParameter, "not a finite real number"),
    (r"\sum_{k=0}^{\infty} \sum_{j=0}^{k} x", InvalidParameter, "a sum inside a sum"),
    ("+".join(["x"] * 600), InvalidParameter, "more than 400 terms"),
    (r"\frac{1}{" * 60 + "x" + "}" * 60, TexFormulaError, f"deeper than {MAX_TEX_DEPTH}"),
    (r"\sqrt" * 60 + " x", TexFormulaError, f"deeper than {MAX_TEX_DEPTH}"),
    ("-" * 100 + "x", TexFormulaError, f"deeper than {MAX_TEX_DEPTH}"),
    ("x+" * MAX_TEX_LENGTH + "x", TexFormulaError, f"longer than {MAX_TEX_LENGTH}"),
], ids=lambda v: v[:30] if isinstance(v, str) else None)
def test_the_cost_bounds_of_the_text_grammar_still_refuse_huge_input(tex, kind, why):
    start = time.perf_counter()
    with pytest.raises(kind, match=why) as err:
        parse_tex_formula("t", tex, ("x",))
    assert time.perf_counter() - start < 5
    if kind is InvalidParameter:  # refused by parse_formula: the message shows what it read
        assert "the TeX was read as" in str(err.value)


def test_latex_pasted_into_a_text_formula_is_recognised():
    with pytest.raises(InvalidParameter) as err:
        parse_formula("claims[0].formula", r"\frac{\rho}{1-\rho}", ("rho",))
    assert r"this looks like LaTeX (\frac)" in str(err.value)
    assert "tex = '...'" in str(err.value) and "2*w" not in str(err.value)
    with pytest.raises(InvalidParameter, match=r"looks like LaTeX \(\\le\)"):
        parse_relation("claims[0].statement", r"x \le 1", ("x",))
    with pytest.raises(InvalidParameter, match=r"2\*w, not 2w"):  # plain text keeps its hint
        parse_formula("a", "2w", ("w",))


# ----------------------------------------------------------------------------- claims files

FILE = r"""
[paper]
key = "tex-test"
title = "M/M/1 in LaTeX"

[tex]
symbols = { 'E[T]' = 'ET', '\rho' = 'lam' }

[constants]
half = { tex = '\tfrac{1}{2}' }

[[claims]]
name = "mean number in system"
tex = '\frac{\rho}{1-\rho}'
reference = "supermarket:EQ"
region = { lam = [0.25, 0.5, 0.75], d = 1 }

[[claims]]
name = "misprinted mean number in system"
tex = '\frac{\rho^{2}}{1-\rho}'
reference = "supermarket:EQ"
region = { lam = [0.25, 0.5, 0.75], d = 1 }
expected = "fails"

[[claims]]
name = "mean response time"
tex = 'E[T] = \frac{1}{\mu - \lambda}'
let.ET = "supermarket:ET"
let.mu = { tex = '\sqrt{1}' }
tex_symbols = { '\lambda' = 'lam' }
region = { lam = [0.25, 0.5, 0.75], d = 1 }

[[claims]]
name = "mean response time, misprinted"
tex = 'E[T] \le \mathrm{half} \cdot \frac{1}{1 - \rho}'
let.ET = "supermarket:ET"
region = { lam = [0.25, 0.5, 0.75], d = 1 }
expected = "fails"
"""


def test_a_claims_file_with_tex_formulas_holds_and_fails_as_expected(tmp_path):
    path = tmp_path / "tex.toml"
    path.write_text(FILE, encoding="utf-8")
    loaded = load_claims_file(path)
    assert not loaded.errors, [str(e) for e in loaded.errors]
    verdicts = {c.name: c.check() for c in loaded.paper.build_claims()}
    assert [v.status for v in verdicts.values()] == [Status.HOLDS, Status.FAILS, Status.HOLDS,
                                                     Status.FAILS]
    assert not any(v.unexpected for v in verdicts.values())
    misprint = verdicts["misprinted mean number in system"]
    assert misprint.counterexample is not None
    assert float(misprint.claimed_value) == pytest.approx(0.25**2 / 0.75)  # rho^2/(1 - rho)
    # printed back in TeX: the verdict's explanation, the file's Markdown, the HTML report
    assert r"formula = $\frac{\rho}{1-\rho}$" in verdicts["mean number in system"].compared
    assert r"$E[T] = \frac{1}{\mu - \lambda}$ with" in verdicts["mean response time"].compared
    assert r"mu = $\sqrt{1}$" in verdicts["mean response time"].compared
    markdown = loaded.to_markdown()
    assert r"| $\frac{\rho^{2}}{1-\rho}$ == `reference` |" in markdown
    assert r"| $E[T] \le \mathrm{half} \cdot \frac{1}{1 - \rho}$ |" in markdown
    page = write_html_report(tmp_path / "report", list(verdicts.values()), {}, {}).read_text()
    compared = re.findall(r"<dt>compared</dt><dd>(.*?)</dd>", page)
    assert len(compared) == 4 and all("<math" in c and "$" not in c for c in compared)


def test_symq_check_runs_a_tex_file_and_the_example_file(tmp_path, capsys):
    path = tmp_path / "tex.toml"
    path.write_text(FILE, encoding="utf-8")
    assert main(["check", str(path), "--explain"]) == 0
    out = capsys.readouterr().out
    assert "4 claims: 2 hold, 2 fail, 0 inconclusive" in out
    assert r"compared: formula == reference with formula = $\frac{\rho^{2}}{1-\rho}$" in out
    example = Path(__file__).resolve().parents[2] / "examples" / "claims" / "tex_formulas.toml"
    loaded = load_claims_file(example)
    assert not loaded.errors and all(c.tex for c in loaded.claims)


def _error(tmp_path, capsys, claim: str, top: str = "") -> str:
    text = '[paper]\ntitle = "t"\n' + top + "\n[[claims]]\nname = \"c\"\n" + claim
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("symq: error:")]
    assert lines and "Traceback" not in err
    return lines[0]


def test_bad_tex_in_a_claims_file_names_the_file_line_key_and_token(tmp_path, capsys):
    line = _error(tmp_path, capsys, "region = { lam = [0.5], d = 1 }\nlet.ET = "
                  "\"supermarket:ET\"\ntex = 'E[T] = \\frac{1}{1 - \\lambda'\n"
                  "tex_symbols = { 'E[T]' = 'ET' }\n")
    assert re.search(r"bad\.toml:4: claim 'c': parameter claims\[0\]\.tex=", line), line
    assert "at character 28, the end of the formula: expected '}'" in line and "[line 8]" in line
    line = _error(tmp_path, capsys, "region = { lam = [0.5], d = 1 }\nreference = "
                  "\"supermarket:EQ\"\nlet.r = { tex = '\\varrho \\lambda' }\n"
                  "tex = '\\frac{r}{1-r}'\n")
    assert "parameter claims[0].let.r.tex=" in line and "unknown symbol \\varrho" in line
    assert "[line 8]" in line


@pytest.mark.parametrize(("claim", "top", "why"), [
    ("tex = 'x'\nstatement = \"x == 1\"\nregion = { x = [1] }\n", "",
     r"claims\[0\]\.statement=.*absent when tex is given"),
    ("tex = 'x = 1'\nreference = \"supermarket:ET\"\nregion = { x = [1] }\n", "",
     r"claims\[0\]\.reference=.*absent when tex states a relation"),
    ("tex = '\\frac{1}{x}'\nregion = { x = [1] }\n", "", r"or tex\)"),
    ("tex = 'x = 1'\ntex_symbols = { 'y' = '1 + x' }\nregion = { x = [1] }\n", "",
     r"claims\[0\]\.tex_symbols\.'y'=.*must be a name"),
    ("tex = 'x = 1'\nregion = { x = [1] }\n", "[tex]\nsymbol = { 'y' = 'x' }\n",
     r"bad\.toml:3: tex: parameter tex\.symbol=.*unknown key"),
    ("let.y = { tex = 'x', ref = \"supermarket:ET\" }\nstatement = \"y == x\"\n"
     "region = { x = [1] }\n", "", r"claims\[0\]\.let\.y\.ref=.*unknown key"),
    ("formula = '\\frac{\\rho}{1-\\rho}'\nreference = \"supermarket:EQ\"\n"
     "region = { lam = [0.5], d = 1 }\n", "", r"this looks like LaTeX \(\\frac\): in a claims "
     r"file write it as tex = '\.\.\.'"),
])
def test_misplaced_tex_keys_are_input_errors(tmp_path, capsys, claim, top, why):
    assert re.search(why, _error(tmp_path, capsys, claim, top))


def test_a_python_claims_file_gives_its_symbols_as_tex(tmp_path):
    path = tmp_path / "claims_tex.py"
    path.write_text(
        'PAPER = {"title": "t"}\nTEX = {"symbols": {r"\\rho": "lam"}}\n'
        'CLAIMS = [{"name": "c", "tex": r"\\frac{\\rho}{1-\\rho}", '
        '"reference": "supermarket:EQ", "region": {"lam": [0.5], "d": 1}}]\n', encoding="utf-8")
    loaded = load_claims_file(path)
    assert not loaded.errors and loaded.claims[0].check().status is Status.HOLDS
    path.write_text('PAPER = {"title": "t"}\nTEX = {"symbols": 3}\nCLAIMS = []\n')
    with pytest.raises(ClaimsFileError, match=r"TEX: parameter tex\.symbols=3"):
        load_claims_file(path)
