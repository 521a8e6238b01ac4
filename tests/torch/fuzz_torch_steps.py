"""The PyTorch fuzzer's shape steps (:mod:`tests.torch.fuzz_torch_programs`): element-wise and
broadcasting ops (other ranks, scalars, mixed dtypes), reshape/view to targets computed from
``x.shape``, flatten/unflatten, transpose/permute, squeeze/unsqueeze, expand/repeat, cat/stack,
split/chunk/narrow, slicing and indexing.

Each step writes source lines; it knows each value's rank and (where it can) its dimensions,
enough to draw plausible arguments. Whether the program runs at a size is the oracle's business
(eager torch), never the generator's: arguments are sometimes wrong on purpose.
"""

from __future__ import annotations

from tests.torch.fuzz_torch_builder import Builder, Dim, V

__all__ = [
    "binary",
    "cast",
    "cat",
    "expand",
    "flatten",
    "index",
    "narrow",
    "permute",
    "reshape",
    "slice_",
    "split",
    "squeeze",
    "unary",
    "unsqueeze",
    "size_expr",
]


def unary(b: Builder, x: V) -> V | None:
    if x.dtype == "bool":
        op = b.pick(["~{x}", "{x}.logical_not()", "{x}.int()"])
        return b.emit(op.format(x=x.name), "int32" if "int()" in op else "bool", x.dims)
    ops = ["{x}.abs()", "-{x}", "{x}.clamp(min=0)"]
    if x.is_float:
        ops += ["{x}.relu()", "torch.tanh({x})", "{x}.sigmoid()", "F.gelu({x})", "{x}.exp()"]
    return b.emit(b.pick(ops).format(x=x.name), x.dtype, x.dims)


def cast(b: Builder, x: V) -> V | None:
    to, text = b.pick(
        [
            ("float32", "{x}.float()"),
            ("int64", "{x}.long()"),
            ("bool", "{x}.bool()"),
            ("int32", "{x}.to(torch.int32)"),
            ("float64", "{x}.double()"),
            ("int64", "{x}.to(torch.int64)"),
            ("float32", "{x}.type_as(x0)"),
        ]
    )
    return b.emit(text.format(x=x.name), to, x.dims)


def _scalar(b: Builder) -> str:
    return str(b.pick([2, 0.5, -1, True, 3, "1e-3"]))


def binary(b: Builder, x: V) -> V | None:
    op = b.pick(["+", "-", "*", "/", "//", "max", "==", "<", "&", "pow", "%", "add_"])
    kind = b.integer(0, 6)
    if kind == 0:  # an earlier value: any broadcast, right or wrong, any dtype
        y = b.pick(b.values)
        other, ydims, ydt = y.name, y.dims, y.dtype
    elif kind == 1:  # a Python scalar
        other, ydims, ydt = _scalar(b), (), "scalar"
    elif kind == 2:  # a 0-d tensor of another dtype
        dt = b.pick(["int64", "float32", "bool", "float64"])
        other, ydims, ydt = f"torch.tensor(1, dtype=torch.{dt})", (), dt
    elif kind == 3:  # another dtype, shaped like x
        y = b.operand(x, b.pick(["int64", "float32", "bool", "int32"]))
        other, ydims, ydt = y.name, y.dims, y.dtype
    else:
        y = b.operand(x)
        other, ydims, ydt = y.name, y.dims, y.dtype
    a, c = (x.name, other) if b.flag() or ydt == "scalar" else (other, x.name)
    rank = max(x.rank, len(ydims))
    dims: list[Dim] = [None] * rank
    if op == "max":
        expr = f"torch.maximum({a}, {c})" if ydt != "scalar" else f"{x.name}.clamp(max={other})"
    elif op == "pow":
        expr = f"torch.pow({a}, {c})"
    elif op == "add_":  # in place: x cannot grow
        if x.name.startswith("x"):
            return None
        return b.emit(f"{x.name}.add_({other})", x.dtype, x.dims)
    else:
        expr = f"{a} {op} {c}"
    dt = "bool" if op in ("==", "<") else x.dtype if ydt in ("scalar", x.dtype) else "?"
    if op == "/" and dt != "bool" and not (x.is_float or ydt.startswith("float")):
        dt = "float32"
    return b.emit(expr, dt if dt != "?" else x.dtype, dims)


