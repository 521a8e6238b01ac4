"""The PyTorch importer's tests need the ``torch`` extra (CI installs ``torch==2.13.0``); without
torch installed they are not collected, so the rest of the suite runs on a plain install."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("torch") is not None else ["test_*.py"]
