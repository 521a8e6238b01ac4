"""``ImageDecoder`` (opset 20): ``(H, W, C)`` ``uint8``, ``C`` from ``pixel_format``, the height
and width fresh sizes (they are in the encoded bytes), checked against onnx's reference evaluator
decoding real PNG, JPEG and BMP streams of several sizes; and what follows the decoder (a
``Transpose`` to channels first, a ``Resize`` to a fixed size) is typed from it.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from PIL import Image as PIL_Image

import symshape as ss
import symshape.onnx as sso


def _encoded(h: int, w: int, fmt: str) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(h * 100 + w)
    img = PIL_Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8).copy()


def _model(pixel_format: str | None, then: str = "") -> onnx.ModelProto:
    kw = {} if pixel_format is None else {"pixel_format": pixel_format}
    nodes = [helper.make_node("ImageDecoder", ["data"], ["img"], name="decode", **kw)]
    out = "img"
    if then == "transpose":
        nodes.append(helper.make_node("Transpose", ["img"], ["chw"], name="chw", perm=[2, 0, 1]))
        out = "chw"
    elif then == "resize":
        nodes += [
            helper.make_node("Cast", ["img"], ["f"], name="f", to=TensorProto.FLOAT),
            helper.make_node("Resize", ["f", "", "", "sizes"], ["small"], name="resize", axes=[0, 1]),
        ]
        out = "small"
    g = helper.make_graph(
        nodes,
        "decoder",
        [helper.make_tensor_value_info("data", TensorProto.UINT8, ["n_bytes"])],
        [helper.make_tensor_value_info(out, TensorProto.UNDEFINED, None)],
        [onnx.numpy_helper.from_array(np.array([8, 6], np.int64), "sizes")] if then == "resize" else [],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])


@pytest.mark.parametrize("pixel_format", [None, "RGB", "BGR", "Grayscale"])
@pytest.mark.parametrize("then", ["", "transpose", "resize"])
def test_the_decoded_shape_is_the_reference_evaluators(pixel_format: str | None, then: str) -> None:
    m = _model(pixel_format, then)
    res = sso.infer(m)
    assert res.status == "ok", res.report()
    img = res.type_of("img")
    assert isinstance(img, ss.TensorType) and img.dtype == "uint8" and img.ndim == 3
    h, w, c = img.dims
    assert not h.is_constant and not w.is_constant and h != w  # (fresh: in the bytes)
    assert c == (1 if pixel_format == "Grayscale" else 3)
    out = res.type_of(m.graph.output[0].name)
    for size, fmt in [((5, 7), "PNG"), ((16, 9), "JPEG"), ((3, 12), "BMP")]:
        data = _encoded(*size, fmt)
        (got,) = ReferenceEvaluator(m).run(None, {"data": data})
        env = {h: size[0], w: size[1]}
        assert isinstance(out, ss.TensorType)
        want = tuple(int(d) for d in out.subs(env).dims)
        assert want == got.shape, (fmt, size, str(out))


def test_a_stream_of_rank_two_and_an_unknown_pixel_format_are_errors() -> None:
    m = _model("RGB")
    m.graph.input[0].CopyFrom(helper.make_tensor_value_info("data", TensorProto.UINT8, [2, "n"]))
    res = sso.infer(m)
    assert res.status == "error" and res.errors[0].code == "rank-mismatch", res.report()
    assert "node 'decode' (ImageDecoder)" in res.report() and "1-d encoded stream" in res.report()
    res = sso.infer(_model("CMYK"))
    assert res.status == "error" and res.errors[0].code == "bad-attribute", res.report()
    assert "pixel_format" in res.report()
