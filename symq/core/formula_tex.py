r"""Formulas as papers print them: a small LaTeX reader for claims files.

A claims file may state a formula in LaTeX (``tex = '\frac{\rho}{1-\rho}'``).  This module reads
that text with its own tokenizer and recursive-descent parser (nothing is given to ``eval``,
``exec``, ``sympify`` or ``parse_expr``), writes the formula in the text grammar of
:mod:`symq.core.formula` (``rho/(1 - rho)``) and parses that with
:func:`~symq.core.formula.parse_formula`, so that the same whitelisted tree and every cost bound
of the text grammar apply.  The length (:data:`MAX_TEX_LENGTH`) and the nesting depth
(:data:`MAX_TEX_DEPTH`) of the TeX are bounded before it is parsed.

The grammar (see the claims reference, "Formulas in LaTeX"):

* numbers (``2``, ``0.5``), symbols with subscripts (``x``, ``x_1``, ``x_{k}``, ``\lambda_{2}``,
  ``\mathrm{ET}``, ``\bar{x}``), greek letters, ``e`` (Euler's number, unless a name) and ``\pi``;
* ``+ - * / ^``, ``\cdot``, ``\times``, ``\div``, implicit multiplication (``2\rho``,
  ``\rho(1-\rho)``, ``\lambda \mu``), groups ``( )``, ``[ ]``, ``\{ \}``, ``{ }`` and
  ``\left( ... \right)``;
* ``\frac{a}{b}`` (and ``\dfrac``, ``\tfrac``, ``\cfrac``, ``\frac12``), ``\sqrt{x}``,
  ``\sqrt[n]{x}``, ``\binom{n}{k}``, ``n!``, ``|x|``, ``e^{x}``;
* functions ``\exp \log \ln \sin \cos \tan \sinh \cosh \tanh \arctan \min \max``, ``\log_{b}``,
  ``\sin^{2} x``, ``\Gamma(x)`` and ``\operatorname{NAME}(...)`` for every function of the text
  grammar (``erf``, ``polylog``, ...);
* ``\sum_{k=0}^{n} term`` (``n`` may be ``\infty``; the summand is the product that follows) and
  ``\int_{a}^{b} f \, dx`` (or ``\mathrm{d}x``);
* the relations of a statement: ``=``, ``<``, ``>``, ``\le``, ``\leq``, ``\ge``, ``\geq``, ``\to``;
* spacing, ``\left``/``\right`` and sizes are ignored (:mod:`~.formula_tex_lexer`).

A symbol is the name given by the symbol map (``{ '\lambda' = 'lam', 'E[T]' = 'ET' }``; a key is
any TeX, matched token by token, ``x_1`` and ``x_{1}`` alike), else its own name when that is a
name of the claim: ``\rho`` -> ``rho``, ``\lambda`` -> ``lambda`` or ``lam``, ``x_{1}`` ->
``x_1`` or ``x1``, ``\bar{x}`` -> ``xbar`` or ``x_bar``.  Anything else raises
:class:`TexFormulaError`, naming the key, the TeX token and its position.

Examples
--------
>>> tex_to_text("formula", r"\frac{\rho}{1-\rho}", ("rho",))
'rho/(1 - rho)'
>>> parse_tex_formula("formula", r"\lambda \left( 1 + \frac{\mu}{2} \right)", ("lam", "mu"))
lam*(mu/2 + 1)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import sympy as sp

from .errors import InvalidParameter
from .formula import FUNCTIONS, MAX_LENGTH, Relation, parse_formula
from .formula_tex_lexer import (
    GREEK,
    MAX_SYMBOLS,
    MAX_TEX_DEPTH,
    MAX_TEX_LENGTH,
    OPEN,
    RELATIONS,
    TEX_DOMAIN,
    TEXT,
    TexFormulaError,
    Token,
    check_symbol_map,
    compiled_symbols,
    fail,
    tex_has_relation,
    tex_shown,
    tokenize,
)

__all__ = ["TexFormulaError", "parse_tex_formula", "parse_tex_relation", "tex_to_text",
           "tex_has_relation", "tex_shown", "check_symbol_map", "MAX_TEX_LENGTH",
           "MAX_TEX_DEPTH", "MAX_SYMBOLS", "TEX_DOMAIN"]

_FUNCTIONS = {"exp": "exp", "log": "log", "ln": "log", "sin": "sin", "cos": "cos", "tan": "tan",
              "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arctan": "atan", "min": "min",
              "max": "max"}
_FRACS = {"frac", "dfrac", "tfrac", "cfrac"}
_BINOMS = {"binom", "dbinom", "tbinom"}
_DECOR = {"bar": "bar", "overline": "bar", "hat": "hat", "widehat": "hat", "tilde": "tilde",
          "widetilde": "tilde", "dot": "dot"}
_MUL = {"*": "*", r"\cdot": "*", r"\times": "*", "/": "/", r"\div": "/"}

# ----------------------------------------------------------------------------- the parser
# Nodes: ("num", text), ("name", id), ("euler",), ("call", f, [args]), ("neg", x),
# ("add", [(sign, x), ...]), ("mul", [(op, x), ...]), ("pow", base, exponent),
# ("sum", body, index, low, high), ("int", body, variable, low, high).

class _Parser:
    def __init__(self, name: str, text: str, names: tuple[str, ...],
                 symbols: Mapping[str, str] | None) -> None:
        self.name, self.text = name, text
        self.tokens = tokenize(name, text)
        self.names = set(names)
        self.symbols = compiled_symbols(name, symbols)
        self.pos = 0
        self.depth = 0
        self.bound: list[str] = []     # sum indices and integration variables in scope
        self.stops: list[int] = []     # where an integrand ends (its dx)
        self.in_abs = 0
        self.bounds_ok = False         # \infty allowed (a bound of a sum or an integral)

    def peek(self, ahead: int = 0) -> Token:
        at = self.pos + ahead
        if self.stops and at >= self.stops[-1]:
            return Token("end", "", self.tokens[self.stops[-1]].pos)
        return self.tokens[min(at, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.peek()
        if token.kind != "end":
            self.pos += 1
        return token

    def expect(self, text: str, what: str) -> Token:
        token = self.peek()
        if token.text != text or token.kind == "end":
            self.fail(token, f"expected {text!r} {what}")
        return self.take()

    def fail(self, token: Token, message: str) -> NoReturn:
        fail(self.name, self.text, token, message)

    def nested(self, parse: Callable[[], Any]) -> Any:
        """``parse()`` one level deeper (at most :data:`MAX_TEX_DEPTH` levels)."""
        self.depth += 1
        if self.depth > MAX_TEX_DEPTH:
            self.fail(self.peek(), f"nested deeper than {MAX_TEX_DEPTH} levels")
        node = parse()
        self.depth -= 1
        return node

    def relation(self) -> tuple[Any, str, Any]:
        lhs = self.expr()
        token = self.peek()
        if token.text not in RELATIONS or token.kind not in ("sym", "cmd"):
            self.fail(token, "expected a relation =, \\le, \\ge, <, >, \\to")
        self.take()
        rhs = self.expr()
        self.finish()
        return lhs, RELATIONS[token.text], rhs

    def finish(self) -> None:
        token = self.peek()
        if token.kind != "end":
            what = "a formula has no relation (a statement does: give it as the claim's tex)" \
                if token.text in RELATIONS else "unexpected"
            self.fail(token, what)

    def expr(self) -> Any:
        items: list[tuple[str, Any]] = []
        sign = "+"
        if self.peek().text in ("+", "-") and self.peek().kind == "sym":
            sign = self.take().text
        items.append((sign, self.term()))
        while self.peek().text in ("+", "-") and self.peek().kind == "sym":
            sign = self.take().text
            items.append((sign, self.term()))
        return items[0][1] if len(items) == 1 and sign == "+" else ("add", items)

    def term(self) -> Any:
        items = [("*", self.signed())]
        while True:
            token = self.peek()
            if token.text in _MUL and token.kind in ("sym", "cmd"):
                self.take()
                items.append((_MUL[token.text], self.signed()))
            elif self.starts_atom(token):
                items.append(("*", self.power()))
            else:
                break
        return items[0][1] if len(items) == 1 else ("mul", items)

    def signed(self) -> Any:
        token = self.peek()
        if token.text in ("+", "-") and token.kind == "sym":
            self.take()
            operand = self.nested(self.signed)
            return ("neg", operand) if token.text == "-" else operand
        return self.power()

    def starts_atom(self, token: Token) -> bool:
        if token.kind in ("num", "letter"):
            return True
        if token.kind == "cmd":
            return token.text not in _MUL and token.text not in RELATIONS
        return token.text in ("(", "[", "{") or (token.text == "|" and not self.in_abs)

    def power(self) -> Any:
        base = self.postfix(self.atom())
        if self.peek().text == "^":
            self.take()
            exponent = self.group("a superscript")
            base = ("call", "exp", [exponent]) if base == ("euler",) else \
                ("pow", base, exponent)
            if self.peek().text in ("^", "_"):
                self.fail(self.peek(), "a second script (write the subscript first: x_{1}^{2})")
        return base

    def postfix(self, node: Any) -> Any:
        while self.peek().text == "!" and self.peek().kind == "sym":
            self.take()
            node = ("call", "gamma", [("add", [("+", node), ("+", ("num", "1"))])])
        return node

    def group(self, what: str) -> Any:
        """A braced group ``{...}`` (sub- and superscripts are always braced here)."""
        self.expect("{", f"to open {what}")
        node = self.nested(self.expr)
        self.expect("}", f"to close {what}")
        return node

    def argument(self, what: str) -> Any:
        """A macro argument: ``{...}`` or one token (``\\frac12``, ``\\frac\\pi2``)."""
        token = self.peek()
        if token.text == "{":
            return self.group(what)
        if token.kind == "num" and len(token.text) > 1:  # \frac12: one digit each
            self.tokens[self.pos] = Token("num", token.text[1:], token.pos + 1)
            return ("num", token.text[0])
        if token.kind in ("num", "letter", "cmd") and token.text not in RELATIONS:
            return self.nested(self.atom)
        return self.fail(token, f"expected {what}")

    def atom(self) -> Any:
        token = self.peek()
        mapped = self.match_symbol()
        if mapped is not None:
            return mapped
        if token.kind == "num":
            self.take()
            if self.peek().kind == "num":
                self.fail(self.peek(), "two numbers in a row")
            return ("num", token.text)
        if token.text in OPEN or token.text == "|":
            self.take()
            self.in_abs += token.text == "|"
            inner = self.nested(self.expr)
            self.in_abs -= token.text == "|"
            close = OPEN.get(token.text, "|")
            self.expect(close, f"to close the {token.text!r} at character {token.pos + 1}")
            return ("call", "abs", [inner]) if token.text == "|" else inner
        if token.kind == "cmd":
            return self.command(token)
        if token.kind == "letter":
            return self.symbol()
        return self.fail(token, "expected a number, a symbol or a group"
                         if token.kind != "end" else "the formula ends too early")

    def command(self, token: Token) -> Any:
        word = token.text[1:]
        if word in _FRACS or word in _BINOMS:
            self.take()
            top = self.argument("the first argument of " + token.text)
            bottom = self.argument("the second argument of " + token.text)
            if word in _FRACS:
                return ("mul", [("*", top), ("/", bottom)])
            one = ("num", "1")
            factorials = [("call", "gamma", [("add", [*terms, ("+", one)])]) for terms in
                          ([("+", top)], [("+", bottom)], [("+", top), ("-", bottom)])]
            return ("mul", [("*", factorials[0]),
                            ("/", ("mul", [("*", factorials[1]), ("*", factorials[2])]))])
        if word == "sqrt":
            self.take()
            index = None
            if self.peek().text == "[":
                self.take()
                index = self.nested(self.expr)
                self.expect("]", "to close the index of \\sqrt")
            body = self.argument("the argument of \\sqrt")
            if index is None:
                return ("call", "sqrt", [body])
            return ("pow", body, ("mul", [("*", ("num", "1")), ("/", index)]))
        if word in ("sum", "int"):
            return self.big_operator(token)
        if word in _FUNCTIONS or (word == "Gamma" and self.peek(1).text == "("
                                  and "Gamma" not in self.names):
            self.take()
            return self.function(token, "gamma" if word == "Gamma" else _FUNCTIONS[word])
        if word in TEXT and self.text_word(1) in FUNCTIONS \
                and self.peek(self.text_end(1)).text == "(":
            function = self.text_word(1)
            self.pos += self.text_end(1)
            return self.function(token, function)
        if word == "infty" and self.bounds_ok:
            self.take()
            return ("name", "infty")
        if word in GREEK or word in TEXT or word in _DECOR:
            return self.symbol()
        return self.fail(token, "a command outside the grammar")

    def text_end(self, at: int) -> int:
        """The offset after ``\\mathrm{...}`` starting at ``self.peek(at - 1)``."""
        ahead = at
        if self.peek(ahead).text != "{":
            return ahead
        while self.peek(ahead).text != "}" and self.peek(ahead).kind != "end":
            ahead += 1
        return ahead + 1

    def text_word(self, at: int) -> str:
        """The letters and digits of the group ``{...}`` at ``self.peek(at)``."""
        end = self.text_end(at)
        parts = [self.peek(j) for j in range(at + 1, end - 1)]
        if self.peek(at).text != "{" or not parts \
                or any(t.kind not in ("letter", "num") for t in parts):
            return ""
        return "".join(t.text for t in parts)

    def function(self, token: Token, function: str) -> Any:
        base = power = None
        if self.peek().text == "_" and function == "log":
            self.take()
            base = self.group("the base of \\log")
        if self.peek().text == "^":
            self.take()
            power = self.group("the power of " + token.text)
        if self.peek().text in ("(", "{", "["):
            opening = self.take()
            args = [self.nested(self.expr)]
            while self.peek().text == ",":
                self.take()
                args.append(self.nested(self.expr))
            self.expect(OPEN[opening.text], f"to close the argument of {token.text}")
        elif function in ("min", "max"):
            return self.fail(self.peek(), f"{token.text} takes its arguments in parentheses")
        else:  # \sin 2\pi x: the product that follows, up to an operator or a function
            factors = [("*", self.nested(self.power))]
            while self.starts_atom(self.peek()) and self.peek().text[1:] not in _FUNCTIONS:
                factors.append(("*", self.nested(self.power)))
            args = [factors[0][1] if len(factors) == 1 else ("mul", factors)]
        node: Any = ("call", function, args)
        if base is not None:
            node = ("mul", [("*", node), ("/", ("call", "log", [base]))])
        return node if power is None else ("pow", node, power)

    def big_operator(self, token: Token) -> Any:
        self.take()
        kind = token.text[1:]
        low = high = index = None
        self.bounds_ok = True
        if self.peek().text == "_":
            self.take()
            self.expect("{", f"to open the lower bound of {token.text}")
            if kind == "sum":
                index = self.bound_name(self.peek())
                self.expect("=", "after the index of \\sum (write \\sum_{k=0}^{n})")
            low = self.nested(self.expr)
            self.expect("}", f"to close the lower bound of {token.text}")
        if self.peek().text == "^":
            self.take()
            high = self.group(f"the upper bound of {token.text}")
        self.bounds_ok = False
        if low is None or high is None:
            self.fail(self.peek(), f"{token.text} needs both bounds: {token.text}_{{...}}^{{...}}")
        if kind == "sum":
            assert index is not None
            self.bound.append(index)
            body = self.nested(self.term)
            self.bound.pop()
            return ("sum", body, index, low, high)
        stop = self.find_differential()
        d = self.tokens[stop]
        variable = self.bound_name(self.tokens[stop + (4 if d.kind == "cmd" else 1)],
                                   take=False)
        self.bound.append(variable)
        self.stops.append(stop)
        body = self.nested(self.expr)
        self.finish()
        self.stops.pop()
        self.bound.pop()
        self.pos = stop + (5 if d.kind == "cmd" else 2)
        return ("int", body, variable, low, high)

    def bound_name(self, token: Token, take: bool = True) -> str:
        if token.kind == "letter":
            word = token.text
        elif token.kind == "cmd" and token.text[1:] in GREEK:
            word = token.text[1:]
        else:
            return self.fail(token, "expected a letter (the index or the variable)")
        if take:
            self.take()
        return word

    def find_differential(self) -> int:
        """The position of the ``d`` (or ``\\mathrm{d}``) of the integral's ``dx``."""
        depth = 0
        for at in range(self.pos, len(self.tokens) - 1):
            t = self.tokens[at]
            depth += (t.text in OPEN) - (t.text in OPEN.values())
            if depth < 0:
                break
            nxt = self.tokens[at + 1]
            if depth == 0 and t.key == ("letter", "d") and nxt.kind in ("letter", "cmd"):
                return at
            if depth == 0 and t.text == r"\mathrm" and [x.text for x in self.tokens[
                    at + 1:at + 4]] == ["{", "d", "}"]:
                return at
        return self.fail(self.peek(), "expected the integrand to end with dx (or "
                         "\\mathrm{d}x)")

    def match_symbol(self) -> Any:
        """A symbol of the map at this position (the longest key that matches), or None."""
        for seq, value in self.symbols:
            if tuple(self.peek(j).key for j in range(len(seq))) == seq:
                start = self.peek()
                self.pos += len(seq)
                return self.resolve([value], start, self.subscript())
        return None

    def symbol(self) -> Any:
        token = self.take()
        word = token.text[1:]
        if token.kind == "letter":
            bases = [token.text]
        elif word in TEXT:
            self.pos -= 1
            bases = [self.text_word(1)]
            if not bases[0]:
                self.fail(token, f"{token.text}{{...}} of letters and digits")
            self.pos += self.text_end(1)
        elif word in _DECOR:
            braced = self.peek().text == "{"
            if braced:
                self.take()
            inner = self.take()
            if braced:
                self.expect("}", f"to close {token.text}{{...}}")
            base = inner.text[1:] if inner.kind == "cmd" else inner.text
            if inner.kind not in ("letter", "cmd") or not base.isalpha():
                self.fail(inner, f"a letter under {token.text}")
            bases = [base + _DECOR[word], f"{base}_{_DECOR[word]}"]
        else:
            bases = [word[3:] if word.startswith("var") else word]
            bases = list(dict.fromkeys([word, *bases, *(["lam"] if word == "lambda" else [])]))
        return self.resolve(bases, token, self.subscript())

    def subscript(self) -> str:
        if self.peek().text != "_":
            return ""
        self.take()
        brace = self.expect("{", "to open the subscript")
        parts = []
        while self.peek().text != "}":
            t = self.take()
            if t.kind in ("letter", "num") and "." not in t.text:
                parts.append(t.text)
            elif t.kind == "cmd" and t.text[1:] in GREEK:
                parts.append(t.text[1:])
            elif t.kind == "cmd" and t.text[1:] in TEXT and self.text_word(0):
                parts.append(self.text_word(0))
                self.pos += self.text_end(0)
            else:
                self.fail(t, "a subscript of letters and digits (map other symbols in the "
                          "symbol map)")
        self.take()
        if not parts:
            self.fail(brace, "an empty subscript")
        return "".join(parts)

    def resolve(self, bases: list[str], token: Token, sub: str) -> Any:
        candidates = [f"{b}_{sub}" for b in bases] + [f"{b}{sub}" for b in bases] if sub \
            else bases
        for candidate in candidates:
            if candidate in self.bound or candidate in self.names:
                return ("name", candidate)
        if not sub and bases == ["e"]:
            return ("euler",)
        if not sub and bases[0] == "pi":
            return ("name", "pi")
        tried = ", ".join(dict.fromkeys(candidates))
        shown = self.text[token.pos:self.tokens[self.pos].pos].strip() or token.text
        known = ", ".join(sorted(self.names)) or "none"
        run = re.match(r"[A-Za-z]+", self.text[token.pos:])
        hint = (f"; in TeX {run.group()} is a product of letters: write \\mathrm{{{run.group()}}}"
                if run and len(run.group()) > 1 and run.group() in self.names else "")
        return self.fail(token, f"unknown symbol {shown} (read as {tried}; names: {known}"
                         f"{hint}; or map it: symbols = {{ '{shown}' = 'NAME' }})")


