"""``infer_shapes`` writes each dimension simplified under the result's guards
(:mod:`symshape.onnx.export_simplify`): ``seq`` for ``min(16, seq)`` where ``seq <= 16``,
``height`` for ``4*(height//4)`` where ``height % 4 == 0``; nothing where the guards do not imply
it. The table's rewrites are checked against evaluation at every size the guards allow (up to
:data:`SIZES`), and two small models (a GPT-2-like causal mask sliced by the sequence length, a
UNet-like down- and upsampling with skips) are run with onnxruntime at several sizes: every
written dimension, evaluated, is the run shape, and sizes that are equal whenever the model runs
are written with one name.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_helpers import In, make_model, node, run_ort

import symshape as ss
import symshape.onnx as sso
from symshape.encoding.conds import Cond, cond_dims, cond_holds, eq, ge, le, lt
from symshape.encoding.dims import Sym, dmax, dmin
from symshape.onnx.export import dim_proto_text
from symshape.onnx.export_simplify import GuardedDims, simplify_types

SIZES = range(1, 41)
_OPS = {"<=": le, ">=": ge, "==": eq, "<": lt}


def _cond(text: str) -> Cond:
    lhs, op, rhs = re.fullmatch(r"(.+?) (<=|>=|==|<) (.+)", text).groups()  # type: ignore[union-attr]
    return _OPS[op](ss.parse_dim(lhs), ss.parse_dim(rhs))


# (guards, dimension, what infer_shapes writes)
CASES: list[tuple[tuple[str, ...], str, int | str]] = [
    # GPT-2's causal mask of 16 rows sliced by the sequence length
    (("seq <= 16",), "min(16, seq)", "seq"),
    (("seq <= 16",), "max(seq, min(16, seq))", "seq"),
    (("seq <= 16",), "2*min(16, seq) + batch", "batch + 2*seq"),
    (("seq <= 16",), "min(16, seq)//2", "seq//2"),
    (("seq <= 16",), "max(16, seq)", 16),
    (("seq >= 16",), "min(16, seq)", 16),
    (("a <= b",), "max(a, b)", "b"),
    (("a <= b",), "min(a, b) + max(a, b)", "a + b"),
    # a UNet's pooled and upsampled sizes
    (("height % 4 == 0",), "4*(height//4)", "height"),
    (("height % 4 == 0",), "2*(height//4)", "height//2"),
    (("height % 4 == 0",), "height - height % 4", "height"),
    (("height % 8 == 0",), "4*(height//4)", "height"),
    (("height % 4 == 0", "width % 4 == 0"), "4*(height//4)*(4*(width//4))", "height*width"),
    # an Attention node's qkv split in three
    (("s2_2 % 3 == 0",), "3*(s2_2//3)", "s2_2"),
    # not implied: written as inferred
    ((), "min(16, seq)", "min(16, seq)"),
    (("seq <= 17",), "min(16, seq)", "min(16, seq)"),
    (("seq <= 17",), "max(seq, min(16, seq))", "seq"),  # (true at every size)
    ((), "max(seq, min(16, seq))", "seq"),
    ((), "4*(height//4)", "4*(height//4)"),
    (("height % 2 == 0",), "4*(height//4)", "4*(height//4)"),
    (("width % 4 == 0",), "4*(height//4)", "4*(height//4)"),
    (("height % 4 == 0",), "height//4", "height//4"),
    (("height % 4 == 0",), "3*(height//4)", "3*(height//4)"),
    (("s2_2 % 3 == 0",), "2*(s2_2//3)", "2*(s2_2//3)"),
]


@pytest.mark.parametrize(
    ("guards", "text", "expected"), CASES, ids=[f"{c[1]}|{','.join(c[0])}" for c in CASES]
)
def test_dimension_written_simplified_under_guards(
    guards: tuple[str, ...], text: str, expected: int | str
) -> None:
    conds = [_cond(g) for g in guards]
    d = ss.parse_dim(text)
    got = GuardedDims(conds).dim(d)
    assert dim_proto_text(got) == expected
    # the written dimension is the inferred one wherever the guards hold
    names = sorted(
        {
            s.name
            for x in (d, *(y for c in conds for y in cond_dims(c)))
            for s in x.atoms()
            if isinstance(s, Sym)
        }
    )
    checked = 0
    for values in itertools.product(SIZES[:24] if len(names) > 1 else SIZES, repeat=len(names)):
        env: dict[Any, int] = dict(zip(names, values))
        if all(cond_holds(c, env) for c in conds):
            assert got.evaluate(env) == d.evaluate(env), env
            checked += 1
    assert checked


_S, _T = ss.dim("s"), ss.dim("t")


@st.composite
def _guards_and_dim(draw: st.DrawFn) -> tuple[list[Cond], ss.Dim]:
    """Guards of the kinds results state (``s <= c``, ``s % k == 0``, ``s <= t``) and a dimension
    built of the terms inference writes (``min(c, s)``, ``k*(s//m)``, ``s - s % k``, sums)."""
    c = draw(st.integers(2, 20))
    k = draw(st.integers(2, 6))
    guards = draw(
        st.lists(
            st.sampled_from([le(_S, c), ge(_S, c), eq(_S % k, 0), eq(_T % k, 0), le(_S, _T), le(_T, c)]),
            max_size=3,
        )
    )
    x = draw(st.sampled_from([_S, _T, _S + 1, 2 * _S]))
    term = st.sampled_from(
        [
            dmin(c, x),
            dmax(x, dmin(c, x)),
            k * (x // k),
            2 * k * (x // k),
            2 * (x // (2 * k)),
            x - x % k,
            dmin(_S, _T),
            dmax(_S, _T) + dmin(c, _T),
            dmin(c, x) // 2,
        ]
    )
    parts = draw(st.lists(term, min_size=1, max_size=3))
    d = sum(parts[1:], parts[0])
    return guards, d


@settings(max_examples=60, deadline=None)
@given(_guards_and_dim())
def test_written_dimension_equals_the_inferred_one_wherever_the_guards_hold(
    case: tuple[list[Cond], ss.Dim],
) -> None:
    guards, d = case
    got = GuardedDims(guards).dim(d)
    assert len(str(got)) <= len(str(d))
    for s, t in itertools.product(range(1, 25), repeat=2):
        env: dict[Any, int] = {"s": s, "t": t}
        if all(cond_holds(c, env) for c in guards):
            assert got.evaluate(env) == d.evaluate(env), (str(d), str(got), env)


def test_dimensions_without_min_max_floor_mod_never_reach_z3() -> None:
    seq, h = ss.dim("seq"), ss.dim("height")
    g = GuardedDims([le(seq, 16), eq(h % 4, 0), le(seq, h)])
    for d in (seq, 2 * seq + 1, seq * h, ss.parse_dim("7")):
        assert g.dim(d) is d
    assert g.z3_checks == 0


def test_each_distinct_dimension_is_simplified_once() -> None:
    h = ss.dim("height")
    g = GuardedDims([eq(h % 8, 0)])  # (h % 4 == 0 is not a guard: Z3 proves it)
    assert str(g.dim(4 * (h // 4))) == "height"
    checks = g.z3_checks
    assert checks >= 1
    for _ in range(3):
        assert str(g.dim(4 * (h // 4))) == "height"
    assert g.z3_checks == checks


def test_only_tensor_types_whose_dimensions_change_are_rebuilt() -> None:
    seq = ss.dim("seq")
    a = ss.TensorType((seq, dmin(16, seq)))
    b = ss.TensorType((seq, ss.parse_dim("8")))
    out, _ = simplify_types({"a": a, "b": b}, [le(seq, 16)])
    assert str(out["a"]) == "Tensor[(seq, seq), float32]" and out["b"] is b


# -- models run with onnxruntime ------------------------------------------------------------------


def _gpt_mask() -> onnx.ModelProto:
    """Attention scores masked by a constant (16, 16) causal mask sliced to (seq, seq), as GPT-2's
    ``self.mask[:, :, :t, :t]`` exports."""
    inits: dict[str, Any] = {
        "mask": np.tril(np.ones((16, 16), np.float32)),
        "one": np.array(1, np.int64),
        "zero": np.array([0], np.int64),
        "zeros2": np.array([0, 0], np.int64),
        "axes01": np.array([0, 1], np.int64),
        "fzero": np.array(0, np.float32),
        "ninf": np.array(-np.inf, np.float32),
    }
    nodes = [
        node("Shape", ["x"], ["sh"]),
        node("Gather", ["sh", "one"], ["t"], axis=0),
        node("Unsqueeze", ["t", "zero"], ["t1"]),
        node("Concat", ["t1", "t1"], ["ends"], axis=0),
        node("Slice", ["mask", "zeros2", "ends", "axes01"], ["m"]),
        node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        node("MatMul", ["x", "xt"], ["att"], name="scores"),
        node("Equal", ["m", "fzero"], ["bad"]),
        node("Where", ["bad", "ninf", "att"], ["y"]),
        node("Softmax", ["y"], ["p"], axis=-1),
        node("MatMul", ["p", "x"], ["out"], name="mix"),
    ]
    return make_model(nodes, [In("x", "float32", ("batch", "seq", 8))], ["out"], inits=inits)


def _unet() -> onnx.ModelProto:
    """MaxPool 2x2 twice, then back up (ConvTranspose 2x2 stride 2, then Resize by 2), each
    concatenated with the skip of its size."""
    rng = np.random.default_rng(0)
    inits: dict[str, Any] = {
        "w1": rng.standard_normal((2, 2, 2, 2)).astype(np.float32),
        "scales": np.array([1, 1, 2, 2], np.float32),
    }
    nodes = [
        node("MaxPool", ["x"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("MaxPool", ["p1"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        node("ConvTranspose", ["p2", "w1"], ["u1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Concat", ["u1", "p1"], ["c1"], axis=1),
        node("Resize", ["c1", "", "scales"], ["u2"], mode="nearest"),
        node("Concat", ["u2", "x"], ["out"], name="cat2", axis=1),
    ]
    return make_model(nodes, [In("x", "float32", ("batch", 2, "height", "width"))], ["out"], inits=inits)


def _written(m: onnx.ModelProto) -> dict[str, list[int | str]]:
    return {
        vi.name: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
        for vi in [*m.graph.value_info, *m.graph.output]
        if vi.type.tensor_type.HasField("shape")
    }


def _run_shapes(m: onnx.ModelProto, feeds: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every node output's shape when onnxruntime runs ``m`` (each one made a graph output)."""
    full = onnx.ModelProto()
    full.CopyFrom(m)
    names = [o for n in full.graph.node for o in n.output if o]
    del full.graph.output[:]
    full.graph.output.extend(helper.make_empty_tensor_value_info(o) for o in names)
    return {n: tuple(a.shape) for n, a in zip(names, run_ort(full, feeds))}


MODELS = [
    (
        _gpt_mask,
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 7}, {"batch": 3, "seq": 16}),
        {
            "m": ["seq", "seq"],
            "y": ["batch", "seq", "seq"],
            "p": ["batch", "seq", "seq"],
            "out": ["batch", "seq", 8],
        },
        ["seq <= 16"],
    ),
    (
        _unet,
        ({"batch": 1, "height": 4, "width": 8}, {"batch": 2, "height": 12, "width": 20}),
        {
            "u1": ["batch", 2, "height//2", "width//2"],
            "c1": ["batch", 4, "height//2", "width//2"],
            "u2": ["batch", 4, "height", "width"],
            "out": ["batch", 6, "height", "width"],
        },
        ["height % 4 == 0", "width % 4 == 0"],
    ),
]


@pytest.mark.parametrize(("build", "sizes", "expected", "guards"), MODELS, ids=["gpt_mask", "unet"])
def test_models_written_simplified_and_the_run_shapes_agree(
    build: Any, sizes: tuple[dict[str, int], ...], expected: dict[str, list[int | str]], guards: list[str]
) -> None:
    m = build()
    res = sso.infer(m)
    assert [str(g.cond) for g in res.guards] == guards
    # the result itself keeps the inferred forms; only what infer_shapes writes changes
    assert any(ch in str(res.type_of(name)) for name in expected for ch in ("min(", "//"))
    annotated = sso.infer_shapes(m)
    written = _written(annotated)
    for name, dims in expected.items():
        assert written[name] == dims, name
    for s in sizes:
        x = (
            np.random.default_rng(0)
            .standard_normal(
                (s["batch"], s["seq"], 8) if "seq" in s else (s["batch"], 2, s["height"], s["width"])
            )
            .astype(np.float32)
        )
        run = _run_shapes(annotated, {"x": x})
        assert run == _run_shapes(m, {"x": x})
        for name, dims in written.items():
            env: dict[Any, int] = dict(s)
            got = tuple(d if isinstance(d, int) else ss.parse_dim(d).evaluate(env) for d in dims)
            assert got == run[name], (name, dims, s)
