"""Issue 29, second round: messages name what the user typed; no warnings; tiny loads.

* Values typed as text are read as they read: ``0_5`` is not 5 and ``\u0662`` (Arabic-Indic
  two) is not 2; an empty entry of a vector (``C=4,,2``) is an error, not dropped.
* A refusal names the parameters the user typed, and a default as a default.
* Library code prints no warnings (checked with ``-W error`` or an exactly-one-line stderr).
* A tiny positive load is solved, compared with its rho -> 0 limit computed independently.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from symq.core.errors import InvalidParameter
from symq.core.parameters import IntegerAtLeast, PositiveReal, PositiveVector, RationalVector


def _cli(*args: str, timeout: float = 20) -> subprocess.CompletedProcess:
    """``symq solve ARGS`` in a subprocess with RuntimeWarnings made fatal."""
    env = dict(os.environ, PYTHONWARNINGS="error::RuntimeWarning")
    return subprocess.run([sys.executable, "-m", "symq.cli", "solve", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


# --------------------------------------------------------------------- number text
@pytest.mark.parametrize("domain, name, text, needle", [
    (PositiveReal(), "scv", "0_5", "underscores"),
    (PositiveReal(), "rho", "1_000", "underscores"),
    (IntegerAtLeast(1), "d", "\u0662", "ASCII digits"),          # Arabic-Indic two
    (IntegerAtLeast(1), "m", "1_0", "underscores"),
    (PositiveReal(), "lam", "0.\u0665", "ASCII digits"),         # 0.<Arabic-Indic five>
    (PositiveVector(), "C", "4,\uff12,1", "ASCII digits"),       # fullwidth two
    (RationalVector(), "moments", "1,3_0", "underscores"),
])
def test_numbers_are_read_as_they_read(domain, name, text, needle):
    # Python's float/int would accept each of these (as 5, 1000, 2, 10, 0.5, 2, 30)
    with pytest.raises(InvalidParameter) as info:
        domain.parse(name, text)
    message = str(info.value)
    assert f"{name}={text!r}" in message and needle in message


@pytest.mark.parametrize("domain, text, index", [
    (PositiveVector(), "4,,2", 1), (PositiveVector(), "4,2,", 2), (PositiveVector(), ",4", 0),
    (RationalVector(), "1,,3", 1),
])
def test_an_empty_vector_entry_is_an_error(domain, text, index):
    with pytest.raises(InvalidParameter) as info:
        domain.parse("C", text)
    assert f"C={text!r}" in str(info.value) and f"entry {index} is empty" in str(info.value)


def test_plain_numbers_still_parse():
    assert PositiveReal().parse("rho", " 0.5 ") == 0.5
    assert PositiveReal().parse("rho", "1e-3") == 1e-3
    assert IntegerAtLeast(1).parse("d", "12") == 12
    np.testing.assert_array_equal(PositiveVector().parse("C", "4, 2 ,1"), [4.0, 2.0, 1.0])
    assert RationalVector().parse("moments", "1, 3/2") == (1, pytest.approx(1.5))


def test_cli_refuses_an_underscore_with_one_line():
    out = _cli("supermarket", "d=2", "lam=0_5")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "lam='0_5'" in out.stderr, out.stderr
