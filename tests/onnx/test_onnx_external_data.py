"""Models whose tensors are stored outside the model file (ONNX external data).

symshape loads a model file without onnx's walk over every tensor (``load_external_data=False``)
and reads the bytes of an external tensor only when it keeps its value (small initializers:
reshape targets, slice bounds, scales), from the model's folder. These tests save models with
every initializer in one external file (``size_threshold=0``) and check that

* symshape's program, types (values included), guards, report and ``infer_shapes`` model are those
  of the same model loaded by ``onnx.load`` (external data read into it), and that every output's
  shape is what onnxruntime computes at several batch sizes;
* the weights (a ``MatMul``'s matrix) are never read, the reshape targets and bounds are;
* tensor attributes stored outside (``convert_attribute=True``) are read too;
* locations are relative to the model's folder, whatever the working directory;
* a missing or unreadable external file is a ``SymshapeError`` with a code, not a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_helpers import run_ort

import symshape as ss
import symshape.onnx as sso
from symshape.onnx import lazy_constant

SIZES = (1, 3, 7)


def _model() -> onnx.ModelProto:
    """``x: (N, 6, 4)`` through a reshape to an initializer target, a matmul by a weight, a scale,
    a slice by initializer bounds, a reshape to a target computed from the shape, a ``Constant``
    reshape target, an ``Expand`` and an integer ``ConstantOfShape`` (folded)."""
    rng = np.random.default_rng(0)
    inits = {
        "target": np.array([0, -1], np.int64),
        "w": rng.standard_normal((24, 200)).astype(np.float32),  # (too large to keep)
        "scale": np.array([2.0], np.float32),
        "starts": np.array([1], np.int64),
        "ends": np.array([4], np.int64),
        "axes": np.array([1], np.int64),
        "zero": np.array(0, np.int64),
        "axes0": np.array([0], np.int64),
        "tail": np.array([3, 1], np.int64),
        "eshape": np.array([2, 1, 3, 1], np.int64),
        "cshape": np.array([2, 3], np.int64),
    }
    n = helper.make_node
    nodes = [
        n("Reshape", ["x", "target"], ["r"], name="reshape_target"),
        n("MatMul", ["r", "w"], ["h"], name="mm"),
        n("Mul", ["h", "scale"], ["hs"], name="scale"),
        n("Slice", ["hs", "starts", "ends", "axes"], ["s"], name="slice"),
        n("Shape", ["s"], ["sh"], name="shape"),
        n("Gather", ["sh", "zero"], ["b"], name="batch", axis=0),
        n("Unsqueeze", ["b", "axes0"], ["b1"], name="unsq"),
        n("Concat", ["b1", "tail"], ["tgt"], name="concat", axis=0),
        n("Reshape", ["s", "tgt"], ["y"], name="reshape_computed"),
        n("Constant", [], ["c"], name="const", value=_tensor([-1, 3])),
        n("Reshape", ["s", "c"], ["z"], name="reshape_constant"),
        n("Expand", ["y", "eshape"], ["e"], name="expand"),
        n("ConstantOfShape", ["cshape"], ["k"], name="fill", value=_tensor([7])),
    ]
    g = helper.make_graph(
        nodes,
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 4])],
        [helper.make_empty_tensor_value_info(o) for o in ("hs", "y", "z", "e", "k")],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _tensor(v: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(v, np.int64))


def _save(folder: Path, *, location: str = "weights.bin", convert_attribute: bool = False) -> Path:
    (folder / location).parent.mkdir(parents=True, exist_ok=True)
    path = folder / "model.onnx"
    onnx.save_model(
        _model(),
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
        convert_attribute=convert_attribute,
    )
    return path


def _everything(model: Any, label: str) -> list[str]:
    """What symshape makes of a model: program, status, report, every value's type (values
    included), guards, and the ``infer_shapes`` model's bytes."""
    fn = sso.from_onnx(model)
    res = sso.infer(model, label=label)
    out = [str(fn), res.status, res.report()]
    out += [f"{k}: {t}" for k, t in res.types().items()]
    out += [str(g) for g in res.guards]
    out.append(sso.infer_shapes(model).SerializeToString().hex())
    return out


