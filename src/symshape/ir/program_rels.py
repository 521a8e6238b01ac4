"""The relations constraint generation uses besides the operators': a tuple's field
(``tuple_get_item``), the join of branches (``join``, Relax's ``StructInfoLCA``), ``match_cast``,
and a call of a polymorphic function (``call_generalized``). Importing the module registers them.

>>> from symshape.relations import get_relation
>>> get_relation("join").name
'join'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symshape.encoding import types as ty
from symshape.encoding.conds import eq
from symshape.encoding.dims import Dim, DimLike, Sym, fresh_dimvar, fresh_join
from symshape.encoding.values import join_values
from symshape.errors import (
    ARITY_MISMATCH,
    DTYPE_MISMATCH,
    RANK_MISMATCH,
    SHAPE_MISMATCH,
    TYPE_MISMATCH,
)
from symshape.relations.base import Context, get_relation, register_relation

__all__ = ["join_types", "has_holes", "instantiate", "TUPLE_GET_ITEM"]


def _tuple_get_item_rel(ctx: Context, args: Sequence[ty.Type], attrs: ty.Attrs) -> bool:
    """``out = tup.fields[index]`` once the tuple's type is known."""
    tup, out = args[0], args[1]
    if isinstance(tup, ty.IncompleteType):
        return False
    idx = attrs.get("index", 0)
    assert isinstance(idx, int)
    if not isinstance(tup, ty.TupleType):
        ctx.fail(TYPE_MISMATCH, f"indexing `{tup}` with .{idx}: not a tuple")
    if not 0 <= idx < len(tup.fields):
        ctx.fail(ARITY_MISMATCH, f"tuple index {idx} out of range for `{tup}`")
    ctx.unify(out, tup.fields[idx])
    return True


def has_holes(t: ty.Type) -> bool:
    return any(True for _ in ty.iter_holes(t))


def join_types(ctx: Context, a: ty.Type, b: ty.Type) -> ty.Type | None:
    """The least common ancestor of two types (Relax ``StructInfoLCA``); None to defer. Tuples of
    one length are joined field by field, nested ones iteratively, left to right."""
    done: list[ty.Type] = []  # the joins finished so far, in order
    stack: list[tuple[ty.Type, ty.Type, bool]] = [(a, b, False)]
    while stack:
        x, y, ready = stack.pop()
        if ready:  # a pair of tuples whose fields are joined
            assert isinstance(x, ty.TupleType)
            n = len(x.fields)
            fields = tuple(done[len(done) - n :])
            del done[len(done) - n :]
            done.append(ty.TupleType(fields))
            continue
        if (
            isinstance(x, ty.TupleType)
            and isinstance(y, ty.TupleType)
            and x != y
            and len(x.fields) == len(y.fields)
        ):
            stack.append((x, y, True))
            stack.extend((fx, fy, False) for fx, fy in reversed(list(zip(x.fields, y.fields))))
            continue
        j = _join_one(ctx, x, y)
        if j is None:
            return None
        done.append(j)
    return done[0]


def _join_one(ctx: Context, a: ty.Type, b: ty.Type) -> ty.Type | None:
    """:func:`join_types` of two types that are not tuples of one length."""
    if isinstance(a, ty.IncompleteType) or isinstance(b, ty.IncompleteType):
        if not ctx.final:
            return None
        return ctx.unify(a, b)
    if a == b:
        return a
    match a, b:
        case ty.TensorType(), ty.TensorType():
            dtype = a.dtype if a.dtype == b.dtype else None
            if a.ndim is None or b.ndim is None or a.ndim != b.ndim:
                return ty.Tensor(None, dtype)
            dims: list[Dim] = []
            for x, y in zip(a.dims, b.dims):
                if x == y or ctx.prove(eq(x, y)) is True:
                    dims.append(x)
                else:
                    # a fresh given dimension that is x or y, depending on the branch: a condition
                    # over it is required of both (expand_joins), so no guard ever mentions it
                    dims.append(fresh_join((x, y)))
            value = None
            if a.value is not None and b.value is not None and dtype is not None:
                # equal entries stay, the others become unknown (see symshape.encoding.values)
                value = join_values(a.value, b.value, lambda x, y: ctx.prove(eq(x, y)) is True)
            return ty.TensorType(tuple(dims), dtype, value)
        case ty.TupleType(), ty.TupleType():
            return ty.ObjectType()  # of different lengths (join_types joins the others by field)
        case ty.ShapeType(na), ty.ShapeType(nb):
            return ty.ShapeType(na if na == nb else None)
        case _:
            if has_holes(a) or has_holes(b):
                if not ctx.final:
                    return None
                return ctx.unify(a, b)
            return ty.ObjectType()


