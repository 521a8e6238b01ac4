"""Convolution and pooling: ``conv1d/2d/3d``, ``pool1d/2d/3d``, ``global_pool2d``,
``adaptive_pool2d``.

Layouts are permutations of ``N``, ``C`` and the spatial letters (``W``; ``H W``; ``D H W``) for
data, and of ``O``, ``I`` and the spatial letters for kernels (``NCHW``/``NHWC``, ``OIHW``/
``HWIO``, ...). For each spatial axis with input size ``D``, kernel ``k``, dilation ``d``, stride
``s`` and total padding ``P`` (``padding`` has 1 value: every side; ``nd`` values: both sides of
each axis; ``2*nd`` values: all befores then all afters, Relay's ``(top, left, bottom, right)``):

    out = (D + P - d*(k - 1) - 1)//s + 1             (ceil_mode: (D + P - d*(k-1) - 1 + s - 1)//s + 1)

and the dilated kernel must fit in the padded input (``D + P >= d*(k - 1) + 1``). Conv2d over
``(n, 10, h, w)`` with kernel 3, padding 1, stride 2 gives ``(h - 1)//2 + 1``. Pooling takes two
more attributes for onnxruntime's rules (the ONNX importer's pools): ``short_windows`` (``trunc``
or ``floor``: over a constant ``D`` the window may be longer than the padded input, with
``trunc(num/s) + 1`` or ``floor(num/s) + 1`` windows for ``num = D + P - d*(k - 1) - 1 < 0``
where that is not negative) and ``only_batch_empty`` (no axis but ``N`` is empty unless ``N`` is).

Convolution weights are ``(channels, C/groups, *kernel)`` in OI-order: when ``channels`` and
``kernel_size`` are given the weight is *assigned* that shape (an unannotated weight is inferred);
otherwise the weight must be known and ``channels = O``. The checks Relay makes optimistically
are conditions: ``C % groups == 0``, ``channels % groups == 0``, ``I * groups == C``, kernel
sizes and ``channels`` matching the weight, and a kernel size that may be 0 needs ``k >= 1``.

``out_layout`` (Relax) is the result's layout for convolution and every pooling (default: the
data's layout). Data of unknown rank still gives a result of rank ``nd + 2`` (the layout says
which dimension is which: the output channels are known when ``channels`` or the weight gives
them); a weight of unknown rank gives what the attributes determine (``kernel_size``,
``channels``) and unknown dimensions for the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from symshape.encoding.conds import Cond, any_of, eq, ge
from symshape.encoding.dims import Dim, as_dim, bounds, floordiv, mod
from symshape.encoding.types import Attrs, Tensor, TensorType, Type
from symshape.errors import RANK_MISMATCH, SHAPE_MISMATCH
from symshape.relations.base import Context, relation
from symshape.relations.common import (
    Checks,
    attr_bool,
    attr_dtype,
    attr_int,
    attr_ints,
    attr_str,
    bad,
    exact_div,
    product,
)
from symshape.relations.operands import tensor_or_defer

__all__ = [
    "SPATIAL",
    "DATA_LAYOUTS",
    "KERNEL_LAYOUTS",
    "parse_layout",
    "parse_padding",
    "window_out",
    "ceil_mode_window",
    "ConvAttrs",
    "parse_conv_attrs",
    "PoolAttrs",
    "parse_pool_attrs",
    "parse_out_layout",
    "parse_layouts",
    "WindowAttrs",
    "make_conv_rel",
    "make_pool_rel",
    "only_batch_empty",
    "SHORT_WINDOWS",
]

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
DATA_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
KERNEL_LAYOUTS = {1: "OIW", 2: "OIHW", 3: "OIDHW"}


def parse_layout(v: object, letters: str, op: str, name: str) -> str:
    """A layout string: a permutation of ``letters``."""
    if not isinstance(v, str) or sorted(v) != sorted(letters):
        raise bad(op, f"{name} must be a permutation of {letters!r}, got {v!r}")
    return v


def parse_padding(attrs: Attrs, nd: int, op: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(before, after)`` per spatial axis from 1, ``nd`` or ``2*nd`` values."""
    p = attr_ints(attrs, "padding", 0, op, lengths=sorted({1, nd, 2 * nd}), lo=0)
    assert p is not None
    if len(p) == 1:
        return p * nd, p * nd
    if len(p) == nd:
        return p, p
    return p[:nd], p[nd:]


