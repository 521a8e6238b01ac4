"""The fuzzer's steps of less common operators (:mod:`tests.onnx.fuzz_graphs`): depth/space
blocks, grid sampling, transposed convolution, pools with indices, recurrent layers, attention
(opset 23 and com.microsoft's), resize to computed sizes, center-crop-pad, eye-like, size and
shape slices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tests.onnx.fuzz_builder import Builder, Dim, V
from tests.onnx.fuzz_steps import shape_part

__all__ = [
    "attention",
    "center_crop_pad",
    "contrib",
    "conv_transpose",
    "depth_space",
    "eye_like",
    "grid_sample",
    "pool_more",
    "resize_computed",
    "rnn",
    "shape_size",
]

MS = "com.microsoft"


def _f32(x: V, rank: tuple[int, ...]) -> bool:
    return x.dtype == "float32" and x.rank in rank


def depth_space(b: Builder, x: V) -> V | None:
    if not _f32(x, (4,)):
        return None
    bs = b.pick([1, 2, 2, 3])
    if b.flag():
        out = b.node("DepthToSpace", [x.name], blocksize=bs, mode=b.pick(["DCR", "CRD"]))[0]
    else:
        out = b.node("SpaceToDepth", [x.name], blocksize=bs)[0]
    return b.value(out, "float32", [x.dims[0], None, None, None])


def grid_sample(b: Builder, x: V) -> V | None:
    if not _f32(x, (4, 5) if b.opset >= 20 else (4,)) or b.opset < 16:
        return None
    s = x.rank - 2
    out_sp = [b.input_dim() for _ in range(s)]
    grid = b.new_input("float32", [b.like(x.dims[0]), *out_sp, b.pick([s, s, s, s + 1])])
    modes = ["bilinear", "nearest"] if b.opset < 20 else ["linear", "nearest", "cubic"]
    mode = b.pick(modes if s == 2 else modes[:2])
    attrs: dict[str, Any] = {"mode": mode, "align_corners": b.integer(0, 1)}
    attrs["padding_mode"] = b.pick(["zeros", "border", "reflection"])
    out = b.node("GridSample", [x.name, grid.name], **attrs)[0]
    return b.value(out, "float32", [x.dims[0], x.dims[1], *out_sp])


def conv_transpose(b: Builder, x: V) -> V | None:
    if not _f32(x, (3, 4)) or (b.zero and "conv-transpose-empty" in b.avoid):
        return None
    s = x.rank - 2
    c = x.dims[1] if isinstance(x.dims[1], int) else b.pick([1, 2])
    group = 2 if c % 2 == 0 and b.integer(0, 3) == 0 else 1
    m = b.pick([1, 2])
    kernel = [b.integer(1, 3) for _ in range(s)]
    attrs: dict[str, Any] = {"group": group}
    if b.flag():
        attrs["kernel_shape"] = kernel
    strides = [b.integer(1, 3) for _ in range(s)]
    if b.flag():
        attrs["strides"] = strides
    if b.flag():
        attrs["dilations"] = [b.integer(1, 2) for _ in range(s)]
    kind = b.integer(0, 4)
    if kind == 0:
        attrs["pads"] = [b.integer(0, 2) for _ in range(2 * s)]
    elif kind == 1:
        attrs["auto_pad"] = b.pick(["SAME_UPPER", "SAME_LOWER", "VALID"])
    elif kind == 2 and "conv-transpose-output-shape" not in b.avoid:
        attrs["output_shape"] = [b.integer(1, 8) for _ in range(s)]
    if b.flag() and "strides" in attrs:
        attrs["output_padding"] = [b.integer(0, max(0, st - 1)) for st in attrs["strides"]]
    w = b.const(np.ones([c, m, *kernel]), "float32")
    ins = [x.name, w] + ([b.const(np.ones([m * group]), "float32")] if b.flag() else [])
    out = b.node("ConvTranspose", ins, **attrs)[0]
    return b.value(out, "float32", [x.dims[0], m * group] + [None] * s)


def pool_more(b: Builder, x: V) -> V | None:
    if not _f32(x, (3, 4)):
        return None
    s = x.rank - 2
    op = b.pick(["MaxPoolIdx", "LpPool", "GlobalMaxPool", "GlobalLpPool"])
    if op.startswith("Global"):
        return b.value(b.node(op, [x.name])[0], "float32", [*x.dims[:2], *[1] * s])
    attrs: dict[str, Any] = {"kernel_shape": [b.integer(1, 3) for _ in range(s)]}
    if b.flag():
        attrs["strides"] = [b.integer(1, 3) for _ in range(s)]
    if b.flag():
        attrs["pads"] = [b.integer(0, 1) for _ in range(2 * s)]
    elif b.flag():
        same = op == "LpPool" or "maxpool-indices-same" not in b.avoid
        attrs["auto_pad"] = b.pick(["SAME_UPPER", "SAME_LOWER", "VALID"] if same else ["VALID"])
    if op == "LpPool":
        if b.opset >= 18 and b.flag():
            attrs["ceil_mode"] = 1
        return b.value(b.node("LpPool", [x.name], p=2, **attrs)[0], "float32", [*x.dims[:2], *[None] * s])
    if b.flag():
        attrs["storage_order"] = b.integer(0, 1)
    if b.flag():
        attrs["ceil_mode"] = 1
    y, idx = b.node("MaxPool", [x.name], n_out=2, **attrs)
    dims: list[Dim] = [*x.dims[:2], *[None] * s]
    b.value(idx, "int64", dims)
    return b.value(y, "float32", dims)


def rnn(b: Builder, x: V) -> V | None:
    if not _f32(x, (3,)):
        return None
    op = b.pick(["RNN", "GRU", "LSTM"])
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    layout = b.integer(0, 1) if b.opset >= 14 else 0
    direction = b.pick(["forward", "reverse", "bidirectional"])
    nd = 2 if direction == "bidirectional" else 1
    h = b.pick([1, 2, 3])
    i = x.dims[2] if isinstance(x.dims[2], int) else b.pick([1, 2])
    batch = x.dims[1 - layout]
    ins = [x.name, b.const(np.ones([nd, g * h, i]), "float32"), b.const(np.ones([nd, g * h, h]), "float32")]
    if b.flag():
        ins.append(b.const(np.zeros([nd, 2 * g * h]), "float32"))
    if b.flag() and batch is not None:
        while len(ins) < 4:
            ins.append("")
        ins.append(b.new_input("int32", [b.like(batch)], (1, x.dims[layout] or 1)).name)
    if b.flag():
        while len(ins) < 5:
            ins.append("")
        hb = b.like(batch)
        ins.append(b.new_input("float32", [nd, hb, h] if layout == 0 else [hb, nd, h]).name)
    n_out = 3 if op == "LSTM" else 2
    extra = {"layout": 1} if layout else {}
    outs = b.node(op, ins, n_out=n_out, hidden_size=h, direction=direction, **extra)
    for o in outs[1:]:
        b.value(o, "float32", [None] * 3)
    return b.value(outs[0], "float32", [None] * 4)


def attention(b: Builder, x: V) -> V | None:
    """``Attention`` of opset 23 with ``x`` the query (3-d: heads given, or 4-d)."""
    if not _f32(x, (3, 4)) or b.opset < 21:
        return None
    kv_heads = b.pick([1, 2])
    q_heads = kv_heads * b.pick([1, 2])
    length = b.input_dim()
    if x.rank == 4:
        bd, dd = b.like(x.dims[0]), b.like(x.dims[3])
        k = b.new_input("float32", [bd, kv_heads, length, dd])
        v = b.new_input("float32", [bd, kv_heads, length, b.input_dim()])
        attrs: dict[str, Any] = {}
    else:
        bd = b.like(x.dims[0])
        k = b.new_input("float32", [bd, length, kv_heads * b.pick([1, 2])])
        v = b.new_input("float32", [bd, length, kv_heads * b.pick([1, 2])])
        attrs = {"q_num_heads": q_heads, "kv_num_heads": kv_heads}
    ins = [x.name, k.name, v.name]
    if b.flag():
        ins.append(b.new_input(b.pick(["float32", "bool"]), [b.like(x.dims[-2]), b.like(length)]).name)
    if b.flag():
        attrs["is_causal"] = 1
    outs = b.node("Attention", ins, n_out=b.pick([1, 1, 3]), **attrs)
    for o in outs[1:]:
        b.value(o, "float32", [None] * 4)
    return b.value(outs[0], "float32", [None] * x.rank)


def contrib(b: Builder, x: V) -> V | None:
    """com.microsoft's ``FastGelu``/``BiasGelu``/``SkipLayerNormalization``/``BiasAdd``-like ops."""
    if not _f32(x, (2, 3)):
        return None
    hidden = x.dims[-1]
    op = b.pick(
        [
            "FastGelu",
            "BiasGelu",
            "SkipLayerNormalization",
            "SkipSimplifiedLayerNormalization",
            "MultiHeadAttention",
        ]
    )
    if op in ("FastGelu", "BiasGelu"):
        bias = op == "BiasGelu" or b.flag()
        ins = [x.name] + ([b.new_input("float32", [b.like(hidden)]).name] if bias else [])
        return b.value(b.node(op, ins, domain=MS)[0], "float32", x.dims)
    if op.startswith("Skip"):
        if x.rank != 3:
            return None
        skip = b.new_input("float32", [b.like(d) for d in x.dims])
        gamma = b.new_input("float32", [b.like(hidden)])
        ins = [x.name, skip.name, gamma.name]
        if op == "SkipLayerNormalization" and b.flag():
            ins.append(b.new_input("float32", [b.like(hidden)]).name)
        out = b.node(op, ins, n_out=1, domain=MS)[0]
        return b.value(out, "float32", x.dims)
    if x.rank != 3:
        return None
    heads = b.pick([1, 2])
    length = b.input_dim()
    k = b.new_input("float32", [b.like(x.dims[0]), length, b.like(hidden)])
    v = b.new_input("float32", [b.like(x.dims[0]), b.like(length), b.input_dim()])
    out = b.node("MultiHeadAttention", [x.name, k.name, v.name], num_heads=heads, domain=MS)[0]
    return b.value(out, "float32", [None] * 3)