# ----------------------------------------------------------------------------- text output

_PRECEDENCE = {"add": 1, "neg": 3, "mul": 2, "pow": 4}


def _render(node: Any, parent: int = 0) -> str:
    """The node in the text grammar, parenthesised where ``parent`` binds tighter."""
    kind = node[0]
    prec = _PRECEDENCE.get(kind, 5)
    if kind == "num":
        out = node[1]
    elif kind == "name":
        out = "oo" if node[1] == "infty" else node[1]
    elif kind == "euler":
        out = "exp(1)"
    elif kind == "call":
        out = f"{node[1]}({', '.join(_render(a) for a in node[2])})"
    elif kind == "neg":
        out = "-" + _render(node[1], 3)
    elif kind == "pow":
        out = f"{_render(node[1], 5)}^{_render(node[2], 4)}"
    elif kind in ("add", "mul"):
        parts = []
        for i, (op, item) in enumerate(node[1]):
            if kind == "add":
                text = _render(item, 1 if op == "+" else 2)
                parts.append(("-" if op == "-" else "") + text if i == 0 else f" {op} {text}")
            else:
                text = _render(item, 2 if i == 0 else 3)
                parts.append(text if i == 0 else f"{op}{text}")
        out = "".join(parts)
    else:  # sum, int
        body, var, low, high = node[1:]
        verb = "sum" if kind == "sum" else "integral"
        out = f"{verb}({_render(body)}, {var}, {_render(low)}, {_render(high)})"
    return f"({out})" if prec < parent or (prec == parent == 4) else out


