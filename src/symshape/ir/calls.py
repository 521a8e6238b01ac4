"""Calls in the constraint generator: operators, constructors, functions and global functions.

* an operator call adds one relation instance (the operator's relation over the argument types and
  a fresh output hole), labelled with the call's span; a call whose result has a data-dependent
  size gets its unbacked symbol;
* a call of a function value instantiates its type: type parameters become fresh holes and the
  symbols of the parameter annotations fresh unknown dimensions, so each call binds them from its
  arguments (Relax's ``DeriveCallRetStructInfo``); an unannotated global function generated before
  is called through its generalized scheme;
* purity: impure calls inside dataflow blocks or functions declared pure are errors; calls of
  function values whose type was not known when generated are checked again after solving.
"""

from __future__ import annotations

from typing import Any, Final

from symshape.encoding.dims import Dim
from symshape.encoding.types import (
    Attrs,
    FuncType,
    IncompleteType,
    Type,
    TypeCall,
    TypeVar,
    subst_typevars,
)
from symshape.errors import ARITY_MISMATCH, IMPURE_CALL, TYPE_MISMATCH, UNDEFINED_VAR
from symshape.ir.module import Module
from symshape.ir.nodes import _EMPTY_ATTRS, Call, Constructor, Function, GlobalVar, Var
from symshape.ir.op import Op
from symshape.ir.program_rels import has_holes, instantiate
from symshape.ir.purity import impure_globals
from symshape.ir.scope import FnFrame, GenScope, syms_of
from symshape.ir.unbacked import SIZE_WHAT, UnbackedSize, unbacked_sym
from symshape.relations.base import RelationDef, get_relation
from symshape.relations.dynamic import SIZE_OPS
from symshape.solver.diagnostics import Origin

__all__ = ["CallGen", "call_label", "describe_call"]


def call_label(e: Call) -> str:
    c = e.callee
    if isinstance(c, Op):
        return c.name
    if isinstance(c, Constructor):
        return c.name
    if isinstance(c, GlobalVar):
        return f"call of @{c.name}"
    if isinstance(c, Var):
        return f"call of %{c.name}"
    if isinstance(c, Function):
        return "call of a function literal"
    return "call of a computed function"


def describe_call(e: Call) -> str:
    label = call_label(e)
    return label if label.startswith("call") else f"call of {label}"


#: (``CallGen.rdefs``) an operator whose result has a data-dependent size: ``op_call`` adds it
SIZED: Final[Any] = object()


