"""Compare symshape's symbolic result of a model with what a runtime does at concrete sizes.

:func:`disagreements` infers ``model`` once with its ``dim_param`` s as symbols, then for each size
assignment builds the inputs (``feeds``), runs onnxruntime (or onnx's reference evaluator) and lists
every difference: the runtime refuses a size symshape accepts (no guard excludes it), the runtime
runs a size symshape excludes, or an output's shape or dtype differs from symshape's type with the
sizes substituted (a dimension left after substituting the sizes, ``?d1`` or ``u0``, a size computed
at run time, matches any size; a size where the guards depend on such a dimension is not compared).
An empty list is agreement.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx_helpers import In, reference, run_ort, run_ort_plain

import symshape as ss
import symshape.onnx as sso

__all__ = ["disagreements", "Feeds", "feeds_of", "zero_feeds"]

Feeds = Callable[[Mapping[str, int], np.random.Generator], dict[str, np.ndarray[Any, Any]]]


def disagreements(
    model: onnx.ModelProto,
    names: Sequence[str] | Mapping[str, ss.Dim],
    sizes: Sequence[Mapping[str, int]],
    feeds: Feeds,
    runner: str = "onnxruntime",
) -> list[str]:
    """Each difference between symshape's result of ``model`` (symbols ``names``) and ``runner``
    (``onnxruntime``, ``onnxruntime-plain`` without graph optimizations, or ``reference``) at
    ``sizes``, as a line of text (``names``: the symbols' names, or the symbols by name)."""
    syms = dict(names) if isinstance(names, Mapping) else {n: ss.dim(n) for n in names}
    res = sso.infer(model, dims=syms)
    out: list[str] = []
    if res.unsupported:
        return [f"unsupported: {res.report()}"]
    outs = [o.name for o in model.graph.output]
    rng = np.random.default_rng(0)
    # (valid_at takes the program's symbols only: a generated symbol no input uses is left out)
    used = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
    for size in sizes:
        env: dict[Any, int] = {syms[k]: v for k, v in size.items() if k in syms and k in used}
        fed = feeds(size, rng)
        try:
            got: list[np.ndarray[Any, Any]] | None = (
                run_ort(model, fed)
                if runner == "onnxruntime"
                else run_ort_plain(model, fed)
                if runner == "onnxruntime-plain"
                else reference(model, fed)
            )
            why = "" if got is not None else "refused"
        except Exception as e:  # the runtime refuses these sizes
            got, why = None, str(e).splitlines()[0][:160]
        try:
            valid: bool | None = not res.errors and res.valid_at(env)
        except ss.SymshapeError:  # a guard on a size computed at run time (``?d1 >= 1``)
            valid = None
        if got is None:
            if valid:
                out.append(f"{dict(size)}: {runner} refuses ({why}); symshape accepts")
            continue
        if valid is False:
            out.append(f"{dict(size)}: {runner} runs; symshape excludes it: {res.report()}")
            continue
        for o, arr in zip(outs, got):
            t = res.type_of(o)
            if not isinstance(t, ss.TensorType) or t.ndim is None:
                out.append(f"{dict(size)}: {o} is {t}, {runner} gives {arr.shape}")
                continue
            st = t.subs(env)
            shape = tuple(int(d) if d.is_constant else str(d) for d in st.dims)
            # a dimension left after substituting the sizes (``?d1``, ``u0``: a size computed at
            # run time) matches any size
            wrong = [d for d, a in zip(shape, arr.shape) if isinstance(d, int) and d != a]
            if len(shape) != arr.ndim or wrong:
                out.append(f"{dict(size)}: {o}: symshape {t} -> {shape}, {runner} {arr.shape}")
            if isinstance(st.dtype, str) and st.dtype != str(arr.dtype):
                out.append(f"{dict(size)}: {o}: dtype {st.dtype}, {runner} {arr.dtype}")
    return out


def feeds_of(ins: Sequence[In], fed: Mapping[str, np.ndarray[Any, Any]] | None = None) -> Feeds:
    """Feeds of the inputs ``ins`` at a size: the values ``fed`` as given, the others random (ints
    in ``[0, 2)``, floats normal)."""

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        out = dict(fed or {})
        for i in ins:
            if i.name not in out:
                shape = [size[d] if isinstance(d, str) else d for d in i.shape or ()]
                kind = np.dtype(i.dtype).kind
                out[i.name] = (
                    rng.integers(0, 2, shape).astype(i.dtype)
                    if kind in "iub"
                    else rng.standard_normal(shape).astype(i.dtype)
                )
        return out

    return feeds


def zero_feeds(ins: Sequence[In]) -> Feeds:
    """Feeds of the inputs ``ins`` at a size, every entry 0 (indices that are in range at every
    size)."""

    def feeds(size: Mapping[str, int], rng: np.random.Generator) -> dict[str, np.ndarray[Any, Any]]:
        return {
            i.name: np.zeros([size[d] if isinstance(d, str) else d for d in i.shape or ()], dtype=i.dtype)
            for i in ins
        }

    return feeds
