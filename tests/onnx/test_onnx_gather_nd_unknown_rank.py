"""``GatherND`` whose output rank is only known at run time (issue 14).

With the index tuples' length ``k`` (the indices' last dimension) symbolic and more than one length
in ``[0, rank(data) - batch_dims]`` possible, or a rank unknown, the output's rank
``rank(indices) - 1 + rank(data) - batch_dims - k`` is not a constant: symshape gives a tensor of
unknown rank with the data's dtype (it said ``unsupported-op`` before), with onnxruntime's checks
as guards where both ranks are known (``k <= rank(data) - batch_dims``, the batch axes equal). The
ops after it still infer: checked against onnxruntime at several sizes (1 among them) on outputs
of known rank computed from the GatherND's (a full reduction, a flattening, the rank).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, zero_feeds

import symshape as ss
import symshape.onnx as sso

Dims = Sequence[int | str] | None

ROWS = [
    # data, indices, batch_dims, dtype, sizes (k past rank(data) - b: onnxruntime refuses); the
    # batch_dims row runs in onnx's reference evaluator: onnxruntime reads unequal batch axes
    # (n != m) where the spec and the reference refuse them
    (["a", "b"], ["c", "k"], 0, "float32",
     [dict(a=3, b=4, c=2, k=1), dict(a=3, b=4, c=2, k=2), dict(a=1, b=1, c=1, k=1),
      dict(a=2, b=2, c=3, k=0), dict(a=3, b=4, c=2, k=3)]),
    (["a", "b", "e"], ["c", "d", "k"], 0, "int64",
     [dict(a=2, b=3, e=4, c=2, d=1, k=2), dict(a=1, b=1, e=1, c=1, d=1, k=3),
      dict(a=2, b=3, e=4, c=2, d=2, k=4)]),
    (["n", "a", "b"], ["m", "c", "k"], 1, "float32",
     [dict(n=2, m=2, a=3, b=4, c=2, k=1), dict(n=1, m=1, a=1, b=1, c=1, k=2),
      dict(n=2, m=2, a=3, b=4, c=2, k=3), dict(n=2, m=3, a=3, b=4, c=2, k=1)]),
]  # fmt: skip


def _model(data: Dims, ind: Dims, b: int, dtype: str) -> tuple[list[In], onnx.ModelProto]:
    ins = [In("data", dtype, data), In("indices", "int64", ind)]
    nodes = [
        node("GatherND", ["data", "indices"], ["y"], batch_dims=b),
        node("ReduceSum", ["y"], ["total"], keepdims=0),
        node("Reshape", ["y", "minus_one"], ["flat"]),
        node("Shape", ["y"], ["shape"]),
        node("Size", ["shape"], ["rank"]),
    ]
    inits = {"minus_one": np.array([-1], dtype=np.int64)}
    return ins, make_model(nodes, ins, ["total", "flat", "rank"], opset=18, inits=inits)


@pytest.mark.parametrize(("data", "ind", "b", "dtype", "sizes"), ROWS, ids=[str(r[:3]) for r in ROWS])
def test_gather_nd_of_run_time_rank_is_unknown_rank_and_agrees_with_onnxruntime(
    data: Dims, ind: Dims, b: int, dtype: str, sizes: list[dict[str, int]]
) -> None:
    ins, model = _model(data, ind, b, dtype)
    res = sso.infer(model)
    assert not res.errors and not res.unsupported, res.report()
    y = res.type_of("y")
    assert isinstance(y, ss.TensorType) and y.ndim is None and y.dtype == dtype, y
    assert str(res.type_of("total")) == f"Tensor[(), {dtype}]"
    names = sorted({d for s in (data, ind) for d in s or () if isinstance(d, str)})
    dims = {n: ss.dim(n, min=0 if n == "k" else 1) for n in names}  # k = 0: whole slices
    runner = "reference" if b else "onnxruntime"
    assert disagreements(model, dims, sizes, zero_feeds(ins), runner) == []


@pytest.mark.parametrize(("data", "ind"), [(None, ["c", "k"]), (["a", "b"], None), (None, None)])
def test_gather_nd_of_unknown_ranks_is_unknown_rank_of_the_data_dtype(data: Dims, ind: Dims) -> None:
    _, model = _model(data, ind, 0, "float32")
    res = sso.infer(model)
    assert res.status == "ok", res.report()
    y = res.type_of("y")
    assert isinstance(y, ss.TensorType) and y.ndim is None and y.dtype == "float32", y
    assert str(res.type_of("total")) == "Tensor[(), float32]"
