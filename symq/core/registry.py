"""Registry of models, model kinds and papers, so that the CLI finds them without being edited.

Models (``symq solve NAME``) and the kinds of model a claims file may declare
(``[models.X] kind = "population"``: a population process, a window profile, a dispatching
score, ...) are declared, once per domain, in that domain's ``registration`` module; papers
register their claims and derivation with :func:`register_paper`.

Domains
-------
A domain is a sub-package of :mod:`symq` with a module ``registration`` that declares two
tuples, and does nothing else::

    # symq/me/registration.py
    from .mg1 import MG1_SIM
    from .model import MODEL

    MODELS = (MODEL, MG1_SIM)     # ModelSpec objects: symq solve / symq sweep
    MODEL_KINDS = ()              # ModelKind objects: [models.X] kind = "..." in claims files

:func:`load_domains` finds these modules by listing the sub-packages of :mod:`symq` (no module
is imported to find them, and :mod:`symq.papers` is never one of them), imports each and
registers what it declares.  So ``symq solve``, ``symq sweep`` and a claims file that declares a
model of a registered kind import the domains, never the papers; :func:`papers` (``symq check
PAPER``, ``symq list``) imports :mod:`symq.papers`.  Registering the same spec object twice is a
no-op; a different object under a registered name replaces it.

A new model kind is one module and one registration line
---------------------------------------------------------
A kind is a :class:`ModelKind`: its name, a one-line summary, the keys a declaration may hold,
the outputs, an example, and ``declare(name, table, parameters, where) -> ModelSpec``, which
parses the declaration (formulas are text for :func:`symq.core.formula.parse_formula`, never
evaluated) and returns the model that claims then call as ``MODEL:KEY``.  For a generic
continuous-time Markov chain declared by guarded jumps::

    # symq/markov/declared.py (the one new module)
    from symq.core.registry import ModelKind, ModelSpec

    def declare_ctmc(name, table, parameters, where) -> ModelSpec:
        ...  # parse table["states"], table["jumps"]; build the solver; InvalidParameter names
             # f"{where}.{key}" for a bad entry

    CTMC = ModelKind(kind="ctmc", summary="a CTMC declared by guarded jumps: stationary law, "
                     "rewards", declare=declare_ctmc, keys={"states": "...", "jumps": "..."},
                     outputs=("pi", "reward"), example='''[models.q]\\nkind = "ctmc"\\n...''')

    # symq/markov/registration.py (the one registration line: CTMC in MODEL_KINDS)
    from .declared import CTMC

    MODELS = ()
    MODEL_KINDS = (CTMC,)

Nothing else changes: :func:`model_kinds` finds the kind, a claims file may declare
``kind = "ctmc"``, ``symq list`` and ``symq new-claims`` show it.  A new domain is the same: a
sub-package with a ``registration`` module.

Plugins
-------
:func:`load_plugins` loads the domains, symq's own papers (:mod:`symq.papers`) and every entry
point of the ``symq.plugins`` group.  An entry point may name a module (``mypkg.papers``), whose
import registers its papers and models, or an attribute (``mypkg.papers:register``): a callable
is called with no argument, and a :class:`PaperSpec`, a :class:`ModelSpec`, a
:class:`ModelKind` or a list of them (given directly or returned by the callable) is
registered.  A plugin that fails to load is skipped with one :class:`PluginWarning` naming the
plugin and the error, so that every other command keeps working; :func:`plugin_failures` lists
them.  Everything a plugin registers records where it came from (``source``), shown by
``symq list``.

A package declares its plugin in its ``pyproject.toml``::

    [project.entry-points."symq.plugins"]
    mypapers = "mypkg.papers"
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import time
import traceback
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from .budget import time_budget
from .display import MarkdownDisplay, cell, parameters_table
from .errors import InvalidParameter, SymqError, UnknownName
from .parameters import Parameter, validate_parameters
from .renamed import renamed_keys
from .result import Result, ResultBase, check_values
from .threads import limit_blas_threads

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .claims import Claim
    from .derivation import Derivation

__all__ = [
    "BUILT_IN",
    "ModelKind",
    "ModelSpec",
    "PaperSpec",
    "PluginFailure",
    "PluginWarning",
    "get_model",
    "get_model_kind",
    "get_paper",
    "load_domains",
    "load_plugins",
    "model_kinds",
    "models",
    "papers",
    "parameters_table",
    "plugin_failures",
    "register_model",
    "register_model_kind",
    "register_paper",
    "registration_modules",
]

#: ``source`` of everything symq itself registers.
BUILT_IN = "built in"

_MODELS: dict[str, ModelSpec] = {}
_KINDS: dict[str, ModelKind] = {}
_PAPERS: dict[str, PaperSpec] = {}
_LOADED = False  # everything: domains, symq's papers, plugins (load_plugins)
_DOMAINS_LOADED = False  # the registration modules of symq's domains (load_domains)
_ENTRY_POINTS_LOADED = False  # the entry points of the symq.plugins group
_FAILURES: list[PluginFailure] = []
#: source recorded for registrations made while a plugin loads (None: symq itself).
_LOADING_SOURCE: str | None = None
#: The package whose sub-packages are searched for registration modules.
_PACKAGE = __name__.split(".")[0]
#: symq's own plugin (its papers), imported even from a source tree that was never installed.
_OWN_PLUGIN = f"{_PACKAGE}.papers"
#: Name of a domain's registration module.
REGISTRATION = "registration"


class PluginWarning(UserWarning):
    """A plugin of the ``symq.plugins`` group could not be loaded (it is skipped)."""


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that failed to load: entry-point ``name``, its ``value`` and the ``error``."""

    name: str
    value: str
    error: str

    def __str__(self) -> str:
        return (f"plugin {self.name!r} ({self.value}) failed to load and is skipped: "
                f"{self.error}")




