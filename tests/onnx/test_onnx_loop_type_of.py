"""``OnnxInferenceResult.type_of`` of a value inside a ``Loop`` body gives a type that holds at
every iteration, as the body values are observed at run time (onnx's reference evaluator, every
run of the body kept: ``test_onnx_infer_shapes_subgraph_oracle.observe``).

The importer converts a body once, on the first iteration's types. Where a loop-carried state
keeps its type, every body value keeps its type too; where a state grows (``Concat(s, x)``), the
body's types change from one iteration to the next, and ``type_of`` said the first iteration's
(``s2`` was ``(batch, 2*seq)``; at the third iteration it is ``(batch, 4*seq)``): now what is
computed from such a state is a tensor of its dtype and a rank not known, what ``infer_shapes``
leaves unwritten.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_onnx_infer_shapes_subgraph_oracle import observe
from test_onnx_infer_shapes_subgraphs import _loop_feeds, loop

import symshape as ss
import symshape.onnx as sso

SIZES = [{"batch": 2, "seq": 3}, {"batch": 3, "seq": 1}, {"batch": 1, "seq": 4}]


def _holds(t: ss.Type, shape: tuple[int, ...], env: dict[Any, int]) -> bool:
    """``t``, the sizes substituted, is a type of a value of ``shape`` (a dimension the sizes do
    not decide, ``?``, holds for any size)."""
    if not isinstance(t, ss.TensorType):
        return False
    if t.ndim is None:
        return True
    st = t.subs(env)
    return len(st.dims) == len(shape) and all(
        not d.is_constant or int(d) == n for d, n in zip(st.dims, shape)
    )


@pytest.mark.parametrize("growing", [False, True], ids=["stable", "growing"])
def test_every_body_type_holds_at_every_iteration(growing: bool) -> None:
    m = loop(growing)
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    body = m.graph.node[0].attribute[0].g
    names = [o for n in body.node for o in n.output]
    seen = 0
    for k, size in enumerate(SIZES):
        env = {ss.dim(n): v for n, v in size.items()}
        obs = observe(m, _loop_feeds(size, k + 2))  # (3, 1, 2 iterations)
        assert not obs.failed
        [runs] = obs.shapes.values()
        for name in names:
            t = res.type_of(name)
            for shape in runs[name]:
                assert _holds(t, shape, env), f"{name}: {t} at {size}, a run gives {shape}"
                seen += 1
    assert seen >= 3 * len(names)


def test_a_grown_state_and_what_is_computed_from_it_have_no_fixed_shape() -> None:
    res = sso.infer(loop(True))
    for name in ("s", "s2", "rows", "scaled"):  # (computed from the growing state)
        t = res.type_of(name)
        assert isinstance(t, ss.TensorType) and t.ndim is None and t.dtype == "float32", (name, t)
    # the rest of the body keeps its types, as in the loop whose state keeps its type
    stable = sso.infer(loop(False))
    for name in ("i1", "upto", "tri"):
        assert str(res.type_of(name)) == str(stable.type_of(name))
    assert str(stable.type_of("s2")) == "Tensor[(batch, seq), float32]"


def test_types_agrees_with_type_of() -> None:
    res = sso.infer(loop(True))
    types = res.types()
    assert all(str(types[n]) == str(res.type_of(n)) for n in types)
    assert types["s2"].ndim is None  # type: ignore[union-attr]
