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

from collections.abc import Mapping
from typing import Any

from symshape.encoding.types import Type
from symshape.errors import DUPLICATE_BINDING, IMPURE_CALL, NOT_NORMALIZED, UNDEFINED_VAR
from symshape.ir.infer import infer
from symshape.ir.module import Module, program_roots
from symshape.ir.nodes import Call, Dataflow, Expr, Function, Let, Match, MatchCast, Tuple, Var
from symshape.ir.op import Op
from symshape.ir.result import InferenceResult
from symshape.ir.visit import bound_values, operands, pattern_vars, rebuild, rewrite, walk
from symshape.solver.diagnostics import Diagnostic

__all__ = ["normalize", "well_formed"]


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
    binds = bound_values(root)

    def post(e: Expr, out: Expr, done: Mapping[int, Expr]) -> Expr:
        n = _normalized_call(e, res, binds) if isinstance(e, Call) else None
        if n is None:
            return out
        return n if out is e else rebuild(n, [done.get(id(k), k) for k in operands(n)])

    return rewrite(root, post)


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


def _scope_check(root: Expr) -> list[Diagnostic]:
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
                vs = pattern_vars(c.pattern)
                for v in vs:
                    bind(v)
                stack.append(("unbind", vs))
                stack.append(("visit", c.body))
            continue
        for k in reversed(operands(e)):
            stack.append(("visit", k))
    return diags


def well_formed(program: Expr | Module) -> list[Diagnostic]:
    """Diagnostics for calls normalization would change, scope errors and purity violations."""
    res = infer(program)
    diags: list[Diagnostic] = []
    for r in program_roots(program):
        diags.extend(_scope_check(r))
        binds = bound_values(r)
        for e in walk(r):
            if isinstance(e, Call) and _normalized_call(e, res, binds) is not None:
                name = e.callee.name if isinstance(e.callee, Op) else "call"
                diags.append(
                    Diagnostic(NOT_NORMALIZED.code, f"{name} call is not in normal form", e.span)
                )
    diags.extend(d for d in res.errors if d.code == IMPURE_CALL.code)
    return diags
