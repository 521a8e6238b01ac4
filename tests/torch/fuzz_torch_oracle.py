"""The oracle of the PyTorch differential fuzzer: :func:`check` infers a generated program once
with its symbols, then at each size assignment runs the module in eager torch and lists every
disagreement:

* torch raises a shape error at a size: ``valid_at`` must be False there (a guard is false, or the
  result is an error); True is unsound;
* torch runs: ``valid_at`` must be True (False is a false error), and every fx node's value (each
  tensor, each tuple of tensors, each Python size such as ``x.shape[0]``) must be symshape's type
  (or value) with the sizes substituted, dtypes included;
* ``infer`` never raises anything but ``SymshapeError``, and no node is unsupported.

A size only the run decides (``x[x > 0]``: an unbacked ``u0``; a dimension symshape could not
determine) is bound to the first size torch gives it, then compared like the others; where the
guards depend on such a size, ``valid_at`` is decided with the bindings (still open: only the
shapes are compared). torch errors that are not about shapes (a kernel not implemented for a
dtype on CPU, a dtype that cannot be promoted) are not findings: the size is skipped. A module
torch cannot construct or fx cannot trace is skipped; an ``inconclusive`` result is not compared.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from tests.torch.fuzz_torch_builder import Program

import symshape as ss
import symshape.torch as sst

__all__ = ["check", "classify", "feeds"]

#: torch messages that are about dtypes or kernels, not sizes: the size is skipped
_NOT_SHAPES = re.compile(
    r"not implemented for|can't be cast|could not infer output dtype|must be (a )?(floating|float)|"
    r"expected scalar type|dtype|'(Long|Bool|Int|Double|Half|Float|Byte|Char|Short)'|only supports floating|"
    r"floating point|integral|Integer division|result type|should be the same|"
    r"with a bool tensor is not supported|ZeroDivisionError",
)


def classify(e: BaseException) -> str:
    """``dtype`` for a torch error about dtypes/kernels, ``stride`` for ``view`` of a tensor whose
    strides do not allow it (README: symshape tracks shapes, not strides), neither a finding;
    else ``shape``."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if "view size is not compatible with input tensor's size and stride" in text:
        return "stride"
    return "dtype" if _NOT_SHAPES.search(text) else "shape"


def feeds(prog: Program, size: Mapping[str, int], seed: int = 0) -> dict[str, torch.Tensor] | None:
    """The inputs of ``prog`` at ``size`` (None: an integer input has no values in its range there,
    an index into an empty axis, say)."""
    g = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for i in prog.inputs:
        shape = tuple(size[d] if isinstance(d, str) else d for d in i.dims)
        dt = getattr(torch, i.dtype)
        if i.values is not None:
            lo, hi = (int(eval(e, {}, dict(size))) for e in i.values)
            if lo > hi:
                if int(np.prod(shape)) > 0:
                    return None
                hi = lo
            t = torch.randint(lo, hi + 1, shape, generator=g, dtype=dt)
            flat = t.view(-1)
            if flat.numel():  # the range's ends (the guards are about them)
                flat[0], flat[-1] = (hi, lo) if seed == 0 else (lo, hi)
            out[i.name] = t
        elif i.dtype == "bool":
            out[i.name] = torch.rand(shape, generator=g) > 0.5
        elif dt.is_floating_point:
            out[i.name] = torch.randn(shape, generator=g, dtype=dt)
        else:
            out[i.name] = torch.randint(-2, 3, shape, generator=g, dtype=dt)
    return out


def _record(root: Any, graph: Any, args: list[torch.Tensor]) -> dict[str, Any]:
    gm = torch.fx.GraphModule(root, graph)
    seen: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            out = super().run_node(n)
            seen[n.name] = out
            return out

    with torch.no_grad():
        Recorder(gm).run(*args)
    return seen


