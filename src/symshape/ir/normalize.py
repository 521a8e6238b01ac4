"""Operator normalization (seed 003's ``FNormalize``) and the well-formedness check.

``normalize(program)`` infers types, then rewrites every operator call bottom-up:

* a tuple argument given through a variable bound to a tuple literal is inlined (as Relax does
  for ``call_tir``);
* the operator's own ``normalize(call, arg_types)`` hook, if it declares one, returns an equivalent
  call in normal form (explicit reshape dimensions, non-negative axes, explicit transpose/squeeze
  axes) or None when the call is already normal.

Normalization never simplifies (``add(x, 0)`` stays) and is idempotent. ``well_formed(program)``
reports calls that normalization would change (``not-normalized``), variables used outside their
scope (``undefined-var``), variables bound twice (``duplicate-binding``) and purity violations.
"""

from __future__ import annotations

from typing import Any

from symshape.encoding.types import Type
from symshape.errors import DUPLICATE_BINDING, IMPURE_CALL, NOT_NORMALIZED, UNDEFINED_VAR
from symshape.ir.expr import (
    Call,
    Clause,
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
    operands,
)
from symshape.ir.infer import infer
from symshape.ir.module import Module
from symshape.ir.op import Op
from symshape.ir.result import InferenceResult
from symshape.solver.diagnostics import Diagnostic

__all__ = ["normalize", "well_formed"]


def _rebuild(e: Expr, new: list[Expr]) -> Expr:
    """``e`` with its children replaced by ``new`` (same order as :func:`_kids`)."""
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


def _bindings(root: Expr) -> dict[int, Expr]:
    out: dict[int, Expr] = {}
    stack = [root]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Let):
            out[id(e.var)] = e.value
        elif isinstance(e, Dataflow):
            for v, x in e.bindings:
                out[id(v)] = x
        stack.extend(operands(e))
    return out


class ArgTypes(list[Type]):
    """The argument types given to a ``normalize`` hook, with the call's inferred result type as
    ``result`` (None when unknown) for hooks whose normal form depends on what inference proved
    (``squeeze`` without ``axis``)."""

    result: Type | None = None


def _normalized_call(call: Call, res: InferenceResult, binds: dict[int, Expr]) -> Call | None:
    """The normal form of one operator call, or None when it is already normal."""
    if not isinstance(call.callee, Op):
        return None
    changed = False
    args: list[Expr] = []
    for a in call.args:
        bound = binds.get(id(a)) if isinstance(a, Var) else None
        if isinstance(bound, Tuple):
            args.append(bound)
            changed = True
        else:
            args.append(a)
    cur = call
    if changed:
        cur = Call(call.callee, args, call.attrs)
        cur.span = call.span
    hook = call.callee.normalize
    if hook is not None:
        types = ArgTypes()
        for a in call.args:
            try:
                types.append(res.type_of(a))
            except Exception:
                return cur if changed else None
        try:
            types.result = res.type_of(call)
        except Exception:
            types.result = None
        nxt = hook(cur, types)
        if isinstance(nxt, Call):
            nxt.span = call.span
            return nxt
    return cur if changed else None


def _normalize_expr(root: Expr, res: InferenceResult) -> Expr:
    binds = _bindings(root)
    done: dict[int, Expr] = {}
    stack: list[tuple[Expr, int]] = [(root, 0)]
    while stack:
        e, phase = stack.pop()
        if id(e) in done:
            continue
        ks = operands(e)
        if phase == 0 and ks:
            stack.append((e, 1))
            stack.extend((k, 0) for k in reversed(ks) if id(k) not in done)
            continue
        new = [done.get(id(k), k) for k in ks]
        out = e if all(a is b for a, b in zip(new, ks)) else _rebuild(e, new)
        if isinstance(e, Call):
            n = _normalized_call(e, res, binds)
            if n is not None:
                out = n if out is e else _rebuild(n, [done.get(id(k), k) for k in operands(n)])
        done[id(e)] = out
    return done.get(id(root), root)


def normalize(program: Expr | Module) -> Expr | Module:
    """Apply every operator's normalization (after inference); idempotent, never a simplification."""
    res = infer(program)
    if isinstance(program, Module):
        out = Module()
        for name, td in program.types.items():
            out.types[name] = td
        for gv, f in program.items():
            nf = _normalize_expr(f, res)
            assert isinstance(nf, Function)
            out[gv] = nf
        return out
    return _normalize_expr(program, res)


def _pattern_vars(p: Pattern) -> list[Var]:
    match p:
        case PatternVar():
            return [p.var]
        case PatternConstructor() | PatternTuple():
            return [v for q in p.patterns for v in _pattern_vars(q)]
        case _:
            return []


def _scope_check(root: Expr, globals_ok: bool) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    bound: set[int] = set()
    in_scope: dict[int, int] = {}
    stack: list[tuple[str, Any]] = [("visit", root)]

    def bind(v: Var) -> None:
        if id(v) in bound:
            diags.append(
                Diagnostic(DUPLICATE_BINDING.code, f"variable `{v.name}` is bound more than once", v.span)
            )
        bound.add(id(v))
        in_scope[id(v)] = in_scope.get(id(v), 0) + 1

    def unbind(v: Var) -> None:
        in_scope[id(v)] -= 1

    while stack:
        op, x = stack.pop()
        if op == "unbind":
            for v in x:
                unbind(v)
            continue
        e: Expr = x
        if isinstance(e, Var):
            if not in_scope.get(id(e)):
                diags.append(
                    Diagnostic(UNDEFINED_VAR.code, f"variable `{e.name}` is used outside its scope", e.span)
                )
            continue
        binders: list[Var] = []
        match e:
            case Let():
                binders = [e.var]
            case Function():
                binders = list(e.params)
            case MatchCast():
                binders = [e.var]
            case Dataflow():
                binders = [v for v, _ in e.bindings]
            case _:
                pass
        for v in binders:
            bind(v)
        stack.append(("unbind", binders))
        if isinstance(e, Match):
            stack.append(("visit", e.value))
            for c in e.clauses:
                vs = _pattern_vars(c.pattern)
                for v in vs:
                    bind(v)
                stack.append(("unbind", vs))
                stack.append(("visit", c.body))
            continue
        for k in reversed(operands(e)):
            stack.append(("visit", k))
    _ = globals_ok
    return diags


def well_formed(program: Expr | Module) -> list[Diagnostic]:
    """Diagnostics for calls normalization would change, scope errors and purity violations."""
    res = infer(program)
    roots: list[Expr] = (
        [f for _, f in program.items()] if isinstance(program, Module) else [program]
    )
    diags: list[Diagnostic] = []
    for r in roots:
        diags.extend(_scope_check(r, isinstance(program, Module)))
        binds = _bindings(r)
        stack = [r]
        seen: set[int] = set()
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, Call) and _normalized_call(e, res, binds) is not None:
                name = e.callee.name if isinstance(e.callee, Op) else "call"
                diags.append(
                    Diagnostic(NOT_NORMALIZED.code, f"{name} call is not in normal form", e.span)
                )
            stack.extend(operands(e))
    diags.extend(d for d in res.errors if d.code == IMPURE_CALL.code)
    return diags
