"""Linear algebra: ``MatMul``, ``Gemm``, ``MatMulInteger``, ``QLinearMatMul``, ``Det``, ``Einsum``.

* ``MatMul`` is numpy's ``matmul`` (1-d operands promoted, batch axes broadcast): symshape's
  ``matmul``.
* ``Gemm``: ``A'`` (``M x K``, transposed if ``transA``) times ``B'`` (``K x N``), plus ``C``
  broadcast one way to ``(M, N)``.
* ``MatMulInteger``/``QLinearMatMul``: ``matmul`` shapes, ``int32`` or the output zero point's type.
* ``Det``: the batch axes, ``x.shape[:-2]``, of square matrices.
* ``Einsum``: each operand's axes are labelled by the equation (``...`` by labels of its own,
  aligned from the right across operands; a label repeated in one operand is its diagonal: the two
  axes must agree exactly, one is summed away), laid out over all labels in order of appearance (size-1
  axes for the labels it lacks), multiplied (broadcasting: a label has one size), summed over the
  labels the output lacks and transposed to the output's order. Without ``->`` the output is the
  ellipsis then the labels used once, sorted (numpy's implicit mode).
"""

from __future__ import annotations

import symshape as ss
from symshape import Expr
from symshape.errors import BAD_ATTRIBUTE, RANK_MISMATCH
from symshape.onnx.context import CORE_OP, NodeContext
from symshape.onnx.ops.common import checked, like, of_inputs, set_dim, stacked
from symshape.onnx.registry import Outputs, register

__all__: list[str] = []


register("MatMul", since=1)(of_inputs(ss.ops.matmul, 2))


@register("Gemm", since=1)
def _gemm(ctx: NodeContext) -> Outputs:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.attr_int("transA", 0):
        a = ss.ops.transpose(a, [1, 0])
    if ctx.attr_int("transB", 0):
        b = ss.ops.transpose(b, [1, 0])
    y: Expr = ss.ops.matmul(a, b)
    if ctx.has_input(2):
        with ctx.checking("C broadcasts to the product's (M, N), one way"):
            y = like(ss.ops.add(y, ctx.input(2)), y)
    return y


@register("MatMulInteger", since=10)
def _matmul_integer(ctx: NodeContext) -> Outputs:
    return ss.ops.matmul(ss.ops.cast(ctx.input(0), "int32"), ss.ops.cast(ctx.input(1), "int32"))


@register("QLinearMatMul", since=10)
def _qlinear_matmul(ctx: NodeContext) -> Outputs:
    """``matmul`` of the output zero point's type. Each zero point has its scale's shape (the
    spec); ``a``'s and the output's are per tensor (a scalar or one entry), ``b``'s per tensor or,
    for a matrix ``b`` (``K x N``), per column: ``(N,)`` or ``(1, N)`` (onnxruntime's rules)."""
    b = ctx.input(3)
    y: Expr = ss.ops.matmul(ss.ops.cast(ctx.input(0), "int32"), ss.ops.cast(b, "int32"))
    checks: list[Expr] = []
    for s in (1, 4, 6):  # a zero point of its scale's shape, or both of one entry: () and (1,)
        rs, rz = ctx.rank(s), ctx.rank(s + 1)
        with ctx.checking(
            f"{ctx.input_name(s + 1)!r} (input {s + 1}) has the shape of its scale {ctx.input_name(s)!r}"
        ):
            if rs is not None and rz is not None and rs != rz and max(rs, rz) <= 1:
                checks += [ss.ops.reshape(ctx.input(s), ()), ss.ops.reshape(ctx.input(s + 1), ())]
            else:
                checks.append(stacked(ctx.input(s), ctx.input(s + 1)))
    rb = ctx.rank(3)
    for s in (1, 4, 6):
        r = ctx.rank(s)
        if r is None or r == 0 or (s == 4 and rb is None):
            continue
        q = ctx.input(s)
        scope = ctx.checking(
            f"the scale {ctx.input_name(s)!r} (input {s}) is per tensor"
            + (" or per column of b" if s == 4 else "")
        )
        if s == 4 and rb == 2 and r == 1:  # one entry, or one per column of b
            with scope:
                cols = ss.ops.sum(ss.ops.cast(b, "float32"), axis=0)  # (N,)
                checks.append(like(ss.ops.add(cols, ss.ops.cast_like(q, cols)), cols))
        elif s == 4 and r == rb and r >= 2:  # b's shape with 1 at axis -2
            with scope:
                checks.append(stacked(set_dim(ss.ops.cast_like(b, q), -2, 1), q))
        elif r == 1:
            with scope:
                checks.append(ss.ops.reshape(q, ()))  # one entry
        else:
            ctx.fail(RANK_MISMATCH, f"{ctx.input_name(s)!r} of rank {r} is not per tensor or per column")
    return checked(ss.ops.cast_like(y, ctx.input(7)), checks)


