"""``Col2Im`` whose ``image_shape`` or ``block_shape`` is computed at run time (``Shape`` of another
tensor), against onnxruntime at several sizes.

symshape said ``unsupported-op`` (it read both as constants only). The output is now
``(N, C/K, *image)`` for ``K = prod(block)``, with guards: ``C`` a multiple of ``K``, ``L`` the number
of blocks ``prod((image + pads - dilation*(block - 1) - 1)//stride + 1)``, at least one block per
axis. Each row's sizes include ones where onnxruntime runs and ones where it refuses.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx_helpers import In, make_model, node
from size_oracle import disagreements, feeds_of

import symshape as ss
import symshape.onnx as sso

X = In("x", "float32", ["n", "c", "l"])
IMG2, BLK2 = In("z", "float32", ["h", "w"]), In("q", "float32", ["p", "r"])
IMG1, BLK1 = In("z", "float32", ["h"]), In("q", "float32", ["p"])
SHAPES = [node("Shape", ["z"], ["img"]), node("Shape", ["q"], ["blk"])]


def _sizes2(k: int) -> list[dict[str, int]]:
    """(n, c, l, h, w) sizes for a 2x2 block (k: the channels' factor 4 made wrong when not 4)."""
    return [dict(n=1, c=4, l=16, h=5, w=5), dict(n=2, c=8, l=12, h=4, w=5), dict(n=1, c=4, l=15, h=5, w=5),
            dict(n=1, c=6, l=16, h=5, w=5), dict(n=1, c=4, l=1, h=2, w=2), dict(n=1, c=4, l=2, h=1, w=3),
            dict(n=1, c=k, l=4, h=3, w=3)]  # fmt: skip


ROWS: list[tuple[str, list[In], dict[str, Any], dict[str, Any], list[dict[str, int]]]] = [
    # (id, inputs besides x, initializers, attributes, sizes)
    ("image-run-time", [IMG2], {"blk": np.array([2, 2], dtype=np.int64)}, {}, _sizes2(4)),
    ("image-run-time-strided", [IMG2], {"blk": np.array([2, 2], dtype=np.int64)},
     {"strides": [2, 2], "pads": [1, 0, 0, 1]},
     [dict(n=1, c=4, l=9, h=5, w=5), dict(n=1, c=4, l=6, h=4, w=5), dict(n=1, c=4, l=16, h=5, w=5),
      dict(n=2, c=8, l=1, h=1, w=1), dict(n=1, c=4, l=4, h=3, w=2)]),
    ("image-run-time-dilated", [IMG2], {"blk": np.array([2, 3], dtype=np.int64)}, {"dilations": [2, 1]},
     [dict(n=1, c=6, l=9, h=5, w=5), dict(n=1, c=6, l=6, h=4, w=4), dict(n=1, c=6, l=1, h=2, w=3),
      dict(n=1, c=6, l=2, h=3, w=4), dict(n=1, c=12, l=3, h=3, w=5)]),
    ("block-run-time", [BLK2], {"img": np.array([5, 5], dtype=np.int64)}, {},
     [dict(n=1, c=4, l=16, p=2, r=2), dict(n=1, c=6, l=12, p=2, r=3), dict(n=1, c=6, l=16, p=2, r=3),
      dict(n=1, c=5, l=4, p=1, r=5), dict(n=1, c=7, l=1, p=5, r=5), dict(n=1, c=36, l=1, p=6, r=6)]),
    ("both-run-time", [IMG2, BLK2], {}, {},
     [dict(n=1, c=4, l=16, h=5, w=5, p=2, r=2), dict(n=2, c=3, l=8, h=4, w=3, p=1, r=3),
      dict(n=1, c=3, l=9, h=4, w=3, p=1, r=3), dict(n=1, c=8, l=1, h=2, w=3, p=2, r=4),
      dict(n=2, c=6, l=9, h=4, w=5, p=2, r=3)]),
    ("both-run-time-1d", [IMG1, BLK1], {}, {"strides": [2], "pads": [1, 0]},
     [dict(n=1, c=3, l=3, h=6, p=3), dict(n=1, c=3, l=4, h=6, p=3), dict(n=2, c=2, l=2, h=2, p=2),
      dict(n=1, c=4, l=1, h=2, p=4), dict(n=2, c=4, l=3, h=5, p=2)]),
]  # fmt: skip


@pytest.mark.parametrize(("ins", "inits", "attrs", "sizes"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_col2im_run_time_shapes_against_onnxruntime(
    ins: list[In], inits: dict[str, Any], attrs: dict[str, Any], sizes: list[dict[str, int]]
) -> None:
    nodes: list[onnx.NodeProto] = [n for n in SHAPES if n.input[0] in {i.name for i in ins}]
    for n in nodes:
        n.name = f"shape_{n.output[0]}"
    nodes.append(node("Col2Im", ["x", "img", "blk"], ["y"], **attrs))
    model = make_model(nodes, [X, *ins], ["y"], opset=18, inits=inits)
    names = {
        d: ss.dim(d, min=0 if d == "l" else 1) for i in [X, *ins] for d in i.shape or () if isinstance(d, str)
    }
    assert not sso.infer(model, dims=names).unsupported
    assert disagreements(model, names, sizes, feeds_of([X, *ins])) == []
