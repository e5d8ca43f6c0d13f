"""Registry of models and papers, so that the CLI finds them without being edited.

Domains register their models with :func:`register_model`; paper modules register their
claims and derivation with :func:`register_paper`.  :func:`load_plugins` imports every
module declared under the ``symq.plugins`` entry-point group (symq's own ``symq.papers``
among them; other installed packages can add theirs), which is how the CLI discovers
everything.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping

from .claims import Claim
from .derivation import Derivation
from .budget import time_budget
from .errors import InvalidParameter, SymqError, UnknownName
from .parameters import Parameter, validate_parameters
from .result import Result, check_values

__all__ = [
    "ModelSpec",
    "PaperSpec",
    "register_model",
    "register_paper",
    "get_model",
    "get_paper",
    "models",
    "papers",
    "load_plugins",
]

_MODELS: dict[str, "ModelSpec"] = {}
_PAPERS: dict[str, "PaperSpec"] = {}
_LOADED = False
#: modules imported by load_plugins when the package metadata is unavailable (running from a
#: source tree that was never installed).
_FALLBACK_PLUGINS = ("symq.papers",)


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
    solve : callable(**params) -> Result
        Solves the model for validated parameters.  A ``rng`` keyword is passed when the
        solver declares one (simulation-based models).
    scalar_outputs : callable(Result) -> dict, optional
        Flat numeric summary used by sweeps; defaults to the top-level float values.
    paper : str
        Key of the paper the model comes from.
    allow_infinite : tuple of str
        Result names that may hold infinite values; every other number a solve returns must be
        finite, and probabilities must lie in [0, 1] (:func:`symq.core.result.check_values`).
    """

    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    solve: Callable[..., Result]
    scalar_outputs: Callable[[Result], dict[str, float]] | None = None
    paper: str = ""
    allow_infinite: tuple[str, ...] = ()

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

    @property
    def accepts_rng(self) -> bool:
        """Whether the solver takes a ``rng`` keyword (simulation-based models)."""
        try:
            return "rng" in inspect.signature(self.solve).parameters
        except (TypeError, ValueError):
            return False

    def run(self, params: Mapping[str, Any], rng: Any = None, **options: Any) -> Result:
        """Validate the parameters and solve; ``rng`` is passed on when the solver takes it."""
        values = validate_parameters(self.parameters, params)
        if self.accepts_rng:
            options["rng"] = rng
        result = self.solve(**values, **options)
        check_values(self.name, result.values, self.allow_infinite)
        return result

    def summary_values(self, result: Result) -> dict[str, float]:
        if self.scalar_outputs is not None:
            return self.scalar_outputs(result)
        return {k: float(v) for k, v in result.values.items() if isinstance(v, (int, float))}


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
    """

    key: str
    title: str
    citation: str
    claims: Callable[..., list[Claim]]
    derivation: Callable[[], Derivation] | None = None
    models: tuple[str, ...] = field(default_factory=tuple)
    figures: Callable[[Any], list[Any]] | None = None
    derivation_budget: float = 300.0

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


def register_model(spec: ModelSpec) -> ModelSpec:
    """Register a model (idempotent for the same spec name)."""
    _MODELS[spec.name] = spec
    return spec


def register_paper(spec: PaperSpec) -> PaperSpec:
    """Register a paper (idempotent for the same key)."""
    _PAPERS[spec.key] = spec
    return spec


def load_plugins() -> None:
    """Import every module of the ``symq.plugins`` entry-point group (once)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    names = [ep.value for ep in entry_points(group="symq.plugins")]
    try:
        # symq's own papers are imported even from a source tree that was never installed
        for name in dict.fromkeys([*_FALLBACK_PLUGINS, *names]):
            importlib.import_module(name)
    except BaseException:
        _LOADED = False
        raise


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


def get_paper(key: str) -> PaperSpec:
    """The paper with key ``key``; :class:`UnknownName` lists the valid keys otherwise."""
    registered = papers()
    for k, spec in registered.items():
        if k.lower() == key.lower():
            return spec
    raise UnknownName("paper", key, list(registered))
