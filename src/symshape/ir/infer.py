"""Constraint generation and ``infer``: from a program to every expression's type.

One pass over the program (iterative, so a 10 000-deep chain needs no recursion) gives every
expression a type: its annotation, a hole, or a type built from its children's. It

* adds one relation instance per operator call (the operator's relation over the argument types
  and a fresh output hole), labelled with the call's span;
* instantiates polymorphic function types at each call: type parameters become fresh holes and the
  symbols of a function's parameter annotations (its ``dim`` parameters) become fresh unknown
  dimensions, so each call binds them from its arguments (Relax's ``DeriveCallRetStructInfo``);
* unifies let-bound variables with their values, parameters with arguments, a function's body with
  its return annotation, patterns with the matched value;
* joins ``If``/``Match`` branches (Relax ``StructInfoLCA``) through the ``join`` relation; a branch
  that is still a hole is unified with the other (so unannotated recursion resolves);
* tracks purity (seed 002) with a frame per function and per dataflow block. Before generating a
  module, the purity of its global functions is inferred over the call graph (an unannotated
  function that calls an impure operator or impure function, directly or through a chain or cycle
  of unannotated functions, is impure); after solving, every call of a function value whose type was
  not known when the call was generated (a parameter, a higher-order argument) is checked again,
  and functions found impure make their callers impure, to a fixpoint.

Then the solver runs (:class:`~symshape.solver.solve.TypeSolver`) and :class:`InferenceResult`
answers ``type_of`` for every sub-expression.
"""

from __future__ import annotations

from typing import Any

from symshape.encoding.dims import Sym
from symshape.encoding.types import (
    Attrs,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    subst_typevars,
)
from symshape.errors import (
    ARITY_MISMATCH,
    DUPLICATE_BINDING,
    INVALID_ARGUMENT,
    SymshapeError,
)
from symshape.ir import nodes as X  # noqa: N812
from symshape.ir.bindings import BindingsGen
from symshape.ir.module import Module
from symshape.ir.nodes import _EMPTY_ATTRS
from symshape.ir.op import Op
from symshape.ir.program_rels import TUPLE_GET_ITEM
from symshape.ir.purity import callees_first
from symshape.ir.result import InferenceResult
from symshape.ir.scope import FnFrame, first_item, syms_of
from symshape.ir.unbacked import UnbackedSize
from symshape.ir.visit import operands, pattern_vars
from symshape.relations.values import constant_type
from symshape.solver.diagnostics import Origin
from symshape.solver.outcome import Solution
from symshape.solver.solve import TypeSolver, gc_paused

__all__ = ["infer", "InferenceResult", "UnbackedSize"]

_INDEX_ATTRS: dict[int, tuple[Attrs, str]] = {}


def _index_attrs(index: int) -> tuple[Attrs, str]:
    """The attributes and label of a tuple index's relation: one attributes object per index (a
    model indexes many tuples alike; the solver's memo then knows each from its inputs' ids)."""
    hit = _INDEX_ATTRS.get(index)
    if hit is None:
        hit = (Attrs({"index": index}), f"tuple index .{index}")
        if len(_INDEX_ATTRS) < 1024:
            _INDEX_ATTRS[index] = hit
    return hit


