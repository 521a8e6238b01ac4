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

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from symshape.encoding.dims import Dim, Sym
from symshape.encoding.types import (
    Attrs,
    FuncType,
    IncompleteType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    iter_dims,
    subst_typevars,
)
from symshape.errors import (
    ARITY_MISMATCH,
    DUPLICATE_BINDING,
    IMPURE_CALL,
    INVALID_ARGUMENT,
    TYPE_MISMATCH,
    UNDEFINED_VAR,
    SymshapeError,
)
from symshape.ir.expr import (
    _EMPTY_ATTRS,
    Call,
    Constant,
    Constructor,
    Dataflow,
    Expr,
    Function,
    GlobalVar,
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
from symshape.ir.module import Module
from symshape.ir.op import Op
from symshape.ir.program_rels import TUPLE_GET_ITEM, has_holes, instantiate
from symshape.ir.purity import callees_first, impure_globals
from symshape.ir.result import InferenceResult
from symshape.relations.base import get_relation
from symshape.relations.dynamic import SIZE_OPS
from symshape.relations.values import constant_type
from symshape.solver.diagnostics import Origin
from symshape.solver.instance import op_display_name
from symshape.solver.outcome import Solution
from symshape.solver.solve import TypeSolver, gc_paused

__all__ = ["infer", "InferenceResult", "UnbackedSize"]


# ----------------------------------------------------------------------------------------------
# the generator


# data-dependent sizes


@dataclass(frozen=True)
class UnbackedSize:
    """A size that only the data decides (PyTorch's *unbacked* symbol): the given symbol that
    stands for it, what it counts, the operator and where it was born.

    >>> import symshape as ss
    >>> x = ss.var("x", ss.Tensor((4, 4), "float32"))
    >>> res = ss.infer(ss.Function([x], ss.ops.nonzero(x)))
    >>> str(res.unbacked[0]).split(" at ")[0]
    'u0: the number of non-zero elements (nonzero'
    """

    symbol: Dim
    what: str
    op: str
    span: Any

    def __str__(self) -> str:
        where = f" at {self.span}" if self.span is not None else ""
        return f"{self.symbol}: {self.what} ({op_display_name(self.op)}{where})"


_SIZE_WHAT = {
    "nonzero": "the number of non-zero elements",
    "unique": "the number of distinct elements",
    "boolean_mask": "the number of true elements of the mask",
}


def _unbacked_sym(name: str) -> Dim:
    from symshape.encoding.dims import dim

    return dim(name, min=0)



@dataclass
class _FnFrame:
    fn: Function | None
    impure_calls: list[Call] = field(default_factory=list)
    dataflow_depth: int = 0


def _syms_of(t: Type) -> list[Sym]:
    out: list[Sym] = []
    for d in iter_dims(t):
        for a in d.atoms():
            if isinstance(a, Sym) and a not in out:
                out.append(a)
    return out


_first = itemgetter(0)


def _sym_range(s: Sym) -> str:
    """``k >= 1``, ``0 <= k <= 8``: a symbol with its declared range."""
    if s.max is None:
        return f"{s.name} >= {s.min}"
    return f"{s.min} <= {s.name} <= {s.max}"


def _pattern_vars(p: Pattern) -> list[Var]:
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


def _label(e: Call) -> str:
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


def _describe_call(e: Call) -> str:
    label = _label(e)
    return label if label.startswith("call") else f"call of {label}"


class _Gen:
    def __init__(self, solver: TypeSolver, module: Module | None) -> None:
        self.s = solver
        self.mod = module
        # id(expression) -> its type; ``typed`` keeps every keyed expression alive, so ids are not
        # reused while the generator lives
        self.types: dict[int, Type] = {}
        self.typed: list[Any] = []
        self.global_types: dict[str, Type] = {}
        self.global_seeded: set[str] = set()
        self.scopes: list[set[Sym]] = [set()]
        self.frames: list[_FnFrame] = [_FnFrame(None)]
        self.fn_types: dict[int, Type] = {}
        self.fn_pure: dict[int, bool] = {}
        # purity: global functions inferred impure before generation, the global name of each
        # module function, every call of a function value (with its function and whether it is in
        # a dataflow block) for the check after solving, and the calls already found impure
        self.global_impure: set[str] = set()
        self.fn_global: dict[int, str] = {}
        self.value_calls: list[tuple[Call, Function | None, bool]] = []
        self.noted: set[int] = set()
        self.binders: list[Var] = []
        self.calls: list[Call] = []
        self.cast_new: dict[int, set[Sym]] = {}
        # unannotated let/dataflow variables whose hole nothing has read yet: when their value is
        # generated they simply take its type (no hole to merge, no relation to re-queue)
        self.unreferenced: dict[int, IncompleteType] = {}
        # scope: how often each variable is bound by an enclosing binder now; what first bound
        # each variable; variables used outside their scope (reported once each) and the holes
        # standing for the unannotated ones (what depends on them is not reported unresolved)
        self.var_scope: dict[int, int] = {}
        self.open_inputs = False  # free variables are inputs (a bare expression), not errors
        self.var_left: set[int] = set()  # bound once, out of scope now (checked on the fast path)
        self.bound_by: dict[int, str] = {}
        self.unbound: set[int] = set()
        self.unbound_holes: list[IncompleteType] = []
        # expressions entered and not yet exited (a cycle would re-enter one)
        self.open: set[int] = set()
        # dataflow blocks (long) are scoped as a whole: the binders of every block so far, those of
        # the blocks open now, the open blocks with a binder bound elsewhere too
        self.df_bound: set[int] = set()
        self.df_active: list[set[int]] = []
        self.df_slow: set[int] = set()
        # symbols by name, with where each was first seen (one name is one symbol in a program);
        # ids of the annotations and attributes already scanned for symbols
        self.sym_names: dict[str, Sym] = {}
        self.unbacked: list[UnbackedSize] = []
        self.sym_clash: set[str] = set()
        self.scanned: set[int] = set()
        # unannotated global functions with type parameters, generalized once generated: a call
        # made after that instantiates them (so recursion through the signature stays monomorphic)
        self.generalized: dict[str, FuncType] = {}
        self.fn_schemes: dict[int, FuncType] = {}

    # -- helpers --------------------------------------------------------------------------------
    def ty(self, e: Any) -> Type:
        hit = self.types.get(id(e))
        if hit is None:
            if isinstance(e, Var):  # read before it is bound (e.g. a later dataflow binding)
                t = self.bind_var(e)
                self.unreferenced.pop(id(e), None)
                return t
            raise SymshapeError(INVALID_ARGUMENT, f"internal: no type for {type(e).__name__}")
        if self.unreferenced and id(e) in self.unreferenced:
            del self.unreferenced[id(e)]
        return hit

    def set(self, e: Any, t: Type) -> Type:
        self.types[id(e)] = t
        self.typed.append(e)
        return t

    def bind_var(self, v: Var) -> Type:
        hit = self.types.get(id(v))
        if hit is not None:
            return hit
        if v.type_annotation is not None:
            self.scan_type(v.type_annotation, v.span)
            o = Origin(
                "annotation", f"`{v.name}` is annotated `{v.type_annotation}`", v.span, expr=v
            )
            t = self.s.admit(v.type_annotation, o)
        else:
            t = self.s.hole()
            self.unreferenced[id(v)] = t
        self.binders.append(v)
        return self.set(v, t)

    def error(self, code: Any, msg: str, span: Any) -> None:
        self.s._error(code.code, msg, Origin("expr", msg, span))

    # -- scope of variables ---------------------------------------------------------------------
    def introduce(self, v: Var, what: str, span: Any) -> None:
        """``v`` is bound by a binder (``what``: "a parameter", "a let", ...): it enters the scope;
        a variable bound a second time anywhere in the program is a ``duplicate-binding`` error."""
        first = self.bound_by.get(id(v))
        if first is None and id(v) in self.df_bound:
            first = "a dataflow binding"
        if first is not None:
            self.error(
                DUPLICATE_BINDING,
                f"variable `{v.name}` is bound twice: by {first} and again by {what}; "
                "bind a fresh variable (ss.var) instead",
                span or v.span,
            )
        else:
            self.bound_by[id(v)] = what
        self.var_scope[id(v)] = self.var_scope.get(id(v), 0) + 1
        self.var_left.discard(id(v))

    def leave(self, v: Var) -> None:
        n = self.var_scope.get(id(v), 0) - 1
        if n > 0:
            self.var_scope[id(v)] = n
        else:
            self.var_scope.pop(id(v), None)
            self.var_left.add(id(v))

    def var_in_scope(self, k: int) -> bool:
        return k in self.var_scope or any(k in b for b in self.df_active)

    def use(self, v: Var, span: Any) -> None:
        """A variable read at ``span``: it must be bound by an enclosing binder."""
        if self.var_in_scope(id(v)) or id(v) in self.unbound:
            return
        if self.open_inputs and id(v) not in self.bound_by and id(v) not in self.var_left:
            # a bare expression's free variables are its inputs (Relay's IRModule.from_expr)
            self.bound_by[id(v)] = "an input of the expression"
            self.var_scope[id(v)] = 1
            return
        self.unbound.add(id(v))
        hint = ""
        if any(
            isinstance(x, Var) and x.name == v.name and self.var_in_scope(id(x))
            for x in self.binders
        ):
            hint = (
                f" (another variable named `{v.name}` is in scope: variables are told apart by "
                "identity, not by name; use that variable)"
            )
        self.error(
            UNDEFINED_VAR,
            f"variable `{v.name}` is unbound here: it is not a parameter of an enclosing function "
            f"nor bound by an enclosing let, match, match_cast or dataflow block{hint}",
            span or v.span,
        )
        if v.type_annotation is None:
            t = self.bind_var(v)
            if isinstance(t, IncompleteType):
                self.unbound_holes.append(t)

    def uses(self, xs: Sequence[Expr], span: Any) -> None:
        for x in xs:
            if x.__class__ is Var and not self.var_in_scope(id(x)):
                self.use(x, span)

    # -- symbols --------------------------------------------------------------------------------
    def scan_type(self, t: Type | None, span: Any) -> None:
        """Note the symbols of an annotation (each annotation object once)."""
        if t is None or id(t) in self.scanned:
            return
        self.scanned.add(id(t))
        self.typed.append(t)  # keep it alive: its id stays unique
        for d in iter_dims(t):
            if not d.is_constant:
                self.note_syms(d, span)

    def scan_attrs(self, attrs: Attrs, span: Any) -> None:
        """Note the symbols in a call's attributes (each attribute object once)."""
        if not attrs or id(attrs) in self.scanned:
            return
        self.scanned.add(id(attrs))
        self.typed.append(attrs)
        stack: list[object] = [v for _, v in attrs.items()]
        while stack:
            v = stack.pop()
            if type(v) is Dim:
                if not v.is_constant:
                    self.note_syms(v, span)
            elif type(v) is tuple:
                stack.extend(v)

    def note_syms(self, d: Dim, span: Any) -> None:
        for a in d.atoms():
            if isinstance(a, Sym):
                prev = self.sym_names.get(a.name)
                if prev is None:
                    self.sym_names[a.name] = a
                elif prev != a and a.name not in self.sym_clash:
                    self.sym_clash.add(a.name)
                    self.error(
                        DUPLICATE_BINDING,
                        f"two different symbols are named `{a.name}`: `{_sym_range(prev)}` and "
                        f"`{_sym_range(a)}`; one name is one symbol in a program: declare it once "
                        "(ss.dim) and use that symbol everywhere",
                        span,
                    )

    def in_scope(self, sym: Sym) -> bool:
        return any(sym in sc for sc in self.scopes)

    # -- traversal ------------------------------------------------------------------------------
    def gen(self, root: Expr) -> Type:
        # phase 0: enter, 1: exit, 2: bind a variable to a value just generated (``e`` is then a
        # ``(var, value)`` pair): a let-bound variable's type is known before its body is generated,
        # so a call of a let-bound (polymorphic) function in the body is instantiated; 3: a
        # match_cast's check; 4: the bindings of a dataflow block from an index on (``e`` is a
        # ``(block, index)`` pair).
        stack: list[tuple[Any, int]] = [(root, 0)]
        types = self.types
        typed = self.typed
        if isinstance(root, Var):
            self.use(root, root.span)
        while stack:
            e, phase = stack.pop()
            if phase == 2:
                v, x = e
                if id(v) not in types and v.type_annotation is None:
                    # an unannotated variable nothing has read yet takes its value's type
                    types[id(v)] = self.ty(x)
                    typed.append(v)
                    self.binders.append(v)
                    continue
                if self.unreferenced.pop(id(v), None) is not None:
                    self.set(v, self.ty(x))
                    continue
                o = Origin("unify", f"binding `{v.name}`", x.span)
                self.s.unifier.unify(self.ty(v), self.ty(x), o)
                continue
            if phase == 3:
                self.match_cast(e)
                continue
            if phase == 4:
                self.bindings(e[0], e[1], stack)
                continue
            if phase == 5:  # a match clause's pattern variables enter the scope
                for v in e:
                    self.introduce(v, "a match pattern", None)
                continue
            if phase == 6:  # ... and leave it
                for v in e:
                    self.leave(v)
                continue
            if phase == 0:
                if id(e) in types:
                    continue
                if type(e) is Call and isinstance(e.callee, Op):
                    # the common case: an operator applied to expressions typed already
                    argtypes = self.typed_args(e)
                    if argtypes is not None:
                        types[id(e)] = self.op_call(e, e.callee, argtypes)
                        typed.append(e)
                        continue
                if isinstance(e, Var):
                    self.bind_var(e)
                    continue
                if id(e) in self.open:
                    raise SymshapeError(
                        INVALID_ARGUMENT,
                        f"the program is cyclic: a {type(e).__name__} contains itself (a node's "
                        "fields were assigned after it was built); expressions must form a tree "
                        "or a DAG" + (f" ({e.span})" if e.span is not None else ""),
                    )
                self.open.add(id(e))
                self.enter(e)
                stack.append((e, 1))
                if isinstance(e, Let):
                    self.uses((e.value, e.body), e.span)
                    stack.append((e.body, 0))
                    stack.append(((e.var, e.value), 2))
                    stack.append((e.value, 0))
                elif isinstance(e, MatchCast):
                    self.uses((e.value, e.body), e.span)
                    # the cast's facts (new symbols defined by the value) precede the body's relations
                    stack.append((e.body, 0))
                    stack.append((e, 3))
                    stack.append((e.value, 0))
                elif isinstance(e, Dataflow):
                    self.uses((e.body,), e.span)
                    stack.append((e.body, 0))
                    stack.append(((e, 0), 4))
                elif isinstance(e, Match):
                    self.uses((e.value,), e.span)
                    for c in reversed(e.clauses):
                        vs = tuple(_pattern_vars(c.pattern))
                        stack.append((vs, 6))
                        stack.append((c.body, 0))
                        stack.append((vs, 5))
                        if c.body.__class__ is Var and c.body not in vs:
                            self.uses((c.body,), e.span)
                    stack.append((e.value, 0))
                else:
                    ops = operands(e)
                    self.uses(ops, e.span)
                    stack.extend((c, 0) for c in reversed(ops))
            else:
                self.open.discard(id(e))
                self.set(e, self.exit(e))
        return self.ty(root)

    def bindings(self, df: Dataflow, i: int, stack: list[tuple[Any, int]]) -> None:
        """Generate ``df``'s bindings from ``i`` on: operator calls on typed arguments bound to
        unannotated variables (the common case) directly, the first other one through the stack."""
        types = self.types
        binds = df.bindings
        while i < len(binds):
            v, x = binds[i]
            i += 1
            if (
                type(x) is Call
                and isinstance(x.callee, Op)
                and v.type_annotation is None
                and id(v) not in types
                and id(x) not in types
            ):
                argtypes = self.typed_args(x)
                if argtypes is not None:
                    t = self.op_call(x, x.callee, argtypes)
                    types[id(x)] = t
                    types[id(v)] = t
                    self.typed += (x, v)
                    self.binders.append(v)
                    continue
            if x.__class__ is Var:
                self.uses((x,), df.span)
            stack.append(((df, i), 4))
            stack.append(((v, x), 2))
            stack.append((x, 0))
            return

    def enter(self, e: Expr) -> None:
        match e:
            case Let():
                self.introduce(e.var, "a let", e.span)
                self.bind_var(e.var)
            case Function():
                owned: set[Sym] = set()
                for p in e.params:
                    if p.type_annotation is not None:
                        owned.update(s for s in _syms_of(p.type_annotation) if not self.in_scope(s))
                self.scopes.append(owned)
                for p in e.params:
                    self.introduce(p, "a parameter", e.span)
                    self.bind_var(p)
                self.scan_type(e.ret_type, e.span)
                self.frames.append(_FnFrame(e))
            case MatchCast():
                self.introduce(e.var, "a match_cast", e.span)
                self.scan_type(e.type, e.span)
                new = {s for s in _syms_of(e.type) if not self.in_scope(s)}
                self.scopes[-1] |= new
                self.cast_new[id(e)] = new
                o = Origin("annotation", f"match_cast to `{e.type}`", e.span)
                self.set(e.var, self.s.admit(e.type, o))
                self.binders.append(e.var)
            case Dataflow():
                # the binders enter the scope as one set (blocks are long); binders bound before
                # (here or elsewhere) are reported one by one
                ids = set(map(id, map(_first, e.bindings)))
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
                for v, _ in e.bindings:  # unannotated ones are bound when their value is known
                    if v.type_annotation is not None:
                        self.bind_var(v)
                self.frames[-1].dataflow_depth += 1
            case Match():
                for c in e.clauses:
                    self.bind_pattern_vars(c.pattern)
            case Constant():
                self.scan_type(e.type, e.span)
            case Call():
                self.scan_attrs(e.attrs, e.span)
            case _:
                pass

    def bind_pattern_vars(self, p: Pattern) -> None:
        for v in _pattern_vars(p):
            self.bind_var(v)

    def exit(self, e: Expr) -> Type:
        s = self.s
        match e:
            case Constant():
                return constant_type(e.type, e.data)
            case GlobalVar():
                return self.global_type(e)
            case Call():
                return self.call(e)
            case Tuple():
                return TupleType(tuple(self.ty(f) for f in e.fields))
            case TupleGetItem():
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
                    if not isinstance(e.tuple_value, Call):
                        return tt.fields[e.index]
                    # a relation (solved at once) even when the tuple is known: the field then
                    # stays linked to the call that made the tuple in explanations
                    return s.add_call(
                        TUPLE_GET_ITEM, [raw], Attrs({"index": e.index}), f"tuple index .{e.index}", e.span
                    )
                out = s.hole()
                s.add_relation(
                    "tuple_get_item",
                    [self.ty(e.tuple_value), out],
                    {"index": e.index},
                    origin=Origin("relation", f"tuple index .{e.index}", e.span),
                )
                return out
            case Let():
                self.leave(e.var)
                return self.ty(e.body)
            case Function():
                for p in e.params:
                    self.leave(p)
                return self.function(e)
            case If():
                o = Origin("unify", "if condition", e.span)
                s.unifier.unify(self.ty(e.cond), TensorType((), "bool"), o)
                return self.join([self.ty(e.then_branch), self.ty(e.else_branch)], e)
            case Match():
                vt = self.ty(e.value)
                for c in e.clauses:
                    self.pattern(c.pattern, vt, e)
                return self.join([self.ty(c.body) for c in e.clauses], e)
            case MatchCast():
                self.leave(e.var)
                return self.ty(e.body)
            case Dataflow():
                ids = self.df_active.pop()
                if id(e) in self.df_slow:  # a binder still bound by an enclosing binder stays
                    ids = ids - self.var_scope.keys()
                self.var_left |= ids
                self.frames[-1].dataflow_depth -= 1
                return self.ty(e.body)
            case _:
                raise SymshapeError(INVALID_ARGUMENT, f"not an expression: {type(e).__name__}")

    def match_cast(self, e: MatchCast) -> None:
        o = Origin("relation", f"match_cast to `{e.type}`", e.span)
        new = tuple(sorted(sym.name for sym in self.cast_new.get(id(e), ())))
        self.s.add_relation(
            "match_cast", [self.ty(e.value), self.ty(e.var)], {"new": new}, num_inputs=2, origin=o
        )

    def join(self, branches: list[Type], e: Expr) -> Type:
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

    def pattern(self, p: Pattern, t: Type, m: Match) -> None:
        s = self.s
        o = Origin("unify", "match pattern", m.span)
        match p:
            case PatternVar():
                s.unifier.unify(self.ty(p.var), t, o)
            case PatternTuple():
                holes = [s.hole() for _ in p.patterns]
                s.unifier.unify(t, TupleType(tuple(holes)), o)
                for q, h in zip(p.patterns, holes):
                    self.pattern(q, h, m)
            case PatternConstructor():
                c = p.constructor
                td = self.mod.constructor_data(c) if self.mod is not None else None
                tps = td.type_params if td is not None else ()
                sub: dict[TypeVar, Type] = {tp: s.hole() for tp in tps}
                s.unifier.unify(t, TypeCall(c.belong_to, tuple(sub[tp] for tp in tps)), o)
                if len(p.patterns) != len(c.inputs):
                    self.error(
                        ARITY_MISMATCH,
                        f"pattern {c.name} has {len(p.patterns)} fields, constructor takes {len(c.inputs)}",
                        m.span,
                    )
                    return
                for q, it in zip(p.patterns, c.inputs):
                    self.pattern(q, subst_typevars(it, sub), m)
            case _:
                pass

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
                    for sym in _syms_of(p):
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
                self.error(IMPURE_CALL, f"impure {_describe_call(c)} inside a function declared pure", c.span)
        pure = f.pure if f.pure is not None else (force or not frame.impure_calls)
        self.fn_pure[id(f)] = pure
        dim_params = tuple(TypeVar(sym.name, "dim") for sym in sorted(owned, key=lambda x: x._key))
        ft = FuncType(
            tuple(self.ty(p) for p in f.params), ret, (*f.type_params, *dim_params), (), pure
        )
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
            sym = _unbacked_sym(f"u{k}")
            self.note_syms(sym, e.span)
        self.unbacked.append(UnbackedSize(sym, _SIZE_WHAT.get(c.relation, c.name), c.name, e.span))
        return e.attrs if sym is given else Attrs({**dict(e.attrs), "size": sym})

    def call(self, e: Call) -> Type:
        s = self.s
        c = e.callee
        argtypes = [self.ty(a) for a in e.args]
        if isinstance(c, Op):
            return self.op_call(e, c, argtypes)
        origin = Origin("relation", _label(e), e.span, expr=e)
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
                s.add_relation(
                    "call_generalized", [scheme, *argtypes, ret], None, len(argtypes) + 1, origin
                )
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
                f"{_label(e)} takes {len(ft.params)} arguments, got {len(argtypes)}",
                e.span,
            )
            return ft.ret
        for i, (p, a) in enumerate(zip(ft.params, argtypes)):
            po = Origin("unify", f"argument {i} of {_label(e)}", e.span)
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
                    f"argument {i} of {_label(e)} is an impure function where a pure one is expected",
                    e.args[i].span or e.span,
                )
        for r in ft.relations:
            s.add_relation(r.name, list(r.args), r.attrs, origin=origin)
        impure = not ft.pure or (isinstance(c, GlobalVar) and c.name in self.global_impure)
        if impure and not e.pure_override:
            self.note_impure(e, frame)
        return ft.ret

    def note_impure(self, e: Call, frame: _FnFrame) -> None:
        if e.pure_override:
            return
        self.noted.add(id(e))
        frame.impure_calls.append(e)
        if frame.dataflow_depth > 0:
            force = frame.fn is not None and bool(frame.fn.attrs.get("force_pure", False))
            if not force:
                self.error(IMPURE_CALL, f"impure {_describe_call(e)} inside a dataflow block", e.span)

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
                what = _describe_call(e)
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


def infer(program: Expr | Module, strict: bool = False, timeout_ms: int = 2000) -> InferenceResult:
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


def _infer(program: Expr | Module, strict: bool, timeout_ms: int) -> InferenceResult:
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
    elif isinstance(program, Expr):
        gen = _Gen(solver, None)
        gen.open_inputs = not isinstance(program, Function)
        gen.gen(program)
    else:
        raise SymshapeError(
            INVALID_ARGUMENT, f"infer takes an expression or a Module, got {type(program).__name__}"
        )
    sol = solver.solve()
    if gen.check_purity():
        sol = Solution(solver)
    return InferenceResult(program, gen, sol)
