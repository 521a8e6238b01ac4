"""The validity grids (issue 19). The models come from ``tests/torch_zoo``, which the tests import
as ``torch_zoo`` (pytest puts ``tests/`` on the path); ``python -m tests.validity.grid`` needs the
same, so this package adds it."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