class _Gen(BindingsGen):
    """The constraint generator: one iterative pass over the program."""

    # -- traversal ------------------------------------------------------------------------------
    def gen(self, root: X.Expr) -> Type:
        # phase 0: enter, 1: exit, 2: bind a variable to a value just generated (``e`` is then a
        # ``(var, value)`` pair): a let-bound variable's type is known before its body is generated,
        # so a call of a let-bound (polymorphic) function in the body is instantiated; 3: a
        # match_cast's check; 4: the bindings of a dataflow block from an index on (``e`` is a
        # ``(block, index)`` pair); 5 and 6: a match clause's pattern variables enter and leave the
        # scope; 7: exit an operator call (entered by phase 0).
        stack: list[tuple[Any, int]] = [(root, 0)]
        types = self.types
        get_type = types.get
        typed = self.typed
        argtypes: list[Type] | None
        open_ = self.open
        op_cls, call_cls, var_cls = Op, X.Call, X.Var
        # (sets and maps only ever changed in place)
        var_left, unreferenced = self.var_left, self.unreferenced
        scanned, var_scope = self.scanned, self.var_scope
        if isinstance(root, X.Var):
            self.use(root, root.span)
        while stack:
            e, phase = stack.pop()
            ie = id(e)
            if phase == 7:  # an operator call whose arguments are generated now (see phase 0)
                open_.discard(ie)
                argtypes = []
                for a in e.args:  # (``self.ty(a)``, inline for the typed ones)
                    hit = get_type(id(a))
                    if hit is None:
                        hit = self.ty(a)
                    elif unreferenced:
                        unreferenced.pop(id(a), None)
                    argtypes.append(hit)
                types[ie] = self.typed_op_call(e, e.callee, argtypes)
                typed.append(e)
                continue
            if phase == 0:
                if ie in types:
                    continue
                if type(e) is call_cls and (type(cal := e.callee) is op_cls or isinstance(cal, Op)):
                    # the common case: an operator applied to expressions typed already
                    # (``typed_args``, inline)
                    argtypes = []
                    for a in e.args:
                        hit = get_type(id(a))
                        if hit is None or (var_left and id(a) in var_left):
                            argtypes = None
                            break
                        argtypes.append(hit)
                    if argtypes is not None:
                        if unreferenced:
                            for a in e.args:
                                unreferenced.pop(id(a), None)
                        types[ie] = self.typed_op_call(e, cal, argtypes)
                        typed.append(e)
                        continue
                    if ie not in open_:
                        # else its arguments first (what enter and the general case below do
                        # for a call of an operator)
                        open_.add(ie)
                        attrs = e.attrs
                        if attrs is not _EMPTY_ATTRS and id(attrs) not in scanned:
                            self.scan_attrs(attrs, e.span)
                        stack.append((e, 7))
                        # one walk over the arguments: the variables read (``self.uses(args,
                        # e.span)``, inline; a typed argument still in scope needs no check, as
                        # above), then the untyped ones are visited (a typed one, a weight say,
                        # needs no visit)
                        pending: list[X.Expr] = []
                        for a in e.args:
                            ia = id(a)
                            if ia in types and not (var_left and ia in var_left):
                                continue
                            if a.__class__ is var_cls and ia not in var_scope:
                                for b in self.df_active:
                                    if ia in b:
                                        break
                                else:
                                    self.use(a, e.span)
                            if ia not in types:
                                pending.append(a)
                        if pending:
                            if len(pending) == 1:
                                stack.append((pending[0], 0))
                            else:
                                stack.extend([(a, 0) for a in reversed(pending)])
                        continue
                if isinstance(e, X.Var):
                    self.bind_var(e)
                    continue
                if ie in self.open:
                    raise SymshapeError(
                        INVALID_ARGUMENT,
                        f"the program is cyclic: a {type(e).__name__} contains itself (a node's "
                        "fields were assigned after it was built); expressions must form a tree "
                        "or a DAG" + (f" ({e.span})" if e.span is not None else ""),
                    )
                self.open.add(ie)
                cls = type(e)
                if cls is X.TupleGetItem or cls is X.Tuple:
                    # (what enter, nothing for them, and the general case below do, inline)
                    stack.append((e, 1))
                    ops = (e.tuple_value,) if cls is X.TupleGetItem else e.fields
                    self.uses(ops, e.span)
                    for a in reversed(ops):  # (a typed one needs no visit)
                        if id(a) not in types:
                            stack.append((a, 0))
                    continue
                self.enter(e)
                stack.append((e, 1))
                if isinstance(e, X.Let):
                    self.uses((e.value, e.body), e.span)
                    stack.append((e.body, 0))
                    stack.append(((e.var, e.value), 2))
                    stack.append((e.value, 0))
                elif isinstance(e, X.MatchCast):
                    self.uses((e.value, e.body), e.span)
                    # the cast's facts (new symbols defined by the value) precede the body's relations
                    stack.append((e.body, 0))
                    stack.append((e, 3))
                    stack.append((e.value, 0))
                elif isinstance(e, X.Dataflow):
                    self.uses((e.body,), e.span)
                    stack.append((e.body, 0))
                    stack.append(((e, self.df_skip), 4))  # (after the weights enter typed)
                elif isinstance(e, X.Match):
                    self.uses((e.value,), e.span)
                    for c in reversed(e.clauses):
                        vs = tuple(pattern_vars(c.pattern))
                        stack.append((vs, 6))
                        stack.append((c.body, 0))
                        stack.append((vs, 5))
                        if c.body.__class__ is X.Var and c.body not in vs:
                            self.uses((c.body,), e.span)
                    stack.append((e.value, 0))
                else:
                    ops = operands(e)
                    self.uses(ops, e.span)
                    stack.extend((c, 0) for c in reversed(ops))
            elif phase == 1:
                self.open.discard(ie)
                cls = type(e)
                if cls is X.TupleGetItem:  # (exit's case for it, without the dispatch)
                    t = self.tuple_item(e)
                elif cls is X.Tuple:  # (likewise)
                    t = TupleType(tuple([self.ty(f) for f in e.fields]))
                else:
                    t = self.exit(e)
                types[ie] = t
                typed.append(e)
            else:
                self.other_phase(e, phase, stack)
        return self.ty(root)

    def other_phase(self, e: Any, phase: int, stack: list[tuple[Any, int]]) -> None:
        """Phases 2 to 6 of :meth:`gen` (see there)."""
        types, typed = self.types, self.typed
        if phase == 2:
            v, x = e
            if id(v) not in types and v.type_annotation is None:
                # an unannotated variable nothing has read yet takes its value's type
                types[id(v)] = self.ty(x)
                typed.append(v)
                self.binders.append(v)
                return
            if self.unreferenced.pop(id(v), None) is not None:
                self.set(v, self.ty(x))
                return
            o = Origin("unify", f"binding `{v.name}`", x.span)
            self.s.unifier.unify(self.ty(v), self.ty(x), o)
            return
        if phase == 3:
            self.match_cast(e)
            return
        if phase == 4:
            self.bindings(e[0], e[1], stack)
            return
        if phase == 5:  # a match clause's pattern variables enter the scope
            for v in e:
                self.introduce(v, "a match pattern", None)
            return
        if phase == 6:  # ... and leave it
            for v in e:
                self.leave(v)
            return

    def enter(self, e: X.Expr) -> None:
        match e:
            case X.Let():
                self.introduce(e.var, "a let", e.span)
                self.bind_var(e.var)
            case X.Function():
                owned: set[Sym] = set()
                for p in e.params:
                    if p.type_annotation is not None:
                        owned.update(s for s in syms_of(p.type_annotation) if not self.in_scope(s))
                self.scopes.append(owned)
                for p in e.params:
                    self.introduce(p, "a parameter", e.span)
                    self.bind_var(p)
                self.scan_type(e.ret_type, e.span)
                self.frames.append(FnFrame(e))
            case X.MatchCast():
                self.introduce(e.var, "a match_cast", e.span)
                self.scan_type(e.type, e.span)
                new = {s for s in syms_of(e.type) if not self.in_scope(s)}
                self.scopes[-1] |= new
                self.cast_new[id(e)] = new
                o = Origin("annotation", f"match_cast to `{e.type}`", e.span)
                self.set(e.var, self.s.admit(e.type, o))
                self.binders.append(e.var)
            case X.Dataflow():
                # the binders enter the scope as one set (blocks are long); binders bound before
                # (here or elsewhere) are reported one by one
                ids = set(map(id, map(first_item, e.bindings)))
                if len(ids) < len(e.bindings) or ids & self.df_bound or self.bound_by.keys() & ids:
                    self.df_slow.add(id(e))
                    seen: set[int] = set()
                    for v, _ in e.bindings:
                        k = id(v)
                        if k in seen or k in self.df_bound or k in self.bound_by:
                            first = self.bound_by.get(k, "a dataflow binding")
                            self.error(
                                DUPLICATE_BINDING,
                                f"variable `{v.name}` is bound twice: by {first} and again by a "
                                "dataflow binding; bind a fresh variable (ss.var) instead",
                                e.span or v.span,
                            )
                        seen.add(k)
                self.df_bound |= ids
                self.df_active.append(ids)
                if self.var_left:
                    self.var_left -= ids
                # the annotated variables, and the leading weights' constants (see ``weights``)
                skip = self.weights(e)
                self.df_skip = skip
                self.frames[-1].dataflow_depth += 1
            case X.Match():
                for c in e.clauses:
                    self.bind_pattern_vars(c.pattern)
            case X.Constant():
                self.scan_type(e.type, e.span)
            case X.Call():
                self.scan_attrs(e.attrs, e.span)
            case _:
                pass

    def bind_pattern_vars(self, p: X.Pattern) -> None:
        for v in pattern_vars(p):
            self.bind_var(v)

    def exit(self, e: X.Expr) -> Type:
        s = self.s
        match e:
            case X.Constant():
                return constant_type(e.type, e.data)
            case X.GlobalVar():
                return self.global_type(e)
            case X.Call():
                return self.call(e)
            case X.Tuple():
                return TupleType(tuple([self.ty(f) for f in e.fields]))
            case X.TupleGetItem():
                return self.tuple_item(e)
            case X.Let():
                self.leave(e.var)
                return self.ty(e.body)
            case X.Function():
                for p in e.params:
                    self.leave(p)
                return self.function(e)
            case X.If():
                o = Origin("unify", "if condition", e.span)
                s.unifier.unify(self.ty(e.cond), TensorType((), "bool"), o)
                return self.join([self.ty(e.then_branch), self.ty(e.else_branch)], e)
            case X.Match():
                vt = self.ty(e.value)
                for c in e.clauses:
                    self.pattern(c.pattern, vt, e)
                return self.join([self.ty(c.body) for c in e.clauses], e)
            case X.MatchCast():
                self.leave(e.var)
                return self.ty(e.body)
            case X.Dataflow():
                ids = self.df_active.pop()
                if id(e) in self.df_slow:  # a binder still bound by an enclosing binder stays
                    ids = ids - self.var_scope.keys()
                self.var_left |= ids
                self.frames[-1].dataflow_depth -= 1
                return self.ty(e.body)
            case _:
                raise SymshapeError(INVALID_ARGUMENT, f"not an expression: {type(e).__name__}")

    def tuple_item(self, e: X.TupleGetItem) -> Type:
        s = self.s
        raw = self.ty(e.tuple_value)
        tt = s.unifier.shallow(raw)  # only the outer form is needed
        if isinstance(tt, TupleType):
            if not 0 <= e.index < len(tt.fields):
                self.error(
                    ARITY_MISMATCH,
                    f"tuple index {e.index} out of range for `{s.unifier.resolve(tt)}`",
                    e.span,
                )
                return s.poison(s.hole())
            if not isinstance(e.tuple_value, X.Call):
                return tt.fields[e.index]
            # a relation (solved at once) even when the tuple is known: the field then
            # stays linked to the call that made the tuple in explanations
            attrs, label = _index_attrs(e.index)
            for f in tt.fields:
                if type(f) is not TensorType or not f._cshape:
                    return s.add_call(TUPLE_GET_ITEM, [raw], attrs, label, e.span)
            # (tensors of constant shapes: the eager run's output is the field, see add_call)
            return s.add_call(TUPLE_GET_ITEM, [raw], attrs, label, e.span, tt.fields[e.index])
        out = s.hole()
        s.add_relation(
            "tuple_get_item",
            [self.ty(e.tuple_value), out],
            {"index": e.index},
            origin=Origin("relation", f"tuple index .{e.index}", e.span),
        )
        return out

    def match_cast(self, e: X.MatchCast) -> None:
        o = Origin("relation", f"match_cast to `{e.type}`", e.span)
        new = tuple(sorted(sym.name for sym in self.cast_new.get(id(e), ())))
        self.s.add_relation(
            "match_cast", [self.ty(e.value), self.ty(e.var)], {"new": new}, num_inputs=2, origin=o
        )

    def join(self, branches: list[Type], e: X.Expr) -> Type:
        s = self.s
        if not branches:
            return s.hole()
        o = Origin("relation", "join of branches", e.span)
        if len(branches) == 1:
            return branches[0]
        # a branch that is a hole now may still be determined by a relation (an operator's
        # output); the join relation defers on it and unifies it with the others only when
        # nothing else can determine it (unannotated recursion).
        out = s.hole()
        s.add_relation("join", [*branches, out], None, origin=o)
        return out

    def pattern(self, p: X.Pattern, t: Type, m: X.Match) -> None:
        """Unify what ``p`` (a clause of ``m``) binds with the parts of ``t``, nested patterns
        left to right (iteratively)."""
        s = self.s
        o = Origin("unify", "match pattern", m.span)
        stack: list[tuple[X.Pattern, Type]] = [(p, t)]
        while stack:
            q, qt = stack.pop()
            match q:
                case X.PatternVar():
                    s.unifier.unify(self.ty(q.var), qt, o)
                case X.PatternTuple():
                    holes = [s.hole() for _ in q.patterns]
                    s.unifier.unify(qt, TupleType(tuple(holes)), o)
                    stack.extend(reversed(list(zip(q.patterns, holes))))
                case X.PatternConstructor():
                    c = q.constructor
                    td = self.mod.constructor_data(c) if self.mod is not None else None
                    tps = td.type_params if td is not None else ()
                    sub: dict[TypeVar, Type] = {tp: s.hole() for tp in tps}
                    s.unifier.unify(qt, TypeCall(c.belong_to, tuple(sub[tp] for tp in tps)), o)
                    if len(q.patterns) != len(c.inputs):
                        self.error(
                            ARITY_MISMATCH,
                            f"pattern {c.name} has {len(q.patterns)} fields, "
                            f"constructor takes {len(c.inputs)}",
                            m.span,
                        )
                        continue
                    fields = [(r, subst_typevars(it, sub)) for r, it in zip(q.patterns, c.inputs)]
                    stack.extend(reversed(fields))
                case _:
                    pass