@dataclass(frozen=True)
class ModelSpec(MarkdownDisplay):
    """A solvable model exposed to ``symq solve`` and ``symq sweep``.

    Parameters
    ----------
    name : str
        Model name on the command line.
    summary : str
        One line describing the model.
    parameters : tuple of Parameter
        Declared parameters.
    solve : callable
        ``solve(**params) -> ResultBase``: solves the model for validated parameters and
        returns its typed result (a frozen :class:`~symq.core.result.ResultBase` dataclass);
        :meth:`run` wraps it in a :class:`~symq.core.result.Result` whose values are the
        typed result's fields (:meth:`~symq.core.result.ResultBase.outputs`).  A solver may
        also return a :class:`~symq.core.result.Result` it built itself (a plugin's).  A
        ``rng`` keyword is passed when the solver declares one (simulation-based models).
    scalar_outputs : callable(Result) -> dict, optional
        Flat numeric summary used by sweeps; defaults to the top-level float values.
    paper : str
        Key of the paper the model comes from.
    allow_infinite : tuple of str
        Result names that may hold infinite values; every other number a solve returns must be
        finite, and probabilities must lie in [0, 1] (:func:`symq.core.result.check_values`).
    derivation : callable() -> Derivation, optional
        What can be derived symbolically from the model (``symq derive`` of a claims file
        prints it for the models the file declares).
    source : str
        Where the model comes from: :data:`BUILT_IN`, a plugin, or a claims file.
    outputs : tuple of str
        The result keys a claim may refer to as ``MODEL:KEY`` (documentation; empty means
        "whatever the solve returns").
    renamed : mapping of str to str
        Parameters renamed in the public API, old name -> new name: ``symq solve``, ``symq
        sweep``, claims files and :meth:`run` accept the old name for one release, as the new
        one, with a :class:`~symq.core.renamed.RenamedKeywordWarning`
        (:func:`~symq.core.renamed.renamed_keys`).
    example : str
        The ``key=value ...`` of the example ``--help`` prints (default: every required
        parameter at its typical value), for a model whose valid calls need more than its
        required parameters.
    """

    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    solve: Callable[..., Result | ResultBase]
    scalar_outputs: Callable[[Result], dict[str, float]] | None = None
    paper: str = ""
    allow_infinite: tuple[str, ...] = ()
    derivation: Callable[[], Derivation] | None = None
    source: str = BUILT_IN
    outputs: tuple[str, ...] = ()
    renamed: Mapping[str, str] = field(default_factory=dict, hash=False)
    example: str = ""

    def current_names(self, values: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """``values`` under the current parameter names: an old name of :attr:`renamed` is
        moved to its new name with a :class:`~symq.core.renamed.RenamedKeywordWarning`
        (:func:`~symq.core.renamed.renamed_keys`); both names together are refused, naming the
        old one
        (``f"{where}.{old}"`` where ``where`` is given)."""
        return renamed_keys(values, self.renamed, f"model {self.name}", where)

    def parameter(self, name: str, value: Any = None) -> Parameter:
        """The declared parameter ``name``; ``value`` (as typed) is shown if there is none."""
        for p in self.parameters:
            if p.name == name:
                return p
        known = {p.name.lower(): p.name for p in self.parameters}
        hint = f"; did you mean {known[name.lower()]}?" if name.lower() in known else ""
        raise InvalidParameter(name, value, "one of the parameters "
                               + ", ".join(p.name for p in self.parameters),
                               f"model {self.name} has no parameter {name}{hint}")

    def parse(self, texts: Mapping[str, str]) -> dict[str, Any]:
        """Parse and validate ``key=value`` strings from the command line (an old name of
        :attr:`renamed` is read as the new one, with a warning)."""
        texts = self.current_names(texts)
        values = {name: self.parameter(name, text).parse(text) for name, text in texts.items()}
        return validate_parameters(self.parameters, values)

    def _takes(self, keyword: str) -> bool:
        try:
            return keyword in inspect.signature(self.solve).parameters
        except (TypeError, ValueError):
            return False

    @property
    def accepts_rng(self) -> bool:
        """Whether the solver takes a ``rng`` keyword (simulation-based models)."""
        return self._takes("rng")

    @property
    def accepts_progress(self) -> bool:
        """Whether the solver can show a progress bar (a ``progress`` keyword: long work such as
        value iteration or a simulation)."""
        return self._takes("progress")

    def run(self, params: Mapping[str, Any], rng: Any = None, progress: bool = False,
            **options: Any) -> Result:
        """Validate the parameters and solve; ``rng`` is passed on when the solver takes it,
        and ``progress=True`` (a tqdm bar on stderr) when it can show one.  The solve runs with
        the BLAS libraries limited to one thread (:func:`symq.core.threads.limit_blas_threads`;
        ``SYMQ_BLAS_THREADS`` sets another number or ``0``, no limit): small matrices are
        faster without threads."""
        values = validate_parameters(self.parameters, self.current_names(params))
        if self.accepts_rng:
            options["rng"] = rng
        if progress and self.accepts_progress:
            options["progress"] = True
        start = time.perf_counter()
        with limit_blas_threads():
            outcome = self.solve(**values, **options)
        seconds = time.perf_counter() - start
        result = (outcome if isinstance(outcome, Result)
                  else Result.of(self.name, values, outcome, seconds))
        check_values(self.name, result.values, self.allow_infinite)
        return result

    def summary_values(self, result: Result) -> dict[str, float]:
        """The numbers a sweep writes for one point: the model's scalar outputs, and beside
        each simulated one (a confidence interval in the result) its ``KEY_half_width``,
        ``KEY_level``, ``KEY_lo`` and ``KEY_hi``, so that no table, JSON or CSV drops the
        interval of an estimate."""
        from .simstats import ConfidenceInterval

        if self.scalar_outputs is not None:
            scalars = dict(self.scalar_outputs(result))
        else:
            scalars = {k: float(v) for k, v in result.values.items()
                       if isinstance(v, (int, float))}
        out: dict[str, float] = {}
        for key, value in scalars.items():
            out[key] = value
            interval = result.values.get(key)
            if isinstance(interval, ConfidenceInterval):
                for suffix, number in (("half_width", interval.half_width),
                                       ("level", interval.level), ("lo", interval.low),
                                       ("hi", interval.high)):
                    out.setdefault(f"{key}_{suffix}", float(number))
        for key, value in scalars.items():        # a model's own columns keep their place
            out[key] = value
        return out

    def to_markdown(self) -> str:
        """The model as Markdown: summary, paper, parameters table, results, command line."""
        lines = [f"**{self.name}**: {cell(self.summary, 400)}", ""]
        if self.paper:
            lines += [f"paper: {cell(self.paper, 400)}", ""]
        if self.parameters:
            lines += parameters_table(self.parameters)
        if self.outputs:
            lines += ["", "results: " + ", ".join(f"`{o}`" for o in self.outputs)]
        if self.renamed:
            lines += ["", "renamed: " + ", ".join(f"`{old}` is now `{new}`"
                                                 for old, new in self.renamed.items())]
        lines += ["", f"`symq solve {self.name} key=value ...`; source: {self.source}"]
        return "\n".join(lines)


@dataclass(frozen=True)
class PaperSpec(MarkdownDisplay):
    """A source paper: its claims and its derivation.

    Parameters
    ----------
    key : str
        Name used by ``symq check KEY`` and ``symq derive KEY`` (and the derivation file
        ``derivations/KEY.md``).
    title : str
        The paper's title.
    citation : str
        Authors, venue, year.
    claims : callable(quick=False) -> list of Claim
        Builds the claims (lazily: building may compile functions).  A builder that takes a
        keyword ``quick`` gives, for ``quick=True``, the same claims on a small sample (fewer
        points, shorter simulations) that the test suite checks; ``symq check`` runs the full
        form.
    derivation : callable() -> Derivation, optional
        Builds the derivation.
    models : tuple of str
        Names of the models the paper uses.
    figures : callable(directory) -> list of Path, optional
        Draws the paper's figures into ``directory`` (needs matplotlib) for
        ``symq check --report``.
    derivation_budget : float
        Seconds :meth:`build_derivation` may take.
    source : str
        Where the paper comes from: :data:`BUILT_IN`, ``plugin NAME (package)``, or
        ``file PATH`` for a claims file.
    """

    key: str
    title: str
    citation: str
    claims: Callable[..., list[Claim]]
    derivation: Callable[[], Derivation] | None = None
    models: tuple[str, ...] = field(default_factory=tuple)
    figures: Callable[[Any], list[Any]] | None = None
    derivation_budget: float = 300.0
    source: str = BUILT_IN

    def build_derivation(self) -> Derivation:
        """Run :attr:`derivation` within :attr:`derivation_budget` seconds.

        Raises
        ------
        SymqError
            If the paper has no derivation.
        DerivationTimeout
            If the derivation runs out of time.
        """
        if self.derivation is None:
            raise SymqError(f"paper {self.key} has no derivation")
        with time_budget(self.derivation_budget, f"the derivation of {self.key}"):
            return self.derivation()

    def build_claims(self, quick: bool = False) -> list[Claim]:
        """Build the paper's claims; ``quick=True`` asks for the quick form where the paper has
        one (same claims, smaller samples)."""
        takes_quick = "quick" in inspect.signature(self.claims).parameters
        claims = self.claims(quick=quick) if takes_quick else self.claims()
        for claim in claims:
            claim.paper = self.key
        return claims

    def to_markdown(self) -> str:
        """The paper as Markdown: title, citation, models, derivation, claims, source."""
        derive = f"`symq derive {self.key}`" if self.derivation else "none"
        lines = [f"**{self.key}**: {cell(self.title, 400)}", "", f"*{cell(self.citation, 400)}*",
                 "", "| | |", "|---|---|",
                 f"| models | {', '.join(f'`{m}`' for m in self.models) or 'none'} |",
                 f"| derivation | {derive} |",
                 f"| claims | `symq check {self.key}` |", f"| source | {cell(self.source)} |"]
        return "\n".join(lines)


@dataclass(frozen=True)
class ModelKind(MarkdownDisplay):
    """A kind of model that a claims file may declare (``[models.NAME] kind = "..."``).

    Parameters
    ----------
    kind : str
        The name written in the claims file (``population``, ``window``, ``dispatch-score``, ...).
    summary : str
        One line saying what the declared model computes.
    declare : callable(name, table, parameters, where) -> ModelSpec
        Builds the model from the declaration: ``name`` is the model's name in the file,
        ``table`` the declaration's keys (without ``kind`` and ``parameters``; values are the
        strings, numbers and lists the file wrote, or Python objects in a Python claims file),
        ``parameters`` the parameters the file declared (their values come from each claim's
        region), and ``where`` the key path as typed (``models.my-tcp``) for error messages.
        Formulas in the table are text, parsed with :func:`symq.core.formula.parse_formula`
        (never evaluated).  Raises :class:`~symq.core.errors.InvalidParameter` naming
        ``f"{where}.{key}"`` for a bad entry.
    keys : mapping of str to str
        The declaration keys the kind accepts, with their meaning (shown by
        ``symq new-claims`` and the documentation).
    outputs : tuple of str
        The result keys the declared model provides.
    example : str
        A TOML snippet declaring such a model.
    renamed : mapping of str to str
        Declaration keys renamed in the public API, old name -> new name: a claims file may
        write the old key for one release; it is read as the new one, with a
        :class:`~symq.core.renamed.RenamedKeywordWarning` (:func:`~symq.core.renamed.renamed_keys`).
    """

    kind: str
    summary: str
    declare: Callable[[str, Mapping[str, Any], tuple[Parameter, ...], str], ModelSpec]
    keys: Mapping[str, str] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    example: str = ""
    renamed: Mapping[str, str] = field(default_factory=dict)

    def current_keys(self, table: Mapping[str, Any], where: str = "") -> dict[str, Any]:
        """A declaration's ``table`` under the current key names (:attr:`renamed`; an old key
        is read as the new one with a warning, both together are refused naming
        ``f"{where}.{old}"``)."""
        return renamed_keys(table, self.renamed, f"model kind {self.kind}", where)

    def to_markdown(self) -> str:
        """The kind as Markdown: summary, the keys a declaration may hold, results."""
        lines = [f"**{self.kind}** (model kind of claims files): {cell(self.summary, 400)}", "",
                 "| key | meaning |", "|---|---|"]
        lines += [f"| `{k}` | {cell(v)} |" for k, v in self.keys.items()]
        if self.outputs:
            lines += ["", "results: " + ", ".join(f"`{o}`" for o in self.outputs)]
        return "\n".join(lines)


_Spec = TypeVar("_Spec", ModelSpec, PaperSpec)


def _stamp(spec: _Spec) -> _Spec:
    """``spec`` with the source of the plugin now loading (unchanged outside plugin loading)."""
    if _LOADING_SOURCE is None:
        return spec
    return dataclasses.replace(spec, source=_LOADING_SOURCE)


def register_model(spec: ModelSpec) -> ModelSpec:
    """Register a model under its name; the object registered is returned.

    Registering the object already registered under that name is a no-op (a domain's
    registration module and an import-time registration may both name it); another object
    replaces it.  A model registered while a plugin loads records the plugin as its source.
    """
    if _MODELS.get(spec.name) is spec:
        return spec
    spec = _stamp(spec)
    _MODELS[spec.name] = spec
    return spec


def register_model_kind(kind: ModelKind) -> ModelKind:
    """Register a kind of model that claims files may declare (``[models.X] kind = "..."``).

    As :func:`register_model`: the same object twice is a no-op, another object of the same
    ``kind`` replaces it.
    """
    _KINDS[kind.kind] = kind
    return kind


def register_paper(spec: PaperSpec) -> PaperSpec:
    """Register a paper under its key (the same object twice is a no-op; another object with
    that key replaces it)."""
    if _PAPERS.get(spec.key) is spec:
        return spec
    spec = _stamp(spec)
    _PAPERS[spec.key] = spec
    return spec


def _register_object(obj: object, origin: str) -> None:
    """Register what a plugin entry point gave: a module (already registered by its import),
    a spec, a list of specs, or a callable returning any of these."""
    if inspect.ismodule(obj) or obj is None:
        return
    if isinstance(obj, PaperSpec):
        register_paper(obj)
    elif isinstance(obj, ModelSpec):
        register_model(obj)
    elif isinstance(obj, ModelKind):
        register_model_kind(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _register_object(item, origin)
    elif callable(obj):
        _register_object(obj(), origin)
    else:
        raise TypeError(f"{origin} is a {type(obj).__name__}, not a module, a PaperSpec, a "
                        "ModelSpec, a list of them or a callable returning them")


# ----------------------------------------------------------------------------- domains

def registration_modules() -> tuple[str, ...]:
    """The registration modules of symq's domains, by name (``symq.me.registration``, ...).

    Found by listing the sub-packages of :mod:`symq` that hold a module ``registration``;
    nothing is imported to find them, and :mod:`symq.papers` is never among them.
    """
    package = importlib.import_module(_PACKAGE)
    found: list[str] = []
    for info in pkgutil.iter_modules(package.__path__):
        name = f"{_PACKAGE}.{info.name}"
        if not info.ispkg or name == _OWN_PLUGIN:
            continue
        folder = Path(getattr(info.module_finder, "path", "")) / info.name
        if any(m.name == REGISTRATION for m in pkgutil.iter_modules([str(folder)])):
            found.append(f"{name}.{REGISTRATION}")
    return tuple(sorted(found))


def _declared(module: ModuleType, attribute: str, kind: type) -> tuple[Any, ...]:
    """The tuple ``module.attribute`` of ``kind`` objects (a registration module's MODELS or
    MODEL_KINDS); a TypeError (a bug in symq) names what is wrong."""
    value = getattr(module, attribute, ())
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, kind) for v in value):
        raise TypeError(f"{module.__name__}.{attribute} must be a tuple of {kind.__name__}")
    return tuple(value)


