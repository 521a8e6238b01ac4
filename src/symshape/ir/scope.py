"""The constraint generator's state: the type of each expression generated so far, and the scope
of variables and symbols.

Variables are told apart by identity. A variable is in scope between the binder that introduces it
(a parameter, a let, a match clause, a dataflow binding) and the end of that binder; a read outside
is an ``undefined-var`` error, a second binding a ``duplicate-binding`` error. Symbols are told
apart by name within one program: two different symbols with one name are a ``duplicate-binding``
error. :class:`~symshape.ir.calls.CallGen` and :class:`~symshape.ir.infer._Gen` build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from symshape.encoding.dims import Dim, Sym
from symshape.encoding.types import Attrs, FuncType, IncompleteType, TensorType, Type, iter_dims
from symshape.errors import DUPLICATE_BINDING, INVALID_ARGUMENT, UNDEFINED_VAR, SymshapeError
from symshape.ir.module import Module
from symshape.ir.nodes import Call, Expr, Function, Var
from symshape.ir.unbacked import UnbackedSize
from symshape.solver.diagnostics import Origin
from symshape.solver.origins import annotation_origin
from symshape.solver.solve import TypeSolver

__all__ = ["FnFrame", "GenScope", "first_item", "sym_range", "syms_of"]


@dataclass
class FnFrame:
    fn: Function | None
    impure_calls: list[Call] = field(default_factory=list)
    dataflow_depth: int = 0


def syms_of(t: Type) -> list[Sym]:
    out: list[Sym] = []
    for d in iter_dims(t):
        for a in d.atoms():
            if isinstance(a, Sym) and a not in out:
                out.append(a)
    return out


# the name of each (name, value) binding
first_item = itemgetter(0)


def sym_range(s: Sym) -> str:
    """``k >= 1``, ``0 <= k <= 8``: a symbol with its declared range."""
    if s.max is None:
        return f"{s.name} >= {s.min}"
    return f"{s.min} <= {s.name} <= {s.max}"


#: the types of attribute values that hold no dimension
_PLAIN: frozenset[type] = frozenset({int, float, str, bool, type(None)})


class GenScope:
    """Types of the expressions generated so far; scopes of variables and symbols."""

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
        self.frames: list[FnFrame] = [FnFrame(None)]
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
        # operator -> its relation (see CallGen.op_rdef)
        self.rdefs: dict[Any, Any] = {}
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
        self.df_skip = 0  # (the leading bindings a dataflow block's entry did, see enter)
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
        types = self.types
        iv = id(v)
        hit = types.get(iv)
        if hit is not None:
            return hit
        ann = v.type_annotation
        if ann is not None:
            span = v.span
            # (the label "`x` is annotated `...`" is printed when a report reads it)
            if type(ann) is TensorType and type(shape := ann.shape) is tuple:
                if ann._cshape:  # constants: no symbol, nothing for admit to check
                    t = self.s.admit_weight(ann, v.name, span, v)
                else:
                    for d in shape:  # (scan_type's walk of a tensor type, inline)
                        terms = d.terms
                        if terms and (len(terms) > 1 or terms[0][0]):
                            self.note_syms(d, span)
                    t = self.s.admit(ann, annotation_origin(v.name, ann, span, v))
            else:
                self.scan_type(ann, span)
                t = self.s.admit(ann, annotation_origin(v.name, ann, span, v))
        else:
            t = self.s.hole()
            self.unreferenced[iv] = t
        self.binders.append(v)
        types[iv] = t  # (``self.set(v, t)``)
        self.typed.append(v)
        return t

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
        if k in self.var_scope:
            return True
        for b in self.df_active:  # (a loop: cheaper than ``any`` over a generator)
            if k in b:
                return True
        return False

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
        if any(isinstance(x, Var) and x.name == v.name and self.var_in_scope(id(x)) for x in self.binders):
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
        if t is None:
            return
        if type(t) is TensorType:
            # (a tensor type is scanned again each time: as cheap as remembering it; one of
            # constant shape has no symbol)
            if t._cshape:
                return
            shape = t.shape
            if type(shape) is tuple:
                for d in shape:
                    terms = d.terms  # (``not d.is_constant``, inline)
                    if terms and (len(terms) > 1 or terms[0][0]):
                        self.note_syms(d, span)
            return
        if id(t) in self.scanned:
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
        stack: list[object] = []
        for _, v in attrs.items():
            tv = type(v)
            if tv in _PLAIN or (type(v) is tuple and _PLAIN.issuperset(map(type, v))):
                continue  # (no dimension in it: most attributes, ints and tuples of ints)
            stack.append(v)
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
                        f"two different symbols are named `{a.name}`: `{sym_range(prev)}` and "
                        f"`{sym_range(a)}`; one name is one symbol in a program: declare it once "
                        "(ss.dim) and use that symbol everywhere",
                        span,
                    )

    def in_scope(self, sym: Sym) -> bool:
        return any(sym in sc for sc in self.scopes)