def tex_to_text(name: str, text: str, names: tuple[str, ...], *,
                symbols: Mapping[str, str] | None = None, relation: bool = False) -> str:
    r"""The TeX formula ``text`` written in the text grammar of :mod:`symq.core.formula`.

    Parameters
    ----------
    name : str
        The key as the user typed it (named in errors).
    text : str
        The TeX.
    names : tuple of str
        The names the formula may use.
    symbols : mapping, optional
        TeX symbol -> name (:func:`check_symbol_map`).
    relation : bool
        Read ``lhs OP rhs`` (the relation written ``==``, ``<=``, ``>=``, ``<``, ``>``, ``->``).

    Raises
    ------
    TexFormulaError
        TeX outside the grammar: the message names the token and its position.

    Examples
    --------
    >>> tex_to_text("f", r"\sum_{k=0}^{\infty} \frac{x^k}{k!}", ("x",))
    'sum(x^k/gamma(k + 1), k, 0, oo)'
    """
    parser = _Parser(name, text, names, symbols)
    if relation:
        lhs, op, rhs = parser.relation()
        return f"{_render(lhs)} {op} {_render(rhs)}"
    node = parser.expr()
    parser.finish()
    return _render(node)


def _parse_side(name: str, tex: str, generated: str, names: tuple[str, ...], side: str,
                assumptions: dict[str, dict[str, bool]] | None, sums: bool) -> sp.Expr:
    if len(generated) > MAX_LENGTH:  # spaces only separate operators: the TeX's length counts
        generated = generated.replace(" ", "")
    try:
        return parse_formula(name, generated, names, sums=sums, assumptions=assumptions)
    except InvalidParameter as exc:
        read = generated if len(generated) <= 120 else generated[:100] + "..."
        raise InvalidParameter(name, tex, exc.domain, f"{side}{exc.reason}; the TeX was read as "
                               f"{read}") from None


