"""What :func:`symshape.infer` returns: every sub-expression's type, the status, the diagnostics,
and the report.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from symshape.encoding.conds import cond_dims
from symshape.encoding.dims import Dim
from symshape.encoding.types import (
    FuncType,
    IncompleteType,
    TensorType,
    TupleType,
    Type,
)
from symshape.errors import (
    CONSTRAINT_VIOLATED,
    INCONCLUSIVE,
    INVALID_ARGUMENT,
    UNDEFINED_VAR,
    UNPROVEN_GUARD,
    UNRESOLVED,
    SymshapeError,
)
from symshape.ir.expr import (
    Call,
    GlobalVar,
    Var,
)
from symshape.ir.program_rels import has_holes
from symshape.ir.ranges import Ranges, index_checks
from symshape.ir.validity import GuardInfo, Validity
from symshape.relations.sizes import run_time_notes
from symshape.solver.diagnostics import Diagnostic, Guard, numbered
from symshape.solver.graph import hole_node, rel_node
from symshape.solver.outcome import Outcome, Solution, judge
from symshape.views import View, show

if TYPE_CHECKING:
    from symshape.ir.infer import UnbackedSize, _Gen
    from symshape.solver.instance import RelationInstance

__all__ = ["InferenceResult"]


class InferenceResult(Outcome):
    """Types of every sub-expression, the status, errors and guards."""

    def __init__(self, program: Any, gen: _Gen, solution: Solution) -> None:
        self.program = program
        self.solution = solution
        self._gen = gen
        self.errors: list[Diagnostic] = list(solution.errors)
        self.guards: list[Guard] = list(solution.guards)
        # the guards as the relations stated them, in program order, before simplification
        self.stated_guards: list[Guard] = list(solution.stated_guards)
        self.warnings: list[Diagnostic] = list(solution.warnings)
        self.unresolved: list[Diagnostic] = list(solution.unresolved)
        self.inconclusive: list[Diagnostic] = list(solution.inconclusive)
        if gen.sym_clash:
            # two symbols of one name are an error already; guards over them read `k == k`
            self.guards = [
                g for g in self.guards if not ({str(x) for x in _cond_symbols(g.cond)} & gen.sym_clash)
            ]
            self.stated_guards = [
                g for g in self.stated_guards if not ({str(x) for x in _cond_symbols(g.cond)} & gen.sym_clash)
            ]
            self.warnings = [
                d for d in self.warnings if any(d.origin is g.origin for g in self.guards)
            ]
        if gen.unbound_holes:
            # an unbound variable is an error already: what depends on it is not "unresolved"
            down = solution.solver.graph.downstream([hole_node(h) for h in gen.unbound_holes])
            self.unresolved = [
                d
                for d in self.unresolved
                if not (
                    d.origin is not None
                    and isinstance(d.origin.payload, int)
                    and rel_node(d.origin.payload) in down
                )
            ]
        if not self.errors:
            named = {d.origin.span for d in self.unresolved if d.origin is not None}
            u = solution.solver.unifier
            parent, resolved = u.parent, u.resolved
            types = gen.types if not gen.unreferenced else {}  # else gen.ty notes each read
            binders = gen.binders
            # (the types looked up in one pass in C: most are tensor types, a model's weights)
            for v, t in zip(binders, list(map(types.get, map(id, binders)))):
                if type(t) is TensorType:
                    continue
                if not t:  # (None, or an empty tuple type: what ``or`` asked ``gen.ty`` for)
                    t = gen.ty(v)
                if type(t) is IncompleteType:  # the class's type (Unifier.shallow, inlined)
                    r = u.find(t) if t in parent else t
                    t = resolved.get(r, r)
                if type(t) is TensorType:
                    continue  # resolved further, still a tensor type: no hole in it
                if type(t) is TupleType and all([type(f) is TensorType for f in t.fields]):
                    continue  # likewise each field (a batch norm's result, a split's)
                t = solution.resolve(t)
                if type(t) is not TensorType and has_holes(t) and v.span not in named:
                    self.unresolved.append(
                        Diagnostic(
                            UNRESOLVED.code,
                            f"cannot infer a type for `{v.name}` (`{t}`); add an annotation",
                            v.span,
                        )
                    )
        self.status = judge(self.errors, self.inconclusive, self.unresolved, self.guards)
        if not self.errors:
            self._check_indices()

    def _check_indices(self) -> None:
        """The index bounds of indexing calls whose indices have a known range (see
        :mod:`symshape.ir.ranges`), classified by the solver's session: a guard, an error where
        they can never hold, inconclusive where Z3 cannot tell."""
        checks = index_checks(self)
        if not checks:
            return
        solver = self.solution.solver
        infos: dict[int, GuardInfo] = dict(self.__dict__.get("guard_infos") or {})
        for chk in checks:
            v = solver.session.check(chk.cond)
            if v.kind == "proved":
                continue
            span = chk.origin.span
            if v.kind == "guard" and not solver.strict:
                solver.session.assume(chk.cond, chk.origin)
                g = Guard(chk.cond, chk.origin)
                self.guards.append(g)
                self.stated_guards.append(g)
                infos[id(g)] = GuardInfo(f"{chk.message} needs `{chk.text}`", chk.notes)
            elif v.kind in ("guard", "refuted"):
                code = UNPROVEN_GUARD if v.kind == "guard" else CONSTRAINT_VIOLATED
                why = "does not follow from the declarations" if v.kind == "guard" else "never holds"
                msg = f"{chk.message} needs `{chk.text}`, which {why}"
                self.errors.append(Diagnostic(code.code, msg, span, chk.notes, origin=chk.origin))
            else:
                msg = f"{chk.message}: Z3 could not decide `{chk.cond}` ({v.reason or 'unknown'})"
                self.inconclusive.append(Diagnostic(INCONCLUSIVE.code, msg, span, origin=chk.origin))
        self.__dict__["guard_infos"] = infos
        self.status = judge(self.errors, self.inconclusive, self.unresolved, self.guards)

    @property
    def z3_calls(self) -> int:
        """Z3 checks made to decide conditions."""
        return self.solution.z3_calls

    @property
    def z3_explain_calls(self) -> int:
        """Z3 checks made to explain the errors (find and minimize their cores)."""
        return self.solution.z3_explain_calls

    @property
    def unbacked(self) -> list[UnbackedSize]:
        """The data-dependent sizes (``nonzero``, ``unique``, ``boolean_mask``), in program
        order: each one's symbol and where it was born."""
        return list(self._gen.unbacked)

    @property
    def bound_vars(self) -> list[Var]:
        """The variables the program binds (parameters, ``let`` and pattern binders), in program
        order."""
        return list(self._gen.binders)

    @property
    def calls(self) -> list[Call]:
        """The calls of the program (of operators, functions and constructors), in program
        order."""
        return list(self._gen.calls)

    def relation_of(self, call: Call) -> RelationInstance | None:
        """The relation instance an operator call became (None for a call of anything else)."""
        out = self._gen.types.get(id(call))
        if isinstance(out, IncompleteType):
            return self.solution.solver.producer_of(out)
        return None

    def value_of(self, e: Any) -> tuple[Dim | None, ...] | Dim | None:
        """The known value of an expression of a small int tensor: a tuple of dimensions (None
        for an unknown entry) for a 1-d tensor, one dimension for a 0-d tensor, None when
        unknown (see :mod:`symshape.encoding.values`).

        >>> import symshape as ss
        >>> n = ss.dim("n")
        >>> x = ss.var("x", ss.Tensor((n, 64), "float32"))
        >>> sh = ss.ops.shape_of(x)
        >>> ss.infer(ss.Function([x], sh)).value_of(sh)
        (Dim(n), Dim(64))
        """
        t = self.type_of(e)
        return t.value if isinstance(t, TensorType) else None

    # -- the sizes the program accepts (see symshape.ir.validity) ----------------------------------
    def _validity(self) -> Validity:
        v: Validity | None = self.__dict__.get("_validity_cache")
        if v is None or v.res is not self:
            v = Validity(self, getattr(self, "guard_infos", None))
            self.__dict__["_validity_cache"] = v
        return v

    def valid_at(self, env: Mapping[Any, Any]) -> bool:
        """Whether the program runs at this assignment of its symbols (keys: symbols or their
        names; values: ints): no type error, every symbol in its declared range, every guard
        true. Decided by substituting into the guards (one compiled function for all of them);
        Z3 only for what substitution leaves open. A ``SymshapeError`` (``invalid-argument``)
        names the symbols a guard needs when the assignment does not decide it.

        >>> import symshape as ss
        >>> n = ss.dim("n")
        >>> x = ss.var("x", ss.Tensor((n, 6), "float32"))
        >>> res = ss.infer(ss.Function([x], ss.ops.reshape(x, (-1, 4))))
        >>> [k for k in range(1, 7) if res.valid_at({n: k})]
        [2, 4, 6]
        """
        return self._validity().valid_at(env)

    def why_invalid(self, env: Mapping[Any, Any]) -> str:
        """Why the program does not run at this assignment: each guard false there, explained
        like a type error with located notes (the operator that needs it, its arguments and where
        they came from); the type errors of an ``error`` result; a symbol outside its declared
        range; or the symbols the assignment lacks. For a valid point it says so."""
        return self._validity().why_invalid(env)

    def valid_when(self) -> str:
        """The condition on the symbols under which the program runs, as text: the guards
        conjoined, each one the others imply left out (``"True"`` without guards, ``"False"``
        for an ``error`` result)."""
        return self._validity().valid_when()

    def type_of(self, e: Any) -> Type:
        """The inferred type of an expression (a global function by GlobalVar or name)."""
        return self._plain_type_of(e)

    def range_of(self, e: Any) -> tuple[Dim | None, Dim | None] | None:
        """The range ``(lo, hi)`` the entries of an integer tensor expression lie in (inclusive;
        a side None when unknown), or None when nothing is known (see :mod:`symshape.ir.ranges`).
        Inferred types do not carry it (so that they compare as before); annotations may.

        >>> import symshape as ss
        >>> t = ss.dim("t")
        >>> x = ss.var("x", ss.Tensor((t,), "float32"))
        >>> pos = ss.ops.arange(t)
        >>> ss.infer(ss.Function([x], ss.ops.add(x, ss.ops.cast(pos, "float32")))).range_of(pos)
        (Dim(0), Dim(t - 1))
        """
        f = self._ranges().of(e)
        return None if f is None else f.range

    def _ranges(self) -> Ranges:
        r: Ranges | None = self.__dict__.get("_ranges_cache")
        if r is None:
            r = Ranges(self)
            self.__dict__["_ranges_cache"] = r
        return r

    def _plain_type_of(self, e: Any) -> Type:
        """The inferred type of an expression as the solver resolved it."""
        if isinstance(e, str) or isinstance(e, GlobalVar):
            name = e if isinstance(e, str) else e.name
            t = self._gen.global_types.get(name)
            if t is None:
                raise SymshapeError(UNDEFINED_VAR, f"no global function {name!r}")
            mod = self._gen.mod
            if mod is not None and name in mod:
                f = mod[name]
                ft = self._gen.fn_types.get(id(f))
                if ft is not None and name not in self._gen.global_seeded:
                    t = ft
                scheme = self._gen.generalized.get(name)
                if scheme is not None:
                    # the generalized type, with the purity found for the function
                    rt, rs = self.solution.resolve(t), self.solution.resolve(scheme)
                    assert isinstance(rs, FuncType)
                    pure = rt.pure if isinstance(rt, FuncType) else rs.pure
                    return FuncType(rs.params, rs.ret, rs.type_params, rs.relations, pure)
            return self.solution.resolve(t)
        hit = self._gen.types.get(id(e))
        if hit is None:
            raise SymshapeError(INVALID_ARGUMENT, "that expression is not part of the inferred program")
        return self.solution.resolve(hit)

    def with_diagnostics(self, extra: Sequence[Diagnostic]) -> InferenceResult:
        """This result with a front-end's own diagnostics (an importer's ``unsupported-op``
        errors) added before inference's: each goes to ``errors``, ``inconclusive`` or
        ``unresolved`` by its code, and ``status``, ``ok`` and ``report()`` count it. The types
        and everything else are shared with this result, which is left as it was.

        >>> import symshape as ss
        >>> x = ss.var("x", ss.Tensor((2,), "float32"))
        >>> res = ss.infer(ss.Function([x], ss.ops.relu(x)))
        >>> bad = ss.Diagnostic("unsupported-op", "node 'a' (Foo) is not supported")
        >>> res2 = res.with_diagnostics([bad])
        >>> res.status, res2.status, res2.errors[0].code
        ('ok', 'error', 'unsupported-op')
        """
        if not isinstance(extra, (list, tuple)) or not all(isinstance(d, Diagnostic) for d in extra):
            raise SymshapeError(
                INVALID_ARGUMENT, f"with_diagnostics takes a list of Diagnostics, got {extra!r}"
            )
        out = copy.copy(self)
        by_code = {UNRESOLVED.code: "unresolved", INCONCLUSIVE.code: "inconclusive"}
        for name in ("errors", "inconclusive", "unresolved"):
            mine = [d for d in extra if by_code.get(d.code, "errors") == name]
            setattr(out, name, [*mine, *getattr(self, name)])
        out.status = judge(out.errors, out.inconclusive, out.unresolved, out.guards)
        return out

    @numbered
    def report(self, program: bool = False) -> str:
        """A human-readable report: status, errors with notes, guards, unresolved expressions;
        with ``program=True`` the program after them, each inferred type as a comment (a
        sub-expression used twice is printed once, as ``%0 = ...;``: see
        :mod:`symshape.ir.printer`)."""
        lines = [f"status: {self.status}"]
        for d in self.errors:
            lines.append(d.render())
        for d in self.inconclusive:
            lines.append(d.render())
        for d in self.unresolved:
            lines.append(d.render())
        for d in self.warnings:
            lines.append(d.render())
        if self.guards:
            lines.append("guards:")
            calls = None
            for g in self.guards:
                lines.append(f"  {g.describe()}")
                if "?" in str(g):  # (a given `?`: the size of which call's result it is)
                    calls = self._call_types() if calls is None else calls
                    lines.extend(f"    {n}" for n in run_time_notes(g.cond, calls))
        if self.unbacked:
            lines.append("data-dependent sizes:")
            for u in self.unbacked:
                lines.append(f"  {u}")
        if program:
            from symshape.ir.printer import expr_str

            lines.append(expr_str(self.program, self._safe_type))
        return "\n".join(lines)

    def _call_types(self) -> list[tuple[str, Sequence[Type], Sequence[Type]]]:
        """Each operator call's description, input and output types, in program order."""
        out: list[tuple[str, Sequence[Type], Sequence[Type]]] = []
        for c in self.calls:
            rel = self.relation_of(c)
            if rel is not None:
                ts = [self.solution.resolve(t) for t in rel.args]
                out.append((rel.origin.describe(), ts[: rel.num_inputs], ts[rel.num_inputs :]))
        return out

    def _safe_type(self, e: Any) -> Type | None:
        hit = self._gen.types.get(id(e))
        return self.solution.resolve(hit) if hit is not None else None

    def __repr__(self) -> str:
        return (
            f"InferenceResult(status={self.status!r}, errors={len(self.errors)}, "
            f"guards={len(self.guards)})"
        )

    # -- the dependency graph (drawn by symshape.display) -----------------------------------------
    def graph(self) -> Any:
        """The dependency graph as a networkx ``DiGraph`` with readable node names and attributes
        (see :func:`symshape.display.result_graph`)."""
        return show(View.GRAPH, self)

    def draw(self, path: Any = None, **kwargs: Any) -> Any:
        """Draw the dependency graph with matplotlib (see :func:`symshape.display.draw`)."""
        return show(View.DRAW, self, path, **kwargs)

    def to_dot(self) -> str:
        """Graphviz text of the dependency graph (see :func:`symshape.display.to_dot`)."""
        return str(show(View.DOT, self))


def _cond_symbols(c: Any) -> set[Dim]:
    return {x for d in cond_dims(c) for x in d.symbols}
