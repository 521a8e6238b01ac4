"""``RNN``/``GRU``/``LSTM``: the weights must have the shapes the sizes give, against onnxruntime.

symshape read only ``hidden_size``: a model whose input size is not the weight's (``X`` of ``i``
features into ``W (1, 4*H, 3)``), or whose ``hidden_size`` is not the weights' ``H``, was ``ok``,
where onnxruntime refuses ("Input W must have shape {1,16,3}"; onnx's ``test_lstm_*`` made
symbolic). The weights are initializers (as exported), the input size, batch and initial states
symbolic or constant.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from torch_models import run_all_values

import symshape as ss
import symshape.onnx as sso

H, F = 4, 3  # hidden size, input features
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _model(op: str, hidden: int, layout: int, with_h: bool) -> onnx.ModelProto:
    g = GATES[op]
    inits = [
        numpy_helper.from_array(np.ones((1, g * H, F), np.float32), "W"),
        numpy_helper.from_array(np.ones((1, g * H, H), np.float32), "R"),
        numpy_helper.from_array(np.ones((1, 2 * g * H), np.float32), "B"),
    ]
    x_shape = ["t", "b", "i"] if layout == 0 else ["b", "t", "i"]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    names = ["X", "W", "R", "B"]
    if with_h:
        names += ["", "h0"]
        h_shape = ["d", "hb", H] if layout == 0 else ["hb", "d", H]
        inputs.append(helper.make_tensor_value_info("h0", TensorProto.FLOAT, h_shape))
    node = helper.make_node(op, names, ["Y", "Yh"], hidden_size=hidden, layout=layout)
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("Y", "Yh")]
    return helper.make_model(
        helper.make_graph([node], "g", inputs, outs, inits), opset_imports=[helper.make_opsetid("", 14)]
    )


# (hidden_size, layout, initial_h); onnxruntime runs no recurrent operator of layout 1
VARIANTS = ((H, 0, False), (H, 0, True), (H + 1, 0, False))
ROWS = [(op, hidden, layout, with_h) for op in GATES for hidden, layout, with_h in VARIANTS]
# (t, b, i, d, hb): sequence, batch, input features; the initial state's directions and batch
SIZES = ((2, 3, F, 1, 3), (2, 3, 5, 1, 3), (1, 1, F, 1, 1), (2, 3, F, 2, 3), (2, 3, F, 1, 2))


@pytest.mark.parametrize(("op", "hidden", "layout", "with_h"), ROWS)
def test_rnn_weights_match_the_sizes(op: str, hidden: int, layout: int, with_h: bool) -> None:
    model = _model(op, hidden, layout, with_h)
    syms = {k: ss.dim(k) for k in ("t", "b", "i", "d", "hb")}
    used = ("t", "b", "i", "d", "hb") if with_h else ("t", "b", "i")
    res = sso.infer(model, dims={k: syms[k] for k in used})
    assert not res.unsupported, res.report()
    for t, b, i, d, hb in SIZES:
        size = {"t": t, "b": b, "i": i, "d": d, "hb": hb}
        feeds = {"X": np.ones((t, b, i) if layout == 0 else (b, t, i), np.float32)}
        if with_h:
            feeds["h0"] = np.zeros((d, hb, H) if layout == 0 else (hb, d, H), np.float32)
        try:
            actual = run_all_values(model, feeds)
        except Exception:  # the weights do not fit
            actual = None
        env = {syms[k]: size[k] for k in used}
        assert res.valid_at(env) == (actual is not None), (size, [str(g) for g in res.guards])
        for o in ("Y", "Yh") if actual is not None else ():
            got = tuple(int(x.subs(env)) for x in res.type_of(o).dims)
            assert got == (actual or {})[o], (o, str(res.type_of(o)), size)
