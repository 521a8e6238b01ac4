"""Oracle (a): onnx's own node-level backend test cases, generated in memory.

``onnx.backend.test.case.node.collect_testcases()`` gives, per case, a model and input and expected
output arrays. :func:`prepare` turns a case into what symshape gets:

* the declared output types lose their shapes (the element type stays) and ``value_info`` is
  dropped, so nothing of the answer is in the model;
* **the folding rule**: a graph input whose data the case supplies becomes an initializer with that
  data when some node reads it at an input slot its converter declares as a *value input* (the
  registry's ``value_inputs``: ``Reshape``'s target, ``Slice``'s bounds, ``Pad``'s pads, the
  reduction axes, ``TopK``'s ``k``, ...) -- exactly the inputs that are constants in a real model and
  that symshape needs as values until it has shape values -- or a small integer input (at most 8
  entries) that reaches such a slot through other nodes (the size input of an expanded function).
  Every other input stays an input with its declared type.

:func:`check_case` infers the prepared model and compares every output with the expected array's
shape (and dtype), giving one :class:`Verdict`. Misses are classified by cause: the cause an
``unsupported-op`` diagnostic names (no converter, needs shape values, needs a new core operator,
control flow, a dtype, sequences), a size symshape leaves open (``unknown-value``: an unknown
dimension in an output, or a guard over one, where every known dimension is right, or an output
of unknown rank), Z3 giving up (``inconclusive``), or a BUG: a wrong shape or dtype, a failing
guard, an error or unresolved type on a case that runs, or a crash.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.dtypes import to_dtype
from symshape.onnx.registry import REGISTRY, canonical_domain

__all__ = [
    "Verdict",
    "collect_cases",
    "prepare",
    "check_case",
    "check_case_symbolic",
    "symbolize",
    "run_all",
    "summarize",
    "BUG_CATEGORIES",
    "case_op",
]

PASS = "pass"
#: a size symshape leaves open (an unknown dimension, or a guard over one): it says it does not
#: know, which is a miss and not a wrong answer
UNKNOWN_VALUE = "unknown-value"
BUG_CATEGORIES = ("wrong-shape", "wrong-dtype", "wrong-guard", "error", "unresolved", "crash")
# ("inconclusive": Z3 gave up on a condition within the timeout -- a miss, reported by its own
# category; "unresolved" -- a hole nothing determines -- is a bug)


@dataclass(frozen=True)
class Verdict:
    name: str
    op: str
    category: str  # "pass", a Cause key, or one of BUG_CATEGORIES
    detail: str = ""


@functools.lru_cache(maxsize=1)
def collect_cases() -> tuple[Any, ...]:
    from onnx.backend.test.case import node

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return tuple(node.collect_testcases())


@functools.lru_cache(maxsize=1)
def _base_ops() -> dict[str, str]:
    """The operator each non-expanded case tests (its single node's op type)."""
    out: dict[str, str] = {}
    for c in collect_cases():
        nodes = c.model.graph.node
        if len(nodes) == 1:
            n = nodes[0]
            out[c.name] = f"{n.domain}.{n.op_type}" if canonical_domain(n.domain) else n.op_type
    return out


def case_op(case: Any) -> str:
    """The operator a case tests; an ``_expanded`` case tests the operator of its base case."""
    ops = _base_ops()
    name = case.name
    if name in ops:
        return ops[name]
    for suffix in ("_expanded_ver18", "_expanded"):
        if name.endswith(suffix) and name[: -len(suffix)] in ops:
            return ops[name[: -len(suffix)]]
    if "_expanded" in name:
        base = name[: name.index("_expanded")]
        if base in ops:
            return ops[base]
    nodes = case.model.graph.node
    return nodes[-1].op_type if nodes else "?"


def _shape_dtype(v: Any) -> tuple[tuple[int, ...], str | None] | None:
    if isinstance(v, onnx.TensorProto):
        return tuple(int(d) for d in v.dims), to_dtype(v.data_type)
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        dt = str(a.dtype)
        return tuple(a.shape), (dt if dt in _DTYPES else None)
    return None  # a sequence, an optional, a map


_DTYPES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 "
    "complex64 complex128".split()
)


