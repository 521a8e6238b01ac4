"""``Neg``: ``negative`` negates a shape value's entries itself, so the converter asks no type.

The converter used to ask the input's dtype (to build ``0 - x`` for integers), and a value a node
computes has no declared type: each ``Neg`` then inferred the whole program converted so far (a
probe), quadratic in a chain of them (a 3 000-node chain ran past 25 s, found by the malformed-model
fuzzing). The value rule is checked against numpy on random shape values.
"""

from __future__ import annotations

import time

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import In, make_model, node

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.importer import Importer


def _chain(n: int, dtype: str) -> onnx.ModelProto:
    nodes = [node("Neg", [f"v{i}"], [f"v{i + 1}"]) for i in range(n)]
    return make_model(nodes, [In("v0", dtype, ("N", 4))], [f"v{n}"])


def test_a_chain_of_neg_asks_no_probe() -> None:
    imp = Importer(_chain(300, "float32"), "chain")
    imp.run()
    assert imp._probes.count == 0


def test_a_long_chain_of_neg_imports_in_linear_time() -> None:
    t = time.process_time()
    res = sso.infer(_chain(3000, "int64"))
    assert res.status == "ok" and str(res.type_of("v3000")) == "Tensor[(N, 4), int64]"
    assert time.process_time() - t < 20  # (was quadratic: past 25 s; linear: about 1 s)


def test_neg_of_a_shape_value_negates_its_entries() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Neg", ["s"], ["neg"]),
        helper.make_node("Neg", ["neg"], ["back"]),
        helper.make_node("Reshape", ["x", "back"], ["y"]),
    ]
    res = sso.infer(make_model(nodes, [In("x", "float32", ("N", 3))], ["y", "neg"]))
    n = ss.dim("N")
    assert res.status == "ok"
    assert res.value_of("neg") == (-n, -3)
    assert str(res.type_of("y")) == "Tensor[(N, 3), float32]"


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 9), min_size=1, max_size=4),
    st.sampled_from(["int64", "int32", "float32", "bool", "uint8"]),
)
def test_negative_value_against_numpy(shape: list[int], dtype: str) -> None:
    """``negative(shape_of(x))`` cast to ``dtype``: the value symshape gives, substituted, is what
    numpy computes; none where numpy does not negate (bool) or wraps (unsigned)."""
    syms = [ss.dim(f"d{i}") for i in range(len(shape))]
    x = ss.var("x", ss.Tensor(tuple(syms), "float32"))
    neg = ss.ops.negative(ss.ops.cast(ss.ops.shape_of(x), dtype))
    res = ss.infer(ss.Function([x], neg))
    got = res.value_of(neg)
    if dtype in ("bool", "float32", "uint8"):
        assert got is None
        return
    assert got is not None
    env = dict(zip(syms, shape))
    expected = -np.array(shape, dtype=dtype)
    assert [int(d.subs(env)) for d in got] == expected.tolist()
