"""The reference semantics of the fuzzer: each operator computed on real numpy arrays.

Most operators are numpy itself. Where symshape follows Relay on purpose, the reference states the
Relay rule explicitly (and nothing else), so that a difference is a finding, not a convention:

* ``reshape``: Relay's special values 0 (copy), -2 (copy the rest), -3 (merge two), -4 (split one)
  are turned into an explicit new shape; ``-1`` is left to numpy (which raises when the other
  dimensions have no elements); ``allowzero`` makes 0 a literal size.
* ``split`` with indices: an index beyond the axis is an error (Relay); numpy would clamp it.
* ``conv``: the groups divide both channel counts and the weight's input channels times the groups
  are the data's channels; kernel sizes are ``>= 1``; the dilated kernel fits the padded input
  (numpy's ``sliding_window_view`` checks it). The result is an actual computation.
* pooling: the dilated window fits the padded input; ``ceil_mode`` is Relay's formula
  ``(D + P - span + s - 1)//s + 1`` (no PyTorch correction), computed as a real pooling over an
  input padded by ``s - 1`` more at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["relay_newshape", "reshape", "split", "conv", "pool", "flatten", "softmax", "reduce", "arg_reduce"]


class RefError(ValueError):
    """A program the reference semantics rejects."""


def relay_newshape(
    shape: Sequence[int], newshape: Sequence[int], allowzero: bool, literal: Sequence[bool] = ()
) -> list[int]:
    """Relay's special values made explicit (``-1`` stays for numpy). ``literal[i]`` marks an
    entry that was a symbolic dimension: a size, even when its value is 0."""
    out: list[int] = []
    si = 0
    i = 0
    n = len(shape)
    while i < len(newshape):
        s = newshape[i]
        if s > 0 or (s == 0 and (allowzero or (i < len(literal) and literal[i]))):
            out.append(s)
            si += 1
        elif s == 0:
            if si >= n:
                raise RefError("0 has no input dimension to copy")
            out.append(shape[si])
            si += 1
        elif s == -1:
            out.append(-1)
            si += 1
        elif s == -2:
            out.extend(shape[si:])
            si = n
        elif s == -3:
            if si + 1 >= n:
                raise RefError("-3 needs two input dimensions")
            out.append(shape[si] * shape[si + 1])
            si += 2
        elif s == -4:
            if si >= n:
                raise RefError("-4 has no input dimension")
            d0 = shape[si]
            a, b = newshape[i + 1], newshape[i + 2]
            if a == -1 or b == -1:
                known = b if a == -1 else a
                if known == 0 or d0 % known:
                    raise RefError("-4 does not divide")
                pair = [d0 // known, known] if a == -1 else [known, d0 // known]
            else:
                if a * b != d0:
                    raise RefError("-4 does not split exactly")
                pair = [a, b]
            out.extend(pair)
            si += 1
            i += 3
            continue
        else:
            raise RefError(f"bad special value {s}")
        i += 1
    return out


def reshape(
    x: np.ndarray, newshape: Sequence[int], allowzero: bool = False, literal: Sequence[bool] = ()
) -> np.ndarray:
    return x.reshape(relay_newshape(x.shape, newshape, allowzero, literal))


def split(x: np.ndarray, ios: int | Sequence[int], axis: int) -> list[np.ndarray]:
    if isinstance(ios, int):
        return list(np.split(x, ios, axis))
    ax = axis + x.ndim if axis < 0 else axis
    if not 0 <= ax < x.ndim:
        raise RefError("axis")
    if ios and ios[-1] > x.shape[ax]:
        raise RefError("a split index beyond the axis (Relay)")
    return list(np.split(x, list(ios), axis))


def flatten(x: np.ndarray, axis: int) -> np.ndarray:
    if not -x.ndim <= axis <= x.ndim:
        raise RefError("axis")
    if axis < 0:
        axis += x.ndim
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    if not -x.ndim <= axis < x.ndim:
        raise RefError("axis")
    e = np.exp(np.clip(x, -10, 10))
    return e / (np.sum(e, axis=axis, keepdims=True) + 1.0)


def _axes(ndim: int, axis: int | Sequence[int] | None, exclude: bool) -> tuple[int, ...]:
    if axis is None:
        chosen: tuple[int, ...] = tuple(range(ndim))
        return () if exclude else chosen
    seq = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in seq:
        if not -ndim <= a < ndim:
            raise RefError("axis")
    norm = tuple(a + ndim if a < 0 else a for a in seq)
    if len(set(norm)) != len(norm):
        raise RefError("duplicate axes")
    if exclude:
        return tuple(i for i in range(ndim) if i not in norm)
    return tuple(sorted(norm))


def reduce(
    x: np.ndarray, kind: str, axis: int | Sequence[int] | None, keepdims: bool, exclude: bool
) -> np.ndarray:
    axes = _axes(x.ndim, axis, exclude)
    fn = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}[kind]
    with np.errstate(all="ignore"):
        return np.asarray(fn(x, axis=axes, keepdims=keepdims))


def arg_reduce(x: np.ndarray, axis: int | None, keepdims: bool) -> np.ndarray:
    if axis is not None and not -x.ndim <= axis < x.ndim:
        raise RefError("axis")
    return np.asarray(np.argmax(x, axis=axis, keepdims=keepdims))


def _windows(
    xp: np.ndarray, span: Sequence[int], strides: Sequence[int], dilation: Sequence[int]
) -> np.ndarray:
    nd = len(span)
    win = sliding_window_view(xp, tuple(span), axis=tuple(range(2, 2 + nd)))
    idx = (
        (slice(None), slice(None))
        + tuple(slice(None, None, s) for s in strides)
        + tuple(slice(None, None, d) for d in dilation)
    )
    return win[idx]  # (N, C, *out, *kernel)


def conv(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    pad_before: Sequence[int],
    pad_after: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> np.ndarray:
    """NC(D)(H)W data, OI(D)(H)W weight: a real grouped convolution."""
    nd = x.ndim - 2
    if w.ndim != nd + 2 or nd < 1:
        raise RefError("rank")
    c, o, i = x.shape[1], w.shape[0], w.shape[1]
    if c % groups or o % groups or i * groups != c:
        raise RefError("channels and groups")
    kernel = w.shape[2:]
    if any(k < 1 for k in kernel):
        raise RefError("a kernel of size 0")
    xp = np.pad(x, [(0, 0), (0, 0), *zip(pad_before, pad_after)])
    span = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    win = _windows(xp, span, strides, dilation)
    letters = "dhw"[3 - nd :]
    klet = "xyz"[:nd]
    outs = []
    og = o // groups
    for g in range(groups):
        xg = win[:, g * i : (g + 1) * i]
        wg = w[g * og : (g + 1) * og]
        outs.append(np.einsum(f"nc{letters}{klet},oc{klet}->no{letters}", xg, wg))
    return np.concatenate(outs, axis=1) if outs else np.zeros((x.shape[0], 0, *win.shape[2 : 2 + nd]))


def pool(
    x: np.ndarray,
    pool_size: Sequence[int],
    strides: Sequence[int],
    pad_before: Sequence[int],
    pad_after: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    kind: str,
) -> np.ndarray:
    nd = x.ndim - 2
    if nd != len(pool_size):
        raise RefError("rank")
    span = [d * (k - 1) + 1 for d, k in zip(dilation, pool_size)]
    for j in range(nd):
        if x.shape[2 + j] + pad_before[j] + pad_after[j] < span[j]:
            raise RefError("the window does not fit the padded input")
    extra = [s - 1 if ceil_mode else 0 for s in strides]
    xp = np.pad(x, [(0, 0), (0, 0), *((b, a + e) for b, a, e in zip(pad_before, pad_after, extra))])
    win = _windows(xp, span, strides, dilation)
    axes = tuple(range(2 + nd, 2 + 2 * nd))
    with np.errstate(all="ignore"):
        return np.max(win, axis=axes) if kind == "max" else np.mean(win, axis=axes)
