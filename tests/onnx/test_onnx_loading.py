"""How symshape reads a model file (:mod:`symshape.onnx.loading`): from a memory map of the file.

The oracle is ``onnx.load(path, load_external_data=False)``: the model read is the same message
(byte for byte) for the light models, models with large initializers, every binary extension and a
text format; protobuf copies what the model keeps, so overwriting and removing the file afterwards
changes nothing and the map is closed; an empty file, a pipe and a platform whose ``mmap`` fails or
is missing take the plain read; errors are those ``onnx.load`` raises, as ``SymshapeError`` with
the code ``invalid-argument``. Files under 1 MiB (the light models) are read, not mapped.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.loading import load_model, read_model_file

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT_MODELS = sorted(f for f in os.listdir(LIGHT) if f.endswith(".onnx"))
WEIGHT = np.arange(360_000, dtype=np.float32).reshape(600, 600)  # (1.44 MB: a mapped file)


def _model() -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 600])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(WEIGHT, "w")],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _save(tmp_path: Path, name: str = "m.onnx", model: onnx.ModelProto | None = None) -> str:
    p = str(tmp_path / name)
    onnx.save(_model() if model is None else model, p)
    return p


def _same_as_onnx(path: str) -> None:
    expected = onnx.load(path, load_external_data=False).SerializeToString()
    model, label, base_dir = load_model(path)
    assert model.SerializeToString() == expected
    assert label == path and base_dir == os.path.dirname(os.path.abspath(path))


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_models_read_as_onnx_reads_them(name: str) -> None:
    _same_as_onnx(os.path.join(LIGHT, name))


@pytest.mark.parametrize("name", ["m.onnx", "m.pb", "m.bin", "model"])
def test_binary_files_of_any_extension(tmp_path: Path, name: str) -> None:
    _same_as_onnx(_save(tmp_path, name))


@pytest.mark.filterwarnings("ignore:The onnxtxt format is experimental")
def test_text_format_is_left_to_onnx(tmp_path: Path) -> None:
    p = str(tmp_path / "m.onnxtxt")
    small = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])],
            "t",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        ),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    onnx.save(small, p)
    with open(p, "rb") as f:
        assert not f.read().startswith(b"\x08")  # (really text)
    _same_as_onnx(p)
    assert str(sso.infer(p).type_of("y")) == "Tensor[(N, 3), float32]"


def test_load_model_is_the_one_graph_exports() -> None:
    from symshape.onnx import graph

    assert graph.load_model is load_model  # (its former home re-exports it)


def test_path_spellings(tmp_path: Path) -> None:
    p = _save(tmp_path)
    for arg in (p, Path(p), p.encode()):
        model, label, _ = load_model(arg)
        assert model.graph.name == "big" and label == p


def test_the_model_does_not_keep_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """protobuf copies the bytes it keeps: the file overwritten in place (the same pages of a
    shared map) and removed after loading leaves the model's weight intact; the map is closed."""
    import mmap

    maps: list[mmap.mmap] = []

    def spy(*args: Any, **kwargs: Any) -> mmap.mmap:
        maps.append(real(*args, **kwargs))
        return maps[-1]

    real = mmap.mmap
    monkeypatch.setattr(mmap, "mmap", spy)
    p = _save(tmp_path)
    model, _, _ = load_model(p)
    assert len(maps) == 1 and maps[0].closed  # (it was read through the map)
    size = os.path.getsize(p)
    with open(p, "r+b") as f:
        f.write(b"\xff" * size)
    os.unlink(p)
    (w,) = model.graph.initializer
    np.testing.assert_array_equal(numpy_helper.to_array(w), WEIGHT)
    if sys.platform.startswith("linux"):
        assert p not in Path("/proc/self/maps").read_text()
    assert str(sso.infer(model).type_of("y")) == "Tensor[(N, 600), float32]"


def test_empty_file_is_the_empty_model(tmp_path: Path) -> None:
    p = str(tmp_path / "empty.onnx")
    Path(p).write_bytes(b"")
    model, _, _ = load_model(p)
    assert model == onnx.load(p, load_external_data=False) == onnx.ModelProto()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_is_read(tmp_path: Path) -> None:
    p = str(tmp_path / "pipe.onnx")
    os.mkfifo(p)
    data = _model().SerializeToString()

    def write() -> None:
        with open(p, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    model = read_model_file(p)
    writer.join()
    assert model.SerializeToString() == data


def test_without_mmap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mmap

    p = _save(tmp_path)
    expected = onnx.load(p, load_external_data=False).SerializeToString()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("no mapping here")

    monkeypatch.setattr(mmap, "mmap", refuse)
    assert read_model_file(p).SerializeToString() == expected
    monkeypatch.setitem(sys.modules, "mmap", None)  # (import mmap raises ImportError)
    assert read_model_file(p).SerializeToString() == expected


def _onnx_error(path: str) -> str:
    try:
        onnx.load(path, load_external_data=False)
    except Exception as e:
        return str(e)
    raise AssertionError(f"onnx.load read {path}")


@pytest.mark.parametrize(
    "content",
    [b"\xff\x00 not a model", b"\x08\x07 this is not a protobuf \xff\xff", b"\x0a\xff\xff\xff\x0f"],
    ids=["garbage", "bad-field", "truncated-length"],
)
def test_errors_are_onnx_errors_with_a_code(tmp_path: Path, content: bytes) -> None:
    p = str(tmp_path / "bad.onnx")
    Path(p).write_bytes(content)
    with pytest.raises(ss.SymshapeError) as e:
        load_model(p)
    assert e.value.code == "invalid-argument"
    assert e.value.message == f"{p} is not an ONNX model: {_onnx_error(p)}"


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        load_model(str(tmp_path / "missing.onnx"))
    assert e.value.code == "invalid-argument" and "no such ONNX file" in e.value.message
    folder = str(tmp_path)
    with pytest.raises(ss.SymshapeError) as e:
        load_model(folder)
    assert e.value.code == "invalid-argument"
    assert e.value.message == f"{folder} is not an ONNX model: {_onnx_error(folder)}"
