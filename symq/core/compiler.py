"""The one front door from sympy expressions to fast numeric callables.

``compile(exprs, args, backend)`` lambdifies with common-subexpression elimination,
vectorised over numpy arrays (``backend="numpy"``), evaluated at arbitrary precision
(``backend="mpmath"``), or compiled to machine code by numba (``backend="numba"``: the
expression is lambdified to the ``math`` module and ``numba.njit``-ed, so that simulation and
value-iteration kernels call the declared formula instead of a hand-typed copy).  The result
exposes the generated Python ``source`` and is cached per (expressions, arguments, backend), so
models may call ``compile`` freely.

A symbol whose name the generated code needs for something else (a parameter or a sum index
called ``mpf``, ``exp``, ``numpy``, ``math``, ``x0``, a Python keyword ...) is renamed to a
private dummy before code generation, so any name a user declares works.

Numeric loops must call compiled functions, never ``subs``/``evalf`` (DESIGN.md, step 3).
"""

from __future__ import annotations

import builtins
import inspect
import keyword
import re
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import sympy as sp

from .display import MarkdownDisplay, markdown
from .errors import SymqError
from .formula import MAX_DEGREE, degree_estimate
from .precision import local_mp, working_dps

__all__ = ["CompiledFunction", "cache_info", "clear_cache", "compile"]

_BACKENDS = ("numpy", "mpmath", "numba")
_FORMS = ("as-is", "cancel", "horner")
_CACHE: dict[tuple, CompiledFunction] = {}
_LOCK = threading.Lock()
_STATS = {"hits": 0, "misses": 0}


_NAMESPACES: dict[tuple[str, ...], frozenset[str]] = {}
#: Names of generated code besides the backend's namespace: common-subexpression temporaries
#: (``x0``, ``x1``, ...) and the printed names of dummies.
_GENERATED = re.compile(r"x\d+|_.*|Dummy.*")


def _namespace(modules: Sequence[str]) -> frozenset[str]:
    """The global names generated code of ``modules`` may use (cached per backend)."""
    key = tuple(modules)
    names = _NAMESPACES.get(key)
    if names is None:
        probe = sp.lambdify([], sp.Integer(0), modules=list(modules))
        names = frozenset(probe.__globals__) | frozenset(dir(builtins)) | {"builtins", "range"}
        _NAMESPACES[key] = names
    return names


def _code_names(code: types.CodeType) -> set[str]:
    """Global and local names used by ``code`` and the code objects nested in it."""
    names = set(code.co_names) | set(code.co_varnames)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _safe_symbols(exprs: tuple[sp.Expr, ...], args: tuple[sp.Basic, ...],
                  modules: Sequence[str]) -> dict[sp.Symbol, sp.Dummy]:
    """Symbols to rename before code generation, so that no symbol shadows a name the code uses.

    Only plain symbols that are arguments or bound inside the expressions (sum indices) are
    considered; a symbol is renamed when its name is not a usable identifier or when any
    candidate's name is used by the code generated with every candidate renamed.
    """
    bound: set[sp.Symbol] = set()
    for e in exprs:
        for node in sp.preorder_traversal(e):
            bound |= {s for s in getattr(node, "bound_symbols", ()) if isinstance(s, sp.Symbol)}
    plain = {a for a in args if isinstance(a, sp.Symbol)} | bound
    reserved = _namespace(modules)
    candidates = {s for s in plain if not isinstance(s, sp.Dummy)
                  and (s.name in reserved or keyword.iskeyword(s.name)
                       or not s.name.isidentifier() or _GENERATED.fullmatch(s.name))}
    if not candidates:
        return {}
    renamed = {s: sp.Dummy(s.name, **s.assumptions0) for s in candidates}
    if any(keyword.iskeyword(s.name) or not s.name.isidentifier() or _GENERATED.fullmatch(s.name)
           for s in candidates):
        return renamed
    target = [e.xreplace(renamed) for e in exprs]
    probe = sp.lambdify([renamed.get(a, a) for a in args], target, modules=list(modules),
                        cse=True)
    used = _code_names(probe.__code__)
    return renamed if any(s.name in used for s in candidates) else {}


