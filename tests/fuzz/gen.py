"""The seeded random-program generator of the differential fuzzer.

A program is a DAG of operator calls over annotated inputs. Every dimension of an input is a
constant or a symbol; symbols have a *hidden value* (some are ``min=0`` symbols, and 0 is a
common value), and the generator picks each operator's operands and attributes so that the
program is valid at the hidden values most of the time (the hidden values are run through the
numpy reference while the program grows). Other values of the symbols then make it invalid in
all the ways the operators can be: the checker (:mod:`.check`) compares symshape's verdict,
guards and types with numpy's at several values.

Secondary operands are fresh inputs shaped after the hidden shape of what they combine with: each
of their dimensions is the constant, a symbol of the same hidden value (shared or fresh), a 1, or
now and then a different size. Nothing here asks symshape anything: the generator knows the
program only through numpy.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import symshape as ss
from symshape.encoding.dims import Dim

from . import numpy_ref as ref

__all__ = ["Program", "Node", "generate", "OP_KINDS"]

Env = Mapping[Dim, int]
Ref = Callable[[list[Any], Env], Any]
DimSpec = Dim | int


@dataclass
class Node:
    """One value of the program: its expression, a readable line, and its numpy reference."""

    expr: ss.Expr
    text: str
    ref: Ref
    args: tuple[int, ...]
    kind: str  # the operator family, for coverage statistics
    is_tuple: bool = False


@dataclass
class Program:
    """A generated program: its nodes in order, its symbols (with bounds) and the function."""

    seed: int
    nodes: list[Node]
    symbols: list[tuple[Dim, int, int]]  # (symbol, min, hidden value)
    params: list[ss.Var]
    function: ss.Function
    hidden: dict[Dim, int]
    hidden_ok: bool
    rejected: int = 0

    def listing(self) -> str:
        syms = ", ".join(f"{s}>={lo} (hidden {v})" for s, lo, v in self.symbols) or "none"
        lines = [f"# program seed {self.seed}; symbols: {syms}"]
        lines += [f"%{i} = {n.text}" for i, n in enumerate(self.nodes)]
        return "\n".join(lines)

    def evaluate(self, env: Env) -> tuple[list[Any], int | None, str]:
        """The numpy values of every node at ``env``; the index of the node that raised (None if
        none did) and the exception text."""
        values: list[Any] = []
        for i, n in enumerate(self.nodes):
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    values.append(n.ref([values[j] for j in n.args], env))
            except (ValueError, IndexError, TypeError, np.exceptions.AxisError) as e:
                return values, i, f"{type(e).__name__}: {e}"
        return values, None, ""


OP_KINDS = (
    "binary", "compare", "unary", "where", "reshape", "transpose", "expand_dims", "squeeze",
    "concatenate", "stack", "split", "matmul", "dense", "reduce", "argmax", "strided_slice", "take",
    "flatten", "broadcast_to", "pad", "softmax", "conv", "pool", "batch_matmul",
)  # fmt: skip

_WEIGHTS = {
    "binary": 6, "compare": 2, "unary": 3, "where": 2, "reshape": 6, "transpose": 3,
    "expand_dims": 2, "squeeze": 2, "concatenate": 3, "stack": 2, "split": 3, "matmul": 3,
    "dense": 2, "reduce": 4, "argmax": 2, "strided_slice": 4, "take": 3, "flatten": 2,
    "broadcast_to": 2, "pad": 2, "softmax": 1, "conv": 4, "pool": 4, "batch_matmul": 1,
}  # fmt: skip


def _fmt(v: Any) -> str:
    if isinstance(v, tuple):
        inner = ", ".join(_fmt(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return str(v) if isinstance(v, Dim) else repr(v)


def _val(d: DimSpec, env: Env) -> int:
    if isinstance(d, Dim):
        return int(d.subs(env))  # type: ignore[arg-type]
    return d


class _Gen:
    def __init__(self, seed: int, max_ops: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.symbolic = self.rng.random() < 0.8
        self.zero_rate = self.rng.choice([0.0, 0.1, 0.25])
        self.nodes: list[Node] = []
        self.hidden_vals: list[Any] = []
        self.symbols: list[tuple[Dim, int, int]] = []
        self.hidden: dict[Dim, int] = {}
        self.params: list[ss.Var] = []
        self.max_ops = max_ops
        self.hidden_ok = True
        self.consumed: set[int] = set()
        self.rejected = 0  # calls whose attributes symshape rejected when they were built

    # -- dimensions and inputs -------------------------------------------------------------------
    def value(self, lo: int = 0, hi: int = 4) -> int:
        """A hidden size in ``[lo, hi]``: 0 at the program's zero rate (when ``lo`` allows it)."""
        if lo == 0 and self.rng.random() < self.zero_rate:
            return 0
        return self.rng.randint(max(lo, 1), hi)

    def dim_for(self, v: int, share: float = 0.5) -> DimSpec:
        """A dimension whose hidden value is ``v``: a constant, or a symbol (shared or fresh)."""
        if not self.symbolic or self.rng.random() < 0.35:
            return v
        same = [s for s, _, hv in self.symbols if hv == v]
        if same and self.rng.random() < share:
            return self.rng.choice(same)
        lo = 0 if v == 0 or self.rng.random() < 0.35 else 1
        s = ss.dim(f"n{len(self.symbols)}", min=lo)
        self.symbols.append((s, lo, v))
        self.hidden[s] = v
        return s

    def input(self, shape: Sequence[DimSpec], dtype: str = "float32", kind: str = "float") -> int:
        k = len(self.params)
        v = ss.var(f"x{k}", ss.Tensor(tuple(shape), dtype))
        self.params.append(v)
        seed = self.seed * 131 + k
        shp = tuple(shape)

        def make(_: list[Any], env: Env) -> np.ndarray:
            dims = tuple(_val(d, env) for d in shp)
            g = np.random.default_rng(seed)
            if kind == "int":
                return g.integers(-1, 6, size=dims).astype(dtype)
            if kind == "bool":
                return g.random(dims) < 0.5
            return g.standard_normal(dims).astype(dtype)

        i = self._push(Node(v, f"input {_fmt(shp)} {dtype}", make, (), "input"))
        assert i is not None
        return i

    def like(self, shape: Sequence[int], *, bcast: float = 0.2, wrong: float = 0.04) -> list[DimSpec]:
        """Dimensions for a fresh operand matching the hidden ``shape`` (1s where broadcasting is
        allowed, now and then a wrong size)."""
        out: list[DimSpec] = []
        for v in shape:
            r = self.rng.random()
            if r < wrong:
                out.append(self.dim_for(self.rng.choice([x for x in (0, 1, 2, 3, 5) if x != v])))
            elif r < wrong + bcast:
                out.append(1)
            else:
                out.append(self.dim_for(v))
        return out

    # -- nodes -----------------------------------------------------------------------------------
    def _push(self, node: Node) -> int | None:
        """Append ``node`` if it computes at the hidden values; None (and nothing appended) if
        not, unless the program is to end with an error there."""
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                hv = node.ref([self.hidden_vals[j] for j in node.args], self.hidden)
        except (ValueError, IndexError, TypeError, np.exceptions.AxisError):
            if node.kind != "input" and self.rng.random() < 0.12:
                self.nodes.append(node)
                self.hidden_vals.append(None)
                self.consumed.update(node.args)
                self.hidden_ok = False
                return len(self.nodes) - 1
            return None
        self.nodes.append(node)
        self.hidden_vals.append(hv)
        self.consumed.update(node.args)
        return len(self.nodes) - 1

    def call(
        self, kind: str, text: str, build: Callable[[], ss.Expr], refn: Ref, args: Sequence[int]
    ) -> int | None:
        try:
            expr = build()
        except ss.SymshapeError:
            self.rejected += 1  # attributes rejected when the call is built
            return None
        return self._push(Node(expr, text, refn, tuple(args), kind))

    def tensors(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if not n.is_tuple and self.hidden_vals[i] is not None]

    def pick(self, pred: Callable[[np.ndarray], bool] = lambda a: True) -> int | None:
        cands = [i for i in self.tensors() if pred(self.hidden_vals[i])]
        if not cands:
            return None
        if self.rng.random() < 0.6:
            return cands[-1]
        return self.rng.choice(cands)

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.hidden_vals[i].shape)

    def dtype(self, i: int) -> tuple[str, str]:
        """The symshape dtype of node ``i`` and the kind of input data that has it (numpy's argmax
        gives int64 where Relay's gives int32)."""
        dt = self.hidden_vals[i].dtype
        if dt == np.bool_:
            return "bool", "bool"
        if np.issubdtype(dt, np.integer):
            return "int32", "int"
        return "float32", "float"

    def e(self, i: int) -> ss.Expr:
        return self.nodes[i].expr

    # -- operators -------------------------------------------------------------------------------
    def op_binary(self) -> int | None:
        a = self.pick(lambda x: x.dtype == np.float32)
        if a is None:
            return None
        sh = self.shape(a)
        if self.rng.random() < 0.2:
            b = self.pick(lambda x: x.dtype == np.float32)
            assert b is not None
        else:
            keep = self.rng.randint(0, len(sh)) if self.rng.random() < 0.3 else len(sh)
            dims = self.like(sh[len(sh) - keep :])
            if self.rng.random() < 0.15:
                dims = [self.dim_for(self.rng.randint(1, 3)), *dims]
            b = self.input(dims)
        if self.rng.random() < 0.5:
            a, b = b, a
        name, fn = self.rng.choice(
            [("add", np.add), ("multiply", np.multiply), ("maximum", np.maximum), ("subtract", np.subtract)]
        )
        op = getattr(ss.ops, name)
        return self.call(
            "binary",
            f"{name}(%{a}, %{b})",
            lambda: op(self.e(a), self.e(b)),
            lambda v, _: fn(v[0], v[1]),
            (a, b),
        )

    def op_compare(self) -> int | None:
        a = self.pick(lambda x: x.dtype == np.float32)
        if a is None:
            return None
        b = self.input(self.like(self.shape(a)))
        return self.call(
            "compare",
            f"less(%{a}, %{b})",
            lambda: ss.ops.less(self.e(a), self.e(b)),
            lambda v, _: np.less(v[0], v[1]),
            (a, b),
        )

    def op_unary(self) -> int | None:
        a = self.pick(lambda x: x.dtype == np.float32)
        if a is None:
            return None
        name, fn = self.rng.choice(
            [
                ("relu", lambda x: np.maximum(x, 0)),
                ("exp", lambda x: np.exp(np.clip(x, -5, 5))),
                ("negative", np.negative),
                ("sigmoid", lambda x: 1 / (1 + np.exp(-np.clip(x, -5, 5)))),
                ("tanh", np.tanh),
            ]
        )
        op = getattr(ss.ops, name)
        return self.call(
            "unary", f"{name}(%{a})", lambda: op(self.e(a)), lambda v, _: fn(v[0]).astype(np.float32), (a,)
        )

    def op_where(self) -> int | None:
        x = self.pick(lambda v: v.dtype == np.float32)
        if x is None:
            return None
        sh = self.shape(x)
        conds = [i for i in self.tensors() if self.hidden_vals[i].dtype == np.bool_]
        if conds and self.rng.random() < 0.6:
            c = self.rng.choice(conds)
        else:
            c = self.input(self.like(sh, bcast=0.4), "bool", "bool")
        y = self.input(self.like(sh, bcast=0.3))
        return self.call(
            "where",
            f"where(%{c}, %{x}, %{y})",
            lambda: ss.ops.where(self.e(c), self.e(x), self.e(y)),
            lambda v, _: np.where(v[0], v[1], v[2]),
            (c, x, y),
        )

    def _newshape(self, sh: tuple[int, ...]) -> tuple[DimSpec, ...]:
        r = len(sh)
        total = math.prod(sh)
        choice = self.rng.randint(0, 7)
        if choice == 0:
            return (-1,)
        if choice == 1 and r >= 1:
            return (0, -1)
        if choice == 2 and r >= 2:
            k = self.rng.randint(0, r - 2)
            return (*([0] * k), -3, -2)
        if choice == 3 and r >= 1:
            k = self.rng.randint(0, r - 1)
            d = sh[k]
            f = self.rng.choice([x for x in (1, 2, 3) if d % x == 0] or [1])
            pair: tuple[int, int] = (f, -1) if self.rng.random() < 0.5 else (-1, f)
            return (*([0] * k), -4, *pair, -2)
        if choice == 4 and r >= 1:
            return (*([0] * self.rng.randint(1, r)), -2)
        # an explicit factorization of the total, perhaps with -1, symbols for literal sizes
        factors: list[int] = []
        rest = total
        for _ in range(self.rng.randint(0, 2)):
            divs = [x for x in (1, 2, 3, 4) if rest == 0 or rest % x == 0]
            f = self.rng.choice(divs)
            factors.append(f)
            rest = rest // f if f and rest else rest
        factors.append(rest)
        self.rng.shuffle(factors)
        spec: list[DimSpec] = [self.dim_for(f, share=0.7) if f > 0 else f for f in factors]
        if self.rng.random() < 0.5:
            spec[self.rng.randrange(len(spec))] = -1
        if self.rng.random() < 0.05:
            spec.append(self.rng.choice([2, 3]))  # a wrong count
        return tuple(spec)

    def op_reshape(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        spec = self._newshape(self.shape(a))
        allowzero = self.rng.random() < 0.1 and all(not isinstance(s, int) or s != 0 for s in spec)
        sp = spec

        literal = [isinstance(s, Dim) for s in sp]  # a symbol is a size, even at 0

        def fn(v: list[Any], env: Env) -> Any:
            return ref.reshape(v[0], [_val(s, env) for s in sp], allowzero, literal)

        return self.call(
            "reshape",
            f"reshape(%{a}, {_fmt(sp)}{', allowzero=True' if allowzero else ''})",
            lambda: ss.ops.reshape(self.e(a), sp, allowzero=allowzero),
            fn,
            (a,),
        )

    def op_transpose(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        r = len(self.shape(a))
        axes: tuple[int, ...] | None = None
        if self.rng.random() < 0.7:
            perm = list(range(r))
            self.rng.shuffle(perm)
            axes = tuple(p - r if self.rng.random() < 0.2 else p for p in perm)
        ax = axes
        return self.call(
            "transpose",
            f"transpose(%{a}, {_fmt(ax)})",
            lambda: ss.ops.transpose(self.e(a), ax),
            lambda v, _: np.transpose(v[0], ax),
            (a,),
        )

    def op_expand_dims(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        r = len(self.shape(a))
        axis = self.rng.randint(-r - 1, r)
        k = self.rng.choice([1, 1, 2])

        def fn(v: list[Any], _: Env) -> Any:
            x = v[0]
            ax = axis + x.ndim + 1 if axis < 0 else axis
            for _ in range(k):
                x = np.expand_dims(x, ax)
            return x

        return self.call(
            "expand_dims",
            f"expand_dims(%{a}, {axis}, {k})",
            lambda: ss.ops.expand_dims(self.e(a), axis, k),
            fn,
            (a,),
        )

    def op_squeeze(self) -> int | None:
        # squeeze without axis on a symbolic dimension needs ``n != 1`` (its rank would depend on
        # the value): only explicit axes are generated
        a = self.pick(lambda x: 1 in x.shape or x.ndim > 0)
        if a is None:
            return None
        sh = self.shape(a)
        ones = [i for i, d in enumerate(sh) if d == 1]
        if ones and self.rng.random() < 0.9:
            axes = tuple(sorted(self.rng.sample(ones, self.rng.randint(1, len(ones)))))
        else:
            axes = (self.rng.randrange(len(sh)),) if sh else (0,)
        return self.call(
            "squeeze",
            f"squeeze(%{a}, {_fmt(axes)})",
            lambda: ss.ops.squeeze(self.e(a), axes),
            lambda v, _: np.squeeze(v[0], axes),
            (a,),
        )

    def op_concatenate(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1)
        if a is None:
            return None
        sh = self.shape(a)
        axis = self.rng.randrange(len(sh))
        parts = [a]
        for _ in range(self.rng.randint(1, 2)):
            dims = self.like(sh, bcast=0.0)
            dims[axis] = self.dim_for(self.value(0, 3))
            parts.append(self.input(dims, *self.dtype(a)))
        self.rng.shuffle(parts)
        ax = axis - len(sh) if self.rng.random() < 0.3 else axis
        ps = tuple(parts)
        return self.call(
            "concatenate",
            f"concatenate({', '.join(f'%{p}' for p in ps)}, axis={ax})",
            lambda: ss.ops.concatenate([self.e(p) for p in ps], axis=ax),
            lambda v, _: np.concatenate(v, axis=ax),
            ps,
        )

    def op_stack(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        sh = self.shape(a)
        b = self.input(self.like(sh, bcast=0.0), *self.dtype(a))
        axis = self.rng.randint(-len(sh) - 1, len(sh))
        return self.call(
            "stack",
            f"stack(%{a}, %{b}, axis={axis})",
            lambda: ss.ops.stack([self.e(a), self.e(b)], axis=axis),
            lambda v, _: np.stack(v, axis=axis),
            (a, b),
        )

    def op_split(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1)
        if a is None:
            return None
        sh = self.shape(a)
        axis = self.rng.randrange(len(sh))
        d = sh[axis]
        ios: int | tuple[int, ...]
        if self.rng.random() < 0.5:
            divs = [k for k in (1, 2, 3) if d % k == 0]
            ios = self.rng.choice(divs) if self.rng.random() < 0.9 else self.rng.randint(1, 3)
        else:
            ios = tuple(sorted(self.rng.randint(0, d) for _ in range(self.rng.randint(1, 2))))
        io = ios
        t = self.call(
            "split",
            f"split(%{a}, {_fmt(io)}, axis={axis})",
            lambda: ss.ops.split(self.e(a), io, axis=axis),
            lambda v, _: ref.split(v[0], io, axis),
            (a,),
        )
        if t is None or self.hidden_vals[t] is None:
            return t
        self.nodes[t].is_tuple = True
        pieces = len(self.hidden_vals[t])
        for k in sorted(self.rng.sample(range(pieces), min(pieces, self.rng.randint(1, 2)))):
            self._push(
                Node(ss.TupleGetItem(self.e(t), k), f"%{t}[{k}]", lambda v, _, k=k: v[0][k], (t,), "split")
            )
        return t

    def op_matmul(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1 and x.dtype == np.float32)
        if a is None:
            return None
        sh = self.shape(a)
        k = sh[-1]
        m = self.value(0, 3)
        form = self.rng.randint(0, 3)
        if form == 0:
            dims = [self.dim_for(k), self.dim_for(m)]
        elif form == 1:
            dims = [self.dim_for(k)]
        else:
            batch = self.like(sh[:-2], bcast=0.4) if len(sh) > 2 else []
            dims = [*batch, self.dim_for(k), self.dim_for(m)]
        if self.rng.random() < 0.05:
            dims[-2 if len(dims) > 1 else -1] = self.dim_for(k + 1)
        b = self.input(dims)
        return self.call(
            "matmul",
            f"matmul(%{a}, %{b})",
            lambda: ss.ops.matmul(self.e(a), self.e(b)),
            lambda v, _: np.matmul(v[0], v[1]),
            (a, b),
        )

    def op_dense(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1 and x.dtype == np.float32)
        if a is None:
            return None
        k = self.shape(a)[-1]
        units = self.value(1, 4)
        w = self.input([self.dim_for(units), self.dim_for(k)])
        given = self.rng.random() < 0.3
        return self.call(
            "dense",
            f"dense(%{a}, %{w}{f', units={units}' if given else ''})",
            lambda: ss.ops.dense(self.e(a), self.e(w), units=units if given else None),
            lambda v, _: np.matmul(v[0], v[1].T) if not given or v[1].shape[0] == units else _raise(),
            (a, w),
        )

    def op_batch_matmul(self) -> int | None:
        a = self.pick(lambda x: x.ndim == 3 and x.dtype == np.float32)
        if a is None:
            return None
        b_, _i, k = self.shape(a)
        j = self.value(1, 3)
        y = self.input([self.dim_for(b_) if self.rng.random() < 0.8 else 1, self.dim_for(j), self.dim_for(k)])
        return self.call(
            "batch_matmul",
            f"batch_matmul(%{a}, %{y})",
            lambda: ss.ops.batch_matmul(self.e(a), self.e(y)),
            lambda v, _: np.matmul(v[0], np.transpose(v[1], (0, 2, 1))),
            (a, y),
        )

    def op_reduce(self) -> int | None:
        a = self.pick(lambda x: x.dtype == np.float32)
        if a is None:
            return None
        r = len(self.shape(a))
        kind = self.rng.choice(["sum", "mean", "max", "min", "prod"])
        axis: int | tuple[int, ...] | None
        c = self.rng.random()
        if c < 0.25 or r == 0:
            axis = None
        elif c < 0.6:
            axis = self.rng.randint(-r, r - 1)
        else:
            axis = tuple(self.rng.sample(range(r), self.rng.randint(0, r)))
        keepdims = self.rng.random() < 0.3
        exclude = self.rng.random() < 0.15
        op = getattr(ss.ops, kind)
        return self.call(
            "reduce",
            f"{kind}(%{a}, axis={_fmt(axis)}, keepdims={keepdims}, exclude={exclude})",
            lambda: op(self.e(a), axis=axis, keepdims=keepdims, exclude=exclude),
            lambda v, _: ref.reduce(v[0], kind, axis, keepdims, exclude),
            (a,),
        )

    def op_argmax(self) -> int | None:
        a = self.pick(lambda x: x.dtype == np.float32)
        if a is None:
            return None
        r = len(self.shape(a))
        axis = None if r == 0 or self.rng.random() < 0.3 else self.rng.randint(-r, r - 1)
        keepdims = self.rng.random() < 0.3
        return self.call(
            "argmax",
            f"argmax(%{a}, axis={axis}, keepdims={keepdims})",
            lambda: ss.ops.argmax(self.e(a), axis=axis, keepdims=keepdims),
            lambda v, _: ref.arg_reduce(v[0], axis, keepdims),
            (a,),
        )

    def op_strided_slice(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1)
        if a is None:
            return None
        sh = self.shape(a)
        r = len(sh)
        k = self.rng.randint(1, r)
        use_axes = self.rng.random() < 0.5
        axes = tuple(self.rng.sample(range(r), k)) if use_axes else tuple(range(k))
        begin: list[int | Dim | None] = []
        end: list[int | Dim | None] = []
        strides: list[int] = []
        for ax in axes:
            d = sh[ax]
            s = self.rng.choice([1, 1, 1, 2, -1, -2])
            strides.append(s)
            for lst in (begin, end):
                c = self.rng.random()
                if c < 0.2:
                    lst.append(None)
                elif c < 0.35 and self.symbolic:
                    # a symbolic index: a symbol (>= 0), counted from the start
                    lst.append(self.dim_for(self.rng.randint(0, d + 1), share=0.6) if d >= 0 else 0)
                else:
                    lst.append(self.rng.randint(-d - 2, d + 2))
        bt, et, stt = tuple(begin), tuple(end), tuple(strides)
        use_strides = any(s != 1 for s in stt) or self.rng.random() < 0.3
        st = stt if use_strides else None
        ax_attr = axes if use_axes else None

        def fn(v: list[Any], env: Env) -> Any:
            x = v[0]
            idx: list[slice] = [slice(None)] * x.ndim
            for j, ax in enumerate(axes):
                b = bt[j]
                e = et[j]
                idx[ax] = slice(
                    None if b is None else _val(b, env),
                    None if e is None else _val(e, env),
                    stt[j] if st is not None else 1,
                )
            return x[tuple(idx)]

        return self.call(
            "strided_slice",
            f"strided_slice(%{a}, begin={_fmt(bt)}, end={_fmt(et)}, strides={_fmt(st)}, "
            f"axes={_fmt(ax_attr)})",
            lambda: ss.ops.strided_slice(self.e(a), bt, et, strides=st, axes=ax_attr),
            fn,
            (a,),
        )

    def op_take(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1)
        if a is None:
            return None
        sh = self.shape(a)
        ind_shape = [self.dim_for(self.value(0, 3)) for _ in range(self.rng.randint(0, 2))]
        ind = self.input(ind_shape, "int32", "int")
        axis = None if self.rng.random() < 0.25 else self.rng.randint(-len(sh), len(sh) - 1)
        return self.call(
            "take",
            f"take(%{a}, %{ind}, axis={axis})",
            lambda: ss.ops.take(self.e(a), self.e(ind), axis=axis),
            lambda v, _: np.take(v[0], v[1], axis=axis, mode="clip"),
            (a, ind),
        )

    def op_flatten(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        r = len(self.shape(a))
        axis = self.rng.randint(-r, r)
        return self.call(
            "flatten",
            f"flatten(%{a}, axis={axis})",
            lambda: ss.ops.flatten(self.e(a), axis=axis),
            lambda v, _: ref.flatten(v[0], axis),
            (a,),
        )

    def op_broadcast_to(self) -> int | None:
        a = self.pick()
        if a is None:
            return None
        sh = self.shape(a)
        target: list[DimSpec] = [self.dim_for(self.value(1, 3)) for _ in range(self.rng.randint(0, 1))]
        for d in sh:
            if d == 1 and self.rng.random() < 0.6:
                target.append(self.dim_for(self.value(0, 3)))
            else:
                target.append(self.dim_for(d))
        tg = tuple(target)
        return self.call(
            "broadcast_to",
            f"broadcast_to(%{a}, {_fmt(tg)})",
            lambda: ss.ops.broadcast_to(self.e(a), tg),
            lambda v, env: np.broadcast_to(v[0], tuple(_val(d, env) for d in tg)),
            (a,),
        )

    def op_pad(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1)  # numpy's pad rejects a scalar's empty pad_width
        if a is None:
            return None
        r = len(self.shape(a))
        pw = tuple((self.rng.randint(0, 2), self.rng.randint(0, 2)) for _ in range(r))
        return self.call(
            "pad", f"pad(%{a}, {pw})", lambda: ss.ops.pad(self.e(a), pw), lambda v, _: np.pad(v[0], pw), (a,)
        )

    def op_softmax(self) -> int | None:
        a = self.pick(lambda x: x.ndim >= 1 and x.dtype == np.float32)
        if a is None:
            return None
        r = len(self.shape(a))
        axis = self.rng.randint(-r, r - 1)
        return self.call(
            "softmax",
            f"softmax(%{a}, axis={axis})",
            lambda: ss.ops.softmax(self.e(a), axis=axis),
            lambda v, _: ref.softmax(v[0], axis),
            (a,),
        )

    def _spatial(self, nd: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        strides = tuple(self.rng.choice([1, 1, 2]) for _ in range(nd))
        dil = tuple(self.rng.choice([1, 1, 2]) for _ in range(nd))
        pb = tuple(self.rng.randint(0, 1) for _ in range(nd))
        pa = pb if self.rng.random() < 0.7 else tuple(self.rng.randint(0, 1) for _ in range(nd))
        return strides, dil, pb, pa

    def op_conv(self) -> int | None:
        a = self.pick(lambda x: x.ndim in (3, 4) and x.dtype == np.float32)
        if a is None:
            return None
        sh = self.shape(a)
        nd = len(sh) - 2
        c = sh[1]
        groups = self.rng.choice([g for g in (1, 2, 3) if c % g == 0 and c > 0] or [1])
        o = groups * self.rng.randint(1, 2)
        kernel = [self.rng.randint(1, 3) for _ in range(nd)]
        strides, dil, pb, pa = self._spatial(nd)
        wdims = [
            self.dim_for(o),
            self.dim_for(c // groups if groups else c),
            *(self.dim_for(k) for k in kernel),
        ]
        w = self.input(wdims)
        padding = (*pb, *pa) if pa != pb else pb
        give = self.rng.random() < 0.2
        op = ss.ops.conv1d if nd == 1 else ss.ops.conv2d
        kw: dict[str, Any] = {"strides": strides, "padding": padding, "dilation": dil, "groups": groups}
        if give:
            kw.update(channels=o, kernel_size=tuple(kernel))

        def fn(v: list[Any], _: Env) -> Any:
            if give and (v[1].shape[0] != o or tuple(v[1].shape[2:]) != tuple(kernel)):
                raise ref.RefError("weight vs channels/kernel_size")
            return ref.conv(v[0], v[1], strides, pb, pa, dil, groups)

        return self.call(
            "conv",
            f"conv{nd}d(%{a}, %{w}, {', '.join(f'{k}={_fmt(x)}' for k, x in kw.items())})",
            lambda: op(self.e(a), self.e(w), **kw),
            fn,
            (a, w),
        )

    def op_pool(self) -> int | None:
        a = self.pick(lambda x: x.ndim in (3, 4) and x.dtype == np.float32)
        if a is None:
            return None
        nd = len(self.shape(a)) - 2
        pool = tuple(self.rng.randint(1, 3) for _ in range(nd))
        strides, dil, pb, pa = self._spatial(nd)
        pb = tuple(min(p, k // 2) for p, k in zip(pb, pool))
        pa = tuple(min(p, k // 2) for p, k in zip(pa, pool))
        ceil = self.rng.random() < 0.25
        kind = self.rng.choice(["max", "avg"])
        padding = (*pb, *pa) if pa != pb else pb
        op = getattr(ss.ops, f"{kind}_pool{nd}d")
        return self.call(
            "pool",
            f"{kind}_pool{nd}d(%{a}, {pool}, strides={strides}, padding={padding}, dilation={dil}, "
            f"ceil_mode={ceil})",
            lambda: op(self.e(a), pool, strides=strides, padding=padding, dilation=dil, ceil_mode=ceil),
            lambda v, _: ref.pool(v[0], pool, strides, pb, pa, dil, ceil, kind),
            (a,),
        )

    # -- the program -----------------------------------------------------------------------------
    def first_inputs(self) -> None:
        conv_like = self.rng.random() < 0.3
        if conv_like:
            nd = self.rng.choice([1, 2])
            shape = [self.dim_for(self.value(0, 2)), self.dim_for(self.rng.choice([1, 2, 3, 4]))]
            shape += [
                self.dim_for(self.value(0, 5) if self.zero_rate else self.rng.randint(2, 6))
                for _ in range(nd)
            ]
            self.input(shape)
        for _ in range(1 if conv_like else self.rng.randint(1, 2)):
            r = self.rng.randint(0, 4)
            self.input([self.dim_for(self.value(0, 4)) for _ in range(r)])

    def run(self) -> Program:
        self.first_inputs()
        kinds = list(_WEIGHTS)
        weights = [_WEIGHTS[k] for k in kinds]
        ops = 0
        tries = 0
        while ops < self.max_ops and tries < 4 * self.max_ops and self.hidden_ok:
            tries += 1
            kind = self.rng.choices(kinds, weights)[0]
            before = len(self.nodes)
            got = getattr(self, f"op_{kind}")()
            if got is not None and len(self.nodes) > before:
                ops += 1
        outs = [i for i, n in enumerate(self.nodes) if i not in self.consumed and n.kind != "input"]
        if not outs:
            outs = [len(self.nodes) - 1]
        body = self.nodes[outs[0]].expr if len(outs) == 1 else ss.Tuple([self.nodes[i].expr for i in outs])
        fn = ss.Function(list(self.params), body)
        return Program(
            self.seed,
            self.nodes,
            self.symbols,
            self.params,
            fn,
            dict(self.hidden),
            self.hidden_ok,
            self.rejected,
        )


def _raise() -> Any:
    raise ref.RefError("units")


def generate(seed: int, max_ops: int = 6) -> Program:
    """The program of ``seed`` (the same seed gives the same program)."""
    return _Gen(seed, max_ops).run()
