"""Oracles for the PyTorch importer: what torch actually computes, compared with symshape.

* :func:`record` runs a traced graph with ``torch.fx.Interpreter`` on example inputs and keeps
  every node's value;
* :func:`mismatches` compares each recorded tensor shape and dtype (and each Python size) with
  symshape's type of that node, the symbols substituted by the sizes the example was built with;
* :func:`export_mismatches` compares symshape's symbolic types of an exported program with the
  ``node.meta["val"]`` fake tensors of ``torch.export``, torch's symbols renamed to the user's
  (each dimension compared at several values of the symbols).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
import torch.fx

import symshape as ss

__all__ = [
    "record",
    "mismatches",
    "export_mismatches",
    "substitute",
    "check_model",
    "torch_dtype",
    "fn_module",
    "types_of",
    "example_of",
    "check_fn",
    "assert_verdicts",
    "Wrap",
]


def torch_dtype(dt: torch.dtype) -> str:
    return str(dt).removeprefix("torch.")


def record(
    root: torch.nn.Module, graph: torch.fx.Graph, example: Mapping[str, torch.Tensor]
) -> dict[str, Any]:
    """Every node's value when the graph runs on ``example`` (by forward-argument name)."""
    gm = torch.fx.GraphModule(root, graph)
    seen: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            out = super().run_node(n)
            seen[n.name] = out
            return out

    args = []
    for n in graph.nodes:
        if n.op == "placeholder":
            args.append(
                example[str(n.target)] if str(n.target) in example else (n.args[0] if n.args else None)
            )
    with torch.no_grad():
        Recorder(gm).run(*args)
    return seen


def substitute(d: ss.Dim, sizes: Mapping[str, int]) -> int:
    env = {ss.dim(k): v for k, v in sizes.items()}
    return int(d.subs(env))


def _tensor_mismatch(name: str, t: ss.Type, value: torch.Tensor, sizes: Mapping[str, int]) -> str | None:
    if not isinstance(t, ss.TensorType) or t.ndim is None:
        return f"{name}: symshape has {t}, torch {tuple(value.shape)}"
    got = tuple(substitute(d, sizes) for d in t.dims)
    want = tuple(int(s) for s in value.shape)
    if got != want:
        return f"{name}: symshape {t} -> {got}, torch {want}"
    if t.dtype is not None and t.dtype != torch_dtype(value.dtype):
        return f"{name}: symshape dtype {t.dtype}, torch {value.dtype}"
    return None


def _value_mismatch(name: str, t: ss.Type, value: Any, sizes: Mapping[str, int]) -> list[str]:
    if isinstance(value, torch.Tensor):
        m = _tensor_mismatch(name, t, value, sizes)
        return [m] if m else []
    if isinstance(value, (tuple, list)) and isinstance(t, ss.TupleType):
        if len(value) != len(t.fields):
            return [f"{name}: symshape {t}, torch {len(value)} values"]
        out = []
        for i, (f, v) in enumerate(zip(t.fields, value)):
            out += _value_mismatch(f"{name}[{i}]", f, v, sizes)
        return out
    return [f"{name}: symshape {t}, torch {type(value).__name__}"]


def mismatches(res: Any, seen: Mapping[str, Any], sizes: Mapping[str, int]) -> list[str]:
    """Nodes whose symshape type (or known Python value) disagrees with what torch computed."""
    out: list[str] = []
    for name, value in seen.items():
        if isinstance(value, torch.Tensor) or (
            isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value)
        ):
            try:
                t = res.type_of(name)
            except ss.SymshapeError as e:
                out.append(f"{name}: {e}")
                continue
            out += _value_mismatch(name, t, value, sizes)
        elif isinstance(value, (int, torch.Size)) and not isinstance(value, bool):
            known = res.value_of(name)
            if known is None:
                continue
            if isinstance(value, torch.Size):
                got = tuple(None if k is None else _num(k, sizes) for k in known)
                want = tuple(int(s) for s in value)
                if any(g is not None and g != w for g, w in zip(got, want)):
                    out.append(f"{name}: symshape value {known}, torch {want}")
            elif _num(known, sizes) != value:
                out.append(f"{name}: symshape value {known}, torch {value}")
    return out


def _num(v: Any, sizes: Mapping[str, int]) -> int:
    return substitute(v, sizes) if isinstance(v, ss.Dim) else int(v)


def check_model(
    res: Any, root: torch.nn.Module, example: Mapping[str, torch.Tensor], sizes: Mapping[str, int]
) -> list[str]:
    """Run the imported graph at ``sizes`` and compare every node."""
    return mismatches(res, record(root, res.fx_graph, example), sizes)


def _torch_symbols(ep: Any, types: Mapping[str, ss.Type]) -> dict[Any, ss.Dim]:
    """torch's input symbols (``s0``) -> the user's dimensions at the same place."""
    out: dict[Any, ss.Dim] = {}
    for n in ep.graph_module.graph.nodes:
        if n.op != "placeholder" or n.name not in types:
            continue
        t = types[n.name]
        assert isinstance(t, ss.TensorType)
        for s, d in zip(n.meta["val"].shape, t.dims):
            if isinstance(s, torch.SymInt):
                out[s.node.expr] = d
    return out


