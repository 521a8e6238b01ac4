"""The scatters' updates must have the shape of what the indices read, against onnxruntime.

symshape gave every scatter the data's type and checked nothing, so ``valid_at`` was True where
onnxruntime refuses ("Indices vs updates dimensions differs", "updates tensor should have shape
equal to indices.shape[:-1] + data.shape[indices.shape[-1]:]"): onnx's ``test_scatter_elements_*``
and ``test_scatternd`` with symbolic sizes. Each row scatters ``updates`` into ``data`` with
``indices`` of zeros (always in range), every size symbolic except the index tuples' length
``k`` of ``ScatterND``; sizes where onnxruntime runs and where it refuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso

Dims = Sequence[int | str]


def _model(op: str, shapes: tuple[Dims, Dims, Dims], opset: int, **attrs: Any) -> onnx.ModelProto:
    names = ("data", "indices", "updates")
    types = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.FLOAT)
    g = helper.make_graph(
        [helper.make_node(op, list(names), ["y"], **attrs)], "g",
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in zip(names, types, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


ROWS = [
    # (op, (data, indices, updates) shapes, opset, attributes, sizes to run at: a..d)
    ("ScatterElements", (["a", "b"], ["c", "d"], ["c", "d"]), 13, {"axis": 1},
     [(3, 4, 2, 2), (3, 4, 3, 5), (1, 1, 1, 1), (2, 5, 3, 2)]),
    ("ScatterElements", (["a", "b"], ["c", "d"], ["c", 2]), 13, {"axis": 0},
     [(3, 4, 2, 2), (3, 4, 2, 3), (1, 2, 1, 2), (4, 2, 5, 2)]),
    ("ScatterElements", (["a", "b"], ["c", "d"], ["d", "c"]), 18, {"axis": -1, "reduction": "add"},
     [(3, 4, 2, 2), (3, 4, 2, 3), (1, 1, 1, 1)]),
    ("Scatter", (["a", "b"], ["c", "d"], ["c", "d"]), 9, {"axis": 1}, [(3, 4, 2, 2), (1, 5, 2, 3)]),
    # ScatterND, k = 1: updates (c, b); k = 2: updates (c,)
    ("ScatterND", (["a", "b"], ["c", 1], ["c", "b"]), 13, {}, [(3, 4, 2, 0), (3, 4, 5, 0), (1, 1, 1, 0)]),
    ("ScatterND", (["a", "b"], ["c", 1], ["c", "d"]), 16, {"reduction": "mul"},
     [(3, 4, 2, 4), (3, 4, 2, 5), (2, 1, 1, 1), (2, 3, 1, 1)]),
    ("ScatterND", (["a", "b"], ["c", 2], ["d"]), 13, {}, [(3, 4, 2, 2), (3, 4, 2, 1), (1, 1, 3, 3)]),
    ("ScatterND", (["a", "b", 4], ["c", "d", 1], ["c", "d", "b", 4]), 13, {},
     [(3, 2, 2, 2), (3, 2, 2, 1), (5, 6, 1, 3)]),
]  # fmt: skip


@pytest.mark.parametrize(("op", "shapes", "opset", "attrs", "sizes"), ROWS)
def test_scatter_updates_shape(
    op: str, shapes: tuple[Dims, Dims, Dims], opset: int, attrs: dict[str, Any], sizes: list[tuple[int, ...]]
) -> None:
    model = _model(op, shapes, opset, **attrs)
    syms = {n: ss.dim(n) for n in "abcd"}
    used = {d for s in shapes for d in s if isinstance(d, str)}
    res = sso.infer(model, dims={n: syms[n] for n in sorted(used)})
    assert not res.errors and not res.unsupported, res.report()
    y = res.type_of("y")
    for size in sizes:
        at = dict(zip("abcd", size))
        feeds = {
            n: np.zeros(
                [at[d] if isinstance(d, str) else d for d in s],
                dtype=np.int64 if n == "indices" else np.float32,
            )
            for n, s in zip(("data", "indices", "updates"), shapes)
        }
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # onnxruntime refuses these shapes
            actual = None
        env = {syms[n]: v for n, v in at.items() if n in used}
        assert res.valid_at(env) == (actual is not None), (size, [str(g) for g in res.guards])
        if actual is not None:
            assert tuple(int(d.subs(env)) for d in y.dims) == actual["y"], (str(y), size)
