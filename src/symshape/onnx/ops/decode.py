"""``ImageDecoder``: an encoded image (a 1-d ``uint8`` stream: JPEG, PNG, BMP, ...) decoded to
``(H, W, C)`` ``uint8``, ``C`` 3 for ``RGB`` and ``BGR``, 1 for ``Grayscale`` (the
``pixel_format``). The height and width are in the stream's bytes: fresh sizes (``height_<k>``,
``width_<k>``, at least 1), even for a constant stream (symshape does not decode images).
"""

from __future__ import annotations

import symshape as ss
from symshape.errors import RANK_MISMATCH
from symshape.onnx.context import NodeContext
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []

_CHANNELS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


@register("ImageDecoder", since=20)
def _image_decoder(ctx: NodeContext) -> Outputs:
    fmt = ctx.attr_str("pixel_format", "RGB", choices=tuple(_CHANNELS))
    r = ctx.rank(0)
    if r is not None and r != 1:
        ctx.fail(RANK_MISMATCH, f"ImageDecoder needs a 1-d encoded stream, got rank {r}")
    h, w = ctx.fresh_dim("height", 1), ctx.fresh_dim("width", 1)  # (no image is empty)
    return ss.ops.zeros((h, w, _CHANNELS[fmt]), "uint8")