def size_expr(b: Builder, x: V) -> tuple[str, Dim]:
    """A size computed from ``x.shape`` (a product, a quotient, an entry, a constant)."""
    if x.rank == 0:
        return str(b.integer(1, 4)), None
    i, j = b.integer(0, x.rank - 1), b.integer(0, x.rank - 1)
    kind = b.integer(0, 5)
    if kind == 0:
        return x.size(i), x.dims[i]
    if kind == 1:
        return f"{x.size(i)} * {x.size(j)}", None
    if kind == 2:
        return f"{x.size(i)} // {b.integer(1, 3)}", None
    if kind == 3:
        return f"{x.size(i)} - 1", None
    if kind == 4:
        return f"x0.size({b.integer(0, max(0, len(b.inputs[0].dims) - 1))})" if b.inputs[
            0
        ].dims else "1", None
    return str(b.integer(1, 4)), b.integer(1, 4)


def reshape(b: Builder, x: V) -> V | None:
    method = b.pick(["view", "reshape"])
    kind = b.integer(0, 5)
    if kind == 0:
        parts = ["-1"]
    elif kind == 1 and x.rank >= 1:
        parts = [x.size(0), "-1"]
    elif kind == 2 and x.rank >= 2:
        parts = [f"{x.size(0)} * {x.size(1)}", *[x.size(i) for i in range(2, x.rank)]]
    elif kind == 3 and x.rank >= 2:
        parts = [x.size(0), x.size(x.rank - 1), "-1"]
    elif kind == 4:
        parts = [size_expr(b, x)[0] for _ in range(b.integer(1, 3))]
        parts[b.integer(0, len(parts) - 1)] = "-1" if b.flag() else parts[0]
    else:
        parts = [x.size(i) for i in range(x.rank)] + ["1"] if b.flag() else ["-1", str(b.pick([1, 2, 3]))]
    return b.emit(f"{x.name}.{method}({', '.join(parts)})", x.dtype, [None] * len(parts))


def flatten(b: Builder, x: V) -> V | None:
    if x.rank == 0 and "flatten-0d" in b.avoid:
        return b.emit(f"{x.name}.flatten()", x.dtype, [1])
    if b.flag() or x.rank == 0:
        s = b.integer(-max(x.rank, 1), max(x.rank - 1, 0))
        e = b.pick([-1, s, max(x.rank - 1, 0)])
        r0 = max(x.rank, 1)
        lo, hi = s % r0, e % r0
        rank = x.rank - (hi - lo) if hi >= lo else x.rank
        return b.emit(f"{x.name}.flatten({s}, {e})", x.dtype, [None] * max(rank, 1))
    d = b.axis(x)
    computed = -x.rank <= d < x.rank and "unflatten-runtime" not in b.avoid
    sizes = b.pick([f"({x.size(d % x.rank)}, 1)" if computed else "(1, -1)", "(2, -1)", "(-1, 1)"])
    return b.emit(f"{x.name}.unflatten({d}, {sizes})", x.dtype, [None] * (x.rank + 1))


def permute(b: Builder, x: V) -> V | None:
    if x.rank < 2 or b.integer(0, 3) == 0:
        i, j = b.axis(x), b.axis(x)
        if x.rank == 2 and b.flag():
            return b.emit(f"{x.name}.t()", x.dtype, x.dims[::-1])
        return b.emit(f"{x.name}.transpose({i}, {j})", x.dtype, [None] * x.rank)
    order = list(b.draw(__import__("hypothesis").strategies.permutations(range(x.rank))))
    if b.flag():
        return b.emit(f"{x.name}.mT", x.dtype, [*x.dims[:-2], x.dims[-1], x.dims[-2]])
    return b.emit(f"{x.name}.permute({', '.join(map(str, order))})", x.dtype, [x.dims[i] for i in order])


