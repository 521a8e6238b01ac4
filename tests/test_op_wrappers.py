"""The typed wrappers ``ss.ops.*`` that :func:`symshape.ops.spec.specialize` builds from one
template (convolution, pooling, reductions) look and behave like hand-written functions: the
signature ``help()`` shows (names, defaults, annotations), the docstring, the module, keyword and
positional calls building the same ``Call``, and a wrong call a ``TypeError`` naming the argument.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest

import symshape as ss
from symshape.ops.spec import specialize

F32 = "float32"

CONV = ("x", "w", "strides", "padding", "dilation", "groups", "channels", "kernel_size", "data_layout",
        "kernel_layout", "out_dtype", "out_layout")  # fmt: skip
POOL = ("x", "pool_size", "strides", "padding", "dilation", "ceil_mode", "layout", "out_layout")
REDUCE = ("x", "axis", "keepdims", "exclude")
GLOBAL = ("x", "layout", "out_layout")
ADAPTIVE = ("x", "output_size", "layout", "out_layout")

# (wrapper, operator, parameter names, defaults that differ between siblings, docstring start)
Case = tuple[str, str, tuple[str, ...], dict[str, object], str]


def _pool_case(kind: str, word: str, nd: int, layout: str) -> Case:
    return f"{kind}_pool{nd}d", f"nn.{kind}_pool{nd}d", POOL, {"layout": layout}, f"{nd}-d {word} pooling"


CASES: list[Case] = [
    ("conv1d", "nn.conv1d", CONV, {"data_layout": "NCW", "kernel_layout": "OIW"}, "1-d convolution"),
    ("conv2d", "nn.conv2d", CONV, {"data_layout": "NCHW", "kernel_layout": "OIHW"}, "2-d convolution"),
    ("conv3d", "nn.conv3d", CONV, {"data_layout": "NCDHW", "kernel_layout": "OIDHW"}, "3-d convolution"),
    *(
        _pool_case(kind, word, nd, layout)
        for kind, word in (("max", "max"), ("avg", "average"))
        for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW"))
    ),
    ("global_avg_pool2d", "nn.global_avg_pool2d", GLOBAL, {"layout": "NCHW"}, "Average"),
    ("global_max_pool2d", "nn.global_max_pool2d", GLOBAL, {"layout": "NCHW"}, "Maximum"),
    ("adaptive_avg_pool2d", "nn.adaptive_avg_pool2d", ADAPTIVE, {"layout": "NCHW"}, "Average"),
    ("adaptive_max_pool2d", "nn.adaptive_max_pool2d", ADAPTIVE, {"layout": "NCHW"}, "Max"),
    ("sum", "sum", REDUCE, {"axis": None}, "Sum over"),
    ("mean", "mean", REDUCE, {}, "Mean over"),
    ("prod", "prod", REDUCE, {}, "Product over"),
    ("max", "max", REDUCE, {}, "Maximum over"),
    ("min", "min", REDUCE, {}, "Minimum over"),
    ("all", "all", REDUCE, {}, "Logical and"),
    ("any", "any", REDUCE, {}, "Logical or"),
    ("argmax", "argmax", REDUCE, {}, "Index of the maximum"),
    ("argmin", "argmin", REDUCE, {}, "Index of the minimum"),
]


@pytest.mark.parametrize(("name", "op", "params", "defaults", "doc"), CASES, ids=[c[0] for c in CASES])
def test_signature_and_doc(
    name: str, op: str, params: tuple[str, ...], defaults: dict[str, object], doc: str
) -> None:
    fn = getattr(ss.ops, name)
    assert fn.__name__ == fn.__qualname__ == name
    assert fn.__module__.startswith("symshape.ops.")
    sig = inspect.signature(fn)
    assert tuple(sig.parameters) == params
    for k, v in defaults.items():
        assert sig.parameters[k].default == v
    assert sig.return_annotation == "Call"
    assert (inspect.getdoc(fn) or "").startswith(doc)
    assert f"``{op}``" in (inspect.getdoc(fn) or "") or op == name
    hints = typing.get_type_hints(fn)
    assert hints["x"] is ss.Expr and hints["return"] is ss.Call


def _data(name: str) -> tuple[ss.Var, ...]:
    nd = 2 if name.endswith("2d") or not name[-2].isdigit() else int(name[-2])
    x = ss.var("x", ss.Tensor((1, 4, *([9] * nd)), F32))
    if name.startswith("conv"):
        return x, ss.var("w", ss.Tensor((8, 4, *([3] * nd)), F32))
    return (x,)


@pytest.mark.parametrize(("name", "op", "params", "defaults", "doc"), CASES, ids=[c[0] for c in CASES])
def test_call_uses_the_defaults(
    name: str, op: str, params: tuple[str, ...], defaults: dict[str, object], doc: str
) -> None:
    """The call carries the wrapper's own defaults (not the template's), and a default given
    positionally or by keyword builds the same call."""
    fn = getattr(ss.ops, name)
    args = _data(name)
    call = fn(*args)
    assert call.callee is ss.Op.get(op)
    for k, v in defaults.items():
        if v is not None:
            assert call.attrs[k] == v
    sig = inspect.signature(fn)
    rest = list(sig.parameters.values())[len(args) :]
    positional = fn(*args, *(p.default for p in rest))
    keywords = fn(*args, **{p.name: p.default for p in rest})
    assert dict(positional.attrs) == dict(keywords.attrs) == dict(call.attrs)
    res = ss.infer(ss.Function(list(args), call))
    assert res.ok, res.report()


def test_wrong_calls_name_the_argument() -> None:
    x, w = _data("conv2d")
    with pytest.raises(TypeError, match="stride"):
        ss.ops.conv2d(x, w, stride=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'w'"):
        ss.ops.conv2d(x)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        ss.ops.sum(x, None, False, False, 1)  # type: ignore[call-arg]


def test_conv_keywords_and_layouts() -> None:
    """The wrapper's attributes reach the relation: NHWC data with HWIO weights, stride 2."""
    x = ss.var("x", ss.Tensor((1, 9, 9, 4), F32))
    w = ss.var("w", ss.Tensor((3, 3, 4, 8), F32))
    y = ss.ops.conv2d(x, w, strides=2, padding=1, data_layout="NHWC", kernel_layout="HWIO")
    assert str(ss.infer(ss.Function([x, w], y)).type_of(y)) == "Tensor[(1, 5, 5, 8), float32]"
    # an empty layout is the default one, as before
    z = ss.ops.conv2d(ss.var("a", ss.Tensor((1, 4, 9, 9), F32)), ss.var("b"), channels=8, kernel_size=3,
                      data_layout="", kernel_layout="")  # fmt: skip
    assert (z.attrs["data_layout"], z.attrs["kernel_layout"]) == ("NCHW", "OIHW")


def test_specialize_rejects_unknown_defaults() -> None:
    def _t(op: str, x: int, k: int = 1) -> str:
        return op

    with pytest.raises(TypeError, match="no parameter 'kk'"):
        specialize(_t, "o", "t", "doc", kk=2)
    t2: Any = specialize(_t, "o", "t2", "doc", k=2)
    assert inspect.signature(t2).parameters["k"].default == 2
