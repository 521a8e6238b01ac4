"""``GatherND`` whose index tuples' length ``k`` (the indices' last dimension) is symbolic.

The output has rank ``rank(indices) - 1 + rank(data) - batch_dims - k``: symshape needs ``k``.
When one length in ``[0, rank(data) - batch_dims]`` lies in ``k``'s range (data of rank
``batch_dims + 1`` and ``k >= 1``, or a symbol declared with a small range) it is that length, with
a guard; symshape said ``unsupported-op`` before. Otherwise the output's rank is only known at
run time (``test_onnx_gather_nd_unknown_rank``). Checked against onnxruntime at each row's sizes,
where it runs and where it refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, zero_feeds

import symshape as ss

Dims = Sequence[int | str]


ROWS = [
    # (data, indices) shapes, batch_dims, k's range, sizes
    ((["a"], ["c", "k"]), 0, (1, None),
     [dict(a=3, c=2, k=1), dict(a=3, c=2, k=2), dict(a=1, c=1, k=1), dict(a=5, c=4, k=3)]),
    ((["a"], ["c", "d", "k"]), 0, (1, None), [dict(a=3, c=2, d=3, k=1), dict(a=3, c=2, d=3, k=2)]),
    ((["n", "a"], ["n", "c", "k"]), 1, (1, None),
     [dict(n=2, a=3, c=4, k=1), dict(n=2, a=3, c=4, k=2), dict(n=1, a=1, c=1, k=1)]),
    ((["a", "b", 3], ["c", "k"]), 0, (2, 2), [dict(a=3, b=4, c=2, k=2), dict(a=1, b=1, c=3, k=2)]),
    ((["a", "b", 3], ["c", "k"]), 0, (3, 7), [dict(a=3, b=4, c=2, k=3), dict(a=1, b=2, c=3, k=4)]),
    ((["a", "b"], ["c", "k"]), 0, (0, 0), [dict(a=3, b=4, c=2, k=0), dict(a=1, b=1, c=1, k=0)]),
]  # fmt: skip


@pytest.mark.parametrize(("shapes", "b", "k_range", "sizes"), ROWS, ids=[str(r[:3]) for r in ROWS])
def test_gather_nd_symbolic_index_length_fixed_by_the_ranks(
    shapes: tuple[Dims, Dims], b: int, k_range: tuple[int, int | None], sizes: list[dict[str, int]]
) -> None:
    ins = [In("data", "float32", shapes[0]), In("indices", "int64", shapes[1])]
    model = make_model([node("GatherND", ["data", "indices"], ["y"], batch_dims=b)], ins, ["y"], opset=18)
    names = sorted({d for s in shapes for d in s if isinstance(d, str)})
    dims = {n: ss.dim(n) for n in names}
    dims["k"] = ss.dim("k", min=k_range[0], max=k_range[1])
    assert disagreements(model, dims, [s for s in sizes if k_range[0] <= s["k"]], zero_feeds(ins)) == []