def squeeze(b: Builder, x: V) -> V | None:
    if b.flag() and x.rank and (x.name.startswith("x") or "squeeze-intermediate" not in b.avoid):
        d = b.axis(x)
        keep = [dd for i, dd in enumerate(x.dims) if i != d % x.rank or dd != 1]
        return b.emit(
            f"{x.name}.squeeze({d})",
            x.dtype,
            keep if all(dd is not None for dd in x.dims) else [None] * x.rank,
        )
    if b.flag() or "squeeze-intermediate" in b.avoid:
        return b.emit(f"{x.name}.squeeze()", x.dtype, [])
    return b.emit(f"{x.name}.squeeze({tuple(range(x.rank))})", x.dtype, [])


def unsqueeze(b: Builder, x: V) -> V | None:
    d = b.axis(x, extra=1)
    if b.flag():
        return b.emit(f"{x.name}.unsqueeze({d})", x.dtype, [None] * (x.rank + 1))
    sl = ", ".join([":"] * b.integer(0, x.rank) + ["None"])
    return b.emit(f"{x.name}[{sl}]", x.dtype, [None] * (x.rank + 1))


def expand(b: Builder, x: V) -> V | None:
    if b.flag():
        reps = [str(b.integer(1, 3)) for _ in range(x.rank + b.integer(0, 1))] or ["2"]
        return b.emit(f"{x.name}.repeat({', '.join(reps)})", x.dtype, [None] * len(reps))
    extra = b.integer(0, 1)
    y = b.pick(b.values)
    parts = [y.size(0) if y.rank and b.flag() else str(b.integer(1, 3)) for _ in range(extra)]
    for d in x.dims:
        parts.append(
            b.pick(["-1", "-1", "3", y.size(b.integer(0, y.rank - 1)) if y.rank else "1"])
            if d != 1 or b.flag()
            else b.pick([y.size(0) if y.rank else "2", "2", "-1"])
        )
    target = f"{y.name}.shape" if b.integer(0, 4) == 0 else ", ".join(parts) or "()"
    rank = y.rank if target.endswith(".shape") else len(parts)
    return b.emit(f"{x.name}.expand({target})", x.dtype, [None] * rank)


def cat(b: Builder, x: V) -> V | None:
    others = [b.pick(b.values) if b.flag() else b.operand(x) for _ in range(b.integer(1, 2))]
    if "cat-legacy-empty" in b.avoid and b.zero:
        others = [o for o in others if o.rank == x.rank] or [b.operand(x)]
    names = ", ".join([x.name, *[o.name for o in others]])
    if b.flag():
        d = b.axis(x)
        return b.emit(f"torch.cat([{names}], {d})", x.dtype, [None] * x.rank)
    d = b.axis(x, extra=1)
    return b.emit(f"torch.stack([{names}], dim={d})", x.dtype, [None] * (x.rank + 1))