def load_domains() -> None:
    """Register the models and model kinds that symq's domains declare (once).

    Imports each module of :func:`registration_modules` and registers its ``MODELS``
    (:class:`ModelSpec`) and ``MODEL_KINDS`` (:class:`ModelKind`) as built in.  Papers are not
    imported.  An error here is a bug in symq and is raised.
    """
    global _DOMAINS_LOADED
    if _DOMAINS_LOADED:
        return
    _DOMAINS_LOADED = True  # set first: a domain that asks the registry while it loads
    try:
        for name in registration_modules():
            module = importlib.import_module(name)
            for spec in _declared(module, "MODELS", ModelSpec):
                register_model(spec)
            for kind in _declared(module, "MODEL_KINDS", ModelKind):
                register_model_kind(kind)
    except BaseException:
        _DOMAINS_LOADED = False
        raise


# ----------------------------------------------------------------------------- plugins

def _plugin_source(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = f", package {dist.name}" if dist is not None and getattr(dist, "name", None) else ""
    return f"plugin {ep.name} ({ep.value}{package})"


def _load_entry_point(ep: EntryPoint) -> None:
    global _LOADING_SOURCE
    _LOADING_SOURCE = _plugin_source(ep)
    try:
        _register_object(ep.load(), f"entry point {ep.name} = {ep.value}")
    except Exception as exc:  # noqa: BLE001 - a broken plugin must not break symq: skip, say once
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        failure = PluginFailure(ep.name, ep.value, " ".join(last.split()))
        _FAILURES.append(failure)
        warnings.warn(str(failure), PluginWarning, stacklevel=3)
    finally:
        _LOADING_SOURCE = None


def _load_entry_points() -> None:
    """The domains, then every entry point of the ``symq.plugins`` group but symq's own papers
    (once); a plugin that fails to load issues one :class:`PluginWarning` and is skipped."""
    global _ENTRY_POINTS_LOADED
    load_domains()
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in entry_points(group="symq.plugins"):
        if ep.value.replace(" ", "") != _OWN_PLUGIN:
            _load_entry_point(ep)


def _load_own_papers() -> None:
    """Import :mod:`symq.papers` (its modules register the built-in papers).  A paper a plugin
    registered under the key of a built-in one keeps its place, as when the plugins load
    after the papers."""
    from_plugins = {k: v for k, v in _PAPERS.items() if v.source != BUILT_IN}
    importlib.import_module(_OWN_PLUGIN)  # symq's own: an error here is a bug, raised
    _PAPERS.update(from_plugins)


def load_plugins() -> None:
    """Load the domains, symq's own papers and every entry point of the ``symq.plugins``
    group (once).

    A plugin that fails to load issues one :class:`PluginWarning` and is skipped.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        load_domains()
        _load_own_papers()
    except BaseException:
        _LOADED = False
        raise
    _load_entry_points()


def plugin_failures() -> list[PluginFailure]:
    """The plugins that failed to load (after loading the plugins)."""
    _load_entry_points()
    return list(_FAILURES)


# ----------------------------------------------------------------------------- lookups

def models() -> dict[str, ModelSpec]:
    """Registered models by name (the domains' and the plugins'; the papers are not
    imported)."""
    _load_entry_points()
    return dict(sorted(_MODELS.items()))


def papers() -> dict[str, PaperSpec]:
    """Registered papers by key (after loading the domains, symq's papers and the plugins)."""
    load_plugins()
    return dict(sorted(_PAPERS.items()))


def get_model(name: str) -> ModelSpec:
    """The model called ``name`` (any case); :class:`UnknownName` lists the valid names
    otherwise."""
    registered = models()
    for key, spec in registered.items():
        if key.lower() == name.lower():
            return spec
    raise UnknownName("model", name, list(registered))


def model_kinds() -> dict[str, ModelKind]:
    """Kinds of model a claims file may declare, by name (the domains' and the plugins'; the
    papers are not imported)."""
    _load_entry_points()
    return dict(sorted(_KINDS.items()))


def get_model_kind(kind: str) -> ModelKind:
    """The model kind ``kind``; :class:`UnknownName` lists the valid kinds otherwise."""
    registered = model_kinds()
    if kind in registered:
        return registered[kind]
    raise UnknownName("model kind", kind, list(registered))


def get_paper(key: str) -> PaperSpec:
    """The paper with key ``key`` (any case); :class:`UnknownName` lists the valid keys
    otherwise."""
    registered = papers()
    for k, spec in registered.items():
        if k.lower() == key.lower():
            return spec
    raise UnknownName("paper", key, list(registered))