def _large_power(expr: sp.Expr) -> bool:
    """Whether ``expr`` holds a power of a sum of high degree (kept unevaluated by the formula
    parser): common-subexpression elimination would rebuild it, and sympy's sign queries on the
    rebuilt power expand it."""
    return any(isinstance(node, sp.Pow) and node.base.is_Add and node.exp.is_number
               and degree_estimate(node) > MAX_DEGREE for node in sp.preorder_traversal(expr))


def _as_symbol(arg: Any) -> sp.Basic:
    symbol = getattr(arg, "symbol", arg)  # accept a Parameter
    if not isinstance(symbol, (sp.Symbol, sp.Indexed, sp.IndexedBase, sp.Function,
                               sp.MatrixSymbol)):
        raise SymqError(f"compile: argument {arg!r} is not a sympy symbol or a Parameter")
    return symbol


class CompiledFunction(MarkdownDisplay):
    """A compiled expression (or tuple of expressions).

    Call it with one positional value per argument.  With the numpy backend the
    arguments broadcast against each other and every output has the broadcast shape
    (constant outputs included).  With the mpmath backend the call runs in the calling
    thread's private mpmath context (:mod:`symq.core.precision`; mpmath's global context is
    never touched), at ``dps`` decimal digits when given, otherwise at that context's current
    precision (53 bits unless the caller is inside :func:`~symq.core.precision.working_dps`).

    Attributes
    ----------
    exprs : tuple of sympy.Expr
        The compiled expressions.
    args : tuple of sympy.Symbol
        The arguments, in call order.
    backend : str
        ``"numpy"``, ``"mpmath"`` or ``"numba"``.
    source : str
        The generated Python source.
    function : numba dispatcher (numba backend only)
        The ``njit`` function of scalar float arguments; pass it to (or capture it in) other
        njit kernels to call the compiled formula from machine code.  Calling the
        :class:`CompiledFunction` itself broadcasts over numpy arrays like the numpy backend.
    """

    def __init__(self, exprs: tuple[sp.Expr, ...], args: tuple[sp.Basic, ...], backend: str,
                 single: bool) -> None:
        self.exprs = exprs
        self.args = args
        self.backend = backend
        self.single = single
        modules = {"numpy": ["numpy", "scipy"], "mpmath": ["mpmath"], "numba": ["math"]}[backend]
        renamed = _safe_symbols(exprs, args, modules)
        self._code_exprs = tuple(e.xreplace(renamed) for e in exprs) if renamed else exprs
        self._code_args = tuple(renamed.get(a, a) for a in args) if renamed else args
        code_exprs = self._code_exprs
        target = code_exprs[0] if single else (tuple(code_exprs) if backend == "numba"
                                               else list(code_exprs))
        self._cse = not any(_large_power(e) for e in exprs)
        self._func: Callable[..., Any] = sp.lambdify(self._code_args, target, modules=modules,
                                                     cse=self._cse)
        self.function: Any = None
        self._ufuncs: list[Any] | None = None
        if backend == "numba":
            import numba

            self.function = numba.njit(cache=False)(self._func)
        self._per_thread = threading.local()
        try:
            self.source = inspect.getsource(self._func)
        except (OSError, TypeError):  # pragma: no cover - lambdify always registers its source
            self.source = "<source unavailable>"

    def to_markdown(self) -> str:
        """The formulas in LaTeX, then the generated source (Jupyter's display)."""
        head = markdown(f"**CompiledFunction** ({self.backend} backend) of "
                        f"{', '.join(f'`{a}`' for a in self.args) or 'no arguments'}", [],
                        [("", e) for e in self.exprs])
        return f"{head}\n\n```python\n{self.source.rstrip()}\n```"

    def __call__(self, *values: Any, dps: int | None = None) -> Any:
        if len(values) != len(self.args):
            raise SymqError(
                f"compiled function of ({', '.join(map(str, self.args))}) called with "
                f"{len(values)} values"
            )
        if self.backend == "mpmath":
            if dps is None:
                return self._call_mpmath(values)
            with working_dps(dps):
                return self._call_mpmath(values)
        if self.backend == "numba":
            return self._call_numba(values)
        arrays = [np.asarray(v, dtype=float) if not isinstance(v, np.ndarray) else v
                  for v in values]
        out = self._func(*arrays)
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        if self.single:
            return self._shaped(out, shape)
        return tuple(self._shaped(o, shape) for o in out)

    def scalar(self, *values: float) -> Any:
        """Evaluate at one point given as Python floats, without broadcasting.

        The fast path for solvers that call a function with many scalar arguments at one
        point at a time (Newton steps, ODE right-hand sides): it skips the conversion of every
        argument to an array.  Outputs are returned as the generated code produces them.
        """
        if len(values) != len(self.args):
            raise SymqError(
                f"compiled function of ({', '.join(map(str, self.args))}) called with "
                f"{len(values)} values"
            )
        return self._func(*values)

    def _call_numba(self, values: Sequence[Any]) -> Any:
        """Broadcast the compiled scalar function over arrays (one numba ufunc per output)."""
        import numba

        if self._ufuncs is None:
            signature = numba.float64(*([numba.float64] * len(self.args)))
            singles = self._code_exprs if not self.single else self._code_exprs[:1]
            ufuncs = []
            for expr in singles:
                scalar = sp.lambdify(self._code_args, expr, modules=["math"], cse=self._cse)
                ufuncs.append(numba.vectorize([signature])(scalar))
            self._ufuncs = ufuncs
        arrays = [np.asarray(v, dtype=float) for v in values]
        outs = [u(*arrays) if arrays else u() for u in self._ufuncs]
        shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        outs = [self._shaped(o, shape) for o in outs]
        return outs[0] if self.single else tuple(outs)

    def _thread_function(self) -> Callable[..., Any]:
        """The generated code bound to the calling thread's private mpmath context."""
        func = getattr(self._per_thread, "func", None)
        if func is None:
            ctx = local_mp()
            namespace = {name: getattr(ctx, name, value)
                         for name, value in self._func.__globals__.items()
                         if not name.startswith("__")}
            namespace["__builtins__"] = self._func.__globals__.get("__builtins__", {})
            func = types.FunctionType(self._func.__code__, namespace, self._func.__name__,
                                      self._func.__defaults__, self._func.__closure__)
            self._per_thread.func = func
        return func

    def _call_mpmath(self, values: Sequence[Any]) -> Any:
        ctx = local_mp()
        # numbers of another context (mpmath's global one) would compute at that context's
        # precision: every argument becomes a number of the thread's context
        converted = [ctx.mpmathify(v) for v in values]
        out = self._thread_function()(*converted)
        return out if self.single else tuple(out)

    @staticmethod
    def _shaped(value: Any, shape: tuple[int, ...]) -> Any:
        array = np.asarray(value, dtype=complex if np.iscomplexobj(value) else float)
        if array.shape == shape:
            return array if shape else array[()]
        if not shape:
            return array[()]
        return np.broadcast_to(array, shape).copy()

    def __repr__(self) -> str:
        names = ", ".join(map(str, self.args))
        return f"<CompiledFunction ({names}) -> {len(self.exprs)} expr(s), backend={self.backend}>"