def split(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    d = b.axis(x)
    n = b.integer(1, 3)
    kind = b.integer(0, 3)
    if "split-symbolic" in b.avoid and kind in (1, 3):
        kind = 0
    if kind == 0:
        call = f"{x.name}.chunk({n}, {d})"
    elif kind == 1:
        call = f"{x.name}.split({n}, {d})"
    elif kind == 2:
        ok = -x.rank <= d < x.rank
        call = f"{x.name}.split([1, {x.size(d % x.rank) if ok else 1} - 1], {d})"
        n = 2
    else:
        call = f"{x.name}.unbind({d})"
        return b.emit(f"{call}[{b.pick([0, -1])}]", x.dtype, [None] * (x.rank - 1))
    # (a piece from the end, or a slice of them, where torch may make fewer: KNOWN)
    fewer = "chunk-fewer-pieces" not in b.avoid
    pick = b.pick([0, -1, 1] if fewer else [0, 1]) if n > 1 else 0
    if b.flag():
        sliced = f"{call}[:{n}]" if kind in (0, 1) and fewer else call
        got = b.emit_many(sliced, [(x.dtype, [None] * x.rank)] * n)
        return got[-1]
    return b.emit(f"{call}[{pick}]", x.dtype, [None] * x.rank)


def narrow(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    d = b.axis(x)
    ok = -x.rank <= d < x.rank
    computed = ok and "narrow-runtime" not in b.avoid
    start = b.pick(["0", "1", "-1", f"{x.size(d % x.rank)} // 2" if computed else "0"])
    length = b.pick(["1", "2", "0", f"{x.size(d % x.rank)} - 1" if computed else "1"])
    return b.emit(f"{x.name}.narrow({d}, {start}, {length})", x.dtype, [None] * x.rank)


def _bound(b: Builder, x: V, i: int) -> str:
    # (`n - 1` of an empty axis is -1, from the end: KNOWN slice-size-minus-one-empty)
    minus = [] if b.zero and "slice-size-minus-one-empty" in b.avoid else [f"{x.size(i)} - 1"]
    return str(b.pick(["", "1", "-1", "2", "-2", *minus, f"{x.size(i)} // 2", "100", "-100"]))


def slice_(b: Builder, x: V) -> V | None:
    if x.rank == 0:
        return None
    parts = []
    for i in range(b.integer(1, x.rank)):
        s, e = _bound(b, x, i), _bound(b, x, i)
        step = b.pick(["", "", "2", "3"])
        parts.append(f"{s}:{e}" + (f":{step}" if step else ""))
    if b.flag() and len(parts) < x.rank:
        parts = ["...", *parts]
    return b.emit(f"{x.name}[{', '.join(parts)}]", x.dtype, [None] * x.rank)


def index(b: Builder, x: V) -> V | None:
    """Integer indexing: constants, computed sizes, an index tensor (ranged input or arange)."""
    if x.rank == 0:
        return None
    i = b.integer(0, x.rank - 1)
    kind = b.integer(0, 5)
    lead = [":"] * i
    if kind == 0:
        at = b.pick(["0", "-1", "1", "2", f"{x.size(i)} - 1", f"-{x.size(i)}", x.size(i)])
        return b.emit(f"{x.name}[{', '.join([*lead, at])}]", x.dtype, [None] * (x.rank - 1))
    if kind in (1, 2):
        d = x.dims[i]
        hi = b.pick([f"{d} - 1" if isinstance(d, (int, str)) else "0", "0", "2"])
        ix = b.new_input(
            "int64",
            [b.input_dim() for _ in range(b.integer(1, 2))],
            (b.pick(["0", f"-{hi}" if hi != "0" else "-1"]), hi),
        )
        return b.emit(f"{x.name}[{', '.join([*lead, ix.name])}]", x.dtype, [None] * (x.rank - 1 + ix.rank))
    if kind == 3:
        y = b.pick(b.values)
        n = y.size(b.integer(0, y.rank - 1)) if y.rank else "2"
        return b.emit(f"{x.name}[{', '.join([*lead, f'torch.arange({n})'])}]", x.dtype, [None] * x.rank)
    if kind == 4:  # a boolean mask (a size only the run decides)
        if b.flag():
            return b.emit(f"{x.name}[{x.name} > 0]", x.dtype, [None])
        return b.emit(f"torch.nonzero({x.name})", "int64", [None, x.rank])
    at = b.pick(["[0, -1]", "[1, 0, 1]"])
    return b.emit(f"{x.name}[{', '.join([*lead, at])}]", x.dtype, [None] * x.rank)