def window_out(d: Dim, pad: int, k: Dim, dil: int, s: int, ceil: bool = False) -> Dim:
    """The number of windows of a dilated kernel over a padded axis."""
    span = d + pad - dil * (k - 1) - 1
    if ceil:
        span = span + s - 1
    return floordiv(span, s) + 1


def ceil_mode_window(k: int, s: int, dil: int, pad_end: int) -> tuple[int, int, int]:
    """The floor-mode window ``(kernel, dilation, end padding)`` of one axis that counts the windows
    a ``ceil_mode`` pooling has in PyTorch and ONNX: the starts ``0, s, 2s, ...`` up to
    ``D + pads - K + s - 1`` (``K = dil*(k - 1) + 1``), a last one that would start in the end
    padding dropped, so up to ``min(D + pads - K + s - 1, D + pad_begin - 1)``. Which bound is
    smaller depends on constants only (``pad_end + s <= K``): the kernel with ``s - 1`` more end
    padding, or a 1-wide window over ``D + pad_begin``.

    >>> ceil_mode_window(2, 2, 1, 0), ceil_mode_window(1, 2, 1, 0)
    ((2, 1, 1), (1, 1, 0))
    """
    if pad_end + s <= dil * (k - 1) + 1:
        return k, dil, pad_end + s - 1
    return 1, 1, 0


class WindowAttrs:
    """Validated attributes of a sliding window (convolution and pooling): per spatial axis the
    stride, the padding before and after, and the dilation."""

    __slots__ = ("dilation", "nd", "pad_after", "pad_before", "strides")

    def _parse_window(self, attrs: Attrs, nd: int, op: str) -> None:
        self.nd = nd
        self.strides = _spatial(attrs, "strides", 1, nd, op, lo=1)
        self.pad_before, self.pad_after = parse_padding(attrs, nd, op)
        self.dilation = _spatial(attrs, "dilation", 1, nd, op, lo=1)


class ConvAttrs(WindowAttrs):
    """Validated convolution attributes."""

    __slots__ = (
        "channels", "data_layout", "groups", "kernel_layout", "kernel_size", "out_dtype", "out_layout",
    )  # fmt: skip

    def __init__(self, attrs: Attrs, nd: int, op: str) -> None:
        self._parse_window(attrs, nd, op)
        self.groups = attr_int(attrs, "groups", 1, op, lo=1)
        ch = attrs.get("channels")
        self.channels = None if ch is None else attr_int(attrs, "channels", None, op, lo=1)
        ks = attrs.get("kernel_size")
        self.kernel_size = None if ks is None else _spatial(attrs, "kernel_size", None, nd, op, lo=1)
        self.data_layout = parse_layout(
            attrs.get("data_layout", DATA_LAYOUTS[nd]), "NC" + SPATIAL[nd], op, "data_layout"
        )
        self.kernel_layout = parse_layout(
            attrs.get("kernel_layout", KERNEL_LAYOUTS[nd]), "OI" + SPATIAL[nd], op, "kernel_layout"
        )
        self.out_layout = parse_out_layout(attrs, self.data_layout, nd, op)
        self.out_dtype = attr_dtype(attrs, "out_dtype", op)


def parse_conv_attrs(attrs: Attrs, nd: int, op: str) -> ConvAttrs:
    return _parsed(ConvAttrs, attrs, nd, op)


_W = TypeVar("_W", bound=WindowAttrs)

