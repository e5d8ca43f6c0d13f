"""Registry of models, model kinds and papers, so that the CLI finds them without being edited.

Domains register their models with :func:`register_model` and the kinds of model a claims file
may declare (a population process, a window profile, a dispatching score, ...) with
:func:`register_model_kind`; paper modules register their claims and derivation with
:func:`register_paper`.

Plugins
-------
:func:`load_plugins` loads every entry point of the ``symq.plugins`` group (symq's own
``symq.papers`` among them).  An entry point may name a module (``mypkg.papers``), whose import
registers its papers and models, or an attribute (``mypkg.papers:register``): a callable is
called with no argument, and a :class:`PaperSpec`, a :class:`ModelSpec` or a list of them (given
directly or returned by the callable) is registered.  A plugin that fails to load is skipped with
one :class:`PluginWarning` naming the plugin and the error, so that every other command keeps
working; :func:`plugin_failures` lists them.  Everything a plugin registers records where it
came from (``source``), shown by ``symq list``.

A package declares its plugin in its ``pyproject.toml``::

    [project.entry-points."symq.plugins"]
    mypapers = "mypkg.papers"
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import traceback
import warnings
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Mapping

from .claims import Claim
from .derivation import Derivation
from .budget import time_budget
from .errors import InvalidParameter, SymqError, UnknownName
from .parameters import Parameter, validate_parameters
from .result import Result, check_values

__all__ = [
    "ModelSpec",
    "ModelKind",
    "PaperSpec",
    "PluginWarning",
    "PluginFailure",
    "BUILT_IN",
    "register_model",
    "register_model_kind",
    "register_paper",
    "get_model",
    "get_model_kind",
    "get_paper",
    "models",
    "model_kinds",
    "papers",
    "load_plugins",
    "plugin_failures",
]

#: ``source`` of everything symq itself registers.
BUILT_IN = "built in"

_MODELS: dict[str, "ModelSpec"] = {}
_KINDS: dict[str, "ModelKind"] = {}
_PAPERS: dict[str, "PaperSpec"] = {}
_LOADED = False
_FAILURES: list["PluginFailure"] = []
#: source recorded for registrations made while a plugin loads (None: symq itself).
_LOADING_SOURCE: str | None = None
#: symq's own plugin, imported even from a source tree that was never installed.
_OWN_PLUGIN = "symq.papers"


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
class ModelSpec:
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
        ``solve(**params) -> Result``: solves the model for validated parameters.  A ``rng`` keyword is passed when the
        solver declares one (simulation-based models).
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
    """

    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    solve: Callable[..., Result]
    scalar_outputs: Callable[[Result], dict[str, float]] | None = None
    paper: str = ""
    allow_infinite: tuple[str, ...] = ()
    derivation: Callable[[], Derivation] | None = None
    source: str = BUILT_IN
    outputs: tuple[str, ...] = ()

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
        """Parse and validate ``key=value`` strings from the command line."""
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
        and ``progress=True`` (a tqdm bar on stderr) when it can show one."""
        values = validate_parameters(self.parameters, params)
        if self.accepts_rng:
            options["rng"] = rng
        if progress and self.accepts_progress:
            options["progress"] = True
        result = self.solve(**values, **options)
        check_values(self.name, result.values, self.allow_infinite)
        return result

    def summary_values(self, result: Result) -> dict[str, float]:
        if self.scalar_outputs is not None:
            return self.scalar_outputs(result)
        return {k: float(v) for k, v in result.values.items() if isinstance(v, (int, float))}

    def _repr_markdown_(self) -> str:  # Jupyter: symq.core.display.spec_markdown
        from .display import spec_markdown

        return spec_markdown(self)


@dataclass(frozen=True)
class PaperSpec:
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

    def _repr_markdown_(self) -> str:  # Jupyter: symq.core.display.spec_markdown
        from .display import spec_markdown

        return spec_markdown(self)


@dataclass(frozen=True)
class ModelKind:
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
    """

    kind: str
    summary: str
    declare: Callable[[str, Mapping[str, Any], tuple[Parameter, ...], str], "ModelSpec"]
    keys: Mapping[str, str] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    example: str = ""

    def _repr_markdown_(self) -> str:  # Jupyter: symq.core.display.spec_markdown
        from .display import spec_markdown

        return spec_markdown(self)


