"""``Reshape`` to a target computed at run time (``allowzero=0``) whose entries may be 0 with
``min=0`` symbols (TorchScript's ``x.reshape(b, c, h // 4, 4, ...)``): an entry 0 copies the
input's size at its place, so the entry's size is ``e`` where ``e >= 1`` and the input's size
where ``e == 0``. Where both readings fit somewhere (an empty batch makes every count 0) the
result was an anonymous ``?``: ``valid_at`` raised "does not decide" at full assignments and the
output's size could not be had by substitution. Judged against onnxruntime (without graph
optimizations) and onnx's reference evaluator at every point of a grid including 0 and 1:
``valid_at`` must decide (no exception) exactly where the runtime runs and every output's shape
must be a constant equal to the runtime's after substitution.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_helpers import In, make_model, reference, run_ort_plain

import symshape as ss
import symshape.onnx as sso

N = helper.make_node


def _dim_of(src: str, axis: int, out: str, nodes: list[onnx.NodeProto]) -> str:
    """``Shape(src)[axis:axis + 1]`` as ``out`` (a 1-element int64 tensor)."""
    nodes.append(N("Shape", [src], [out], start=axis, end=axis + 1))
    return out


def _const(v: int, out: str, nodes: list[onnx.NodeProto]) -> str:
    nodes.append(N("Constant", [], [out], value_ints=[v]))
    return out


def _binary(op: str, a: str, b: str, out: str, nodes: list[onnx.NodeProto]) -> str:
    nodes.append(N(op, [a, b], [out]))
    return out


def _patchify() -> onnx.ModelProto:
    """ViT's patchify as TorchScript writes it: ``x.reshape(b, c, h//4, 4, w//4, 4)``, a
    transpose, ``reshape(b, (h//4)*(w//4), c*16)`` and ``reshape(b*p.shape[1], 48)``."""
    nd: list[onnx.NodeProto] = []
    b, c, h, w = (_dim_of("x", k, f"d{k}", nd) for k in range(4))
    four = _const(4, "four", nd)
    h4 = _binary("Div", h, four, "h4", nd)
    w4 = _binary("Div", w, four, "w4", nd)
    nd.append(N("Concat", [b, c, h4, four, w4, four], ["t1"], axis=0))
    nd.append(N("Reshape", ["x", "t1"], ["r1"]))
    nd.append(N("Transpose", ["r1"], ["p1"], perm=[0, 2, 4, 1, 3, 5]))
    hw = _binary("Mul", h4, w4, "hw", nd)
    c16 = _binary("Mul", c, _const(16, "sixteen", nd), "c16", nd)
    nd.append(N("Concat", [b, hw, c16], ["t2"], axis=0))
    nd.append(N("Reshape", ["p1", "t2"], ["y"]))
    n1 = _binary("Mul", _dim_of("y", 0, "yb", nd), _dim_of("y", 1, "yn", nd), "bn", nd)
    nd.append(N("Concat", [n1, _const(48, "c48", nd)], ["t3"], axis=0))
    nd.append(N("Reshape", ["y", "t3"], ["z"]))
    return make_model(nd, [In("x", "float32", ["b", 3, "h", "w"])], ["y", "z"], 17, ir_version=8)


def _merge_heads() -> onnx.ModelProto:
    """``x.reshape(b*t, 8)`` of ``x: (b, t, 8)``: the entry ``b*t`` is 0 (a copy of ``b``) where
    either is 0."""
    nd: list[onnx.NodeProto] = []
    bt = _binary("Mul", _dim_of("x", 0, "b", nd), _dim_of("x", 1, "t", nd), "bt", nd)
    nd.append(N("Concat", [bt, _const(8, "eight", nd)], ["t1"], axis=0))
    nd.append(N("Reshape", ["x", "t1"], ["y"]))
    return make_model(nd, [In("x", "float32", ["b", "t", 8])], ["y"], 17, ir_version=8)


def _half_then_infer() -> onnx.ModelProto:
    """``x.reshape(t//2, -1)`` of ``x: (b, t, 6)``: beside -1 a copied ``b``."""
    nd: list[onnx.NodeProto] = []
    t2 = _binary("Div", _dim_of("x", 1, "t", nd), _const(2, "two", nd), "t2", nd)
    nd.append(N("Concat", [t2, _const(-1, "m1", nd)], ["t1"], axis=0))
    nd.append(N("Reshape", ["x", "t1"], ["y"]))
    return make_model(nd, [In("x", "float32", ["b", "t", 6])], ["y"], 17, ir_version=8)


def _two_open() -> onnx.ModelProto:
    """``x.reshape(b - b//2*2... )``: entries ``h//2`` and ``w//3`` of ``x: (h, w, 6)`` with the
    rest inferred as a constant: ``reshape(h//2, w//3, 2, -1)``."""
    nd: list[onnx.NodeProto] = []
    h2 = _binary("Div", _dim_of("x", 0, "h", nd), _const(2, "two", nd), "h2", nd)
    w3 = _binary("Div", _dim_of("x", 1, "w", nd), _const(3, "three", nd), "w3", nd)
    nd.append(N("Concat", [h2, w3, _const(2, "c2", nd), _const(-1, "m1", nd)], ["t1"], axis=0))
    nd.append(N("Reshape", ["x", "t1"], ["y"]))
    return make_model(nd, [In("x", "float32", ["h", "w", 6])], ["y"], 17, ir_version=8)


def _four_open() -> onnx.ModelProto:
    """``x.reshape(p//2, q//2, r//2, s//2, -1)`` of ``x: (p, q, r, s)``: more entries that may be 0
    than get a case each (each was a ``?``)."""
    nd: list[onnx.NodeProto] = []
    two = _const(2, "two", nd)
    parts = [_binary("Div", _dim_of("x", k, f"d{k}", nd), two, f"h{k}", nd) for k in range(4)]
    nd.append(N("Concat", [*parts, _const(-1, "m1", nd)], ["t1"], axis=0))
    nd.append(N("Reshape", ["x", "t1"], ["y"]))
    return make_model(nd, [In("x", "float32", ["p", "q", "r", "s"])], ["y"], 17, ir_version=8)


def _grid(names: Sequence[str], values: Sequence[int]) -> list[dict[str, int]]:
    return [dict(zip(names, p)) for p in itertools.product(values, repeat=len(names))]


MODELS = {
    "patchify": (_patchify, _grid("bhw", (0, 1, 3, 4, 5, 8)), "bhw"),
    "merge_heads": (_merge_heads, _grid("bt", (0, 1, 2, 3)), "bt"),
    "half_then_infer": (_half_then_infer, _grid("bt", (0, 1, 2, 3, 4, 5)), "bt"),
    "two_open": (_two_open, _grid("hw", (0, 1, 2, 3, 4, 6)), "hw"),
    "four_open": (_four_open, _grid("pqrs", (0, 1, 2, 5)), "pqrs"),
}


def _feeds(model: onnx.ModelProto, size: Mapping[str, int]) -> dict[str, np.ndarray[Any, Any]]:
    out = {}
    for i in model.graph.input:
        shape = [size[d.dim_param] if d.dim_param else d.dim_value for d in i.type.tensor_type.shape.dim]
        out[i.name] = np.ones(shape, np.float32)
    return out


def _misses(model: onnx.ModelProto, names: str, grid: Sequence[Mapping[str, int]], runner: str) -> list[str]:
    """Every point of ``grid`` where symshape (symbols ``names``, ``min=0``) and ``runner``
    disagree: on whether it runs, or on an output's shape (which must be a constant after
    substitution); ``valid_at`` raising is a disagreement."""
    syms = {n: ss.dim(n, min=0) for n in names}
    res = sso.infer(model, dims=syms)
    assert not res.errors, res.report()
    outs = [o.name for o in model.graph.output]
    misses: list[str] = []
    for size in grid:
        env = {syms[k]: v for k, v in size.items()}
        try:
            fed = _feeds(model, size)
            got = run_ort_plain(model, fed) if runner == "ort" else reference(model, fed)
            ran = got is not None
        except Exception:
            got, ran = None, False
        try:
            valid = res.valid_at(env)
        except ss.SymshapeError as e:
            misses.append(f"{size}: {runner} {'runs' if ran else 'fails'}; valid_at raises {str(e)[:160]}")
            continue
        if valid != ran:
            misses.append(f"{size}: {runner} {'runs' if ran else 'fails'}; valid_at {valid}")
            continue
        if not ran:
            continue
        assert got is not None
        for o, arr in zip(outs, got):
            t = res.type_of(o)
            assert isinstance(t, ss.TensorType) and t.ndim is not None, t
            shape = tuple(d.subs(env) for d in t.dims)
            if not all(d.is_constant for d in shape) or tuple(int(d) for d in shape) != arr.shape:
                misses.append(f"{size}: {o}: symshape {t} -> {tuple(map(str, shape))}, {runner} {arr.shape}")
    return misses


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("runner", ["ort", "reference"])
def test_reshape_entries_that_may_be_zero_are_exact(name: str, runner: str) -> None:
    make, grid, names = MODELS[name]
    misses = _misses(make(), names, grid, runner)
    assert misses == [], "\n".join(misses)


def test_no_anonymous_size_in_the_patchify_output() -> None:
    b, h, w = (ss.dim(n, min=0) for n in "bhw")
    res = sso.infer(_patchify(), dims={"b": b, "h": h, "w": w})
    for o in ("y", "z"):
        t = res.type_of(o)
        assert isinstance(t, ss.TensorType)
        assert "?" not in str(t), t
    # (h = 3: h//4 == 0 copies h; the batch 0 makes both counts 0)
    t = res.type_of("y")
    assert isinstance(t, ss.TensorType)
    assert tuple(int(d.subs({b: 0, h: 3, w: 8})) for d in t.dims) == (0, 3, 48)
    assert res.valid_at({b: 0, h: 3, w: 8}) is True
    assert res.valid_at({b: 1, h: 3, w: 8}) is False


def test_default_least_one_keeps_its_text() -> None:
    """With the default ``min=1`` the case split already decides each entry: the text stays."""
    res = sso.infer(_patchify(), dims={n: ss.dim(n) for n in "bhw"})
    assert str(res.type_of("y")) == "Tensor[(b, (h//4)*(w//4), 48), float32]"
    assert res.valid_when() == "h*w == 16*(h//4)*(w//4)"