def resize_computed(b: Builder, x: V) -> V | None:
    """``Resize`` to sizes computed from shapes (and, opset 18, of some axes, keeping the ratio)."""
    if not _f32(x, (1, 2, 3, 4)):
        return None
    attrs: dict[str, Any] = {}
    if b.opset >= 18 and b.flag():
        axes = sorted({b.integer(0, x.rank - 1) for _ in range(2)})
        if b.flag():  # (onnxruntime 1.23 ignores negative axes with a policy: the input's shape)
            attrs["keep_aspect_ratio_policy"] = b.pick(["not_larger", "not_smaller"])
        neg = "keep_aspect_ratio_policy" not in attrs
        attrs["axes"] = [a - x.rank if neg and b.flag() else a for a in axes]
        n = len(axes)
    else:
        n = x.rank
    parts = []
    got = 0
    while got < n:
        p, k = shape_part(b, x) if b.flag() else (b.const([b.integer(1, 4)]), 1)
        if got + k > n:
            p, k = b.const([b.integer(1, 4)]), 1
        if k:  # (at least 1: onnxruntime refuses a size 0 of a non-empty axis, the reference not)
            p = b.node("Max", [p, b.const([1] * k)])[0]
            parts.append(b.node("Mul", [p, b.const([b.pick([1, 2])])])[0] if b.flag() else p)
        got += k
    sizes = parts[0] if len(parts) == 1 else b.node("Concat", parts, axis=0)[0]
    out = b.node("Resize", [x.name, "", "", sizes], mode="nearest", **attrs)[0]
    return b.value(out, "float32", [None] * x.rank)