@register("Det", since=11)
def _det(ctx: NodeContext) -> Outputs:
    x = ctx.input(0)
    with ctx.checking("X's last two axes are square matrices"):
        return ss.ops.sum(ss.ops.matmul(x, x), axis=(-2, -1))  # x @ x: the matrices must be square


def _labels(ctx: NodeContext, term: str, rank: int | None, ell: list[str]) -> list[str]:
    """The labels of an operand's axes (``...`` expanded to the last of ``ell``'s labels)."""
    if "..." not in term:
        if not term.isalpha() and term:
            ctx.fail(BAD_ATTRIBUTE, f"bad Einsum term {term!r}")
        if rank is not None and rank != len(term):
            ctx.fail(BAD_ATTRIBUTE, f"Einsum term {term!r} for an operand of rank {rank}")
        return list(term)
    head, _, tail = term.partition("...")
    if rank is None:
        ctx.unsupported(CORE_OP, "Einsum with an ellipsis over an operand of unknown rank")
    k = rank - len(head) - len(tail)
    if k < 0 or (not (head + tail).isalpha() and (head + tail)):
        ctx.fail(BAD_ATTRIBUTE, f"Einsum term {term!r} for an operand of rank {rank}")
    while len(ell) < k:
        ell.insert(0, f"...{len(ell)}")
    return [*head, *ell[len(ell) - k :], *tail]


@register("Einsum", since=12)
def _einsum(ctx: NodeContext) -> Outputs:
    eq = ctx.attr_str("equation").replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    xs = ctx.inputs()
    if len(terms) != len(xs):
        ctx.fail(BAD_ATTRIBUTE, f"Einsum equation {eq!r} has {len(terms)} operands, the node {len(xs)}")
    ell: list[str] = []
    ranks = [ctx.rank(i) if "..." in t else None for i, t in enumerate(terms)]
    labelled = [_labels(ctx, t, r, ell) for t, r in zip(terms, ranks)]
    order: list[str] = []  # every label, in order of appearance
    for ls in labelled:
        order.extend(c for c in ls if c not in order)
    if arrow:
        out = _labels(ctx, rhs, None if "..." not in rhs else len(rhs) - 3 + len(ell), list(ell))
    else:
        counts = {c: sum(ls.count(c) for ls in labelled) for c in order}
        once = sorted(c for c in order if not c.startswith("...") and counts[c] == 1)
        out = [c for c in order if c.startswith("...")] + once
    if any(c not in order for c in out) or len(set(out)) != len(out):
        ctx.fail(BAD_ATTRIBUTE, f"bad Einsum output {rhs!r} in {eq!r}")
    full: list[Expr] = []
    for i, (x, ls) in enumerate(zip(xs, labelled)):
        ls = list(ls)
        for c in dict.fromkeys(ls):  # a repeated label: the diagonal (the axes agree; one is summed away)
            while ls.count(c) > 1:
                p = ls.index(c)
                q = ls.index(c, p + 1)
                perm = list(range(len(ls)))
                perm[p], perm[q] = q, p
                # x stacked with its transpose: the two axes must agree exactly (no broadcasting)
                with ctx.checking(
                    f"the axes of operand {i} that label {c!r} repeats have one size (a diagonal)"
                ):
                    x = ss.ops.sum(stacked(x, ss.ops.transpose(x, perm)), axis=(0, q + 1))
                del ls[q]
        mine = [c for c in order if c in ls]
        if mine != ls:
            x = ss.ops.transpose(x, [ls.index(c) for c in mine])
        for j, c in enumerate(order):
            if c not in ls:
                x = ss.ops.expand_dims(x, j)
        full.append(x)
    y = full[0]
    seen = set(labelled[0])
    for i, x in enumerate(full[1:], 1):
        shared = dict.fromkeys(
            "..." if c.startswith("...") else c for c in order if c in seen and c in labelled[i]
        )
        seen.update(labelled[i])
        names = ", ".join(f"{c!r}" for c in shared)
        before = "operand 0's" if i == 1 else f"operands 0 to {i - 1}'s"
        with ctx.checking(
            f"operand {i}'s sizes at label(s) {names} broadcast with {before} (one size, or 1)"
        ):
            y = ss.ops.multiply(y, x)
    gone = [j for j, c in enumerate(order) if c not in out]
    if gone:
        y = ss.ops.sum(y, axis=tuple(gone))
    kept = [c for c in order if c in out]
    if kept != out:
        y = ss.ops.transpose(y, [kept.index(c) for c in out])
    elif not gone and len(full) == 1:
        y = ss.ops.copy(y)
    return y
