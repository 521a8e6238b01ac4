"""Values pickled in one process are equal, hash equal and found in dicts in another whose string
hashes differ (PYTHONHASHSEED): no stored hash survives pickling.

Dimensions, atoms and conditions cache their hash; a cached hash of a key holding strings (symbol
names) is only valid in the process that computed it. Each value here is pickled by a child
process with another hash seed and looked up in a dict built in this one.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

import symshape as ss
from symshape.encoding.conds import any_of, eq, ge
from symshape.encoding.dims import dmax

_CHILD = (
    "import pickle, sys; sys.path.insert(0, sys.argv[1]); "
    "from test_pickle_hash_seeds import _here; sys.stdout.buffer.write(pickle.dumps(_here()))"
)


def _here() -> list[object]:
    n, s = ss.dims("n s")
    k = ss.dim("k", min=2, max=9)
    return [
        n, 2 * n + s, (2 * n + s) // 3, dmax(n, s) % 4, k, next(iter((n * s).atoms())),
        ge(n, s + 1), any_of(eq(n, 1), eq(s, n)),
        ss.Tensor((n, 2 * s), "float32"),
        ss.TupleType([ss.Tensor((k,), "int64"), ss.Tensor((n,), "float32")]),
    ]  # fmt: skip


@pytest.mark.parametrize("seed", ["1", "12345"])
def test_unpickled_values_hash_as_here(seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", _CHILD, here], env=env, capture_output=True, check=True)
    theirs = pickle.loads(out.stdout)
    ours = _here()
    assert len(theirs) == len(ours)
    for a, b in zip(theirs, ours):
        assert a == b, (a, b)
        assert hash(a) == hash(b), a
        assert {b: "found"}.get(a) == "found", a
        assert str(a) == str(b)
