"""``LayerNormalization`` is one ``layer_norm`` call where that types it as the
``like(add(multiply(X, Scale), B), X)`` it is otherwise: Scale and B declared of one float dtype
and one shape of constant sizes >= 2, of rank ``-axis`` (transformer12's 25 nodes); the three calls
elsewhere (a size 1 that may broadcast, a positive axis, no B). A parameter that does not fit X
is an error naming the node either way.

The oracle is onnxruntime on random shapes with a symbolic batch ``N`` (sizes substituted,
:func:`size_oracle.disagreements`); a parameter of the wrong length is an error of the node, as
onnxruntime refuses it.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx_helpers import In, make_model, node, run_ort
from size_oracle import disagreements, feeds_of

import symshape.onnx as sso
from symshape.onnx.importer import Importer

SIZES = [{"N": 1}, {"N": 2}]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.integers(-3, 3),
    st.sampled_from(["exact", "broadcast", "wrong", "no_bias"]),
)
def test_layer_norm_against_onnxruntime(rest: list[int], axis: int, params: str) -> None:
    shape: tuple[int | str, ...] = ("N", *rest)
    r = len(shape)
    if not -r <= axis < r:
        axis = -1
    a = axis % r
    tail = [2 if d == "N" else int(d) for d in shape[a:]]  # (N fed as 2 for the parameters)
    if params == "broadcast":
        tail = [1] + tail[1:]
    elif params == "wrong":
        tail = tail[:-1] + [tail[-1] + 1]
    x = In("x", "float32", shape)
    ins = ["x", "s"] if params == "no_bias" else ["x", "s", "b"]
    inits = {"s": np.ones(tail, np.float32), "b": np.zeros(tail, np.float32)}
    if params == "no_bias":
        del inits["b"]
    ln = node("LayerNormalization", ins, ["y"], name="ln", axis=axis)
    model = make_model([ln], [x], ["y"], inits=inits)
    text = str(Importer(model, "m").run())
    # fused by the parameters alone (X's type is not inferred for it): of rank -axis, sizes >= 2
    fused = params != "no_bias" and axis < 0 and min(tail) >= 2
    assert ("layer_norm(" in text) == fused, text
    res = sso.infer(model)
    try:
        run_ort(model, feeds_of([x])({"N": 2}, np.random.default_rng(0)))
        ort_ok = True
    except Exception:
        ort_ok = False
    if res.status == "error":
        assert not ort_ok and "node 'ln'" in res.report(), res.report()
        return
    # (parameters of N's place pin N: a guard, which the oracle checks at each size)
    assert res.status in ("ok", "guarded"), res.report()
    assert disagreements(model, ["N"], SIZES, feeds_of([x])) == []
