"""The one walk over expressions, and the one rewrite: every walker of :mod:`symshape.ir` uses
these (all iterative: a 10 000-deep chain needs no recursion).

* :func:`operands` lists what an expression evaluates, in order; :func:`children` adds the
  variables it binds;
* :func:`walk` yields every distinct sub-expression once, parents first, in evaluation order;
* :func:`rebuild` makes a node anew from new operands, :func:`rewrite` maps a program bottom-up
  with it (a node is rebuilt only when an operand changed, shared sub-expressions stay shared);
* :func:`bound_values` maps each let and dataflow variable to its value; :func:`pattern_vars`
  lists the variables a match pattern binds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from symshape.ir.nodes import (
    Call,
    Clause,
    Constant,
    Dataflow,
    Expr,
    Function,
    If,
    Let,
    Match,
    MatchCast,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    Tuple,
    TupleGetItem,
    Var,
)

__all__ = ["operands", "children", "walk", "rebuild", "rewrite", "bound_values", "pattern_vars"]


def operands(e: Expr) -> list[Expr]:
    """The sub-expressions that are evaluated, in order (binding variables excluded)."""
    match e:
        case Call():
            return ([e.callee] if isinstance(e.callee, Expr) else []) + list(e.args)
        case Tuple():
            return list(e.fields)
        case TupleGetItem():
            return [e.tuple_value]
        case Let():
            return [e.value, e.body]
        case Function():
            return [e.body]
        case If():
            return [e.cond, e.then_branch, e.else_branch]
        case Match():
            return [e.value] + [c.body for c in e.clauses]
        case MatchCast():
            return [e.value, e.body]
        case Dataflow():
            return [x for _, x in e.bindings] + [e.body]
        case _:
            return []


def children(e: Expr) -> list[Expr]:
    """The direct sub-expressions in evaluation order, the variables an expression binds included
    (each before the value it is bound to)."""
    match e:
        case Let() | MatchCast():
            return [e.var, e.value, e.body]
        case Function():
            return [*e.params, e.body]
        case Dataflow():
            return [y for v, x in e.bindings for y in (v, x)] + [e.body]
        case _:
            return operands(e)


def walk(roots: Expr | Iterable[Expr], into: Callable[[Expr], bool] | None = None) -> Iterator[Expr]:
    """Every distinct sub-expression of ``roots`` once (by identity), each before its operands,
    operands in evaluation order; the operands of an ``e`` with ``into(e)`` false are not walked
    (``e`` itself is yielded).

    >>> import symshape as ss
    >>> x = ss.var("x")
    >>> [type(e).__name__ for e in walk(ss.Tuple([x, ss.ops.relu(x)]))]
    ['Tuple', 'Var', 'Call']
    """
    stack: list[Expr] = [roots] if isinstance(roots, Expr) else list(roots)[::-1]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        if into is None or into(e):
            stack.extend(reversed(operands(e)))


def rebuild(e: Expr, new: list[Expr]) -> Expr:
    """``e`` with its operands (as :func:`operands` lists them) replaced by ``new``; the span, the
    bound variables, annotations and attributes are kept."""
    out: Expr
    match e:
        case Call():
            callee: Any = new[0] if isinstance(e.callee, Expr) else e.callee
            args = new[1:] if isinstance(e.callee, Expr) else new
            c = Call(callee, args, e.attrs)
            c.pure_override = e.pure_override
            out = c
        case Tuple():
            out = Tuple(new)
        case TupleGetItem():
            out = TupleGetItem(new[0], e.index)
        case Let():
            out = Let(e.var, new[0], new[1])
        case Function():
            out = Function(e.params, new[0], e.ret_type, e.type_params, e.pure, e.attrs)
        case If():
            out = If(new[0], new[1], new[2])
        case Match():
            out = Match(new[0], [Clause(c.pattern, b) for c, b in zip(e.clauses, new[1:])], e.complete)
        case MatchCast():
            out = MatchCast(e.var, new[0], e.type, new[1])
        case Dataflow():
            out = Dataflow([(v, x) for (v, _), x in zip(e.bindings, new)], new[-1])
        case _:
            return e
    out.span = e.span
    return out


def rewrite(root: Expr, post: Callable[[Expr, Expr, Mapping[int, Expr]], Expr]) -> Expr:
    """``root`` mapped bottom-up: each distinct sub-expression ``e`` once, after its operands; ``e``
    is rebuilt when one of its operands changed, then ``post(e, rebuilt, done)`` gives its image
    (``done`` maps the ids of the expressions mapped so far to their images)."""
    done: dict[int, Expr] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        e, ready = stack.pop()
        if id(e) in done:
            continue
        ks = operands(e)
        if not ready and ks:
            stack.append((e, True))
            stack.extend((k, False) for k in reversed(ks) if id(k) not in done)
            continue
        new = [done.get(id(k), k) for k in ks]
        out = e if all(a is b for a, b in zip(new, ks)) else rebuild(e, new)
        done[id(e)] = post(e, out, done)
    return done.get(id(root), root)


def bound_values(roots: Expr | Iterable[Expr]) -> dict[int, Expr]:
    """The value bound to each let and dataflow variable under ``roots``, by the variable's id."""
    out: dict[int, Expr] = {}
    # (``walk``'s order, inline: variables and constants, most of a program's nodes, bind
    # nothing and have no operands; an operator call's operands are pushed directly)
    stack: list[Expr] = [roots] if isinstance(roots, Expr) else list(roots)[::-1]
    seen: set[int] = set()
    var_cls, const_cls, call_cls = Var, Constant, Call
    while stack:
        e = stack.pop()
        cls = e.__class__
        if cls is var_cls or cls is const_cls or (k := id(e)) in seen:
            continue
        seen.add(k)
        if cls is call_cls:
            stack.extend(reversed(e.args))  # type: ignore[attr-defined]
            if isinstance(e.callee, Expr):  # type: ignore[attr-defined]
                stack.append(e.callee)  # type: ignore[attr-defined]
            continue
        if isinstance(e, Let):
            out[id(e.var)] = e.value
        elif isinstance(e, Dataflow):
            for v, x in e.bindings:
                out[id(v)] = x
        stack.extend(reversed(operands(e)))
    return out


def pattern_vars(p: Pattern) -> list[Var]:
    """The variables a pattern binds, left to right."""
    out: list[Var] = []
    stack: list[Pattern] = [p]
    while stack:
        q = stack.pop()
        if isinstance(q, PatternVar):
            out.append(q.var)
        elif isinstance(q, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(q.patterns))
    return out
