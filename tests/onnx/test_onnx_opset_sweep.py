"""Issue 14's "Opsets 7 to the newest ``onnx`` knows", against onnxruntime (see ``opset_sweep``).

A deterministic sample of the full sweep (``python -m tests.onnx.opset_sweep`` runs all of it):
light models converted by onnx's version converter to opsets where an operator they hold changed
(BatchNormalization 9/14/15, Dropout 12, Reshape, Upsample/Resize, MaxPool, Gemm 11), and the node
cases of the operators whose inputs or attributes changed across opsets, each at the opsets on
either side of its changes. Every conversion that onnx makes and onnxruntime runs must infer
without a bug: no crash, no wrong shape/dtype/guard, no error, and no unsupported operator at an
opset where the case's own opset is supported.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from node_oracle import case_op
from opset_sweep import (
    FOCUS_OPS,
    LIGHT_MODELS,
    OPSETS,
    SWEEP_BUGS,
    Outcome,
    focus_cases,
    sweep_case,
    sweep_light,
)

# the opsets on either side of a change of the FOCUS_OPS (Slice 10, Squeeze/Split/Reduce 13,
# Reduce 18, Resize 11/13/18/19, Clip 11, BatchNormalization 9/14/15, Dropout 12, Pad 11/18), 21
# (onnx converts no ConstantOfShape case below 20) and the newest
PROBE_OPSETS = tuple(v for v in (7, 9, 10, 11, 12, 13, 15, 18, 19, 21, OPSETS[-1]) if v in OPSETS)
FEW: list[str] = []
LIGHT_PAIRS = (
    ("squeezenet", 9),
    ("squeezenet", 13),
    ("squeezenet", OPSETS[-1]),
    ("shufflenet", 15),
    ("inception_v1", 11),
)


@functools.lru_cache(maxsize=1)
def _cases() -> dict[str, Any]:
    """The first two node cases of each focus operator (onnx's order; one of each reduction but
    ReduceSum and ReduceMax, which all convert alike)."""
    out: dict[str, Any] = {}
    seen: dict[str, int] = {}
    for c in focus_cases():
        op = case_op(c)
        most = 1 if op.startswith("Reduce") and op not in ("ReduceSum", "ReduceMax") else 2
        if op in FOCUS_OPS and seen.get(op, 0) < most:
            seen[op] = seen.get(op, 0) + 1
            out[c.name] = c
    return out


def _bug(o: Outcome) -> str:
    return f"{o.subject} at opset {o.opset}: {o.cause}: {o.detail}"


@pytest.mark.parametrize("name,opset", LIGHT_PAIRS)
def test_light_model_converted(name: str, opset: int) -> None:
    assert name in LIGHT_MODELS
    o = sweep_light(name, opset, sizes=(1, 2))
    assert o.cause == "pass", _bug(o)


@pytest.mark.parametrize("op", FOCUS_OPS)
def test_node_cases_converted(op: str) -> None:
    """The operator's sampled cases at each probe opset: no bug, and (the sample exercises the
    converter) a pass at two opsets or more, apart from the operators in ``FEW``."""
    cases = [c for c in _cases().values() if case_op(c) == op]
    assert cases
    outs = [sweep_case(c, v) for c in cases for v in PROBE_OPSETS]
    bugs = [_bug(o) for o in outs if o.cause in SWEEP_BUGS]
    assert not bugs, "\n".join(bugs)
    passed = {o.opset for o in outs if o.cause == "pass"}
    assert (len(passed) >= 2) == (op not in FEW), sorted(passed)


def test_sweep_catches_a_missing_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: with Squeeze's converters hidden below opset 13 (the attribute form), the
    sweep calls the opset-11 conversion of a case symshape converts at its own opset an
    unexpected unsupported operator."""
    from symshape.onnx.registry import REGISTRY

    real = REGISTRY.lookup

    def lookup(domain: str, op_type: str, opset: int) -> Any:
        return None if op_type == "Squeeze" and opset < 13 else real(domain, op_type, opset)

    case = next(c for c in focus_cases() if case_op(c) == "Squeeze")
    assert sweep_case(case, 11).cause == "pass"
    monkeypatch.setattr(REGISTRY, "lookup", lookup)
    o = sweep_case(case, 11)
    assert o.cause == "unexpected-unsupported", o
    assert sweep_case(case, 13).cause == "pass"
