"""``Col2Im`` against onnxruntime at several sizes: the input's last axis ``L`` must be the number
of blocks, ``prod((image + pads - dilation*(block - 1) - 1)//stride + 1)``.

symshape checked only the channels (``C * prod(block)``) and accepted every ``L``, where
onnxruntime refuses all but one (``col2im.cc: 'input' dim[2] (17) ... ``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements


def _i64(*v: int) -> np.ndarray[Any, Any]:
    return np.array(v, dtype=np.int64)


def _feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
    return {"x": rng.standard_normal((size["n"], size["c"], size["l"])).astype(np.float32)}


ROWS: list[tuple[Sequence[int], Sequence[int], dict[str, Any], int]] = [
    # (image shape, block shape, attributes, the number of blocks L)
    ((5, 5), (2, 2), {}, 16),
    ((5, 5), (2, 2), {"strides": [2, 2]}, 4),
    ((5, 5), (2, 2), {"pads": [1, 1, 1, 1]}, 36),
    ((5, 5), (2, 2), {"dilations": [2, 2]}, 9),
    ((6, 5), (2, 3), {"strides": [2, 1], "pads": [0, 1, 1, 0]}, 12),
    ((6,), (3,), {}, 4),
    ((3, 3, 3), (2, 2, 2), {}, 8),
]


@pytest.mark.parametrize(("image", "block", "attrs", "blocks"), ROWS, ids=[f"{r[0]}-{r[2]}" for r in ROWS])
def test_col2im_number_of_blocks(
    image: Sequence[int], block: Sequence[int], attrs: dict[str, Any], blocks: int
) -> None:
    model = make_model(
        [node("Col2Im", ["x", "img", "blk"], ["y"], **attrs)], [In("x", "float32", ["n", "c", "l"])], ["y"],
        opset=18, inits={"img": _i64(*image), "blk": _i64(*block)},
    )  # fmt: skip
    k = int(np.prod(block))
    sizes = [dict(n=1, c=k, l=blocks), dict(n=2, c=2 * k, l=blocks), dict(n=2, c=2 * k, l=blocks + 1),
             dict(n=1, c=k, l=1), dict(n=3, c=3 * k, l=blocks - 1), dict(n=2, c=k + 1, l=blocks)]  # fmt: skip
    assert disagreements(model, ["n", "c", "l"], sizes, _feeds) == []


def test_col2im_blocks_larger_than_the_image() -> None:
    model = make_model(
        [node("Col2Im", ["x", "img", "blk"], ["y"])], [In("x", "float32", ["n", "c", "l"])], ["y"],
        opset=18, inits={"img": _i64(3, 3), "blk": _i64(4, 4)},
    )  # fmt: skip
    sizes = [dict(n=1, c=16, l=1), dict(n=1, c=16, l=4)]
    assert disagreements(model, ["n", "c", "l"], sizes, _feeds) == []
