"""``AffineGrid``'s grid takes its batch from ``size[0]``, as onnx's inference does (issue 14).

With ``theta`` of a symbolic batch, symshape gave the grid ``theta``'s symbol (``N2`` in onnx's
``test_affine_grid_*`` cases with the first dimension made symbolic) where onnx writes
``size[0]`` (2); the two are equal whenever the node runs (a guard), so the constant is the exact
answer. Checked against onnx's ``infer_shapes`` and against onnxruntime at several batches (1
among them; it refuses all but ``size[0]``).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize("size", [[2, 3, 5, 6], [1, 1, 4, 4], [3, 1, 2, 3, 4]])
def test_affine_grid_batch_is_the_size_batch_as_onnx_infers(size: list[int]) -> None:
    nd = len(size) - 2
    ins = [In("theta", "float32", ["n", nd, nd + 1])]
    inits = {"size": np.array(size, dtype=np.int64)}
    model = make_model(
        [node("AffineGrid", ["theta", "size"], ["grid"])], ins, ["grid"], opset=20, inits=inits
    )
    res = sso.infer(model)
    grid = res.type_of("grid")
    assert isinstance(grid, ss.TensorType) and grid.ndim == nd + 2, grid
    inf = onnx.shape_inference.infer_shapes(model, data_prop=True)
    theirs = [d.dim_value for d in inf.graph.output[0].type.tensor_type.shape.dim]
    assert [int(d) for d in grid.dims] == theirs == [size[0], *size[2:], nd], (grid, theirs)
    sizes = [dict(n=size[0]), dict(n=1), dict(n=size[0] + 1)]
    assert disagreements(model, ["n"], sizes, feeds_of(ins)) == []
