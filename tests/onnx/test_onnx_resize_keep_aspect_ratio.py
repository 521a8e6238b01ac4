"""``Resize`` with ``keep_aspect_ratio_policy`` ``not_larger``/``not_smaller`` over symbolic axes,
against onnxruntime on a grid of sizes (ties of the rounding included).

symshape said ``unsupported-op`` unless every resized axis was a constant. The scale is
``min_i s_i/d_i`` (``max_i``), and axis ``j`` becomes ``round(d_j * scale)``, half up; as rounding
is monotone that is the min (max) over ``i`` of ``(2*d_j*s_i + d_i)//(2*d_i)``, which symshape's
dimension expressions hold exactly (``min(6, (16*h + w)//(2*w))``).

With negative ``axes`` onnxruntime (1.x here) returns the input unresized under these policies
(and warns that onnx's inferred shape differs), and the reference evaluator fails ("axes don't
match array"): symshape follows the spec and onnx's inference there, the axes counted from the end.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape.onnx as sso

GRID = [
    dict(n=1, c=2, h=h, w=w) for h, w in itertools.product((1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 16), repeat=2)
]
ROWS: list[tuple[str, list[int | str], list[int], list[int] | None]] = [
    # (id, input shape, sizes, axes)
    ("hw-6x8", ["n", "c", "h", "w"], [6, 8], [2, 3]),
    ("hw-5x3", ["n", "c", "h", "w"], [5, 3], [2, 3]),
    ("hw-1x7", ["n", "c", "h", "w"], [1, 7], [2, 3]),
    ("all-axes", ["n", "c", "h", "w"], [1, 2, 9, 4], None),
    ("h-and-a-constant", ["n", "c", "h", 6], [4, 9], [2, 3]),
    ("three-axes", ["n", "c", "h", "w"], [3, 5, 7], [1, 2, 3]),
]  # fmt: skip


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize(("shape", "sizes", "axes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_keep_aspect_ratio_over_symbolic_axes_against_onnxruntime(
    policy: str, shape: list[int | str], sizes: list[int], axes: list[int] | None
) -> None:
    x = In("x", "float32", shape)
    attrs: dict[str, Any] = {"keep_aspect_ratio_policy": policy}
    if axes is not None:
        attrs["axes"] = axes
    inits = {"sz": np.array(sizes, dtype=np.int64)}
    model = make_model(
        [node("Resize", ["x", "", "", "sz"], ["y"], **attrs)], [x], ["y"], opset=18, inits=inits
    )
    res = sso.infer(model)
    assert not res.unsupported and not res.errors, res.report()
    names = [d for d in shape if isinstance(d, str)]
    assert disagreements(model, names, GRID, feeds_of([x])) == []


RUN_TIME = [dict(n=1, c=1, h=h, w=w, p=p, q=q) for h, w in itertools.product((1, 3, 4, 7, 16), repeat=2)
            for p, q in ((6, 8), (1, 5), (3, 3), (9, 2))]  # fmt: skip


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("axes", [[2, 3], None])
def test_keep_aspect_ratio_with_sizes_computed_at_run_time(policy: str, axes: list[int] | None) -> None:
    """The sizes are ``Shape(z)`` (``(p, q)`` for axes 2 and 3, ``(n, c, p, q)`` for all axes):
    symshape said ``unsupported-op``; now ``min(p, (2*h*q + w)//(2*w))`` and the like."""
    x, z = (
        In("x", "float32", ["n", "c", "h", "w"]),
        In("z", "float32", ["p", "q"] if axes else ["n", "c", "p", "q"]),
    )
    attrs: dict[str, Any] = {"keep_aspect_ratio_policy": policy}
    if axes is not None:
        attrs["axes"] = axes
    nodes = [node("Shape", ["z"], ["sz"]), node("Resize", ["x", "", "", "sz"], ["y"], **attrs)]
    nodes[0].name = "sizes"
    model = make_model(nodes, [x, z], ["y"], opset=18)
    res = sso.infer(model)
    assert not res.unsupported and not res.errors, res.report()
    assert disagreements(model, ["n", "c", "h", "w", "p", "q"], RUN_TIME, feeds_of([x, z])) == []


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_keep_aspect_ratio_negative_axes_count_from_the_end(policy: str) -> None:
    x = In("x", "float32", ["n", "c", "h", "w"])
    inits = {"sz": np.array([1, 7], dtype=np.int64)}
    types = []
    for axes in ([-2, -1], [2, 3]):
        resize = node("Resize", ["x", "", "", "sz"], ["y"], keep_aspect_ratio_policy=policy, axes=axes)
        types.append(str(sso.infer(make_model([resize], [x], ["y"], opset=18, inits=inits)).type_of("y")))
    assert types[0] == types[1], types
    assert ("min(" if policy == "not_larger" else "max(") in types[0], types


# (input h, w; sizes): ties where float arithmetic rounds the other way (13/6*27 is 58.5 exactly,
# 58.4999... in float64), and plain cases
TIES = [((6, 27), (13, 1000)), ((6, 27), (1000, 59)), ((3, 7), (5, 100)), ((4, 6), (6, 8)), ((10, 3), (7, 7))]


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize(("hw", "sizes"), TIES)
def test_constant_and_symbolic_axes_give_the_same_sizes(
    policy: str, hw: tuple[int, int], sizes: tuple[int, int]
) -> None:
    """A model gives one answer whether its resized axes are constants or symbols bound after
    inference (the constant path computed the ratio in floats: 58 for 59 at a tie); at an exact
    tie that is onnxruntime's, e.g. 59 for (6, 27) resized to (13, 1000) not_larger."""
    attrs = {"keep_aspect_ratio_policy": policy, "axes": [2, 3]}
    inits = {"sz": np.array(sizes, dtype=np.int64)}

    def resize(shape: list[int | str]) -> Any:
        return make_model(
            [node("Resize", ["x", "", "", "sz"], ["y"], **attrs)], [In("x", "float32", shape)], ["y"],
            opset=19, inits=inits,
        )  # fmt: skip

    static = sso.infer(resize([1, 1, *hw])).type_of("y")
    symbolic = sso.infer(resize([1, 1, "h", "w"]))
    bound = symbolic.type_of("y").subs({"h": hw[0], "w": hw[1]})
    assert str(static) == str(bound), (static, bound)
    if (hw, sizes, policy) == ((6, 27), (13, 1000), "not_larger"):
        assert str(static) == "Tensor[(1, 1, 13, 59), float32]"