class _Binder:
    """Compares symshape dimensions with torch's sizes, binding each size only the run decides
    (a dimension left after substituting the sizes that is one atom: ``u0``, ``?d3``) to the
    first size torch gives it."""

    def __init__(self, env: Mapping[Any, int]) -> None:
        self.env: dict[Any, int] = dict(env)

    def same(self, d: ss.Dim, n: int) -> bool:
        v = d.subs(self.env)
        if v.is_constant:
            return int(v) == n
        if v.atom is not None:
            self.env[v] = n
        return True

    def tensor(self, name: str, t: Any, value: torch.Tensor) -> list[str]:
        if not isinstance(t, ss.TensorType) or t.ndim is None or t.ndim != value.ndim:
            return [f"{name}: symshape {t}, torch {tuple(value.shape)}"]
        bad = [i for i, (d, n) in enumerate(zip(t.dims, value.shape)) if not self.same(d, int(n))]
        out = [f"{name}: symshape {t}, torch {tuple(value.shape)}"] if bad else []
        want = str(value.dtype).removeprefix("torch.")
        if isinstance(t.dtype, str) and t.dtype != want:
            out.append(f"{name}: symshape dtype {t.dtype}, torch {want}")
        return out

    def value(self, name: str, t: Any, value: Any) -> list[str]:
        if isinstance(value, torch.Tensor):
            return self.tensor(name, t, value)
        # (the pieces of a split whose count only inference knows: those the graph uses)
        if not isinstance(t, ss.TupleType) or len(t.fields) > len(value) or not t.fields:
            return [f"{name}: symshape {t}, torch {len(value)} values"]
        return [m for i, (f, v) in enumerate(zip(t.fields, value)) for m in self.value(f"{name}[{i}]", f, v)]

    def python(self, name: str, known: Any, value: Any) -> list[str]:
        if isinstance(value, torch.Size):
            if not isinstance(known, tuple) or len(known) != len(value):
                return [f"{name}: symshape value {known}, torch {tuple(value)}"]
            pairs = list(zip(known, value))
        else:
            pairs = [(known, value)]
        for k, v in pairs:
            if k is None:
                continue
            if (isinstance(k, ss.Dim) and not self.same(k, int(v))) or (isinstance(k, int) and k != v):
                return [f"{name}: symshape value {known}, torch {value}"]
        return []

    def valid(self, res: Any) -> bool | None:
        """The guards decided with the sizes bound so far (None: still open)."""
        from symshape.encoding.conds import cond_value

        at = {getattr(k, "atom", k): v for k, v in self.env.items()}
        truths = [cond_value(g.cond, at) for g in res.guards]
        return False if False in truths else None if None in truths else True


def _compare(res: Any, seen: Mapping[str, Any], binder: _Binder) -> list[str]:
    out: list[str] = []
    for name, value in seen.items():
        if name == "output":
            continue
        tensors = isinstance(value, torch.Tensor) or (
            isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value)
        )
        if tensors:
            try:
                t = res.type_of(name)
            except ss.SymshapeError as e:
                out.append(f"{name}: {e}")
                continue
            out += binder.value(name, t, value)
        elif isinstance(value, (int, torch.Size)) and not isinstance(value, bool):
            try:
                known = res.value_of(name)
            except ss.SymshapeError:
                continue
            if known is not None:
                out += binder.python(name, known, value)
    return out


def _runs(module: Any, feeds: list[list[torch.Tensor]]) -> tuple[bool | None, str]:
    """Whether eager torch runs ``module`` on each of ``feeds`` (None: an error about dtypes or
    kernels, not sizes), and the first line of its error."""
    for args in feeds:
        try:
            with torch.no_grad():
                module(*args)
        except Exception as e:
            if classify(e) != "shape":
                return None, classify(e)
            return False, str(e).splitlines()[0][:200] if str(e) else type(e).__name__
    return True, ""


#: the squeeze rule: ``x.squeeze()`` keeps a symbolic axis under ``n != 1``, ``x.squeeze(d)`` of a
#: symbolic axis drops it under ``n == 1`` (torch's rank depends on the size; symshape's does not)
_SQUEEZE = re.compile(r"squeeze needs `[^`]+ (!=|==) 1`")


def _squeeze_rule(res: Any, env: Mapping[Any, int]) -> bool:
    """Whether ``valid_at`` is False at ``env`` by the squeeze rule (documented, not a finding):
    its guards, or its kept axis meeting another op's need where a symbol is 1; or a dtype error."""
    text = res.why_invalid(env)
    if "squeeze" in text and 1 in env.values():  # (the rule's consequence through another op)
        return True
    if res.errors and all("squeeze requires" in str(e) for e in res.errors):
        return True  # (the rule's `d == 1` against another op's need: an error at every size)
    return _squeeze_guards(res, env, text)


