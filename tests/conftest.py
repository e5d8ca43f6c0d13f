"""Suite-wide settings.

Each pytest-xdist worker runs numba's parallel kernels on one thread: the workers already keep
every core busy, and two workers each starting threads on all cores slowed the value-iteration
tests up to fivefold (oversubscription).  Results do not depend on the thread count (the
parallel and serial passes are bit-identical, ``tests/dispatch/test_simplex.py``).
"""

import os

if os.environ.get("PYTEST_XDIST_WORKER") and "NUMBA_NUM_THREADS" not in os.environ:
    os.environ["NUMBA_NUM_THREADS"] = "1"