#: (class, rank, id(attributes)) -> (the attributes, their parse): the attributes of a relation
#: are parsed once per attribute object (calls with the same attributes share one); by identity,
#: since equal mappings may still differ in their values' types (``groups=True`` and ``1``)
_PARSED: dict[tuple[type, int, int], tuple[Attrs, WindowAttrs]] = {}


def _parsed(cls: type[_W], attrs: Attrs, nd: int, op: str) -> _W:
    """``cls(attrs, nd, op)`` (validated attributes, never changed after), remembered per
    attribute object; an error is raised again every time."""
    key = (cls, nd, id(attrs))
    hit = _PARSED.get(key)
    if hit is not None and hit[0] is attrs:
        out = hit[1]
    else:
        out = cls(attrs, nd, op)  # type: ignore[call-arg]
        if len(_PARSED) >= 1024:
            _PARSED.clear()
        _PARSED[key] = (attrs, out)
    assert isinstance(out, cls)
    return out


def _spatial(attrs: Attrs, name: str, default: object, nd: int, op: str, lo: int) -> tuple[int, ...]:
    v = attr_ints(attrs, name, default, op, lengths=(nd,) if nd == 1 else (1, nd), lo=lo)
    assert v is not None
    return v * nd if len(v) == 1 else v


def _to_layout(dims_by_letter: dict[str, Dim], layout: str) -> tuple[Dim, ...]:
    return tuple(map(dims_by_letter.__getitem__, layout))  # (a loop in C)