def _squeeze_guards(res: Any, env: Mapping[Any, int], text: str) -> bool:
    """Whether every condition false at ``env`` is a squeeze guard or a dtype error."""
    errs = [ln for ln in text.splitlines() if ": error: " in ln or ln.startswith("undecided")]
    # (a dtype error is not about sizes: torch runs an empty tensor through a kernel it refuses)
    return bool(errs) and all(
        _SQUEEZE.search(ln) or re.search(r"decide `u\d+ (==|!=) 1`", ln) or "[dtype-mismatch]" in ln
        for ln in errs
    )


def check(prog: Program, events: list[str] | None = None) -> list[str] | None:
    """Each disagreement between symshape and eager torch on ``prog`` (None: torch cannot build
    the module, or fx cannot trace it). ``events`` collects what happened at each size."""
    ev = events if events is not None else []
    try:
        module = prog.module()
    except Exception:
        return None
    syms = {s: ss.dim(s, min=0) if prog.zero else ss.dim(s) for s in prog.symbols}
    types: dict[str, ss.Type] = {}
    for i in prog.inputs:
        dims = tuple(syms[d] if isinstance(d, str) else d for d in i.dims)
        rng = None if i.values is None else tuple(eval(e, {}, dict(syms)) for e in i.values)
        types[i.name] = ss.Tensor(dims, i.dtype, values=rng)  # type: ignore[arg-type]
    try:
        res = sst.infer(module, types)
    except ss.SymshapeError as e:
        if "cannot trace" in str(e):
            return None
        return [f"infer raised {e}"]
    except Exception as e:  # a crash
        return [f"infer raised {type(e).__name__}: {e}"]
    # an unsupported call is a finding where torch runs the module (where it refuses, the
    # importer's refusal is torch's: F.pad's rank rule raises NotImplementedError)
    unsupported = any(e.code == "unsupported-op" for e in res.errors)
    if res.status == "inconclusive":
        ev.append("inconclusive")
        return []
    found: list[str] = []
    # (valid_at takes the program's own symbols only: those of the inputs' shapes and ranges)
    used = {
        k
        for k in prog.symbols
        for i in prog.inputs
        if k in i.dims or any(re.search(rf"\b{k}\b", e) for e in i.values or ())
    }
    for size in prog.sizes:
        env: dict[Any, int] = {syms[k]: v for k, v in size.items() if k in used}
        fed = feeds(prog, size)
        if fed is None:
            continue
        args = [fed[i.name] for i in prog.inputs]
        # a ranged input of one entry holds the range's high end; the low end in a second run
        again = any(i.values is not None and fed[i.name].numel() == 1 for i in prog.inputs)
        low = feeds(prog, size, 1) if again else None
        runs, why = _runs(module, [args] + ([[low[i.name] for i in prog.inputs]] if low else []))
        if runs is None:
            ev.append(f"torch {why} error")
            continue
        try:
            valid: bool | None = not res.errors and bool(res.valid_at(env))
        except ss.SymshapeError:  # a guard over a size only the run decides
            valid = None
        except Exception as e:
            found.append(f"{size}: valid_at raised {type(e).__name__}: {e}")
            continue
        if not runs:
            ev.append("torch refuses")
            if valid:
                found.append(f"{size}: torch refuses ({why}); valid_at True\n{res.report()}")
            continue
        ev.append("torch runs")
        if unsupported:
            found.append(f"{size}: torch runs; unsupported: {res.report()}")
            break
        try:
            seen = _record(module, res.fx_graph, args)
        except Exception:  # the traced graph does not run where the module does: not symshape's
            continue
        binder = _Binder(env)
        wrong = _compare(res, seen, binder)
        if valid is None:
            valid = binder.valid(res)
        if valid is False:  # (the squeeze rule's guards are documented: not a finding)
            if not _squeeze_rule(res, env):
                found.append(f"{size}: torch runs; valid_at False\n{res.why_invalid(env)}")
            continue
        found += [f"{size}: {w}" for w in wrong]
    return found
