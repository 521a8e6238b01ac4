"""Position ids from a padded sequence, as transformers' Longformer computes them (TorchScript):
the ids padded to a multiple of 4 with the pad id, ``mask = Cast(Not(Equal(padded, pad)))``,
``positions = CumSum(mask) * mask``, read from a table of 40 rows. The padded entries are pads,
so a position is at most the unpadded length: onnxruntime runs up to 39 tokens whatever the ids
(it fails at 40 for ids without a pad token). symshape bounded the running count by the padded
length (``seq + 3*seq % 4 <= 39``: refused 37 .. 39 tokens); it is now bounded by the unpadded
one. Judged against onnxruntime (with and without optimizations) and the reference evaluator
with ids that hold no pad token (the positions' worst case), and on the Longformer export.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import onnx
import pytest
from hf_models import export
from hf_more_models import more_spec
from onnx import TensorProto, helper
from onnx_helpers import reference, run_ort, run_ort_plain

import symshape as ss
import symshape.onnx as sso

N = helper.make_node
I64 = TensorProto.INT64


def _ints(name: str, v: list[int]) -> onnx.NodeProto:
    return N("Constant", [], [name], value=helper.make_tensor(name, I64, [len(v)], v))


def _model(pad_id: int = 0, equal_to: int = 0, swapped: bool = False) -> onnx.ModelProto:
    """``table[positions(ids)]`` of ``ids: (b, s)``, the table (40, 8); the ids padded with
    ``pad_id`` and compared with ``equal_to`` (``swapped``: ``Equal(equal_to, padded)``)."""
    eq_in = ["pv", "padded"] if swapped else ["padded", "pv"]
    nodes = [
        N("Shape", ["ids"], ["s1"], start=1, end=2),
        _ints("four", [4]),
        N("Mod", ["s1", "four"], ["r"]),
        N("Sub", ["four", "r"], ["r4"]),
        N("Mod", ["r4", "four"], ["p"]),
        _ints("zeros3", [0, 0, 0]),
        N("Concat", ["zeros3", "p"], ["pads"], axis=0),
        N("Constant", [], ["cv"], value=helper.make_tensor("cv", I64, [], [pad_id])),
        N("Pad", ["ids", "pads", "cv"], ["padded"], mode="constant"),
        N("Constant", [], ["pv"], value=helper.make_tensor("pv", I64, [], [equal_to])),
        N("Equal", eq_in, ["eq"]),
        N("Not", ["eq"], ["ne"]),
        N("Cast", ["ne"], ["mask"], to=TensorProto.INT32),
        N("Constant", [], ["ax"], value=helper.make_tensor("ax", I64, [], [1])),
        N("CumSum", ["mask", "ax"], ["cs"]),
        N("Mul", ["cs", "mask"], ["pos32"]),
        N("Cast", ["pos32"], ["pos"], to=I64),
        N("Gather", ["table", "pos"], ["y"], axis=0),
    ]
    table = helper.make_tensor("table", TensorProto.FLOAT, [40, 8], np.zeros(320, np.float32).tolist())
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("ids", I64, ["b", "s"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [table],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


SIZES = list(itertools.product((0, 1, 2), (0, 1, 3, 35, 36, 37, 38, 39, 40, 41)))
RUNNERS = {"ort": run_ort, "ort-plain": run_ort_plain, "reference": reference}


def _ids(b: int, s: int, pad_id: int) -> dict[str, np.ndarray[Any, Any]]:
    return {"ids": np.full((b, s), pad_id + 5, np.int64)}  # (no pad token)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize(("pad_id", "swapped"), [(0, False), (1, True)])
def test_positions_of_padded_ids_are_bounded_by_the_unpadded_length(
    runner: str, pad_id: int, swapped: bool
) -> None:
    m = _model(pad_id, pad_id, swapped)
    syms = {"b": ss.dim("b", min=0), "s": ss.dim("s", min=0)}
    res = sso.infer(m, dims=syms)
    assert res.valid_when() == "b*s + b*(3*s % 4) == 0 or s <= 39", res.report()
    misses = []
    for b, s in SIZES:
        try:
            got = RUNNERS[runner](m, _ids(b, s, pad_id))
        except Exception:
            got = None
        valid = res.valid_at({syms["b"]: b, syms["s"]: s})
        if valid != (got is not None):
            misses.append(
                f"(b, s) = {(b, s)}: {runner} {'runs' if got is not None else 'fails'}; valid_at {valid}"
            )
    assert misses == [], "\n".join(misses)


def test_another_pad_value_is_not_a_pad() -> None:
    """Padded with 1 but compared with 0: the padded entries count (the padded length bounds)."""
    res = sso.infer(_model(pad_id=1, equal_to=0), dims={"b": ss.dim("b", min=0), "s": ss.dim("s", min=0)})
    assert res.valid_when() == "b*s + b*(3*s % 4) == 0 or s + 3*s % 4 <= 39", res.report()
    b, s = ss.dim("b", min=0), ss.dim("s", min=0)
    assert res.valid_at({b: 1, s: 37}) is False
    with pytest.raises(Exception, match="out of data bounds, idx=40"):
        run_ort(_model(pad_id=1, equal_to=0), {"ids": np.full((1, 37), 5, np.int64)})


def test_longformer_runs_to_39_tokens(tmp_path: Any) -> None:
    spec = more_spec("longformer")
    path = export(spec, str(tmp_path), dynamo=False)
    batch, seq = ss.dims("batch seq")
    res = sso.infer(path, dims={"batch": batch, "seq": seq})
    for t in (36, 37, 38, 39, 40, 41):
        feeds = spec.make_inputs({"batch": 2, "seq": t})
        feeds["input_ids"] = np.full_like(feeds["input_ids"], 5)  # (no pad token: the worst case)
        feeds["attention_mask"][:] = 1
        try:
            ran = run_ort(onnx.load(path), feeds) is not None
        except Exception:
            ran = False
        assert res.valid_at({batch: 2, seq: t}) is ran, t
        assert ran is (t <= 39)