def export_mismatches(res: Any, ep: Any, types: Mapping[str, ss.Type], points: int = 3) -> list[str]:
    """symshape's types against ``torch.export``'s fake tensors, each dimension compared at
    ``points`` values of each symbol (2, 3, 5, ... so that torch's 0/1 specialization does not
    matter)."""
    rename = _torch_symbols(ep, types)
    syms = sorted(rename, key=str)
    primes = [2, 3, 5, 7, 11, 13, 17]
    assignments = [
        dict(zip(syms, combo))
        for combo in itertools.islice(itertools.product(primes, repeat=len(syms)), points)
    ]
    out: list[str] = []
    for n in ep.graph_module.graph.nodes:
        val = n.meta.get("val")
        if n.op not in ("call_function", "placeholder") or not isinstance(val, torch.Tensor):
            continue
        try:
            t = res.type_of(n.name)
        except ss.SymshapeError as e:
            out.append(f"{n.name}: {e}")
            continue
        if not isinstance(t, ss.TensorType) or t.ndim != len(val.shape):
            out.append(f"{n.name}: symshape {t}, torch {tuple(val.shape)}")
            continue
        for a in assignments:
            user = {str(rename[k]): v for k, v in a.items()}
            want = tuple(
                int(s.node.expr.subs(a)) if isinstance(s, torch.SymInt) else int(s) for s in val.shape
            )
            got = tuple(substitute(d, user) for d in t.dims)
            if got != want:
                out.append(f"{n.name}: symshape {t}, torch {tuple(val.shape)} (at {user}: {got} vs {want})")
                break
    return out


# -- table-driven converter checks ----------------------------------------------------------------

Spec = tuple[tuple[Any, ...], str]  # (shape with str symbols, dtype)


class Fn1(torch.nn.Module):
    """Wraps a function of one tensor ``x`` as a module to trace."""

    def __init__(self, f: Any) -> None:
        super().__init__()
        self.f = f

    def forward(self, x: torch.Tensor) -> Any:
        return self.f(x)


class Fn2(Fn1):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Any:  # type: ignore[override]
        return self.f(x, y)


class Fn3(Fn1):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> Any:  # type: ignore[override]
        return self.f(x, y, z)


def fn_module(f: Any, arity: int) -> torch.nn.Module:
    return {1: Fn1, 2: Fn2, 3: Fn3}[arity](f)


def export_point(points: Sequence[Mapping[str, int]], truth: Sequence[bool]) -> Mapping[str, int]:
    """The sizes to export at: the largest point where torch runs whose sizes differ from each
    other and from 1 (torch.export specializes 1 and equal sizes), else the largest valid one."""
    return max(
        (p for p, t in zip(points, truth) if t),
        key=lambda p: (len(set(p.values())) == len(p) and 1 not in p.values(), sum(p.values())),
    )


def types_of(specs: Mapping[str, Spec]) -> dict[str, ss.Type]:
    out: dict[str, ss.Type] = {}
    for name, (shape, dtype) in specs.items():
        out[name] = ss.Tensor(tuple(ss.dim(d) if isinstance(d, str) else d for d in shape), dtype)
    return out


def example_of(specs: Mapping[str, Spec], sizes: Mapping[str, int], seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, (shape, dtype) in specs.items():
        concrete = tuple(sizes[d] if isinstance(d, str) else d for d in shape)
        dt = getattr(torch, dtype)
        if dtype == "bool":
            out[name] = torch.rand(concrete, generator=g) > 0.5
        elif dt.is_floating_point:
            out[name] = torch.randn(concrete, generator=g, dtype=dt)
        else:
            out[name] = torch.randint(0, 3, concrete, generator=g, dtype=dt)
    return out


class Wrap(torch.nn.Module):
    """A module called on ``x``, traced through (its own forward names the argument ``input``)."""

    def __init__(self, m: torch.nn.Module) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: torch.Tensor) -> Any:
        return self.m(x)


def assert_verdicts(
    res: Any, points: Sequence[Any], truth: Sequence[bool], env: Callable[[Any], Any] = lambda p: p
) -> None:
    """``res.valid_at(env(p))`` equals torch's verdict (whether it ran) at every point."""
    wrong = [p for p, t in zip(points, truth) if bool(res.valid_at(env(p))) != t]
    assert wrong == [], f"valid_at differs from eager torch at {wrong[:4]}; valid_when {res.valid_when()}"


def check_fn(model: torch.nn.Module, specs: Mapping[str, Spec], sizes: list[dict[str, int]]) -> Any:
    """Infer ``model`` for ``specs``; it must be well typed and agree with torch at every size."""
    import symshape.torch as sst

    res = sst.infer(model, types_of(specs))
    assert res.ok, res.report()
    for s in sizes:
        mm = check_model(res, model, example_of(specs, s), s)
        assert not mm, f"at {s}: {mm}"
    return res
