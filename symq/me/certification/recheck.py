"""Re-checking a :class:`~symq.me.certification.Certificate` without searching again."""

from __future__ import annotations

from typing import Any

from .verdict import Nonnegativity

__all__ = ["recheck"]


def recheck(cert: Any) -> bool:
    """Re-check ``cert`` against ``cert.lst``."""
    if cert.lst is None or cert.status is Nonnegativity.INCONCLUSIVE:
        return False
    if cert.proof is not None:
        return bool(cert.proof.verify(cert.lst))
    return False