def _stamp(spec: Any) -> Any:
    """``spec`` with the source of the plugin now loading (unchanged outside plugin loading)."""
    if _LOADING_SOURCE is None:
        return spec
    return dataclasses.replace(spec, source=_LOADING_SOURCE)


def register_model(spec: ModelSpec) -> ModelSpec:
    """Register a model (idempotent for the same spec name)."""
    spec = _stamp(spec)
    _MODELS[spec.name] = spec
    return spec


def register_model_kind(kind: ModelKind) -> ModelKind:
    """Register a kind of model that claims files may declare."""
    _KINDS[kind.kind] = kind
    return kind


def register_paper(spec: PaperSpec) -> PaperSpec:
    """Register a paper (idempotent for the same key)."""
    spec = _stamp(spec)
    _PAPERS[spec.key] = spec
    return spec


def _register_object(obj: Any, origin: str) -> None:
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


def _plugin_source(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    package = f", package {dist.name}" if dist is not None and getattr(dist, "name", None) else ""
    return f"plugin {ep.name} ({ep.value}{package})"


def _load_entry_point(ep: EntryPoint) -> None:
    global _LOADING_SOURCE
    _LOADING_SOURCE = _plugin_source(ep)
    try:
        _register_object(ep.load(), f"entry point {ep.name} = {ep.value}")
    except Exception as exc:  # a broken plugin must not break symq: skip it, say so once
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        failure = PluginFailure(ep.name, ep.value, " ".join(last.split()))
        _FAILURES.append(failure)
        warnings.warn(str(failure), PluginWarning, stacklevel=3)
    finally:
        _LOADING_SOURCE = None


def load_plugins() -> None:
    """Load symq's own papers and every entry point of the ``symq.plugins`` group (once).

    A plugin that fails to load issues one :class:`PluginWarning` and is skipped.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        importlib.import_module(_OWN_PLUGIN)  # symq's own: an error here is a bug, raised
    except BaseException:
        _LOADED = False
        raise
    for ep in entry_points(group="symq.plugins"):
        if ep.value.replace(" ", "") != _OWN_PLUGIN:
            _load_entry_point(ep)


def plugin_failures() -> list[PluginFailure]:
    """The plugins that failed to load (after :func:`load_plugins`)."""
    load_plugins()
    return list(_FAILURES)


def models() -> dict[str, ModelSpec]:
    """Registered models by name (after loading plugins)."""
    load_plugins()
    return dict(sorted(_MODELS.items()))


def papers() -> dict[str, PaperSpec]:
    """Registered papers by key (after loading plugins)."""
    load_plugins()
    return dict(sorted(_PAPERS.items()))


def get_model(name: str) -> ModelSpec:
    """The model called ``name``; :class:`UnknownName` lists the valid names otherwise."""
    registered = models()
    for key, spec in registered.items():
        if key.lower() == name.lower():
            return spec
    raise UnknownName("model", name, list(registered))


def model_kinds() -> dict[str, ModelKind]:
    """Kinds of model a claims file may declare, by name (after loading plugins)."""
    load_plugins()
    return dict(sorted(_KINDS.items()))


def get_model_kind(kind: str) -> ModelKind:
    """The model kind ``kind``; :class:`UnknownName` lists the valid kinds otherwise."""
    registered = model_kinds()
    if kind in registered:
        return registered[kind]
    raise UnknownName("model kind", kind, list(registered))


def get_paper(key: str) -> PaperSpec:
    """The paper with key ``key``; :class:`UnknownName` lists the valid keys otherwise."""
    registered = papers()
    for k, spec in registered.items():
        if k.lower() == key.lower():
            return spec
    raise UnknownName("paper", key, list(registered))
