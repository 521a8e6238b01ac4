"""``symshape.onnx.infer_shapes`` used as a drop-in for ``onnx.shape_inference.infer_shapes``.

What a user of onnx's function does with the annotated copy, checked on real models:

- onnx accepts it: ``onnx.checker.check_model(full_check=True)`` and onnx's own inference over it
  (``strict_mode=True, data_prop=True``) raise nothing, so no ``dim_param`` symshape wrote (``2*N``,
  ``(height - 1)//2 + 1``, ``max(seq, min(16, seq))``) conflicts with what onnx infers; and wherever
  onnx's own inference of the original model knows a dimension as a number, symshape wrote that
  number (no constant is left as an expression).
- onnxruntime loads and runs it at several sizes (4 per symbol, 1 included where the model allows
  it) and gives the original model's outputs; and every ``value_info`` entry and graph output
  symshape wrote, its ``dim_param`` strings read back with ``ss.parse_dim`` and the sizes
  substituted, is the shape the value has when run (every node output is exposed as an output).

Models: the 9 ``light_*`` models of onnx's wheel with batch ``N``; the 12-layer encoder of
``benchmarks/onnx_transformer.py``; the four torch modules of :mod:`torch_models` (GPT-2-like block,
BERT-like layer, small ResNet, UNet-like net) exported once per session with ``torch.onnx.export``
(``dynamo=False``, opset 17, dynamic batch / sequence / height / width axes), and two models of
``transformers`` exported as :mod:`hf_models` exports them (Llama; a GPT-2 decoding step with a
cache), the exporter's own ``value_info`` kept, as a user would pass the file. onnxruntime builds
one session per model (the original, the copy, the copy with every value an output).

Seven light models hard-code batch 1 in a ``Reshape`` target (their guard is ``N == 1``): a symbol
a guard pins is written at its value, so the annotated copy has batch 1 in every value (the graph
input keeps ``N``), and runs at ``N = 1``; at ``N = 2`` neither it nor the original runs. The
GPT-2 block's guard is ``seq <= 16`` (its position table and mask have 16 rows) and the UNet's
``height % 4 == 0`` and ``width % 4 == 0`` (the skips are concatenated with the upsampled maps), so
no size 1 there: at a size the guard refuses, the original model does not run either.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from benchmarks import onnx_transformer
from hf_models import export as hf_export
from hf_models import spec_named
from onnx import shape_inference
from onnx_helpers import In, make_model, node, run_ort
from torch_models import MODELS as TORCH_MODELS
from torch_models import export, run_all_values
from written_shapes import at, dims_of, written

import symshape as ss
import symshape.onnx as sso

Arrays = dict[str, np.ndarray[Any, Any]]
Sizes = Mapping[str, int]

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT_NAMES = sorted(
    os.path.basename(p)[len("light_") : -len(".onnx")] for p in glob.glob(os.path.join(LIGHT, "light_*.onnx"))
)
BATCH_GENERIC = {"densenet121", "squeezenet"}
_B4 = ({"N": 1}, {"N": 2}, {"N": 3}, {"N": 4})
_SEQ4 = ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 5}, {"batch": 3, "seq": 9}, {"batch": 4, "seq": 16})


@dataclass(frozen=True)
class Case:
    """A model to annotate: how to load it (``dirs``: the session's export folder), how to make its
    inputs at given sizes, the sizes it runs at, and sizes its guards refuse (the original does not
    run there either)."""

    name: str
    load: Callable[[str], onnx.ModelProto]
    inputs: Callable[[onnx.ModelProto, Sizes], Arrays]
    sizes: tuple[Sizes, ...]
    refused: tuple[Sizes, ...] = ()


def _light(name: str) -> Callable[[str], onnx.ModelProto]:
    def load(_: str) -> onnx.ModelProto:
        m = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
        d = _data_input(m).type.tensor_type.shape.dim[0]
        d.Clear()
        d.dim_param = "N"
        return m

    return load


def _data_input(m: onnx.ModelProto) -> onnx.ValueInfoProto:
    inits = {t.name for t in m.graph.initializer}
    found: list[onnx.ValueInfoProto] = [vi for vi in m.graph.input if vi.name not in inits]
    (vi,) = found
    return vi


def _light_inputs(m: onnx.ModelProto, s: Sizes) -> Arrays:
    vi = _data_input(m)
    shape = (s["N"], *(d.dim_value for d in vi.type.tensor_type.shape.dim[1:]))
    return {vi.name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}


def _transformer_inputs(_: onnx.ModelProto, s: Sizes) -> Arrays:
    rng = np.random.default_rng(0)
    b, t = s["batch"], s["seq"]
    mask = np.ones((b, t), np.int64)
    mask[:, t // 2 + 1 :] = 0
    return {
        "input_ids": rng.integers(0, 1000, (b, t)).astype(np.int64),
        "position_ids": np.broadcast_to(np.arange(t, dtype=np.int64), (b, t)).copy(),
        "attention_mask": mask,
    }


def _torch_case(name: str, sizes: tuple[Sizes, ...], refused: tuple[Sizes, ...] = ()) -> Case:
    spec = next(s for s in TORCH_MODELS if s.name == name)

    def inputs(_: onnx.ModelProto, s: Sizes) -> Arrays:
        return dict(zip(spec.input_names, spec.inputs(dict(s))))

    return Case(name, lambda d: onnx.load(os.path.join(d, f"{name}.onnx")), inputs, sizes, refused)


def _hf_case(name: str, sizes: tuple[Sizes, ...], refused: tuple[Sizes, ...] = ()) -> Case:
    spec = spec_named(name)

    def inputs(_: onnx.ModelProto, s: Sizes) -> Arrays:
        return dict(spec.make_inputs(s))

    return Case(f"hf_{name}", lambda d: onnx.load(os.path.join(d, f"{name}_ts.onnx")), inputs, sizes, refused)


def _kv(*sizes: tuple[int, int, int]) -> tuple[Sizes, ...]:
    return tuple({"batch": b, "seq": t, "past": p, "total": p + t} for b, t, p in sizes)


def _img(*hw: tuple[int, int]) -> tuple[Sizes, ...]:
    return tuple({"batch": i + 1, "height": h, "width": w} for i, (h, w) in enumerate(hw))


CASES: tuple[Case, ...] = (
    *(
        Case(f"light_{n}", _light(n), _light_inputs, _B4)
        if n in BATCH_GENERIC
        else Case(f"light_{n}", _light(n), _light_inputs, ({"N": 1},), ({"N": 2},))
        for n in LIGHT_NAMES
    ),
    Case(
        "transformer12",
        lambda _: onnx_transformer.build(),
        _transformer_inputs,
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 3}, {"batch": 3, "seq": 7}, {"batch": 4, "seq": 12}),
    ),
    _torch_case("gpt_block", _SEQ4, ({"batch": 2, "seq": 17},)),
    _torch_case(
        "bert_layer",
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 5}, {"batch": 3, "seq": 12}, {"batch": 4, "seq": 7}),
    ),
    _torch_case("resnet", _img((1, 1), (7, 13), (32, 32), (45, 61))),
    _torch_case("unet", _img((4, 4), (8, 16), (12, 8), (20, 28)), ({"batch": 1, "height": 6, "width": 8},)),
    # transformers' models exported as in test_onnx_hf_models: Llama (rotary positions,
    # grouped-query attention) and a GPT-2 decoding step with a cache (wpe has 24 rows)
    _hf_case(
        "llama",
        ({"batch": 1, "seq": 1}, {"batch": 2, "seq": 5}, {"batch": 3, "seq": 13}, {"batch": 4, "seq": 16}),
    ),
    _hf_case("gpt2_kv", _kv((1, 1, 1), (2, 3, 4), (3, 2, 22), (4, 4, 12)), _kv((1, 1, 24))),
)
HF_EXPORTED = ("llama", "gpt2_kv")


@pytest.fixture(scope="session")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The four torch modules and the transformers models exported once per session."""
    d = str(tmp_path_factory.mktemp("torch_exports"))
    for spec in TORCH_MODELS:
        export(spec, d)
    for name in HF_EXPORTED:
        hf_export(spec_named(name), d, dynamo=False)  # (to <name>_ts.onnx)
    return d


_ANNOTATED: dict[str, tuple[onnx.ModelProto, onnx.ModelProto]] = {}


def _annotated(case: Case, export_dir: str) -> tuple[onnx.ModelProto, onnx.ModelProto]:
    """The case's model and symshape's annotated copy (once per session)."""
    hit = _ANNOTATED.get(case.name)
    if hit is None:
        m = case.load(export_dir)
        hit = _ANNOTATED[case.name] = (m, sso.infer_shapes(m))
    return hit


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnx_accepts_the_annotated_model(case: Case, export_dir: str) -> None:
    m, m2 = _annotated(case, export_dir)
    produced = [o for n in m2.graph.node for o in n.output if o]
    outputs = {vi.name for vi in m2.graph.output}
    shapes = written(m2)
    # every node output typed, every graph output shaped
    assert {vi.name for vi in m2.graph.value_info} == set(produced) - outputs
    assert all(shapes[name] is not None for name in produced)
    onnx.checker.check_model(m2, full_check=True)
    again = written(shape_inference.infer_shapes(m2, strict_mode=True, data_prop=True))
    assert {k: v for k, v in again.items() if k in shapes} == shapes  # onnx changes nothing
    # onnx's own inference of the original (its value_info and the outputs' declared shapes
    # dropped; the light models declare batch 1): what it knows as a number, symshape wrote as
    # that number; ranks agree
    bare = onnx.ModelProto()
    bare.CopyFrom(m)
    del bare.graph.value_info[:]
    for vi in bare.graph.output:
        vi.type.tensor_type.ClearField("shape")
    theirs = written(shape_inference.infer_shapes(bare, strict_mode=True, data_prop=True))
    for name, dims in theirs.items():
        ours = shapes.get(name)
        if dims is None or ours is None:
            continue
        assert len(ours) == len(dims), (name, ours, dims)
        for o, t in zip(ours, dims):
            assert not isinstance(t, int) or o == t, (name, ours, dims)


def _session(m: onnx.ModelProto, every_value: bool = False) -> Any:
    """An onnxruntime session over ``m.SerializeToString()`` (one per model: building one folds
    the light models' weights); ``every_value``: every node output is a graph output too, with
    optimizations off so that each is computed as written."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    if every_value:
        copy = onnx.ModelProto()
        copy.CopyFrom(m)
        known = {o.name for o in copy.graph.output}
        for n in copy.graph.node:
            copy.graph.output.extend(onnx.ValueInfoProto(name=o) for o in n.output if o and o not in known)
            known.update(n.output)
        m = copy
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _runs(sess: Any, feeds: Arrays) -> bool:
    try:
        sess.run(None, feeds)
    except Exception:  # (onnxruntime's errors have no common base class)
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnxruntime_runs_it_and_every_written_shape_is_real(case: Case, export_dir: str) -> None:
    m, m2 = _annotated(case, export_dir)
    shapes = written(m2)
    original, annotated, every = _session(m), _session(m2), _session(m2, every_value=True)
    names = [o.name for o in every.get_outputs()]
    for sizes in case.sizes:
        feeds = case.inputs(m, sizes)
        want = original.run(None, feeds)
        got = annotated.run(None, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        actual = {n: np.asarray(v).shape for n, v in zip(names, every.run(names, feeds))}
        checked = 0
        for name, dims in shapes.items():
            assert dims is not None, name
            real = [at(d, sizes) for d in dims]
            assert tuple(real) == actual[name], f"{name}: {dims} at {dict(sizes)}: {real} != {actual[name]}"
            checked += 1
        assert checked == len(shapes) > 0
    for sizes in case.refused:
        feeds = case.inputs(m, sizes)
        assert not _runs(original, feeds) and not _runs(annotated, feeds), dict(sizes)


def test_size_tables_take_four_values_of_each_symbol_one_included() -> None:
    for case in CASES:
        if len(case.sizes) == 1:  # the seven light models that run at N = 1 only
            continue
        for sym in case.sizes[0]:
            values = {s[sym] for s in case.sizes}
            assert len(values) >= 4, (case.name, sym)
            # (a UNet's sides are multiples of 4; the total of a decoding step is past + seq >= 2)
            assert 1 in values or (case.name, sym) in {
                ("unet", "height"),
                ("unet", "width"),
                ("hf_gpt2_kv", "total"),
            }


def test_the_seven_batch_one_models_are_written_at_their_only_batch() -> None:
    # their guard N == 1 pins the batch: every value is written at N = 1 (as onnx writes what it
    # knows from a constant), the input keeps its N; onnxruntime runs the copy at N = 1 (above)
    n = ss.dim("N")
    for name in sorted(set(LIGHT_NAMES) - BATCH_GENERIC):
        m = _light(name)("")
        (g,) = sso.infer(m).guards
        assert g.holds({n: 1}) and not g.holds({n: 2}), name
        m2 = sso.infer_shapes(m)
        assert dims_of(_data_input(m2)) == ["N", 3, 224, 224]
        shapes = written(m2)
        assert all(dims is not None and all(isinstance(d, int) for d in dims) for dims in shapes.values())
        assert shapes[m2.graph.output[0].name] == [1, 1000], name


def test_a_scalar_is_written_with_rank_zero_as_onnx_writes_it() -> None:
    # Shape -> Gather(index 0) is a scalar: its shape is there with no dims (no shape = unknown
    # rank); onnx's inference writes the same
    nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "i"], ["n"], axis=0)]
    m = make_model(nodes, [In("x", "float32", ("N", 3))], ["n"], inits={"i": np.array(0, np.int64)})
    ours = written(sso.infer_shapes(m))
    m.graph.output[0].type.tensor_type.ClearField("shape")
    theirs = written(shape_inference.infer_shapes(m, strict_mode=True))
    assert ours == theirs == {"s": [2], "n": []}


def test_a_dim_param_that_is_no_symshape_name_is_written_as_the_model_spells_it() -> None:
    # 'seq len' and 'N:0' are read as the symbols seq_len and N_0; a value of that size is
    # written under the model's name, as onnx's own inference propagates it, an expression under
    # symshape's; 'a.b' and 'a_b' are two dimensions (the symbols a_b and a_b_2), each written as
    # the model spells it
    nodes = [
        node("Relu", ["x"], ["r"], name="r"),
        node("Concat", ["x", "x"], ["c"], axis=0),
        node("Relu", ["y"], ["q"], name="q"),
        node("Relu", ["z"], ["p"], name="p"),
    ]
    ins = [In("x", "float32", ("seq len", "N:0")), In("y", "float32", ("a.b",)), In("z", "float32", ("a_b",))]
    m = make_model(nodes, ins, ["r", "c", "q", "p"])
    m2 = sso.infer_shapes(m)
    ours = written(m2)
    assert ours == {"r": ["seq len", "N:0"], "c": ["2*seq_len", "N:0"], "q": ["a.b"], "p": ["a_b"]}
    assert written(shape_inference.infer_shapes(m, strict_mode=True))["r"] == ours["r"]
    feeds = {"x": np.ones((3, 2), np.float32), "y": np.ones(4, np.float32), "z": np.ones(5, np.float32)}
    assert [a.shape for a in run_ort(m2, feeds)] == [(3, 2), (6, 2), (4,), (5,)]


def _rows_plus_offsets() -> onnx.ModelProto:
    """What the expanded causal ``Attention`` of onnx's node tests does (its ``RangeRow`` plus
    ``OffsetB4D``): ``Range(0, q.shape[2])`` made 4-D by ``Unsqueeze``, added to per-batch offsets."""
    inits = {
        "two": np.array(2, np.int64),
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "ax_row": np.array([0, 1, 3], np.int64),
        "ax_off": np.array([1, 2, 3], np.int64),
    }
    nodes = [
        node("Shape", ["q"], ["qs"]),
        node("Gather", ["qs", "two"], ["s"], axis=0),
        node("Range", ["zero", "s", "one"], ["row"]),
        node("Unsqueeze", ["row", "ax_row"], ["row4"], name="row4"),
        node("Unsqueeze", ["off", "ax_off"], ["off4"], name="off4"),
        node("Add", ["row4", "off4"], ["out"]),
    ]
    ins = [In("q", "float32", (3, 2, 2, 4)), In("off", "int64", (3,))]
    return make_model(nodes, ins, ["out"], inits=inits)


def test_onnx_data_propagation_rejects_a_range_length_symshape_knows() -> None:
    # symshape writes the Range's length 2 (onnx's own inference leaves it 'unk__0'); that is the
    # truth (onnxruntime runs the copy, every written shape is the run shape), and onnx accepts
    # the copy without data propagation, changing nothing. With data_prop=True onnx raises at the
    # 4-D Add "Invalid rank for Add broadcasting: (2) vs (3)" (2 = the rows, 3 = the batch of the
    # offsets: the Add's inputs are (1, 1, 2, 1) and (3, 1, 1, 1), which broadcast), and it does
    # so given that single true entry, written by hand: onnx's data propagation fails on a fact,
    # not on a conflict with symshape, so infer_shapes keeps writing it (found on 12 expanded
    # Attention cases of onnx's node tests, e.g. test_attention_4d_causal_nonpad_batch_prefill)
    m = _rows_plus_offsets()
    shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
    m2 = sso.infer_shapes(m)
    shapes = written(m2)
    assert shapes["row"] == [2] and shapes["out"] == [3, 1, 2, 1]
    feeds: Arrays = {"q": np.zeros((3, 2, 2, 4), np.float32), "off": np.array([0, 1, 2], np.int64)}
    actual = run_all_values(m2, feeds)
    assert all(tuple(w or ()) == actual[k] for k, w in shapes.items()), (shapes, actual)
    again = written(shape_inference.infer_shapes(m2, strict_mode=True))
    assert {k: v for k, v in again.items() if k in shapes} == shapes
    by_hand = onnx.ModelProto()
    by_hand.CopyFrom(m)
    by_hand.graph.value_info.append(onnx.helper.make_tensor_value_info("row", onnx.TensorProto.INT64, [2]))
    for model in (m2, by_hand):
        with pytest.raises(shape_inference.InferenceError, match="Invalid rank for Add broadcasting"):
            shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