def parse_tex_formula(name: str, text: str, names: tuple[str, ...], *,
                      symbols: Mapping[str, str] | None = None, sums: bool = True,
                      assumptions: dict[str, dict[str, bool]] | None = None) -> sp.Expr:
    r"""Parse a TeX formula into the sympy tree :func:`~symq.core.formula.parse_formula` builds
    from the same formula in the text grammar (same whitelist, same cost bounds).

    Raises
    ------
    TexFormulaError
        TeX outside the grammar (the key, the token and its position).
    InvalidParameter
        A formula the text grammar refuses (unknown function, too large, not finite), with the
        text it was read as.
    """
    generated = tex_to_text(name, text, names, symbols=symbols)
    return _parse_side(name, text, generated, names, "", assumptions, sums)


def parse_tex_relation(name: str, text: str, names: tuple[str, ...], *,
                       symbols: Mapping[str, str] | None = None,
                       assumptions: dict[str, dict[str, bool]] | None = None,
                       shown: str | None = None) -> Relation:
    r"""Parse a TeX relation ``lhs OP rhs`` (OP ``=``, ``<``, ``>``, ``\le``, ``\ge``, ``\to``)
    into a :class:`~symq.core.formula.Relation` whose ``text`` is ``shown`` (default: the TeX
    between ``$`` signs)."""
    parser = _Parser(name, text, names, symbols)
    lhs, op, rhs = parser.relation()
    sides = [_parse_side(name, text, _render(node), names, f"{label}: ", assumptions, True)
             for node, label in ((lhs, "left side"), (rhs, "right side"))]
    return Relation(sides[0], op, sides[1], shown if shown is not None else tex_shown(text))


