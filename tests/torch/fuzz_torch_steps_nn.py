"""The PyTorch fuzzer's computing steps (:mod:`tests.torch.fuzz_torch_programs`): matmul, bmm,
linear, reductions, softmax, cumsum, topk, where, gather/index_select, arange and embeddings,
convolutions and pooling, layer/batch norm (eval), ``F.pad`` and ``interpolate`` with ``size=``.
"""

from __future__ import annotations

from tests.torch.fuzz_torch_builder import Builder, Dim, V
from tests.torch.fuzz_torch_steps import size_expr

__all__ = [
    "conv",
    "cumsum",
    "embedding",
    "gather",
    "interpolate",
    "linear",
    "matmul",
    "norm",
    "pad",
    "pool",
    "reduce",
    "softmax",
    "topk",
    "where",
]


def _last(x: V) -> int:
    d = x.dims[-1] if x.rank else None
    return d if isinstance(d, int) else 3


def matmul(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    kind = b.integer(0, 3)
    k = x.dims[-1]
    n = b.pick([2, 3, b.symbol_dim()])
    if kind == 0 or x.rank == 1:  # x @ w, w (k, n) or a vector, or batched
        lead = [b.like(d) for d in x.dims[:-2]] if x.rank > 2 and b.flag() else []
        w = b.new_input(x.dtype, [*lead, b.like(k), n] if b.integer(0, 4) else [b.like(k)])
        return b.emit(
            f"{x.name} @ {w.name}",
            x.dtype,
            [None] * max(x.rank, w.rank) if w.rank > 1 else [None] * (x.rank - 1),
        )
    if kind == 1 and x.rank == 3:
        w = b.new_input(x.dtype, [b.like(x.dims[0]), b.like(k), n])
        return b.emit(f"torch.bmm({x.name}, {w.name})", x.dtype, [x.dims[0], x.dims[1], n])
    if kind == 2 and x.rank == 2:
        w = b.new_input(x.dtype, [b.like(k), n])
        return b.emit(f"{x.name}.mm({w.name})", x.dtype, [x.dims[0], n])
    out = b.pick([1, 4])
    lin = b.layer(f"nn.Linear({_last(x)}, {out}, bias={b.flag()})")
    return b.emit(f"{lin}({x.name})", "float32", [*x.dims[:-1], out])


def linear(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    w = b.new_input("float32", [b.pick([2, 3]), b.like(x.dims[-1])])
    return b.emit(f"F.linear({x.name}, {w.name})", "float32", [*x.dims[:-1], None])


def reduce(b: Builder, x: V) -> V | None:
    keep = b.flag()
    kind = b.integer(0, 4)
    if x.rank == 0 or kind == 0:
        op = b.pick(["sum", "mean", "amax", "prod", "any", "max", "min"])
        return b.emit(f"{x.name}.{op}()", "bool" if op == "any" else x.dtype, [])
    d = b.axis(x)
    if kind == 1:
        op = b.pick(["sum", "mean", "amax", "amin", "prod", "any", "all", "std", "logsumexp", "norm"])
        arg = f"dim={d}"
        return b.emit(f"{x.name}.{op}({arg}, keepdim={keep})", x.dtype, [None] * (x.rank - (not keep)))
    if kind == 2:
        op = b.pick(["max", "min", "median"])
        return b.emit(
            f"{x.name}.{op}({d}, keepdim={keep})[{b.pick([0, 1])}]", x.dtype, [None] * (x.rank - (not keep))
        )
    if kind == 3:
        op = b.pick(["argmax", "argmin"])
        return b.emit(f"{x.name}.{op}({d}, keepdim={keep})", "int64", [None] * (x.rank - (not keep)))
    e = b.axis(x)
    return b.emit(
        f"{x.name}.sum(({d}, {e}), keepdim={keep})",
        x.dtype,
        [None] * (x.rank - (0 if keep else 1 + (d % max(x.rank, 1) != e % max(x.rank, 1)))),
    )


def softmax(b: Builder, x: V) -> V | None:
    d = b.axis(x)
    op = b.pick(["softmax", "log_softmax"])
    if b.flag():
        return b.emit(f"F.{op}({x.name}, dim={d})", x.dtype, x.dims)
    return b.emit(f"{x.name}.{op}({d})", x.dtype, x.dims)


def cumsum(b: Builder, x: V) -> V | None:
    d = b.axis(x)
    op = b.pick(["cumsum", "cumprod", "cummax"])
    if op == "cummax":
        return b.emit(f"{x.name}.cummax({d})[{b.pick([0, 1])}]", x.dtype, x.dims)
    return b.emit(f"{x.name}.{op}({d})", x.dtype, x.dims)


def topk(b: Builder, x: V) -> V | None:
    d = b.axis(x)
    r = x.rank
    k = b.pick(
        [
            "1",
            "2",
            f"{x.size(d % r)}" if r and -r <= d < r else "1",
            f"{x.size(d % r)} // 2" if r and -r <= d < r else "0",
        ]
    )
    if b.integer(0, 3) == 0:
        return b.emit(f"{x.name}.sort({d})[{b.pick([0, 1])}]", x.dtype, x.dims)
    return b.emit(f"{x.name}.topk({k}, {d}, largest={b.flag()})[{b.pick([0, 1])}]", x.dtype, [None] * r)


def where(b: Builder, x: V) -> V | None:
    cond = b.pick([f"{x.name} > 0", b.operand(x, "bool").name])
    other = b.pick(["0.0", "0", b.pick(b.values).name, b.operand(x).name])
    if b.flag():
        return b.emit(f"torch.where({cond}, {x.name}, {other})", x.dtype, [None] * x.rank)
    return b.emit(f"{x.name}.masked_fill({cond}, 0)", x.dtype, [None] * x.rank)


def gather(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    d = b.axis(x)
    dd: Dim = x.dims[d % x.rank] if -x.rank <= d < x.rank else None
    hi = f"{dd} - 1" if dd is not None else "0"
    if b.flag() and not ("empty-index-range" in b.avoid and b.zero):
        ix = b.new_input("int64", [b.like(e) for e in x.dims], ("0", hi))
        return b.emit(f"torch.gather({x.name}, {d}, {ix.name})", x.dtype, ix.dims)
    if b.flag():
        ix = b.new_input("int64", [b.input_dim()], ("0", hi))
    else:
        n, _ = size_expr(b, b.pick(b.values))
        ix = b.emit(f"torch.arange({n})", "int64", [None])
    return b.emit(f"{x.name}.index_select({d}, {ix.name})", x.dtype, [None] * x.rank)


def embedding(b: Builder, x: V) -> V | None:
    """``arange(x.shape[i])`` (or an integer value) into an embedding table."""
    rows = b.pick([4, 8, 6])
    emb = b.layer(f"nn.Embedding({rows}, {b.pick([2, 3])})")
    if x.dtype in ("int64", "int32") and b.flag():  # ids of x's shape, in the table or one past it
        ids = b.new_input("int64", [b.like(d) for d in x.dims] or [2], ("0", str(b.pick([rows - 1, rows]))))
        return b.emit(f"{emb}({ids.name})", "float32", [*ids.dims, None])
    n, _ = size_expr(b, x)
    ids = b.emit(f"torch.arange({n})" if b.flag() else f"torch.arange({n}).unsqueeze(0)", "int64", [None])
    return b.emit(f"{emb}({ids.name})", "float32", [None] * (ids.rank + 1))


def conv(b: Builder, x: V) -> V | None:
    nd = b.pick([1, 2]) if x.rank >= 3 else 1
    if x.rank not in ((nd + 2,) if "unbatched" in b.avoid else (nd + 1, nd + 2)):
        return None
    cin = x.dims[-nd - 1]
    cin_ = cin if isinstance(cin, int) else b.pick([1, 2, 3])
    k, s, p, dil = b.pick([1, 2, 3]), b.pick([1, 1, 2]), b.pick([0, 0, 1, 2]), b.pick([1, 1, 2])
    if b.integer(0, 2) == 0:
        p = b.pick(["'same'", "'valid'"]) if s == 1 else "'valid'"
    groups = 1 if cin_ % 2 or b.flag() or ("conv-groups-empty" in b.avoid and b.zero) else 2
    if b.integer(0, 3) == 0:
        m = b.layer(
            f"nn.ConvTranspose{nd}d({cin_}, 2, {k}, stride={s}, "
            f"padding={p if isinstance(p, int) else 0}, dilation={dil})"
        )
    else:
        m = b.layer(f"nn.Conv{nd}d({cin_}, 2, {k}, stride={s}, padding={p}, dilation={dil}, groups={groups})")
    return b.emit(f"{m}({x.name}.float())", "float32", [None] * x.rank)


def pool(b: Builder, x: V) -> V | None:
    nd = b.pick([1, 2]) if x.rank >= 3 else 1
    if x.rank not in ((nd + 2,) if "unbatched" in b.avoid else (nd + 1, nd + 2)):
        return None
    kind = b.integer(0, 2)
    if kind == 0 and "adaptive-pool-empty" in b.avoid and b.zero:
        kind = 1
    if kind == 0 and nd == 1 and "adaptive-pool-rank" in b.avoid:
        kind = 1
    if kind == 0:
        m = b.layer(f"nn.Adaptive{b.pick(['Avg', 'Max'])}Pool{nd}d({b.pick([1, 2, 3])})")
    else:
        k = b.pick([1, 2, 3])
        s = b.pick([None, 1, 2])
        p = b.pick([0, 0, 1]) if k > 1 else 0
        ceil = b.flag()
        dil = f", dilation={b.pick([1, 2])}" if kind == 1 else ""
        m = b.layer(f"nn.{'Max' if kind == 1 else 'Avg'}Pool{nd}d({k}, {s}, {p}{dil}, ceil_mode={ceil})")
    return b.emit(f"{m}({x.name}.float())", "float32", [None] * x.rank)


def norm(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    if b.flag() or x.rank < 2:
        n = _last(x)
        if b.flag() and x.rank >= 2:
            shape = f"({x.dims[-2] if isinstance(x.dims[-2], int) else 2}, {n})"
        else:
            shape = str(n)
        m = b.layer(f"nn.LayerNorm({shape})")
        return b.emit(f"{m}({x.name}.float())", "float32", x.dims)
    c = x.dims[1]
    c_ = c if isinstance(c, int) else b.pick([1, 2, 3])
    nd = {2: 1, 3: 1, 4: 2, 5: 3}.get(x.rank)
    if nd is None:
        return None
    if "norm-empty" in b.avoid and b.zero:  # (torch skips the checks of an empty batch)
        return None
    m = b.layer(f"nn.BatchNorm{nd}d({c_})" if b.integer(0, 2) else f"nn.GroupNorm({b.pick([1, c_])}, {c_})")
    return b.emit(f"{m}({x.name}.float())", "float32", x.dims)


def pad(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    mode = b.pick(["constant", "constant", "reflect", "replicate", "circular"])
    n = b.integer(1, min(x.rank, 3 if mode == "constant" else 2))
    crop = mode == "constant" and not ("pad-crop-empty" in b.avoid and b.zero)
    pads = [b.pick([0, 1, 2, -1] if crop else [0, 1, 2]) for _ in range(2 * n)]
    arg = f", mode='{mode}'" if mode != "constant" else (", value=1.0" if b.flag() else "")
    return b.emit(f"F.pad({x.name}.float(), {tuple(pads)}{arg})", "float32", [None] * x.rank)


def interpolate(b: Builder, x: V) -> V | None:
    nd = x.rank - 2
    if nd not in (1, 2):
        return None
    mode = b.pick(["nearest", "nearest", "linear" if nd == 1 else "bilinear", "area", "nearest-exact"])
    sizes = [
        b.pick([str(b.integer(1, 5)), f"{x.size(2 + i)} * 2", f"{x.size(2 + i)} // 2", "0"])
        for i in range(nd)
    ]
    size = sizes[0] if nd == 1 and b.flag() else f"({', '.join(sizes)})"
    if b.integer(0, 3) == 0:
        return b.emit(
            f"F.interpolate({x.name}.float(), scale_factor={b.pick([2, 0.5, 3])}, mode='{mode}')",
            "float32",
            [None] * x.rank,
        )
    return b.emit(f"F.interpolate({x.name}.float(), size={size}, mode='{mode}')", "float32", [None] * x.rank)
