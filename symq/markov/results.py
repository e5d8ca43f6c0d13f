"""What the results of :mod:`symq.markov` share: the declared outputs, read by name.

Every solve of a declared chain (stationary, exact, symbolic, transient, QBD, sensitivity)
reports each declared output under its name in a ``values`` mapping; :class:`OutputsByName`
gives ``result["EN"]`` and the values a claim names as ``MODEL:KEY``
(:meth:`~symq.core.result.ResultBase.outputs`): the declared outputs, then the fields the result
class lists in ``reported``.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["OutputsByName"]


class OutputsByName:
    """Mixin of a chain's typed result whose dataclass has a ``values`` mapping.

    ``reported`` names the fields shown after the declared outputs as a model's values (a field
    holding ``None``, not computed for this chain, is left out).
    """

    __slots__ = ()

    reported: ClassVar[tuple[str, ...]] = ()

    def outputs(self) -> dict[str, Any]:
        """Each declared output by name, then the fields of :attr:`reported`."""
        found = {**self.values, **{k: getattr(self, k) for k in self.reported}}
        return {k: v for k, v in found.items() if v is not None}

    def __getitem__(self, key: str) -> Any:
        """The value of the declared output ``key``."""
        return self.values[key]