def _rewrite(expr: sp.Expr, args: tuple[sp.Basic, ...], form: str) -> sp.Expr:
    """Bring an expression into the requested form before code generation."""
    if form == "as-is":
        return expr
    cancelled = sp.cancel(expr)
    if form == "cancel":
        return cancelled
    numerator, denominator = sp.fraction(cancelled)
    variables = [a for a in args if isinstance(a, sp.Symbol)]
    try:
        return sp.horner(numerator, *variables) / sp.horner(denominator, *variables)
    except (sp.PolynomialError, sp.GeneratorsNeeded):  # not a polynomial ratio in the args
        return cancelled


def compile(exprs: sp.Expr | Iterable[sp.Expr], args: Iterable[Any], backend: str = "numpy",
            form: str = "as-is") -> CompiledFunction:
    """Compile sympy expressions into a vectorised numeric callable.

    Parameters
    ----------
    exprs : sympy.Expr or sequence of sympy.Expr
        One expression (the callable returns one value) or several (it returns a tuple).
    args : sequence of sympy.Symbol, sympy.IndexedBase or Parameter
        The arguments of the callable, in order.  An ``IndexedBase`` ``x`` is one array
        argument whose entries the expressions read as ``x[k]`` (with the numba backend, call
        ``.function`` with the arrays).
    backend : {"numpy", "mpmath", "numba"}
        numpy: vectorised float evaluation.  mpmath: arbitrary precision.  numba: machine code
        of real scalar arguments (``.function`` is the ``njit`` function for other kernels;
        calls broadcast over arrays through numba ufuncs); the expression must be real and
        use functions of Python's ``math`` module.
    form : {"as-is", "cancel", "horner"}
        Rewrite before code generation: ``"cancel"`` puts a rational function over a common
        denominator with common factors removed (no 0/0 at removable singularities);
        ``"horner"`` also writes numerator and denominator in Horner form (fewer operations,
        better conditioned near the roots).  Non-polynomial ratios fall back to ``"cancel"``.

    Returns
    -------
    CompiledFunction
        Cached per (expressions, arguments, backend, form).

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y")
    >>> f = compile(x**2 + sp.sin(y), (x, y))
    >>> float(f(2.0, 0.0))
    4.0
    """
    if backend not in _BACKENDS:
        raise SymqError(f"compile: backend={backend!r} must be one of {', '.join(_BACKENDS)}")
    if form not in _FORMS:
        raise SymqError(f"compile: form={form!r} must be one of {', '.join(_FORMS)}")
    if isinstance(exprs, str) or (not isinstance(exprs, sp.Basic)
                                  and any(isinstance(e, str) for e in exprs)):
        raise SymqError("compile: takes sympy expressions, not text; parse user text with "
                        "symq.core.formula.parse_formula (text is never evaluated)")
    single = isinstance(exprs, (sp.Basic, int, float))
    expr_tuple = (sp.sympify(exprs),) if single else tuple(sp.sympify(e) for e in exprs)
    if not expr_tuple:
        raise SymqError("compile: exprs must contain at least one expression")
    arg_tuple = tuple(_as_symbol(a) for a in args)
    free = set().union(*(e.free_symbols for e in expr_tuple))
    missing = free - set(arg_tuple)
    missing = {s for s in missing
               if not any(s in getattr(a, "free_symbols", set()) for a in arg_tuple)
               and not (isinstance(s, sp.Indexed) and s.base in arg_tuple)}
    if missing:
        raise SymqError(
            "compile: expression depends on symbols not given as arguments: "
            + ", ".join(sorted(map(str, missing)))
        )
    key = (expr_tuple, arg_tuple, backend, single, form)
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _STATS["hits"] += 1
            return cached
        _STATS["misses"] += 1
    rewritten = tuple(_rewrite(e, arg_tuple, form) for e in expr_tuple)
    compiled = CompiledFunction(rewritten, arg_tuple, backend, single)
    with _LOCK:
        _CACHE.setdefault(key, compiled)
    return _CACHE[key]


def clear_cache() -> None:
    """Forget every compiled function."""
    with _LOCK:
        _CACHE.clear()
        _STATS.update(hits=0, misses=0)


def cache_info() -> dict[str, int]:
    """Cache statistics: ``hits``, ``misses`` and ``size``."""
    with _LOCK:
        return {**_STATS, "size": len(_CACHE)}

