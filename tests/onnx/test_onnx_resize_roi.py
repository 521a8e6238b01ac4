"""``Resize`` with ``coordinate_transformation_mode="tf_crop_and_resize"``: the ``roi`` has two
values per resized axis (``2 * rank``, or ``2 * len(axes)`` with ``axes``), against onnxruntime.

symshape did not check the roi ("Resize: size of roi array should be 2 * N", onnxruntime; "index
4 is out of bounds", the reference). With ``axes`` onnxruntime also runs a roi of ``2 * rank``
values, looser than the spec ("N is the rank of X or the length of axes, if provided"): symshape
follows the spec, and that size is the only difference allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements


def _feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
    r = size["r"]
    roi = np.array([0.0] * (r // 2) + [1.0] * (r - r // 2), dtype=np.float32)
    return {"x": rng.standard_normal((size["n"], size["c"], 4, 4)).astype(np.float32), "roi": roi}


@pytest.mark.parametrize(("axes", "sizes_v", "spec_only"), [(None, [1, 1, 3, 3], ()), ([2, 3], [3, 3], (8,))])
def test_tf_crop_and_resize_roi_length(
    axes: list[int] | None, sizes_v: list[int], spec_only: tuple[int, ...]
) -> None:
    attrs: dict[str, Any] = {"coordinate_transformation_mode": "tf_crop_and_resize", "mode": "linear"}
    if axes is not None:
        attrs["axes"] = axes
    ins = [In("x", "float32", ["n", "c", 4, 4]), In("roi", "float32", ["r"])]
    model = make_model([node("Resize", ["x", "roi", "", "sz"], ["y"], **attrs)], ins, ["y"], opset=18,
                       inits={"sz": np.array(sizes_v, dtype=np.int64)})  # fmt: skip
    sizes = [
        dict(n=n, c=c, r=r)
        for n, c, r in ((1, 1, 2 * len(sizes_v)), (2, 3, 4), (1, 1, 8), (1, 1, 1), (1, 1, 6))
    ]
    got = disagreements(model, ["n", "c", "r"], sizes, _feeds)
    expected = [str(s) for s in sizes if s["r"] in spec_only]
    assert [g.split(": onnxruntime runs; symshape excludes it")[0] for g in got] == expected, got
