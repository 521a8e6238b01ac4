"""Operator features from TVM Relax's own operator tests, and the operator fixes of issue 11:
``matmul(out_dtype=)``, ``out_layout`` for convolution and pooling, ``zeros_like/ones_like(dtype=)``,
``layer_norm`` over several axes, ``strided_slice`` with symbolic ``begin``/``end``, exact ranks
from inputs of unknown rank, convolution with a weight of unknown rank, float-only operators, one
dtype for normalization parameters, reshape messages with 0 placeholders."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.dims import Dim
from symshape.ir.op import OPS

F32 = "float32"


def infer1(params: list[ss.Var], body: ss.Expr) -> ss.InferenceResult:
    return ss.infer(ss.Function(params, body))


def rank_and_known(t: ss.Type) -> tuple[int | None, list[str]]:
    """The rank and the dimensions that are not solver unknowns (unknowns print as ``?``)."""
    assert isinstance(t, ss.TensorType)
    if t.shape is None:
        return None, []
    return len(t.shape), ["?" if d.has_unknowns else str(d) for d in t.shape]


# -- matmul(out_dtype=), zeros_like/ones_like(dtype=) ---------------------------------------------


def test_matmul_out_dtype() -> None:
    a = ss.var("a", ss.Tensor((2, 3), F32))
    b = ss.var("b", ss.Tensor((3, 4), F32))
    c = ss.ops.matmul(a, b, out_dtype="float16")
    assert str(infer1([a, b], c).type_of(c)) == "Tensor[(2, 4), float16]"
    d = ss.ops.matmul(a, b)
    assert "out_dtype" not in d.attrs
    assert str(infer1([a, b], d).type_of(d)) == "Tensor[(2, 4), float32]"


@pytest.mark.parametrize("fn", [ss.ops.zeros_like, ss.ops.ones_like])
def test_like_with_dtype(fn: Any) -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3), F32))
    c = fn(x, dtype="int8")
    assert str(infer1([x], c).type_of(c)) == "Tensor[(n, 3), int8]"
    c = fn(x)
    assert str(infer1([x], c).type_of(c)) == "Tensor[(n, 3), float32]"
    with pytest.raises(ss.SymshapeError):
        fn(x, dtype="int9")


# -- out_layout ---------------------------------------------------------------------------------


def test_conv_out_layout() -> None:
    n, h, w = ss.dims("n h w")
    x = ss.var("x", ss.Tensor((n, 3, h, w), F32))
    wt = ss.var("wt", ss.Tensor((8, 3, 3, 3), F32))
    c = ss.ops.conv2d(x, wt, padding=1, out_layout="NHWC")
    assert str(infer1([x, wt], c).type_of(c)) == "Tensor[(n, h, w, 8), float32]"


def test_pool_out_layout() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3, 8, 8), F32))
    for c, want in [
        (ss.ops.max_pool2d(x, 2, strides=2, out_layout="NHWC"), "Tensor[(n, 4, 4, 3), float32]"),
        (ss.ops.avg_pool2d(x, 2, strides=2, out_layout="NHWC"), "Tensor[(n, 4, 4, 3), float32]"),
        (ss.ops.max_pool2d(x, 2, strides=2), "Tensor[(n, 3, 4, 4), float32]"),
        (ss.ops.global_avg_pool2d(x, out_layout="NHWC"), "Tensor[(n, 1, 1, 3), float32]"),
        (ss.ops.adaptive_avg_pool2d(x, 2, out_layout="NHWC"), "Tensor[(n, 2, 2, 3), float32]"),
        (
            ss.Op.get("nn.max_pool2d")(x, pool_size=2, strides=2, layout="NCHW", out_layout="NHWC"),
            "Tensor[(n, 4, 4, 3), float32]",
        ),
    ]:
        assert str(infer1([x], c).type_of(c)) == want
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.max_pool2d(x, 2, out_layout="NHWD")
    assert e.value.code == "bad-attribute"


# -- layer_norm over several axes, one dtype for the parameters ----------------------------------


def test_layer_norm_over_several_axes() -> None:
    n, s = ss.dims("n s")
    x = ss.var("x", ss.Tensor((n, s, 4, 8), F32))
    g, b = ss.var("g"), ss.var("b")
    c = ss.ops.layer_norm(x, g, b, axis=(-2, -1))
    res = infer1([x, g, b], c)
    assert res.status == "ok"
    assert str(res.type_of(c)) == "Tensor[(n, s, 4, 8), float32]"
    assert str(res.type_of(g)) == "Tensor[(4, 8), float32]"
    g2 = ss.var("g2", ss.Tensor((8, 4), F32))
    c = ss.ops.layer_norm(x, g2, g2, axis=(2, 3))
    assert infer1([x, g2], c).status == "error"
    with pytest.raises(ss.SymshapeError):
        ss.ops.layer_norm(x, g2, g2, axis=(1, 1))


def test_batch_norm_requires_one_dtype() -> None:
    x = ss.var("x", ss.Tensor((2, 3, 4), F32))
    ps = [ss.var(f"p{i}", ss.Tensor((3,), "float16" if i == 2 else F32)) for i in range(4)]
    c = ss.ops.batch_norm(x, *ps)
    res = infer1([x, *ps], c)
    assert res.status == "error"
    assert [e.code for e in res.errors] == ["dtype-mismatch"]
    ok = [ss.var(f"q{i}", ss.Tensor((3,), F32)) for i in range(4)]
    c = ss.ops.batch_norm(x, *ok)
    res = infer1([x, *ok], c)
    assert str(res.type_of(c)) == (
        "(Tensor[(2, 3, 4), float32], Tensor[(3,), float32], Tensor[(3,), float32])"
    )


@pytest.mark.parametrize("op", ["layer_norm", "bias_add"])
def test_norm_parameters_share_the_data_dtype(op: str) -> None:
    x = ss.var("x", ss.Tensor((2, 3), F32))
    p = ss.var("p", ss.Tensor((3,), "float16"))
    c = ss.ops.layer_norm(x, p, p) if op == "layer_norm" else ss.ops.bias_add(x, p, axis=1)
    res = infer1([x, p], c)
    assert [e.code for e in res.errors] == ["dtype-mismatch"]


# -- float-only operators (Relax's require_float_dtype) -----------------------------------------

FLOAT_ONLY = ["exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos", "log2", "log10"]
ANY_DTYPE = ["relu", "abs", "negative", "floor", "ceil", "round", "sign", "trunc", "copy"]


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_only_unary_on_int_is_an_error(name: str) -> None:
    x = ss.var("x", ss.Tensor((ss.dim("n"), 3), "int32"))
    c = getattr(ss.ops, name)(x)
    res = infer1([x], c)
    assert res.status == "error" and [e.code for e in res.errors] == ["dtype-mismatch"]
    assert res.guards == []
    y = ss.var("y", ss.Tensor((ss.dim("n"), 3), "float16"))
    assert infer1([y], getattr(ss.ops, name)(y)).status == "ok"


@pytest.mark.parametrize("name", ANY_DTYPE)
def test_other_unary_ops_take_int(name: str) -> None:
    x = ss.var("x", ss.Tensor((2, 3), "int32"))
    assert infer1([x], getattr(ss.ops, name)(x)).status == "ok"


@pytest.mark.parametrize(
    "build",
    [
        lambda x: ss.ops.softmax(x),
        lambda x: ss.ops.log_softmax(x),
        lambda x: ss.ops.leaky_relu(x),
        lambda x: ss.ops.layer_norm(x, ss.var("g"), ss.var("b")),
        lambda x: ss.ops.batch_norm(x, *(ss.var(f"p{i}") for i in range(4))),
    ],
)
def test_float_only_nn_ops_on_int_are_errors(build: Any) -> None:
    x = ss.var("x", ss.Tensor((2, 3), "int32"))
    res = ss.infer(ss.Function([x], build(x)))
    assert res.status == "error" and "dtype-mismatch" in [e.code for e in res.errors]


def test_unknown_dtype_passes_the_float_check() -> None:
    x = ss.var("x", ss.parse_type("Tensor[(2, 3), ?]"))
    assert infer1([x], ss.ops.exp(x)).status == "ok"


# -- strided_slice with symbolic begin/end ---------------------------------------------------------


def test_strided_slice_symbolic_begin_end() -> None:
    n = ss.dim("n")
    b, e = ss.dim("b", min=0), ss.dim("e", min=0)
    x = ss.var("x", ss.Tensor((n, 4), F32))
    c = ss.ops.strided_slice(x, (b,), (e,))
    res = infer1([x], c)
    assert res.status == "ok"
    t = res.type_of(c)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    for nv in range(4):
        for bv in range(5):
            for ev in range(5):
                want = np.empty((nv, 4))[bv:ev].shape
                assert tuple(int(d.subs({n: nv, b: bv, e: ev})) for d in t.shape) == want
    # a window of symbolic start and constant length
    c = ss.ops.strided_slice(x, (b,), (b + 2,))
    t = infer1([x], c).type_of(c)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    assert int(t.shape[0].subs({n: 10, b: 3})) == 2 and int(t.shape[0].subs({n: 4, b: 3})) == 1


def test_strided_slice_symbolic_index_may_be_negative_is_a_guard() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n,), F32))
    c = ss.ops.strided_slice(x, (0,), (n - 2,))
    res = infer1([x], c)
    assert res.status == "guarded"
    assert [str(g) for g in res.guards] == ["n >= 2"]  # `n - 2 >= 0` simplified (issue 16)
    assert [e.code for e in res.diagnostics] == []


def test_strides_message_counts() -> None:
    x = ss.var("x", ss.Tensor((4, 4), F32))
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.strided_slice(x, (0,), (2,), strides=(1, 1))
    assert "strides must have 1 value, got 2" in e.value.message
    with pytest.raises(ss.SymshapeError) as e:
        ss.ops.strided_slice(x, (0, 0, 0), (2, 2, 2), strides=(1, 1))
    assert "strides must have 1 or 3 values, got 2" in e.value.message


# -- exact ranks from inputs of unknown rank --------------------------------------------------------


UNKNOWN = ss.Tensor(None, F32)


@pytest.mark.parametrize(
    ("build", "rank", "known"),
    [
        (lambda x: ss.ops.reshape(x, (-1,)), 1, ["?"]),
        (lambda x: ss.ops.reshape(x, (-1, 4)), 2, ["?", "4"]),
        (lambda x: ss.ops.reshape(x, (0, 4, -1)), 3, ["?", "4", "?"]),
        (lambda x: ss.ops.reshape(x, (-2, 4)), None, []),
        (lambda x: ss.ops.sum(x), 0, []),
        (lambda x: ss.ops.max(x), 0, []),
        (lambda x: ss.ops.argmax(x), 0, []),
        (lambda x: ss.ops.sum(x, keepdims=True), None, []),
        (lambda x: ss.ops.sum(x, axis=0), None, []),
        (lambda x: ss.ops.transpose(x, (1, 0, 2)), 3, ["?", "?", "?"]),
        (lambda x: ss.ops.conv2d(x, ss.var("w", ss.Tensor((8, 3, 3, 3), F32))), 4, ["?", "8", "?", "?"]),
        (lambda x: ss.ops.conv2d(x, ss.var("w"), channels=8, kernel_size=3), 4, ["?", "8", "?", "?"]),
        (lambda x: ss.ops.max_pool2d(x, 2), 4, ["?", "?", "?", "?"]),
        (lambda x: ss.ops.global_avg_pool2d(x), 4, ["?", "?", "?", "?"]),
        (
            lambda x: ss.ops.concatenate([x, ss.var("y", ss.Tensor((2, 3), F32))], axis=0),
            2,
            ["?", "3"],
        ),
        (lambda x: ss.ops.stack([x, ss.var("y", ss.Tensor((2, 3), F32))], axis=1), 3, ["2", "2", "3"]),
    ],
)
def test_unknown_rank_input_with_a_fixed_result_rank(build: Any, rank: int | None, known: list[str]) -> None:
    x = ss.var("x", UNKNOWN)
    c = build(x)
    res = ss.infer(c)  # a bare expression: its free variables (x, the weights) are its inputs
    assert res.ok, res.report()
    assert rank_and_known(res.type_of(c)) == (rank, known)


def test_concatenate_size_with_an_unknown_rank_field_adds_an_unknown() -> None:
    x = ss.var("x", UNKNOWN)
    y = ss.var("y", ss.Tensor((2, 3), F32))
    c = ss.ops.concatenate([y, x, y], axis=0)
    t = infer1([x, y], c).type_of(c)
    assert isinstance(t, ss.TensorType) and t.shape is not None
    d0 = t.shape[0]
    assert d0.has_unknowns and d0.constant_term == 4


def test_batch_norm_statistics_of_unknown_rank_data() -> None:
    x = ss.var("x", UNKNOWN)
    ps = [ss.var(f"p{i}", ss.Tensor((16,), F32)) for i in range(4)]
    c = ss.ops.batch_norm(x, *ps)
    res = infer1([x, *ps], c)
    assert res.status == "ok"
    assert str(res.type_of(c)) == "(Tensor[?, float32], Tensor[(16,), float32], Tensor[(16,), float32])"
    bad = [ss.var(f"q{i}", ss.Tensor((16, 2), F32)) for i in range(4)]
    assert infer1([x, *bad], ss.ops.batch_norm(x, *bad)).status == "error"


def test_conv_with_unknown_rank_weight_resolves() -> None:
    n, h = ss.dims("n h")
    x = ss.var("x", ss.Tensor((n, 3, h, h), F32))
    w = ss.var("w", UNKNOWN)
    c = ss.ops.conv2d(x, w, strides=2, padding=1)
    res = infer1([x, w], c)
    assert res.status == "ok", res.report()
    assert rank_and_known(res.type_of(c)) == (4, ["n", "?", "?", "?"])
    c = ss.ops.conv2d(x, w, strides=2, padding=1, kernel_size=3)
    res = infer1([x, w], c)
    assert rank_and_known(res.type_of(c)) == (4, ["n", "?", "(h - 1)//2 + 1", "(h - 1)//2 + 1"])


def test_dense_with_unknown_rank_weight_resolves() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8), F32))
    w = ss.var("w", UNKNOWN)
    c = ss.ops.dense(x, w)
    res = infer1([x, w], c)
    assert res.status == "ok", res.report()
    assert rank_and_known(res.type_of(c)) == (2, ["n", "?"])


# -- reshape with 0 placeholders reports like the explicit form -------------------------------------


def _only_error(res: ss.InferenceResult) -> tuple[str, int]:
    [err] = res.errors
    return err.message.split(": ", 1)[1], len(err.notes)


def test_reshape_zero_placeholders_report_like_the_explicit_form() -> None:
    n, s = ss.dims("n s")
    x = ss.var("x", ss.Tensor((n, s, 512), F32))
    implicit = infer1([x], ss.ops.reshape(x, (0, 0, 256)))
    explicit = infer1([x], ss.ops.reshape(x, (n, s, 256)))
    im, imn = _only_error(implicit)
    ex, exn = _only_error(explicit)
    assert im.replace("(0, 0, 256)", "(n, s, 256)") == ex
    assert "512*n*s elements vs 256*n*s" in im
    assert imn == exn >= 1


def test_reshape_guards_stay_simple() -> None:
    n, m = ss.dims("n m")
    x = ss.var("x", ss.Tensor((n, m), F32))
    for spec in [(0, 6), (n, 6)]:
        res = infer1([x], ss.ops.reshape(x, spec))
        assert [str(g) for g in res.guards] == ["m == 6"], spec


# -- the Relax cross-check (apache-tvm, when it imports) ----------------------------------------------


def test_float_only_set_and_features_agree_with_relax() -> None:
    tvm = pytest.importorskip("tvm")
    from tvm import relax

    tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType

    def relax_ok(build: Any, *shapes: tuple[tuple[int, ...], str]) -> bool:
        bb = relax.BlockBuilder()
        vs = [relax.Var(f"v{i}", tensor(s, d)) for i, (s, d) in enumerate(shapes)]
        try:
            with bb.function("f", vs):
                bb.emit_func_output(bb.emit(build(*vs)))
        except Exception:
            return False
        return True

    _ = tvm
    names = {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos"}
    names |= {"abs", "negative", "floor", "ceil", "round", "sign", "trunc"}
    for name in sorted(names):
        want = relax_ok(getattr(relax.op, name), ((2, 3), "int32"))
        x = ss.var("x", ss.Tensor((2, 3), "int32"))
        got = infer1([x], getattr(ss.ops, name)(x)).status == "ok"
        assert got == want, name
        rel = OPS[name].relation
        assert (rel == "unary_float") == (not want), name
    for np_name, build in [
        ("softmax", lambda x: relax.op.nn.softmax(x)),
        ("layer_norm", lambda x, g: relax.op.nn.layer_norm(x, g, g, axes=[-1])),
    ]:
        args: list[tuple[tuple[int, ...], str]] = [((2, 3), "int32")]
        if np_name == "layer_norm":
            args.append(((3,), "int32"))
        assert not relax_ok(build, *args)
    # layer_norm over two axes and mismatching parameter dtypes
    assert relax_ok(
        lambda x, g: relax.op.nn.layer_norm(x, g, g, axes=[-2, -1]), ((2, 3, 4), F32), ((3, 4), F32)
    )
    assert not relax_ok(
        lambda x, g: relax.op.nn.batch_norm(x, g, g, g, g, axis=1), ((2, 3), F32), ((3,), "float16")
    )


def test_declared_dims_are_dims() -> None:
    assert isinstance(ss.dim("n") * 2, Dim)