def infer(program: X.Expr | Module, strict: bool = False, timeout_ms: int = 2000) -> InferenceResult:
    """Infer the type of every expression of ``program`` (an expression, function or module).

    >>> import symshape as ss
    >>> n = ss.dim("n")
    >>> x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
    >>> y = ss.var("y", ss.Tensor((1, 4), "float32"))
    >>> body = ss.ops.flatten(ss.ops.add(x, y))
    >>> res = ss.infer(ss.Function([x, y], body))
    >>> res.status, str(res.type_of(body))
    ('ok', 'Tensor[(n, 12), float32]')
    """
    with gc_paused():
        return _infer(program, strict, timeout_ms)


def _infer(program: X.Expr | Module, strict: bool, timeout_ms: int) -> InferenceResult:
    solver = TypeSolver(strict=strict, timeout_ms=timeout_ms)
    solver.report_holes = False  # the result names the expressions whose types stay open
    if isinstance(program, Module):
        gen = _Gen(solver, program)
        gen.seed_globals(program)
        for gv, f in callees_first(program):
            ft = gen.gen(f)
            if gv.name not in gen.global_seeded:
                solver.unifier.unify(gen.global_types[gv.name], ft, Origin("unify", f"@{gv.name}", f.span))
                scheme = gen.fn_schemes.get(id(f))
                if scheme is not None and scheme.type_params:
                    gen.generalized[gv.name] = scheme
    elif isinstance(program, X.Expr):
        gen = _Gen(solver, None)
        gen.open_inputs = not isinstance(program, X.Function)
        gen.gen(program)
    else:
        raise SymshapeError(
            INVALID_ARGUMENT, f"infer takes an expression or a Module, got {type(program).__name__}"
        )
    sol = solver.solve()
    if gen.check_purity():
        sol = Solution(solver)
    return InferenceResult(program, gen, sol)
