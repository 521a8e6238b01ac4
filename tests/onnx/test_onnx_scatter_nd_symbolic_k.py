"""``ScatterND`` whose index tuples' length ``k`` (the indices' last dimension) is symbolic.

symshape gave the data's type and checked nothing when ``k`` was not a constant, so it accepted
sizes onnxruntime refuses ("updates tensor should have shape equal to indices.shape[:-1] +
data.shape[indices.shape[-1]:]", "last dimension of indices must not be larger than rank of input
tensor"). The updates' rank fixes ``k`` (``rank(indices) - 1 + rank(data) - rank(updates)``): now
``k`` must equal it (a guard) and the updates must have the shape of what the indices read.
Checked against onnxruntime at each row's sizes, where it runs and where it refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, zero_feeds

import symshape as ss
import symshape.onnx as sso

Dims = Sequence[int | str]


ROWS = [
    # (data, indices, updates) shapes; sizes (k: the index length)
    ((["a", "b"], ["c", "k"], ["c"]),
     [dict(a=3, b=4, c=2, k=2), dict(a=3, b=4, c=2, k=1), dict(a=1, b=1, c=1, k=2), dict(a=3, b=4, c=2, k=3),
      dict(a=5, b=2, c=7, k=2)]),
    ((["a", "b"], ["c", "k"], ["c", "b"]),
     [dict(a=3, b=4, c=2, k=1), dict(a=3, b=4, c=2, k=2), dict(a=3, b=1, c=2, k=2),
      dict(a=1, b=1, c=1, k=1)]),
    ((["a", "b"], ["c", "k"], ["c", "u"]),
     [dict(a=3, b=4, c=2, k=1, u=4), dict(a=3, b=4, c=2, k=1, u=3), dict(a=3, b=4, c=2, k=2, u=4),
      dict(a=3, b=1, c=2, k=2, u=1), dict(a=2, b=1, c=2, k=1, u=1)]),
    ((["a", "b", 3], ["k"], [3]),
     [dict(a=3, b=4, k=2), dict(a=3, b=4, k=1), dict(a=3, b=4, k=3), dict(a=1, b=1, k=2)]),
    ((["a", "b"], ["k"], []), [dict(a=3, b=4, k=2), dict(a=3, b=4, k=1), dict(a=3, b=4, k=3)]),
    ((["a", "b"], ["c", "d", "k"], ["c", "d", "b"]),
     [dict(a=3, b=4, c=2, d=3, k=1), dict(a=3, b=4, c=2, d=3, k=2), dict(a=1, b=1, c=1, d=1, k=1)]),
]  # fmt: skip


@pytest.mark.parametrize(("shapes", "sizes"), ROWS, ids=[str(r[0]) for r in ROWS])
def test_scatter_nd_symbolic_index_length(
    shapes: tuple[Dims, Dims, Dims], sizes: list[dict[str, int]]
) -> None:
    ins = [
        In("data", "float32", shapes[0]),
        In("indices", "int64", shapes[1]),
        In("updates", "float32", shapes[2]),
    ]
    model = make_model([node("ScatterND", ["data", "indices", "updates"], ["y"])], ins, ["y"], opset=18)
    names = sorted({d for s in shapes for d in s if isinstance(d, str)})
    assert disagreements(model, names, sizes, zero_feeds(ins)) == []


def test_scatter_nd_empty_index_tuples_allowed_by_a_symbol_from_zero() -> None:
    """``k == 0`` (each tuple selects the whole data) once the symbol may be 0; a guard ``k == 0``."""
    ins = [In("data", "float32", ["a", "b"]), In("indices", "int64", ["c", "k"]),
           In("updates", "float32", ["c", "a", "b"])]  # fmt: skip
    model = make_model([node("ScatterND", ["data", "indices", "updates"], ["y"])], ins, ["y"], opset=18)
    dims = {"a": ss.dim("a"), "b": ss.dim("b"), "c": ss.dim("c"), "k": ss.dim("k", min=0)}
    sizes = [dict(a=3, b=4, c=2, k=0), dict(a=3, b=4, c=2, k=1), dict(a=1, b=1, c=1, k=0)]
    assert disagreements(model, dims, sizes, zero_feeds(ins)) == []


def test_scatter_nd_updates_rank_fitting_no_index_length_is_an_error() -> None:
    ins = [In("data", "float32", ["a", "b"]), In("indices", "int64", ["c", "k"]),
           In("updates", "float32", ["c", "a", "b", "a"])]  # fmt: skip
    model = make_model([node("ScatterND", ["data", "indices", "updates"], ["y"])], ins, ["y"], opset=18)
    res = sso.infer(model)
    assert [e.code for e in res.errors] == ["rank-mismatch"], res.report()
    assert "ScatterND_0" in res.report()


@pytest.mark.parametrize("op", ["GatherND", "ScatterND"])
def test_empty_index_tuples_read_whole_data(op: str) -> None:
    """A constant ``k == 0``: each (empty) index tuple reads the whole data; symshape refused it
    (``take`` of column 0 from an empty axis)."""
    ins = [In("data", "float32", ["a", "b"]), In("indices", "int64", ["c", 0])]
    if op == "ScatterND":
        ins.append(In("updates", "float32", ["c", "a", "b"]))
    model = make_model([node(op, [i.name for i in ins], ["y"])], ins, ["y"], opset=18)
    sizes = [dict(a=3, b=4, c=2), dict(a=1, b=1, c=1), dict(a=2, b=5, c=3)]
    assert disagreements(model, ["a", "b", "c"], sizes, zero_feeds(ins)) == []
