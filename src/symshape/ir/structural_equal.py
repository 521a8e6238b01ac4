"""Structural equality of expressions (Relay's ``StructuralEqual``): the same constructors, types,
attributes, constant payloads and operators, with variables matched by their binding sites."""

from __future__ import annotations

from typing import Any, cast

from symshape.ir import nodes as X  # noqa: N812

__all__ = ["structural_equal"]


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Structural equality of expressions, as Relay's ``StructuralEqual``:

    * bound variables are compared by binding position (alpha-equivalence: ``fn(x) { exp(x) }``
      built twice is equal), with equal annotations; names are not compared;
    * free variables are equal only when they are the same variable, unless ``map_free_vars``;
    * constants by dtype, shape and value (bit for bit), operators by identity, constructors,
      global variables (by name), attributes and types structurally; spans never count;
    * the sharing of sub-expressions counts too: each node of ``a`` corresponds to one node of
      ``b`` (``add(c, c)`` is not ``add(c1, c2)``).

    Iterative, and terminates on cyclic expressions.

    >>> import symshape as ss
    >>> ss.structural_equal(ss.const([1.0, 2.0]), ss.const([3.0, 4.0]))
    False
    """
    lmap: dict[int, Any] = {}
    rmap: dict[int, Any] = {}

    def pair(x: Any, y: Any) -> bool | None:
        """True: already paired (nothing to do); False: paired otherwise; None: newly paired."""
        hx, hy = lmap.get(id(x)), rmap.get(id(y))
        if hx is None and hy is None:
            lmap[id(x)] = y
            rmap[id(y)] = x
            return None
        return hx is y and hy is x

    def bind(u: X.Var, v: X.Var) -> bool:
        r = pair(u, v)
        if r is None:
            return u.type_annotation == v.type_annotation
        return r

    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, X.Pattern) or isinstance(y, X.Pattern):
            if type(x) is not type(y):
                return False
            if isinstance(x, X.PatternVar):
                if not bind(x.var, y.var):
                    return False
            elif isinstance(x, X.PatternConstructor):
                if x.constructor != y.constructor or len(x.patterns) != len(y.patterns):
                    return False
                stack.extend(zip(x.patterns, y.patterns))
            elif isinstance(x, X.PatternTuple):
                if len(x.patterns) != len(y.patterns):
                    return False
                stack.extend(zip(x.patterns, y.patterns))
            continue
        if not isinstance(x, X.Expr) or not isinstance(y, X.Expr):
            if x != y:
                return False
            continue
        if type(x) is not type(y):
            return False
        y = cast(Any, y)  # the same class as x
        r = pair(x, y)
        if r is not None:
            if not r:
                return False
            continue
        match x:
            case X.Var():
                # a variable not bound by a binder seen so far: free
                if x is not y and not map_free_vars:
                    return False
                if x.type_annotation != y.type_annotation:
                    return False
            case X.GlobalVar():
                if x.name != y.name:
                    return False
            case X.Constant():
                if x.type != y.type or not _same_data(x.data, y.data):
                    return False
            case X.Call():
                if x.attrs != y.attrs or x.pure_override != y.pure_override or len(x.args) != len(y.args):
                    return False
                if isinstance(x.callee, X.Expr) and isinstance(y.callee, X.Expr):
                    stack.append((x.callee, y.callee))
                elif isinstance(x.callee, X.Expr) or isinstance(y.callee, X.Expr):
                    return False
                elif isinstance(x.callee, X.Constructor):
                    if x.callee != y.callee:
                        return False
                elif x.callee is not y.callee:
                    return False
                stack.extend(zip(x.args, y.args))
            case X.Tuple():
                if len(x.fields) != len(y.fields):
                    return False
                stack.extend(zip(x.fields, y.fields))
            case X.TupleGetItem():
                if x.index != y.index:
                    return False
                stack.append((x.tuple_value, y.tuple_value))
            case X.Let():
                if not bind(x.var, y.var):
                    return False
                stack.append((x.body, y.body))
                stack.append((x.value, y.value))
            case X.Function():
                if (
                    len(x.params) != len(y.params)
                    or x.ret_type != y.ret_type
                    or x.type_params != y.type_params
                    or x.pure != y.pure
                    or x.attrs != y.attrs
                ):
                    return False
                for u, v in zip(x.params, y.params):
                    if not bind(u, v):
                        return False
                stack.append((x.body, y.body))
            case X.If():
                stack.append((x.else_branch, y.else_branch))
                stack.append((x.then_branch, y.then_branch))
                stack.append((x.cond, y.cond))
            case X.Match():
                if x.complete != y.complete or len(x.clauses) != len(y.clauses):
                    return False
                for cx, cy in reversed(list(zip(x.clauses, y.clauses))):
                    stack.append((cx.body, cy.body))
                    stack.append((cx.pattern, cy.pattern))
                stack.append((x.value, y.value))
            case X.MatchCast():
                if x.type != y.type or not bind(x.var, y.var):
                    return False
                stack.append((x.body, y.body))
                stack.append((x.value, y.value))
            case X.Dataflow():
                if len(x.bindings) != len(y.bindings):
                    return False
                for (u, _), (v, _) in zip(x.bindings, y.bindings):
                    if not bind(u, v):
                        return False
                stack.append((x.body, y.body))
                stack.extend((bx, by) for (_, bx), (_, by) in reversed(list(zip(x.bindings, y.bindings))))
            case _:
                return False
    return True


def _same_data(x: Any, y: Any) -> bool:
    """Constant payloads: both absent, or arrays of the same dtype, shape and bytes."""
    if x is None or y is None:
        return x is None and y is None
    if x is y:
        return True
    try:
        import numpy as np

        ax, ay = np.asarray(x), np.asarray(y)
        return bool(ax.dtype == ay.dtype and ax.shape == ay.shape and ax.tobytes() == ay.tobytes())
    except Exception:  # an exotic payload: compare as objects
        return bool(x == y)