def _windows(
    ctx: Context,
    chk: Checks,
    xd: dict[str, Dim],
    od: dict[str, Dim],
    sp: str,
    kernel: Sequence[Dim | None],
    a: WindowAttrs,
    ceil: bool,
    what: str,
    short: str = "error",
) -> None:
    """The spatial output sizes into ``od`` (a fresh unknown where the kernel is unknown), and the
    conditions that every dilated window fits in the padded input (``short``: see
    :func:`_short_window`)."""
    for i, c in enumerate(sp):
        k = kernel[i]
        if k is None:
            od[c] = ctx.fresh_dim()
            continue
        pad = a.pad_before[i] + a.pad_after[i]
        dil = a.dilation[i]
        dv, kv = xd[c]._cv, k._cv  # (``constant_value``, read from its slot)
        if dv is not None and kv is not None and kv >= 1 and dv + pad >= dil * (kv - 1) + 1:
            # known sizes whose window fits (the conditions below would be true): in ints
            span = dv + pad - dil * (kv - 1) - 1 + (a.strides[i] - 1 if ceil else 0)
            od[c] = as_dim(span // a.strides[i] + 1)
            continue
        if short != "error" and dv is not None and kv is not None and kv >= 1:
            n = _short_window(dv + pad - dil * (kv - 1) - 1, a.strides[i], short)
            if n is not None:
                od[c] = as_dim(n)
                continue
        if not k.is_constant and bounds(k)[0] < 1:
            chk.require(ge(k, 1), SHAPE_MISMATCH, f"{ctx.name}: the {what} size {k} on axis {c} may be 0")
        chk.require(
            ge(xd[c] + pad, dil * (k - 1) + 1),
            SHAPE_MISMATCH,
            f"{ctx.name}: the {what} ({k}, dilation {dil}) is larger than the padded input "
            f"({xd[c]} + {pad}) on axis {c}",
        )
        od[c] = window_out(xd[c], pad, k, dil, a.strides[i], ceil)


def only_batch_empty(n: Dim, rest: Sequence[Dim]) -> Cond | None:
    """onnxruntime's rule for a pooling's input (``Only N can be zero``): no axis but the batch
    ``n`` is empty unless the batch is, ``n == 0 or prod(rest) >= 1`` (None where the bounds
    decide it true)."""
    p = product(rest)
    if bounds(p)[0] >= 1 or bounds(n)[1] == 0:
        return None
    return any_of(eq(n, 0), ge(p, 1))


def _short_window(num: int, s: int, short: str) -> int | None:
    """The number of windows onnxruntime counts over a constant axis whose window is longer than
    the padded input by ``-num > 0`` (stride ``s``): ``trunc(num/s) + 1`` (C++ division; floor mode)
    or ``floor(num/s) + 1`` (a ceil-mode window, its end padding grown by ``s - 1``), None where
    that is negative (it refuses it). onnx's reference evaluator counts ``floor(num/s) + 1`` in
    both modes."""
    n = (-(-num // s) if short == "trunc" else num // s) + 1
    return n if n >= 0 else None


def make_conv_rel(nd: int) -> None:
    name = f"conv{nd}d"
    sp = SPATIAL[nd]

    @relation(name)
    def conv_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        """Convolution over ``nd`` spatial axes (see the module docstring)."""
        out = args[2]
        a = _parsed(ConvAttrs, attrs, nd, ctx.name)
        x = tensor_or_defer(args[0], ctx, 0)
        w = tensor_or_defer(args[1], ctx, 1)
        if x is None:
            return False
        dtype = a.out_dtype or x.dtype
        # (the shapes and ranks read once: ``ndim`` and ``dims`` are properties)
        xs = x.shape
        ws = w.shape if w is not None else None
        w_rank = len(ws) if type(ws) is tuple else None
        if w_rank is not None and w_rank != nd + 2:
            ctx.fail(RANK_MISMATCH, f"{ctx.name}: weight `{w}` must have rank {nd + 2} ({a.kernel_layout})")
        wd: dict[str, Dim] = {}
        if w_rank is not None:
            wd = dict(zip(a.kernel_layout, ws))  # type: ignore[arg-type]
        if type(xs) is not tuple:
            # the data's rank is unknown, the layout still fixes the result's rank
            if not ctx.final:
                return False
            if a.channels is not None and a.kernel_size is not None:
                # the attributes give the weight's shape but for its input channels
                gw: dict[str, Dim] = {"O": as_dim(a.channels), "I": wd.get("I") or ctx.fresh_dim()}
                for c, k in zip(sp, a.kernel_size):
                    gw[c] = as_dim(k)
                wdtype0 = w.dtype if w is not None else x.dtype
                ctx.assign(args[1], Tensor(_to_layout(gw, a.kernel_layout), wdtype0))
            ch: Dim = as_dim(a.channels) if a.channels is not None else wd.get("O") or ctx.fresh_dim()
            od0: dict[str, Dim] = {"N": ctx.fresh_dim(), "C": ch}
            for c in sp:
                od0[c] = ctx.fresh_dim()
            ctx.assign(out, Tensor(_to_layout(od0, a.out_layout), dtype))
            return True
        if len(xs) != nd + 2:
            ctx.fail(RANK_MISMATCH, f"{ctx.name}: data `{x}` must have rank {nd + 2} ({a.data_layout})")
        xd = dict(zip(a.data_layout, xs))
        c_in = xd["C"]
        g = a.groups
        chk = Checks()
        if g > 1:
            chk.require(
                eq(mod(c_in, g), 0),
                SHAPE_MISMATCH,
                f"{ctx.name}: input channels {c_in} of `{x}` are not divisible by groups={g}",
            )
        kernel: list[Dim | None]
        if a.channels is not None and a.kernel_size is not None:
            wd = {"O": as_dim(a.channels), "I": exact_div(c_in, as_dim(g))}
            for c, k in zip(sp, a.kernel_size):
                wd[c] = as_dim(k)
            wdtype = w.dtype if w is not None else x.dtype
            ctx.assign(args[1], Tensor(_to_layout(wd, a.kernel_layout), wdtype))
            channels: Dim = as_dim(a.channels)
            kernel = [as_dim(k) for k in a.kernel_size]
        elif w is None:
            return False
        elif w_rank is None:
            # a weight of unknown rank (it may still be refined through a hole: last run only):
            # what the attributes give is known, the rest is unknown
            if not ctx.final:
                return False
            channels = as_dim(a.channels) if a.channels is not None else ctx.fresh_dim()
            ks = a.kernel_size
            kernel = [None] * nd if ks is None else [as_dim(k) for k in ks]
        else:
            channels = wd["O"]
            kernel = [wd[c] for c in sp]
            if a.kernel_size is not None:
                for c, k in zip(sp, a.kernel_size):
                    if wd[c] == k:  # (Checks.equal states nothing then: no message to format)
                        continue
                    chk.equal(
                        wd[c],
                        as_dim(k),
                        SHAPE_MISMATCH,
                        f"{ctx.name}: weight `{w}` is inconsistent with kernel_size={a.kernel_size}",
                    )
            if a.channels is not None and channels != a.channels:
                chk.equal(
                    channels,
                    as_dim(a.channels),
                    SHAPE_MISMATCH,
                    f"{ctx.name}: weight `{w}` has {channels} output channels, channels={a.channels}",
                )
            w_in = wd["I"] * g if g != 1 else wd["I"]
            if w_in != c_in:
                chk.equal(
                    w_in,
                    c_in,
                    SHAPE_MISMATCH,
                    f"{ctx.name}: input channels {c_in} of `{x}` divided by groups={g} must match the "
                    f"weight's input channels {wd['I']}",
                )
        if g > 1:
            chk.require(
                eq(mod(channels, g), 0),
                SHAPE_MISMATCH,
                f"{ctx.name}: output channels {channels} are not divisible by groups={g}",
            )
        od: dict[str, Dim] = {"N": xd["N"], "C": channels}
        _windows(ctx, chk, xd, od, sp, kernel, a, False, "kernel")
        if not chk.commit(ctx):
            return False
        ctx.assign(out, TensorType(_to_layout(od, a.out_layout), dtype))
        return True


for _nd in (1, 2, 3):
    make_conv_rel(_nd)


#: how a pooling counts the windows over a constant axis shorter than its window (``short``)
SHORT_WINDOWS = ("error", "trunc", "floor")


class PoolAttrs(WindowAttrs):
    """Validated pooling attributes; ``short`` and ``only_batch_empty`` are onnxruntime's rules
    (the ONNX importer's pooling operators; see :func:`_short_window`)."""

    __slots__ = ("ceil_mode", "layout", "only_batch_empty", "out_layout", "pool_size", "short")

    def __init__(self, attrs: Attrs, nd: int, op: str) -> None:
        self.pool_size = _spatial(attrs, "pool_size", None, nd, op, lo=1)
        self._parse_window(attrs, nd, op)
        self.ceil_mode = attr_bool(attrs, "ceil_mode", False, op)
        self.layout, self.out_layout = parse_layouts(attrs, nd, op)
        attr_bool(attrs, "count_include_pad", False, op)
        self.short = attr_str(attrs, "short_windows", "error", op, SHORT_WINDOWS) or "error"
        self.only_batch_empty = attr_bool(attrs, "only_batch_empty", False, op)


def parse_pool_attrs(attrs: Attrs, nd: int, op: str) -> PoolAttrs:
    return _parsed(PoolAttrs, attrs, nd, op)


def parse_out_layout(attrs: Attrs, layout: str, nd: int, op: str) -> str:
    """``out_layout`` (Relax): the result's layout; None or ``""`` mean the data's layout."""
    v = attrs.get("out_layout") or layout
    return parse_layout(v, "NC" + SPATIAL[nd], op, "out_layout")


def parse_layouts(attrs: Attrs, nd: int, op: str) -> tuple[str, str]:
    """A pooling's ``layout`` (default ``NCHW`` and its kin) and ``out_layout``."""
    layout = parse_layout(attrs.get("layout", DATA_LAYOUTS[nd]), "NC" + SPATIAL[nd], op, "layout")
    return layout, parse_out_layout(attrs, layout, nd, op)


def _pooling(
    ctx: Context,
    args: Sequence[Type],
    layouts: tuple[str, str],
    nd: int,
    sizes: Callable[[dict[str, Dim]], dict[str, Dim] | None],
) -> bool:
    """What the pooling relations share: the data (rank ``nd + 2``, in ``layout``) by layout
    letter, and the result in ``out_layout`` with the dimensions ``sizes`` makes of the data's
    (None: defer). Data of unknown rank on the last run gives every dimension unknown (the layout
    still fixes the result's rank)."""
    layout, out_layout = layouts
    x = tensor_or_defer(args[0], ctx, 0)
    if x is None:
        return False
    od: dict[str, Dim] | None
    if x.ndim is None:
        if not ctx.final:
            return False
        od = {c: ctx.fresh_dim() for c in "NC" + SPATIAL[nd]}
    else:
        if x.ndim != nd + 2:
            ctx.fail(RANK_MISMATCH, f"{ctx.name}: data `{x}` must have rank {nd + 2} ({layout})")
        od = sizes(dict(zip(layout, x.dims)))
    if od is None:
        return False
    ctx.assign(args[1], Tensor(_to_layout(od, out_layout), x.dtype))
    return True


def make_pool_rel(nd: int) -> None:
    sp = SPATIAL[nd]

    @relation(f"pool{nd}d")
    def pool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        """Max/avg pooling over ``nd`` spatial axes (the window formula of the module docstring)."""
        a = _parsed(PoolAttrs, attrs, nd, ctx.name)

        def windows(xd: dict[str, Dim]) -> dict[str, Dim] | None:
            chk = Checks()
            od = dict(xd)
            kernel = [as_dim(k) for k in a.pool_size]
            _windows(ctx, chk, xd, od, sp, kernel, a, a.ceil_mode, "pool window", a.short)
            if a.only_batch_empty:
                cond = only_batch_empty(xd["N"], [xd[c] for c in "C" + sp])
                if cond is not None:
                    msg = f"{ctx.name}: an empty axis but the batch needs an empty batch (N == 0)"
                    chk.require(cond, SHAPE_MISMATCH, msg)
            return od if chk.commit(ctx) else None

        return _pooling(ctx, args, (a.layout, a.out_layout), nd, windows)

    @relation(f"global_pool{nd}d")
    def global_pool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        """Every spatial axis becomes 1."""
        ones = {c: as_dim(1) for c in sp}
        return _pooling(ctx, args, parse_layouts(attrs, nd, ctx.name), nd, lambda xd: {**xd, **ones})

    @relation(f"adaptive_pool{nd}d")
    def adaptive_pool_rel(ctx: Context, args: Sequence[Type], attrs: Attrs) -> bool:
        """Spatial axes become ``output_size`` (None entries keep the input's size)."""
        layouts = parse_layouts(attrs, nd, ctx.name)
        size = {c: as_dim(s) for c, s in zip(sp, parse_output_size(attrs, nd, ctx.name)) if s is not None}
        return _pooling(ctx, args, layouts, nd, lambda xd: {**xd, **size})


def parse_output_size(attrs: Attrs, nd: int, op: str) -> tuple[int | None, ...]:
    """``output_size``: None (keep), an int (every axis) or ``nd`` ints-or-None."""
    v = attrs.get("output_size")
    if v is None:
        return (None,) * nd
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v,) * nd
    if (
        not isinstance(v, tuple)
        or len(v) not in (1, nd)
        or not all(x is None or (isinstance(x, int) and not isinstance(x, bool) and x >= 1) for x in v)
    ):
        raise bad(op, f"output_size must be None, an int >= 1 or {nd} of them, got {v!r}")
    return tuple(v) * nd if len(v) == 1 else tuple(v)


for _nd in (1, 2, 3):
    make_pool_rel(_nd)