class CallGen(GenScope):
    """The generator's handling of calls and global functions (see the module docstring)."""

    def op_rdef(self, c: Op) -> RelationDef:
        """The relation of operator ``c``, remembered in ``rdefs`` (read there first: an operator
        is called many times), or :data:`SIZED` for one whose result has a data-dependent size."""
        rdef: RelationDef = SIZED if c.relation in SIZE_OPS else get_relation(c.relation)
        self.rdefs[c] = rdef
        return rdef

    def typed_op_call(self, e: Call, c: Op, argtypes: list[Type]) -> Type:
        """:meth:`op_call` for arguments typed already, by the relation read from ``rdefs`` (the
        generator's inline paths call it for each plain operator call): an operator of
        data-dependent size, or attributes not scanned yet, go through ``op_call`` itself."""
        rdef = self.rdefs.get(c)
        if rdef is None:
            rdef = self.op_rdef(c)
        attrs = e.attrs
        if rdef is SIZED or (attrs is not _EMPTY_ATTRS and id(attrs) not in self.scanned):
            return self.op_call(e, c, argtypes)
        self.calls.append(e)
        out = self.s.add_call(rdef, argtypes, attrs, c.name, e.span)
        if not c.pure:
            self.note_impure(e, self.frames[-1])
        return out

    def global_type(self, g: GlobalVar) -> Type:
        t = self.global_types.get(g.name)
        if t is None:
            if self.mod is None or g not in self.mod:
                self.error(UNDEFINED_VAR, f"undefined global function @{g.name}", g.span)
            t = self.s.hole()
            self.global_types[g.name] = t
        return t

    def seed_globals(self, mod: Module) -> None:
        self.global_impure = impure_globals(mod)
        for gv, f in mod.items():
            self.fn_global[id(f)] = gv.name
            anns = [p.type_annotation for p in f.params]
            if f.ret_type is not None and all(a is not None for a in anns):
                params = tuple(a for a in anns if a is not None)
                dim_params = []
                for p in params:
                    for sym in syms_of(p):
                        tv = TypeVar(sym.name, "dim")
                        if tv not in dim_params:
                            dim_params.append(tv)
                pure = gv.name not in self.global_impure
                ft = FuncType(params, f.ret_type, (*f.type_params, *dim_params), (), pure)
                if f.pure is None and pure and not f.attrs.get("force_pure", False):
                    # inferred purity may still turn out impure (see check_purity): keep it in a
                    # hole, so every use of the type sees the update
                    h = self.s.hole()
                    self.s.unifier.unify(h, ft, Origin("unify", f"@{gv.name}", f.span))
                    self.global_types[gv.name] = h
                else:
                    self.global_types[gv.name] = ft
                self.global_seeded.add(gv.name)
            else:
                self.global_types[gv.name] = self.s.hole()

    def function(self, f: Function) -> Type:
        s = self.s
        owned = self.scopes.pop()
        frame = self.frames.pop()
        body_t = self.ty(f.body)
        ret = body_t
        if f.ret_type is not None:
            o = Origin("annotation", f"the return type is annotated `{f.ret_type}`", f.span)
            ann = s.admit(f.ret_type, o)
            ret = s.unifier.unify(ann, body_t, o)
            ret = ann
        force = bool(f.attrs.get("force_pure", False))
        if f.pure is True and frame.impure_calls and not force:
            for c in frame.impure_calls:
                self.error(IMPURE_CALL, f"impure {describe_call(c)} inside a function declared pure", c.span)
        pure = f.pure if f.pure is not None else (force or not frame.impure_calls)
        self.fn_pure[id(f)] = pure
        dim_params = tuple(TypeVar(sym.name, "dim") for sym in sorted(owned, key=lambda x: x._key))
        ft = FuncType(tuple(self.ty(p) for p in f.params), ret, (*f.type_params, *dim_params), (), pure)
        t: Type = ft
        if f.pure is None and pure and not force:
            # inferred pure so far; a call checked after solving may make it impure (check_purity),
            # so the type lives in a hole that every use of the function shares
            t = s.hole()
            s.unifier.unify(t, ft, Origin("unify", "the function", f.span))
        elif not pure:
            name = self.fn_global.get(id(f))
            if name is not None:
                self.set_impure(self.global_types[name])
        self.fn_types[id(f)] = t
        self.fn_schemes[id(f)] = ft
        return t

    def instantiate(self, ft: FuncType) -> FuncType:
        return instantiate(ft, self.s.hole)

    def typed_args(self, e: Call) -> list[Type] | None:
        """The types of ``e``'s arguments when all are generated already (they are then read),
        else None."""
        types = self.types
        out = []
        for a in e.args:
            hit = types.get(id(a))
            # a typed variable is in scope unless it left it (see leave)
            if hit is None or (self.var_left and id(a) in self.var_left):
                return None
            out.append(hit)
        if self.unreferenced:
            for a in e.args:
                self.unreferenced.pop(id(a), None)
        return out

    def op_call(self, e: Call, c: Op, argtypes: list[Type]) -> Type:
        """A call of an operator: its relation over the argument types and an output hole."""
        self.calls.append(e)
        if e.attrs is not _EMPTY_ATTRS and id(e.attrs) not in self.scanned:
            self.scan_attrs(e.attrs, e.span)
        attrs = e.attrs
        if c.relation in SIZE_OPS:
            attrs = self.unbacked_size(e, c)
        out = self.s.add_call(get_relation(c.relation), argtypes, attrs, c.name, e.span)
        if not c.pure:
            self.note_impure(e, self.frames[-1])
        return out

    def unbacked_size(self, e: Call, c: Op) -> Attrs:
        """The attributes of a call whose result has a data-dependent size, with that size: the
        symbol given as ``size``, else a fresh symbol ``u<k>`` (``>= 0``; the first name not taken
        by a symbol seen so far, in program order), recorded where it was born."""
        given = e.attrs.get("size")
        if isinstance(given, Dim) and given.is_symbol:
            sym = given
        else:
            k = len(self.unbacked)
            while f"u{k}" in self.sym_names:
                k += 1
            sym = unbacked_sym(f"u{k}")
            self.note_syms(sym, e.span)
        self.unbacked.append(UnbackedSize(sym, SIZE_WHAT.get(c.relation, c.name), c.name, e.span))
        return e.attrs if sym is given else Attrs({**dict(e.attrs), "size": sym})

    def call(self, e: Call) -> Type:
        s = self.s
        c = e.callee
        argtypes = [self.ty(a) for a in e.args]
        if isinstance(c, Op):
            return self.op_call(e, c, argtypes)
        origin = Origin("relation", call_label(e), e.span, expr=e)
        frame = self.frames[-1]
        self.calls.append(e)
        if isinstance(c, Constructor):
            td = self.mod.constructor_data(c) if self.mod is not None else None
            tps = td.type_params if td is not None else ()
            sub: dict[TypeVar, Type] = {tp: s.hole() for tp in tps}
            if len(argtypes) != len(c.inputs):
                self.error(
                    ARITY_MISMATCH,
                    f"constructor {c.name} takes {len(c.inputs)} arguments, got {len(argtypes)}",
                    e.span,
                )
            for it, at in zip(c.inputs, argtypes):
                s.unifier.unify(subst_typevars(it, sub), at, origin)
            return TypeCall(c.belong_to, tuple(sub[tp] for tp in tps))
        self.value_calls.append((e, frame.fn, frame.dataflow_depth > 0))
        head = s.unifier.shallow(self.ty(c))
        ct = s.unifier.resolve(self.ty(c))
        gname = c.name if isinstance(c, GlobalVar) else None
        scheme = self.generalized.get(gname) if gname is not None else None
        if scheme is not None:
            # a call of an unannotated global function generated before: its own symbols and type
            # parameters are bound by this call (its recursive calls used it monomorphically)
            pure = ct.pure if isinstance(ct, FuncType) else scheme.pure
            rs = s.unifier.resolve(scheme)
            if has_holes(rs):
                ret = s.hole()
                s.add_relation("call_generalized", [scheme, *argtypes, ret], None, len(argtypes) + 1, origin)
                if (not pure or gname in self.global_impure) and not e.pure_override:
                    self.note_impure(e, frame)
                return ret
            assert isinstance(rs, FuncType)
            ct = FuncType(rs.params, rs.ret, rs.type_params, rs.relations, pure)
        if isinstance(ct, IncompleteType):
            ret = s.hole()
            s.unifier.unify(ct, FuncType(tuple(argtypes), ret), origin)
            return ret
        if not isinstance(ct, FuncType):
            self.error(TYPE_MISMATCH, f"only functions can be called, found `{ct}`", e.span)
            return s.poison(s.hole())
        ft = self.instantiate(ct)
        if isinstance(c, GlobalVar) and c.name in self.global_seeded and self.mod is not None:
            # the callee's annotated signature is a core member candidate: admit it per call
            fdef = self.mod[c.name]
            params = []
            for p, pv in zip(ft.params, fdef.params):
                o = Origin(
                    "annotation",
                    f"parameter `{pv.name}` of @{c.name} is annotated `{pv.type_annotation}`",
                    pv.span,
                )
                params.append(s.admit(p, o))
            ft = FuncType(tuple(params), ft.ret, ft.type_params, ft.relations, ft.pure)
        if len(ft.params) != len(argtypes):
            self.error(
                ARITY_MISMATCH,
                f"{call_label(e)} takes {len(ft.params)} arguments, got {len(argtypes)}",
                e.span,
            )
            return ft.ret
        for i, (p, a) in enumerate(zip(ft.params, argtypes)):
            po = Origin("unify", f"argument {i} of {call_label(e)}", e.span)
            s.unifier.unify(p, a, po)
            pr, ar = s.unifier.resolve(p), s.unifier.resolve(a)
            if isinstance(pr, FuncType) and isinstance(ar, FuncType) and pr.pure and not ar.pure:
                hp = head.params[i] if isinstance(head, FuncType) and len(head.params) > i else None
                if isinstance(hp, IncompleteType):
                    # an unannotated parameter: its purity is inferred, not declared; its calls
                    # are checked again after solving
                    self.set_impure(hp)
                    continue
                self.error(
                    IMPURE_CALL,
                    f"argument {i} of {call_label(e)} is an impure function where a pure one is expected",
                    e.args[i].span or e.span,
                )
        for r in ft.relations:
            s.add_relation(r.name, list(r.args), r.attrs, origin=origin)
        impure = not ft.pure or (isinstance(c, GlobalVar) and c.name in self.global_impure)
        if impure and not e.pure_override:
            self.note_impure(e, frame)
        return ft.ret

    def note_impure(self, e: Call, frame: FnFrame) -> None:
        if e.pure_override:
            return
        self.noted.add(id(e))
        frame.impure_calls.append(e)
        if frame.dataflow_depth > 0:
            force = frame.fn is not None and bool(frame.fn.attrs.get("force_pure", False))
            if not force:
                self.error(IMPURE_CALL, f"impure {describe_call(e)} inside a dataflow block", e.span)

    def set_impure(self, t: Type) -> bool:
        """Make the function type held by hole ``t`` impure (every type sharing the hole sees it);
        True when it changed."""
        if not isinstance(t, IncompleteType):
            return False
        u = self.s.unifier
        root = u.find(t)
        cur = u.resolved.get(root)
        if not isinstance(cur, FuncType) or not cur.pure:
            return False
        u.resolved[root] = FuncType(cur.params, cur.ret, cur.type_params, cur.relations, False)
        return True

    def check_purity(self) -> bool:
        """After solving: every call of a function value whose type is now an impure function is
        checked as during generation (``impure-call`` inside a dataflow block or a function
        declared pure, unless ``force_pure``; an unannotated function containing it becomes
        impure, which may make its own calls impure: iterate to a fixpoint). Calls found impure
        during generation are not reported again. True when an error was added."""
        u = self.s.unifier
        before = len(self.s.errors)
        pending = [vc for vc in self.value_calls if id(vc[0]) not in self.noted and not vc[0].pure_override]
        changed = True
        while changed and pending:
            changed = False
            rest = []
            for vc in pending:
                e, fn, in_dataflow = vc
                ct = u.shallow(self.ty(e.callee))
                if not isinstance(ct, FuncType) or ct.pure:
                    rest.append(vc)
                    continue
                self.noted.add(id(e))
                force = fn is not None and bool(fn.attrs.get("force_pure", False))
                if force:
                    continue
                what = describe_call(e)
                if in_dataflow:
                    self.error(IMPURE_CALL, f"impure {what} inside a dataflow block", e.span)
                if fn is None:
                    continue
                if fn.pure is True:
                    self.error(IMPURE_CALL, f"impure {what} inside a function declared pure", e.span)
                elif fn.pure is None and self.fn_pure.get(id(fn), True):
                    self.fn_pure[id(fn)] = False
                    self.set_impure(self.ty(fn))
                    name = self.fn_global.get(id(fn))
                    if name is not None:
                        self.set_impure(self.global_types[name])
                    changed = True
            pending = rest
        return len(self.s.errors) > before