def _value_slots(model: onnx.ModelProto) -> dict[str, list[str]]:
    """Value name -> the ``op[slot]`` places that read it as a value input, directly or through
    the nodes that compute such an input (an expanded function computes ``Range``'s limit from
    its size input through ``Cast``, ``Sub``, ...)."""
    opsets = {canonical_domain(o.domain): o.version for o in model.opset_import}
    out: dict[str, list[str]] = defaultdict(list)
    nodes = list(model.graph.node)
    for n in nodes:
        dom = canonical_domain(n.domain)
        d = REGISTRY.lookup(dom, n.op_type, opsets.get(dom, 0))
        if d is None:
            continue
        for i in d.value_inputs:
            if i < len(n.input) and n.input[i]:
                out[n.input[i]].append(f"{n.op_type}[{i}]")
    changed = True
    while changed:  # back through the producers of values read as values
        changed = False
        for n in nodes:
            places = [p for o in n.output if o in out for p in out[o]]
            if not places or n.op_type in ("Shape", "Size"):  # these read no data
                continue
            for i in _reads(n):
                if i and i not in out:
                    out[i] = [f"{n.op_type}->{places[0]}"]
                    changed = True
    return out


def _reads(n: onnx.NodeProto) -> list[str]:
    """The values a node reads: its inputs and, for ``If``/``Loop``/``Scan``, the outer values its
    subgraphs use."""
    out = list(n.input)
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            for m in a.g.node:
                out.extend(_reads(m))
    return out


@dataclass
class Prepared:
    model: onnx.ModelProto
    expected: dict[str, tuple[tuple[int, ...], str | None] | None]
    folded: list[str]


def prepare(case: Any) -> Prepared:
    """The case's model as symshape gets it (see the module docstring)."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    g = model.graph
    inputs, outputs = case.data_sets[0]
    del g.value_info[:]
    expected: dict[str, tuple[tuple[int, ...], str | None] | None] = {}
    for vi, arr in zip(g.output, outputs):
        expected[vi.name] = _shape_dtype(arr)
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    slots = _value_slots(model)
    folded: list[str] = []
    keep = []
    for vi, arr in zip(g.input, inputs):
        direct = any("->" not in p for p in slots.get(vi.name, ()))
        # an input that only reaches a value slot through other nodes is folded when it is a
        # small integer tensor (a size: the window length of an expanded HannWindow)
        a = np.asarray(arr) if isinstance(arr, (np.ndarray, np.generic)) else None
        small_int = a is not None and a.dtype.kind in "iu" and a.size <= 8
        if vi.name in slots and isinstance(arr, (np.ndarray, np.generic)) and (direct or small_int):
            g.initializer.append(numpy_helper.from_array(np.asarray(arr), vi.name))
            folded.append(vi.name)
        else:
            keep.append(vi)
    for vi in list(g.input)[len(inputs) :]:
        keep.append(vi)
    del g.input[:]
    g.input.extend(keep)
    return Prepared(model, expected, folded)


def check_case(case: Any) -> Verdict:
    """Infer one prepared case and compare its outputs with the expected arrays."""
    op = case_op(case)
    try:
        prep = prepare(case)
        res = sso.infer(prep.model)
    except Exception as e:  # a crash is a bug
        return Verdict(case.name, op, "crash", f"{type(e).__name__}: {e}")
    if res.unsupported:
        cause = res.unsupported[0][0]
        msg = res.issues[0].diagnostic.message if res.issues else ""
        return Verdict(case.name, op, cause.key if cause else "error", msg)
    if res.errors:
        return Verdict(case.name, op, "error", res.errors[0].render(source=False))
    if res.status in ("unresolved", "inconclusive"):
        d = res.diagnostics[0] if res.diagnostics else None
        return Verdict(case.name, op, res.status, d.render(source=False) if d else res.status)
    for name, exp in prep.expected.items():
        if exp is None:
            continue
        shape, dtype = exp
        try:
            t = res.type_of(name)
        except ss.SymshapeError as e:
            return Verdict(case.name, op, "crash", f"type_of({name!r}): {e}")
        if isinstance(t, ss.TensorType) and t.ndim is None:  # a rank left open: a miss
            return Verdict(case.name, op, UNKNOWN_VALUE, f"{name}: {t} vs expected {shape}")
        if not isinstance(t, ss.TensorType):
            return Verdict(case.name, op, "wrong-shape", f"{name}: {t} vs expected {shape}")
        got = tuple(int(d) if d.is_constant else None for d in t.dims)
        if _left_open(got, shape):
            return Verdict(case.name, op, UNKNOWN_VALUE, f"{name}: {t} vs expected {shape}")
        if got != shape:
            return Verdict(case.name, op, "wrong-shape", f"{name}: {t} vs expected {shape}")
        if dtype is not None and t.dtype is not None and t.dtype != dtype:
            return Verdict(case.name, op, "wrong-dtype", f"{name}: {t} vs expected {dtype}")
    return Verdict(case.name, op, PASS)


def symbolize(prep: Prepared) -> tuple[onnx.ModelProto, dict[str, ss.Dim], dict[ss.Dim, int]]:
    """The prepared model with every positive dimension of every graph input made a symbol of
    its own (``<input>_<axis>``); the symbols and their values in the case."""
    model = onnx.ModelProto()
    model.CopyFrom(prep.model)
    dims: dict[str, ss.Dim] = {}
    env: dict[ss.Dim, int] = {}
    for k, vi in enumerate(model.graph.input):
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        for a, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                name = f"s{k}_{a}"
                v = int(d.dim_value)
                d.Clear()
                d.dim_param = name
                sym = ss.dim(name)
                dims[name] = sym
                env[sym] = v
    return model, dims, env


def check_case_symbolic(case: Any) -> Verdict:
    """The case with symbolic input dimensions: after substituting the case's sizes, every output
    shape must be the expected one and every guard must hold (an error or a failing guard is a
    BUG: the case runs)."""
    op = case_op(case)
    try:
        prep = prepare(case)
        model, dims, env = symbolize(prep)
        res = sso.infer(model, dims=dims)
    except Exception as e:
        return Verdict(case.name, op, "crash", f"{type(e).__name__}: {e}")
    if res.unsupported:
        cause = res.unsupported[0][0]
        msg = res.issues[0].diagnostic.message if res.issues else ""
        return Verdict(case.name, op, cause.key if cause else "error", msg)
    if res.errors:
        return Verdict(case.name, op, "error", res.errors[0].render(source=False))
    if res.status in ("unresolved", "inconclusive"):
        d = res.diagnostics[0] if res.diagnostics else None
        return Verdict(case.name, op, res.status, d.render(source=False) if d else res.status)
    for g in res.guards:
        if _open(g.cond):  # a condition on a size symshape leaves open: not decided at the sizes
            return Verdict(case.name, op, UNKNOWN_VALUE, f"guard {g} depends on a size left open")
        try:
            ok = g.holds(env)
        except Exception as e:
            return Verdict(case.name, op, "crash", f"guard {g}: {type(e).__name__}: {e}")
        if not ok:
            return Verdict(case.name, op, "wrong-guard", f"{g.describe()} fails at {_env_str(env)}")
    for name, exp in prep.expected.items():
        if exp is None:
            continue
        shape, _ = exp
        t = res.type_of(name)
        if isinstance(t, ss.TensorType) and t.ndim is None:  # a rank left open: a miss
            return Verdict(case.name, op, UNKNOWN_VALUE, f"{name}: {t} vs expected {shape}")
        if not isinstance(t, ss.TensorType):
            return Verdict(case.name, op, "wrong-shape", f"{name}: {t} vs expected {shape}")
        got_t = t.subs(env)
        got = tuple(int(d) if d.is_constant else None for d in got_t.dims)
        if _left_open(got, shape):
            return Verdict(case.name, op, UNKNOWN_VALUE, f"{name}: {t} at {_env_str(env)} is {got_t}")
        if got != shape:
            return Verdict(
                case.name, op, "wrong-shape", f"{name}: {t} at {_env_str(env)} is {got_t}, expected {shape}"
            )
    return Verdict(case.name, op, PASS)


def _open(cond: Any) -> bool:
    """Whether a guard's condition mentions a solver unknown (a size symshape left open)."""
    return any(d.has_unknowns for d in _cond_dims(cond))