def _join_rel(ctx: Context, args: Sequence[ty.Type], attrs: ty.Attrs) -> bool:
    """``out`` is the join of the branch types."""
    branches, out = args[:-1], args[-1]
    acc: ty.Type | None = branches[0]
    for b in branches[1:]:
        assert acc is not None
        acc = join_types(ctx, acc, b)
        if acc is None:
            return False
    assert acc is not None
    ctx.unify(out, acc)
    return True


def _match_cast_rel(ctx: Context, args: Sequence[ty.Type], attrs: ty.Attrs) -> bool:
    """Check a value's type against a cast target; new symbols are equated with the value's dims."""
    val, target = args[0], args[1]
    if isinstance(val, ty.IncompleteType):
        return False
    if isinstance(target, ty.TensorType) and isinstance(val, ty.TensorType):
        if val.dtype is not None and target.dtype is not None and val.dtype != target.dtype:
            ctx.fail(
                DTYPE_MISMATCH, f"match_cast of `{val}` to `{target}`: dtype {val.dtype} vs {target.dtype}"
            )
        if val.ndim is not None and target.ndim is not None:
            if val.ndim != target.ndim:
                ctx.fail(
                    RANK_MISMATCH, f"match_cast of `{val}` to `{target}`: rank {val.ndim} vs {target.ndim}"
                )
            declared = attrs.get("new", ())
            new: set[str] = set(declared) if isinstance(declared, (tuple, list)) else set()
            if any(x.has_unknowns for x in val.dims) and not ctx.final:
                return False
            for i, (x, y) in enumerate(zip(val.dims, target.dims)):
                ya = y.atom
                if isinstance(ya, Sym) and ya.name in new and not x.has_unknowns:
                    # a symbol the cast introduces is defined by the value's dimension
                    new.discard(ya.name)
                    try:
                        ctx.assume(eq(x, y))
                        continue
                    except NotImplementedError:
                        pass
                ctx.require(
                    eq(x, y),
                    SHAPE_MISMATCH,
                    f"match_cast of `{val}` to `{target}`: dimension {i}: {x} vs {y}",
                )
        return True
    if isinstance(target, (ty.ObjectType,)):
        return True
    if type(val) is not type(target):
        ctx.fail(TYPE_MISMATCH, f"match_cast of `{val}` to `{target}` can never succeed")
    return True


register_relation("tuple_get_item", _tuple_get_item_rel)
TUPLE_GET_ITEM = get_relation("tuple_get_item")
register_relation("join", _join_rel)
register_relation("match_cast", _match_cast_rel)


def instantiate(ft: ty.FuncType, fresh_hole: Any) -> ty.FuncType:
    """``ft`` with its ``type`` parameters replaced by fresh holes and its ``dim`` parameters (the
    symbols its parameter annotations own) by fresh unknown dimensions."""
    if not ft.type_params:
        return ft
    sub: dict[ty.TypeVar, ty.Type] = {}
    dsub: dict[Any, DimLike] = {}
    for tp in ft.type_params:
        if tp.kind == "dim":
            dsub[tp.name] = fresh_dimvar()
        elif tp.kind == "type":
            sub[tp] = fresh_hole()

    def inst(t: ty.Type) -> ty.Type:
        t = ty.subst_typevars(t, sub)
        if dsub:
            t = ty.map_dims(t, lambda d: d.subs(dsub))
        return t

    rest = tuple(tp for tp in ft.type_params if tp.kind not in ("dim", "type"))
    return ty.FuncType(
        tuple(inst(p) for p in ft.params),
        inst(ft.ret),
        rest,
        tuple(ty.TypeRelation(r.name, tuple(inst(a) for a in r.args), r.attrs) for r in ft.relations),
        ft.pure,
    )


def _call_generalized_rel(ctx: Context, args: Sequence[ty.Type], attrs: ty.Attrs) -> bool:
    """A call of a generalized global function whose type still had holes when the call was
    generated (its return type is found by solving, as for unannotated recursion): once the
    type is complete, it is instantiated for this call (``args``: the type, the arguments, the
    result)."""
    scheme, argtypes, out = args[0], args[1:-1], args[-1]
    if has_holes(scheme) and not ctx.final:
        return False
    if not isinstance(scheme, ty.FuncType):
        ctx.fail(TYPE_MISMATCH, f"only functions can be called, found `{scheme}`")
    ft = instantiate(scheme, ctx.fresh_hole)
    if len(ft.params) != len(argtypes):
        ctx.fail(ARITY_MISMATCH, f"the function takes {len(ft.params)} arguments, got {len(argtypes)}")
    for p, a in zip(ft.params, argtypes):
        ctx.unify(p, a)
    ctx.unify(out, ft.ret)
    return True


register_relation("call_generalized", _call_generalized_rel)
