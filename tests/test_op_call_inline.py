"""The generator's inline operator calls (a dataflow binding, a nested call whose arguments are
typed, the exit of a nested call) make what ``op_call`` makes: with every operator's relation
looked up as "sized" (which sends each of them through ``op_call``), the inference of a model
is the same — report, types of the calls, relation instances in order."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from benchmarks import workloads as wl

import symshape as ss
from symshape.ir import calls as calls_mod
from symshape.ir.infer import _Gen


def _light(name: str) -> Any:
    onnx = pytest.importorskip("onnx")
    from symshape.onnx.importer import Importer

    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    model = onnx.load(os.path.join(light, f"light_{name}.onnx"), load_external_data=False)
    return Importer(model, name).run()


def _nested() -> Any:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    w = ss.var("w", ss.Tensor((4, 4), "float32"))
    y = ss.ops.relu(ss.ops.add(ss.ops.matmul(x, w), ss.ops.expand_dims(ss.ops.sum(w, axis=0), 0)))
    return ss.Function([x, w], ss.Tuple([y, ss.ops.softmax(y)]))


def _run(fn: Any) -> tuple[str, list[str], str]:
    res = ss.infer(fn)
    rels = " ".join(
        f"{r.id} {r.display} {r.state} {r.args} {r.span} {r.attrs}" for r in res.solution.solver.rels
    )
    holes: dict[str, str] = {}  # (numbered by a process-wide counter: renamed in order)
    rels = re.sub(r"id=(\d+)", lambda m: "h" + holes.setdefault(m[1], str(len(holes))), rels)
    return res.report(program=True), [str(res.type_of(c)) for c in res.calls], rels


@pytest.mark.parametrize(
    "build",
    [_nested, lambda: wl.transformer_chain(12), wl.resnet50, lambda: _light("squeezenet")],
    ids=["nested", "chain", "resnet50", "squeezenet"],
)
def test_inline_calls_are_op_call(build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fn = build()
    inline = _run(fn)
    sized = calls_mod.SIZED

    def op_rdef(self: Any, c: Any) -> Any:
        self.rdefs[c] = sized
        return sized

    monkeypatch.setattr(_Gen, "op_rdef", op_rdef)
    assert _run(fn) == inline