def _cond_dims(cond: Any) -> list[ss.Dim]:
    from symshape.encoding.conds import cond_dims

    return list(cond_dims(cond))


def _left_open(got: tuple[int | None, ...], shape: tuple[int, ...]) -> bool:
    """Same rank, every known dimension right, and some left open (not constant after
    substitution): symshape does not know that size -- a miss, not a wrong answer."""
    return len(got) == len(shape) and None in got and all(g is None or g == e for g, e in zip(got, shape))


def _env_str(env: dict[ss.Dim, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in env.items())


def run_all(symbolic: bool = False) -> list[Verdict]:
    """Every case, static (as the case declares its inputs) or symbolic (see
    :func:`check_case_symbolic`)."""
    check = check_case_symbolic if symbolic else check_case
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [check(c) for c in collect_cases()]


def summarize(verdicts: list[Verdict]) -> dict[str, Any]:
    """Cases passed / total, op types covered / total, misses by category."""
    ops_all = {v.op for v in verdicts}
    ops_pass = {v.op for v in verdicts if v.category == PASS}
    ops_full = {o for o in ops_all if all(v.category == PASS for v in verdicts if v.op == o)}
    by_cat: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if v.category != PASS:
            by_cat[v.category].append(v)
    return {
        "cases": len(verdicts),
        "passed": sum(v.category == PASS for v in verdicts),
        "ops": len(ops_all),
        "ops_covered": len(ops_pass),
        "ops_fully_covered": len(ops_full),
        "misses": {k: by_cat[k] for k in sorted(by_cat)},
        "miss_ops": {k: Counter(v.op for v in by_cat[k]) for k in sorted(by_cat)},
    }


_ = helper
