"""``SplitToSequence`` with explicit split sizes: they must sum to the axis, against onnxruntime
at several sizes ("split_size_sum (3) != split_dim_size (1)").

symshape gave the last part what the others leave (``n - 1`` for splits ``[1, 2]``), so it accepted
every ``n`` where onnxruntime refuses all but ``n == 3``. Found by varying the sizes of onnx's node
case ``test_split_to_sequence_2``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node

import symshape as ss
import symshape.onnx as sso


@pytest.mark.parametrize(("split", "axis"), [([1, 2], 0), ([2, 2, 2], 1), ([4], 0), ([1, 3], -1)])
def test_split_sizes_sum_to_the_axis(split: list[int], axis: int) -> None:
    n0 = node("SplitToSequence", ["x", "s"], ["seq"], axis=axis)
    inits = {"s": np.array(split, dtype=np.int64)}
    model = make_model([n0], [In("x", "float32", ["n", "m"])], ["seq"], opset=11, inits=inits)
    n, m = ss.dim("n"), ss.dim("m")
    res = sso.infer(model, dims={"n": n, "m": m})
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for size in ((3, 6), (1, 6), (4, 4), (6, 6), (3, 4), (2, 2)):
        env: dict[Any, int] = {n: size[0], m: size[1]}
        try:
            got = [np.asarray(a).shape for a in sess.run(None, {"x": np.zeros(size, np.float32)})[0]]
        except Exception:  # onnxruntime refuses these sizes
            got = None
        assert res.valid_at(env) == (got is not None), (size, res.report())
        if got is not None:
            t = res.type_of("seq")
            assert isinstance(t, ss.TupleType)
            want = [tuple(int(d.subs(env)) for d in f.dims) for f in t.fields if isinstance(f, ss.TensorType)]
            assert want == got, (size, str(t))