def center_crop_pad(b: Builder, x: V) -> V | None:
    if b.opset < 18 or x.rank == 0 or ("center-crop-pad-empty" in b.avoid and (b.zero or 0 in x.dims)):
        return None
    if b.flag():
        axes = sorted({b.integer(0, x.rank - 1) for _ in range(2)})
        attrs: dict[str, Any] = {"axes": [a - x.rank if b.flag() else a for a in axes]}
    else:
        axes, attrs = list(range(x.rank)), {}
    shape = b.const([b.integer(0, 5) for _ in axes])
    out = b.node("CenterCropPad", [x.name, shape], **attrs)[0]
    return b.value(out, x.dtype, [None if i in axes else d for i, d in enumerate(x.dims)])


def eye_like(b: Builder, x: V) -> V | None:
    if x.rank != 2:
        return None
    out = b.node("EyeLike", [x.name], k=b.integer(-2, 2), **({"dtype": 7} if b.flag() else {}))[0]
    return b.value(out, x.dtype, x.dims)


def shape_size(b: Builder, x: V) -> V | None:
    """``Size`` and ``Shape`` with ``start``/``end`` feeding ``ConstantOfShape``/``Reshape``."""
    if b.flag() and not (b.zero and "reshape-empty-target" in b.avoid):
        n = b.node("Size", [x.name])[0]
        r = b.node("Reshape", [x.name, b.node("Unsqueeze", [n, b.const([0])])[0]])[0]
        return b.value(r, x.dtype, [None])
    attrs = {}
    if b.opset >= 15:
        attrs = {"start": b.integer(-x.rank - 1, x.rank + 1), "end": b.integer(-x.rank - 1, x.rank + 1)}
    sh = b.node("Shape", [x.name], **attrs)[0]
    n = len(range(x.rank)[slice(attrs.get("start"), attrs.get("end"))]) if x.rank else 0
    if attrs:
        s, e = attrs["start"], attrs["end"]
        n = len(range(x.rank)[max(s, -x.rank) if s < 0 else s : max(e, -x.rank) if e < 0 else e])
    out = b.node("ConstantOfShape", [sh])[0]
    return b.value(out, "float32", [None] * n)
