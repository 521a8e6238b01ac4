"""Operators declare the attributes they take (issue 11): a misspelt or unknown attribute, or a
value of the wrong kind, raises ``bad-attribute`` when the call is built (with a "did you mean"
hint for a near miss), every time; an operator registered without a declaration takes anything."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import symshape as ss
from symshape.encoding.types import Attrs
from symshape.ir.op import ATTR_KINDS, OPS, check_declared

F32 = "float32"


@pytest.fixture
def x() -> ss.Var:
    return ss.var("x", ss.Tensor((2, 3), F32))


@pytest.fixture
def user_ops() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        OPS.pop(name, None)


def _raises(fn: Any, *args: Any, **kw: Any) -> ss.SymshapeError:
    with pytest.raises(ss.SymshapeError) as e:
        fn(*args, **kw)
    assert e.value.code == "bad-attribute", e.value
    return e.value


def test_misspelt_attribute_gets_a_did_you_mean_hint(x: ss.Var) -> None:
    err = _raises(ss.Op.get("sum"), x, axes=1)
    assert "unknown attribute axes" in err.message
    assert "did you mean `axis`?" in err.message
    err = _raises(ss.Op.get("nn.conv2d"), x, x, stride=2)
    assert "did you mean `strides`?" in err.message
    err = _raises(ss.Op.get("nn.layer_norm"), x, x, x, epsilonn=1e-3)
    assert "did you mean `epsilon`?" in err.message


def test_unknown_attribute_without_a_near_miss_lists_what_the_operator_takes(x: ss.Var) -> None:
    err = _raises(ss.Op.get("add"), x, x, bogus=1)
    assert err.message.endswith("unknown attribute bogus (add takes no attributes)")
    err = _raises(ss.Op.get("softmax" if "softmax" in OPS else "nn.softmax"), x, dim=0)
    assert "did you mean" not in err.message and "takes axis" in err.message


def test_wrongly_typed_attributes(x: ss.Var) -> None:
    g = ss.var("g", ss.Tensor((3,), F32))
    err = _raises(ss.ops.layer_norm, x, g, g, epsilon="a")
    assert err.message.endswith("layer_norm: attribute epsilon must be a number, got 'a'")
    _raises(ss.ops.leaky_relu, x, alpha="0.1")  # type: ignore[arg-type]
    _raises(ss.Op.get("nn.batch_norm"), x, g, g, g, g, center="yes")
    _raises(ss.Op.get("nn.pad"), x, pad_width=1, pad_mode=3)
    _raises(ss.Op.get("nn.max_pool2d"), x, pool_size=2, out_layout=4)
    _raises(ss.Op.get("matmul"), x, x, out_dtype=32)


def test_pooling_no_longer_ignores_unknown_attributes(x: ss.Var) -> None:
    # out_layout is taken (Relax); a misspelling is not silently dropped
    ss.Op.get("nn.max_pool2d")(x, pool_size=2, out_layout="NHWC")
    err = _raises(ss.Op.get("nn.max_pool2d"), x, pool_size=2, out_layot="NHWC")
    assert "did you mean `out_layout`?" in err.message


def test_a_rejected_attribute_set_raises_every_time(x: ss.Var) -> None:
    op = ss.Op.get("sum")
    for _ in range(3):
        _raises(op, x, axes=1)
    for _ in range(3):
        _raises(op, x, keepdims="no")
    # and an accepted one is remembered, and still accepted
    a = op(x, axis=1).attrs
    assert op(x, axis=1).attrs is a


def test_none_means_not_given(x: ss.Var) -> None:
    c = ss.Op.get("sum")(x, axis=None, keepdims=None)
    assert c.attrs["axis"] is None


def test_every_builtin_operator_declares_its_attributes() -> None:
    # the registry as importing symshape makes it, in a fresh interpreter: other tests of this
    # process register operators of their own (some deliberately without declarations)
    probe = (
        "import json, symshape.ops\n"
        "from symshape.ir.op import OPS\n"
        "print(json.dumps({n: None if op.attr_types is None else dict(op.attr_types)"
        " for n, op in OPS.items()}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    builtin: dict[str, dict[str, str] | None] = json.loads(out)
    assert len(builtin) > 80
    for name, attr_types in builtin.items():
        assert attr_types is not None, name
        for kind in attr_types.values():
            assert kind in ATTR_KINDS


def test_the_wrappers_pass_their_own_declarations(x: ss.Var) -> None:
    # each wrapper builds a call whose attributes its operator declares
    w = ss.var("w", ss.Tensor((4, 3, 3, 3), F32))
    x4 = ss.var("x4", ss.Tensor((1, 3, 8, 8), F32))
    calls = [
        ss.ops.conv2d(x4, w, out_layout="NHWC"),
        ss.ops.max_pool2d(x4, 2, out_layout="NHWC"),
        ss.ops.avg_pool2d(x4, 2),
        ss.ops.global_avg_pool2d(x4, out_layout="NHWC"),
        ss.ops.adaptive_max_pool2d(x4, 1, out_layout="NHWC"),
        ss.ops.matmul(x, ss.ops.transpose(x), out_dtype="float16"),
        ss.ops.zeros_like(x, dtype="int8"),
        ss.ops.ones_like(x),
        ss.ops.layer_norm(x, x, x, axis=(0, 1)),
        ss.ops.pad(x, 1, pad_value=0.5, pad_mode="edge"),
        ss.ops.take(x, ss.var("i", ss.Tensor((2,), "int32")), axis=0, mode="wrap"),
        ss.ops.strided_slice(x, (0,), (1,), strides=(1,), axes=(0,), slice_mode="end"),
    ]
    for c in calls:
        assert isinstance(c.callee, ss.Op)
        decl = c.callee.attr_types
        assert decl is not None and set(c.attrs) <= set(decl), c.callee.name


def test_user_operators_without_a_declaration_take_any_attribute(x: ss.Var, user_ops: list[str]) -> None:
    user_ops.append("test.attrs_free")
    op = ss.register_op("test.attrs_free", "unary", 1)
    assert op.attr_types is None
    c = op(x, whatever=1, anything="goes")
    assert dict(c.attrs) == {"whatever": 1, "anything": "goes"}


def test_user_operators_may_declare_attributes(x: ss.Var, user_ops: list[str]) -> None:
    user_ops.append("test.attrs_declared")
    op = ss.register_op("test.attrs_declared", "unary", 1, attr_types={"factor": "float"})
    assert op(x, factor=2).attrs["factor"] == 2
    err = _raises(op, x, factr=2.0)
    assert "did you mean `factor`?" in err.message
    _raises(op, x, factor="2")
    op.attr_types = None  # a declaration can be dropped again (the memo is reset)
    assert op(x, factr=2.0).attrs["factr"] == 2.0


def test_bad_declarations_are_rejected(user_ops: list[str]) -> None:
    user_ops.append("test.attrs_bad")
    with pytest.raises(ss.SymshapeError) as e:
        ss.register_op("test.attrs_bad", "unary", 1, attr_types={"factor": "floaty"})
    assert e.value.code == "invalid-argument"
    with pytest.raises(ss.SymshapeError):
        ss.register_op("test.attrs_bad", "unary", 1, attr_types=["factor"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("int", [0, -3], [1.5, True, "1", (1,)]),
        ("float", [0, 1.5], ["1", True]),
        ("bool", [True, False, 0, 1], [2, "yes"]),
        ("str", ["NCHW"], [1, ("N",)]),
        ("ints", [1, (), (1, 2)], [(1, "2"), 1.0, (True,)]),
        ("shape", [(2, ss.dim("n")), 3], [("a",), (1.0,)]),
        ("indices", [(None, 1, ss.dim("n")), 2], [("a",), (1.5,)]),
        ("sizes", [1, (None, 2)], [("a",), 1.5]),
        ("pairs", [1, ((1, 2), (0, 0))], [((1, "a"),), "x"]),
    ],
)
def test_attribute_kinds(kind: str, good: list[Any], bad: list[Any]) -> None:
    decl = {"a": kind}
    for v in good:
        check_declared("op", Attrs({"a": v}), decl)
    for v in bad:
        with pytest.raises(ss.SymshapeError):
            check_declared("op", Attrs({"a": v}), decl)


def test_relay_names_and_wrappers_agree_on_softmax_axis(x: ss.Var) -> None:
    c = ss.ops.softmax(x, axis=0)
    assert c.attrs["axis"] == 0
    _raises(ss.Op.get("nn.softmax"), x, axis="0")
