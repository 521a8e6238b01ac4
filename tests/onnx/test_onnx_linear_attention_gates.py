"""``LinearAttention`` (opset 27): the gates' shapes against onnx's reference evaluator at several
sizes (onnxruntime 1.23 does not load opset 27).

symshape checked neither gate: ``decay`` is ``(B, T, Hkv*dk)`` or ``(B, T, Hkv)``, ``beta``
``(B, T, Hkv)`` or ``(B, T, 1)`` (the spec); the reference refuses other batches and sequences
("cannot reshape array"), but broadcasts a decay of batch 1, looser than the spec: symshape follows
the spec, and that size is the only difference allowed. Found by varying the sizes of onnx's node
cases (``test_linear_attention_gated*``).
"""

from __future__ import annotations

from typing import Any

import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

QKV = [
    In("q", "float32", ["b", "t", 8]),
    In("k", "float32", ["b", "t", 8]),
    In("v", "float32", ["b", "t", 8]),
]
BT = [(2, 3), (1, 1), (3, 2)]


def _sizes(extra: list[dict[str, int]]) -> list[dict[str, int]]:
    return [dict(b=b, t=t, **e) for b, t in BT for e in extra]


ROWS: list[tuple[str, str, list[In], list[dict[str, int]]]] = [
    # (update rule, gate inputs (decay "g", beta "be"), sizes: the gates' (b2, t2, last))
    ("gated", "g", [In("g", "float32", ["b2", "t2", "e"])],
     [s for s in _sizes([dict(e=8), dict(e=2), dict(e=4), dict(e=1), dict(e=16)])] +
     [dict(b=2, t=3, b2=1, t2=3, e=8), dict(b=2, t=3, b2=2, t2=1, e=2)]),
    ("delta", "be", [In("be", "float32", ["b2", "t2", "e"])],
     [s for s in _sizes([dict(e=2), dict(e=1), dict(e=3), dict(e=8)])] + [dict(b=2, t=3, b2=3, t2=3, e=2)]),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "gate", "gates", "sizes"), ROWS, ids=[r[0] for r in ROWS])
def test_linear_attention_gates_against_the_reference(
    rule: str, gate: str, gates: list[In], sizes: list[dict[str, Any]]
) -> None:
    inputs = ["q", "k", "v", ""] + (["g"] if gate == "g" else ["", "be"])
    n = node("LinearAttention", inputs, ["y"], q_num_heads=2, kv_num_heads=2, update_rule=rule)
    ins = [*QKV, *gates]
    model = make_model([n], ins, ["y"], opset=27)
    sizes = [{**s, "b2": s.get("b2", s["b"]), "t2": s.get("t2", s["t"])} for s in sizes]
    got = disagreements(model, ["b", "t", "b2", "t2", "e"], sizes, feeds_of(ins), runner="reference")
    spec_only = [str(s) for s in sizes if s["b2"] == 1 and s["b"] > 1 and gate == "g"]
    assert [g.split(": reference runs; symshape excludes it")[0] for g in got] == spec_only, got


def test_query_and_value_have_the_keys_batch_and_sequence() -> None:
    """The query and value with the key's ``(B, T)``: symshape broadcast a batch of 1 and let the
    query's sequence differ (the reference refuses those: "cannot reshape", a failing ``Scan``; it
    broadcasts a value of batch 1, looser than the spec: the one difference allowed)."""
    ins = [
        In("q", "float32", ["bq", "tq", 8]),
        In("k", "float32", ["b", "t", 8]),
        In("v", "float32", ["bv", "tv", 8]),
    ]
    n = node("LinearAttention", ["q", "k", "v"], ["y"], q_num_heads=2, kv_num_heads=2, update_rule="linear")
    model = make_model([n], ins, ["y"], opset=27)
    base = dict(bq=2, tq=3, b=2, t=3, bv=2, tv=3)
    sizes = [
        base,
        dict(base, bq=1),
        dict(base, tq=4),
        dict(base, bv=1),
        dict(base, tv=2),
        {k: 1 for k in base},
    ]
    got = disagreements(model, sorted(base), sizes, feeds_of(ins), runner="reference")
    assert [g.split(": reference runs; symshape excludes it")[0] for g in got] == [str(sizes[3])], got