@pytest.mark.parametrize("convert_attribute", [False, True], ids=["initializers", "attributes-too"])
def test_external_model_as_loaded_and_as_run(tmp_path: Path, convert_attribute: bool) -> None:
    path = _save(tmp_path / "m", convert_attribute=convert_attribute)
    loaded = onnx.load(str(path))  # (external data read into it)
    assert not any(t.data_location == TensorProto.EXTERNAL for t in loaded.graph.initializer)
    saved = onnx.load(str(path), load_external_data=False)
    assert all(t.data_location == TensorProto.EXTERNAL for t in saved.graph.initializer)
    got = _everything(str(path), "m")
    assert got == _everything(loaded, "m")
    res = sso.infer(str(path))
    assert res.status == "ok", res.report()
    n = ss.dim("N")
    assert str(res.type_of("y")) == "Tensor[(N, 3, 1), float32]"
    assert str(res.type_of("tgt")) == "Tensor[(3,), int64] = (N, 3, 1)"
    assert str(res.type_of("e")) == "Tensor[(2, N, 3, 1), float32]"
    assert str(res.type_of("k")) == "Tensor[(2, 3), int64]"
    names = [o.name for o in loaded.graph.output]
    for size in SIZES:
        x = np.random.default_rng(size).standard_normal((size, 6, 4)).astype(np.float32)
        for name, arr in zip(names, run_ort(loaded, {"x": x})):
            t = res.type_of(name)
            assert isinstance(t, ss.TensorType)
            t = t.subs({n: size})
            assert tuple(int(d) for d in t.dims) == arr.shape, (name, size)


def test_only_kept_values_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The weight (``w``, a matmul's matrix, too large for its value to be kept) is never read;
    the values converters use are, each once."""
    path = _save(tmp_path)
    read: list[str] = []
    real = lazy_constant.read_external

    def counting(t: onnx.TensorProto, base_dir: str, what: str) -> Any:
        read.append(t.name)
        return real(t, base_dir, what)

    monkeypatch.setattr(lazy_constant, "read_external", counting)
    res = sso.infer(str(path))
    assert res.status == "ok", res.report()
    assert "w" not in read
    assert {"target", "starts", "ends", "axes", "tail", "eshape", "cshape"} <= set(read)
    assert len(read) == len(set(read))


def test_locations_relative_to_the_model_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _save(tmp_path / "model", location=os.path.join("data", "tensors.bin"))
    assert (tmp_path / "model" / "data" / "tensors.bin").is_file()
    expected = _everything(onnx.load(str(path)), "m")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert _everything(str(path), "m") == expected
    assert _everything(os.path.join("..", "model", "model.onnx"), "m") == expected
    assert _everything(Path("..") / "model" / "model.onnx", "m") == expected


def test_missing_external_file(tmp_path: Path) -> None:
    path = _save(tmp_path)
    os.remove(tmp_path / "weights.bin")
    for run in (sso.infer, sso.from_onnx, sso.infer_shapes):
        with pytest.raises(ss.SymshapeError) as e:
            run(str(path))
        assert e.value.code == "invalid-argument"
        assert "weights.bin" in str(e.value) and "initializer" in str(e.value)


def test_truncated_external_file(tmp_path: Path) -> None:
    path = _save(tmp_path)
    with open(tmp_path / "weights.bin", "r+b") as f:
        f.truncate(16)
    with pytest.raises(ss.SymshapeError) as e:
        sso.infer(str(path))
    assert e.value.code == "invalid-argument"
    assert "external data" in str(e.value)


def test_location_outside_the_folder(tmp_path: Path) -> None:
    """A location leaving the model's folder is refused (onnx's check), as an error with a code."""
    path = _save(tmp_path / "m")
    m = onnx.load(str(path), load_external_data=False)
    os.replace(tmp_path / "m" / "weights.bin", tmp_path / "weights.bin")
    for t in m.graph.initializer:
        for e in t.external_data:
            if e.key == "location":
                e.value = "../weights.bin"
    onnx.save_model(m, str(path))
    with pytest.raises(ss.SymshapeError) as e:
        sso.infer(str(path))
    assert e.value.code == "invalid-argument"


def test_model_proto_without_its_data_is_used_as_given(tmp_path: Path) -> None:
    """A ``ModelProto`` loaded without its external data has no folder: its external values are
    unknown (as before), never read from the working directory; the conversion still runs."""
    path = _save(tmp_path)
    m = onnx.load(str(path), load_external_data=False)
    res = sso.infer(m)
    assert str(res.type_of("x")) == "Tensor[(N, 6, 4), float32]"
    t = res.type_of("target")
    assert isinstance(t, ss.TensorType) and t.value is None  # (the target's entries are not known)
