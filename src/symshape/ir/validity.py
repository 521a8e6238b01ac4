"""The sizes a program accepts: ``valid_at``, ``why_invalid`` and ``valid_when`` of an
:class:`~symshape.ir.result.InferenceResult`.

A program is **valid at** an assignment of its symbols when inference found no error, every symbol
lies in its declared range (``n >= 1`` unless declared otherwise), and every guard holds there.

* **Deciding a point.** The guards are conjoined and compiled once into one Python function of the
  symbols' values (the canonical forms print in Python syntax, with Python's ``//`` and ``%``), so
  a point costs one call. Where that does not decide it (a guard over a solver unknown, a symbol
  without a value, an arithmetic error) each guard is substituted into
  (:func:`~symshape.encoding.conds.cond_value`); only what substitution leaves open goes to Z3,
  with the facts the solver assumed (its non-guard definitions) and a timeout.
* **Explaining a point.** Each guard that is false there is rendered like a type error: the
  operator that needs it at its span, its arguments' types and where they came from as notes
  (plus the notes the guard's producer attached, e.g. where an index range came from).
* **The condition.** ``valid_when`` conjoins the guards and drops each one the others (and the
  symbols' ranges) imply, checked by Z3 with a timeout; a strict comparison with a constant prints
  as the non-strict one a person writes (``t <= 256``, not ``t < 257``).

>>> import symshape as ss
>>> n = ss.dim("n")
>>> x = ss.var("x", ss.Tensor((n,), "float32"))
>>> res = ss.infer(ss.Function([x], ss.ops.add(x, ss.Constant(shape=(5,)))))
>>> res.valid_at({n: 5}), res.valid_at({n: 1}), res.valid_at({n: 4})
(True, True, False)
>>> res.valid_when()
'n == 1 or n == 5'
"""

from __future__ import annotations

import keyword
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import z3

from symshape.encoding import conds as C  # noqa: N812
from symshape.encoding.dims import AnyDim, Atom, Dim, DimLike, DimVar, Sym
from symshape.encoding.z3 import Z3Encoder
from symshape.errors import ERROR_CODES, INVALID_ARGUMENT, ErrorCategory, SymshapeError, expect_mapping
from symshape.ir.cond_reading import (
    absorb_disjuncts,
    cond_text,
    expr_negated,
    interval_form,
    sym_atoms,
    z3_check,
)
from symshape.ir.nodes import Call, Constant, Var
from symshape.solver.diagnostics import Diagnostic, Guard, Note, numbered

if TYPE_CHECKING:
    from symshape.ir.result import InferenceResult
    from symshape.ir.unbacked import UnbackedSize

__all__ = ["Validity", "GuardInfo", "cond_text", "expr_negated", "VALIDITY_TIMEOUT_MS"]

VALIDITY_TIMEOUT_MS = 2000
"""The Z3 timeout of one validity question (a point substitution leaves open, an implied guard)."""


def _truth_at(g: Guard, at: Mapping[Dim | Atom | str, DimLike]) -> bool | None:
    """Whether guard ``g`` holds at the (partial) assignment ``at``: None when it does not decide;
    a division by zero there is False (the operator would fail)."""
    try:
        return C.cond_value(g.cond, at)
    except (ZeroDivisionError, ArithmeticError):
        return False


Env = Mapping[Any, Any]


@dataclass(frozen=True)
class GuardInfo:
    """What a guard's producer adds to its explanation: a message that says what goes wrong
    (``take reads entry t - 1 ...``) and notes (where an index range came from)."""

    message: str = ""
    notes: tuple[Note, ...] = ()


def _compile(guards: Sequence[Guard]) -> tuple[Callable[[dict[str, int]], bool] | None, tuple[str, ...]]:
    """One function of the symbols' values (by name) that is the conjunction of the guards, or
    None when some guard has no Python form (a solver unknown, a name that is not an
    identifier); and the names it reads."""
    names: set[str] = set()
    parts: list[str] = []
    for g in guards:
        for d in C.cond_dims(g.cond):
            for a in d.atoms():
                if isinstance(a, Sym):
                    if (
                        not a.name.isidentifier()
                        or keyword.iskeyword(a.name)
                        or a.name.startswith("_")
                        or a.name in ("max", "min", "bool")
                    ):
                        return None, ()
                    names.add(a.name)
                elif isinstance(a, (AnyDim, DimVar)):
                    return None, ()
        parts.append(f"({g.cond})")
    order = tuple(sorted(names))
    body = " and ".join(parts) if parts else "True"
    unpack = "".join(f"    {n} = _e[{n!r}]\n" for n in order)
    src = f"def _valid(_e):\n{unpack}    return bool({body})\n"
    scope: dict[str, Any] = {"max": max, "min": min, "bool": bool}
    try:
        exec(compile(src, "<symshape guards>", "exec"), scope)  # our own canonical text
    except SyntaxError:
        return None, ()
    fn: Callable[[dict[str, int]], bool] = scope["_valid"]
    return fn, order


class Validity:
    """The validity questions of one inference result (built once, on first use)."""

    def __init__(self, res: InferenceResult, infos: Mapping[int, GuardInfo] | None = None) -> None:
        self.res = res
        self.guards: list[Guard] = list(res.guards)
        self.infos: Mapping[int, GuardInfo] = infos or {}
        syms: dict[str, Sym] = dict(res._gen.sym_names)
        for g in self.guards:
            for s in sym_atoms(g.cond):
                syms.setdefault(s.name, s)
        self.symbols: dict[str, Sym] = {k: syms[k] for k in sorted(syms)}
        # what every run has of its data-dependent sizes (``u0 <= b*t``: at most the mask's
        # elements), from the relations that made them: beyond it a point is no run at all
        unbacked = {u.symbol.atom: u for u in res.unbacked}
        self.limits: list[tuple[C.Cond, UnbackedSize]] = []
        for f in res.solution.solver.session.facts if unbacked else ():
            born = [unbacked[a] for d in C.cond_dims(f.cond) for a in d.atoms() if a in unbacked]
            if born:
                self.limits.append((f.cond, born[0]))
        self._fn, self._names = _compile(self.guards)
        self._when: str | None = None

    # -- assignments -----------------------------------------------------------------------------
    def _by_name(self, env: Env) -> dict[str, int]:
        """The assignment ``env`` (symbols or their names to ints) by symbol name."""
        out: dict[str, int] = {}
        for k, v in expect_mapping(env, "an assignment is a mapping of symbols to ints").items():
            name = self._symbol_name(k)
            if isinstance(v, Dim) and v.constant_value is not None:
                v = v.constant_value
            try:  # an int, or an integer that says so (numpy's, torch's): ``operator.index``
                if isinstance(v, bool) or type(v).__name__ in ("bool", "bool_"):
                    raise TypeError
                out[name] = operator.index(v)
            except TypeError:
                msg = f"the value of {name} must be an int, got {v!r}"
                raise SymshapeError(INVALID_ARGUMENT, msg) from None
        return out

    def _symbol_name(self, k: object) -> str:
        """The name of the program's symbol that an assignment's key (a symbol or a name) means."""
        if isinstance(k, Dim):
            a = k.atom
            if not isinstance(a, Sym):
                raise SymshapeError(INVALID_ARGUMENT, f"an assignment gives values to symbols, not to {k}")
            k = a.name
        elif not isinstance(k, str):
            raise SymshapeError(INVALID_ARGUMENT, f"an assignment's keys are symbols or names, got {k!r}")
        if k not in self.symbols:
            known = ", ".join(self.symbols) or "none"
            raise SymshapeError(
                INVALID_ARGUMENT, f"no symbol of the program is named {k!r} (its symbols: {known})"
            )
        return k

    def _impossible(self, vals: Mapping[str, int]) -> list[str]:
        """The limits of data-dependent sizes that ``vals`` breaks (``u0 <= b*t`` at ``b = 1,
        t = 3, u0 = 12``): no run has those sizes."""
        at: dict[Dim | Atom | str, DimLike] = {k: v for k, v in vals.items()}
        out: list[str] = []
        for c, u in self.limits:
            try:
                if C.cond_value(c, at) is False:
                    out.append(f"no run has these sizes: `{cond_text(c)}` holds of every run ({u})")
            except (ZeroDivisionError, ArithmeticError):
                pass
        return out

    def _out_of_range(self, vals: Mapping[str, int]) -> list[str]:
        bad: list[str] = self._impossible(vals)
        for name, v in vals.items():
            s = self.symbols.get(name)
            if s is None:
                continue
            if v < s.min or (s.max is not None and v > s.max):
                rng = f"{s.name} >= {s.min}" if s.max is None else f"{s.min} <= {s.name} <= {s.max}"
                bad.append(f"{name} = {v} is outside the declared range of {name} ({rng})")
        return bad

    # -- valid_at --------------------------------------------------------------------------------
    def valid_at(self, env: Env) -> bool:
        """See :meth:`InferenceResult.valid_at <symshape.ir.result.InferenceResult.valid_at>`."""
        vals = self._by_name(env)
        if self.res.status == "error":
            return False
        symbols = self.symbols
        for name, v in vals.items():
            s = symbols.get(name)
            if s is not None and (v < s.min or (s.max is not None and v > s.max)):
                return False
        if self.limits and self._impossible(vals):
            return False
        fn = self._fn
        if fn is not None:
            try:
                return fn(vals)
            except (KeyError, ZeroDivisionError, ArithmeticError, TypeError):
                pass
        verdict, _, open_ = self._decide(vals)
        if verdict is None:
            raise SymshapeError(INVALID_ARGUMENT, self._undecided_text(open_, vals))
        return verdict

    def _decide(self, vals: dict[str, int]) -> tuple[bool | None, list[Guard], list[Guard]]:
        """The verdict at ``vals`` (None: undecided), the guards false there, the guards left
        open by substitution and Z3."""
        false: list[Guard] = []
        open_: list[Guard] = []
        at: dict[Dim | Atom | str, DimLike] = {k: v for k, v in vals.items()}
        for g in self.guards:
            r = _truth_at(g, at)
            if r is False:
                false.append(g)
            elif r is None:
                open_.append(g)
        if false:
            return False, false, open_
        if not open_:
            return True, [], []
        z = self._z3_decide([g.cond for g in open_], vals)
        if z is True:
            return True, [], []
        if z is False:
            return False, list(open_), []
        return None, [], open_

    def _z3_decide(self, conds: Sequence[C.Cond], vals: Mapping[str, int]) -> bool | None:
        """Whether ``conds`` hold at ``vals`` for every value of what is left open (True), for
        none (False), or neither / unknown (None); under the solver's non-guard facts."""
        enc = Z3Encoder()
        s = z3.Solver()
        s.set("timeout", VALIDITY_TIMEOUT_MS)
        # (a guard's condition may also be a fact of the session -- stated once, assumed after --
        # and no guard may help prove itself: every guard of the result is left out)
        guard_conds = {g.cond for g in self.res.solution.solver.guards}
        guard_conds.update(g.cond for g in self.guards)
        guard_conds.update(g.cond for g in self.res.stated_guards)
        for f in self.res.solution.solver.session.facts:
            if f.cond not in guard_conds:
                s.add(enc.cond(f.cond))
        for name, v in vals.items():
            sym = self.symbols.get(name)
            if sym is not None:
                s.add(enc.atom(sym) == v)
        goal = enc.cond(C.all_of(*conds))
        s.add(*enc.take_axioms())
        s.push()
        s.add(z3.Not(goal))
        r1 = s.check()
        s.pop()
        if r1 == z3.unsat:
            return True
        s.add(goal)
        r2 = s.check()
        if r2 == z3.unsat:
            return False
        return None

    def _undecided_text(self, open_: Sequence[Guard], vals: Mapping[str, int]) -> str:
        missing: set[str] = set()
        unknown = False
        for g in open_:
            for d in C.cond_dims(g.cond):
                for a in d.atoms():
                    if isinstance(a, Sym) and a.name not in vals:
                        missing.add(a.name)
                    elif isinstance(a, (AnyDim, DimVar)):
                        unknown = True
        conds = ", ".join(f"`{cond_text(g.cond)}`" for g in open_)
        if missing:
            names = ", ".join(sorted(missing))
            return f"the assignment does not decide {conds}: give a value for {names}"
        tail = " (it depends on sizes the program computes)" if unknown else ""
        return f"the assignment does not decide {conds}{tail}"

    # -- why_invalid -----------------------------------------------------------------------------
    @numbered
    def why_invalid(self, env: Env) -> str:
        """See :meth:`InferenceResult.why_invalid <symshape.ir.result.InferenceResult.why_invalid>`."""
        vals = self._by_name(env)
        at = ", ".join(f"{k} = {v}" for k, v in sorted(vals.items())) or "no values"
        res = self.res
        if res.status == "error":
            codes = [ERROR_CODES.get(d.code) for d in res.errors]
            if any(c is not None and c.category is ErrorCategory.IMPORT for c in codes):
                # not a verdict on the sizes: symshape could not check the program at all
                head = (
                    f"invalid at {at} as far as symshape can tell: it could not import the whole "
                    "program (see the errors), so it accepts no size; the program itself may run"
                )
            else:
                head = f"invalid at {at}: the program has type errors, so it is invalid at every size"
            lines = [head]
            lines.extend(d.render() for d in res.errors)
            return "\n".join(lines)
        bad = self._out_of_range(vals)
        if bad:
            return "\n".join([f"invalid at {at}:", *(f"  {b}" for b in bad)])
        verdict, false, open_ = self._decide(vals)
        if verdict is None:
            return f"undecided at {at}: {self._undecided_text(open_, vals)}"
        if verdict:
            head = f"valid at {at}: every guard holds"
            if res.status in ("unresolved", "inconclusive"):
                head += f" (of those known: the result is {res.status})"
            return head
        # the first condition a run meets false (as stated, in program order), then the
        # simplified guards false here that other operators state
        first = self._first_false_stated(vals)
        shown = [first] if first is not None else []
        shown += [g for g in false if first is None or g.origin is not first.origin]
        lines = [f"invalid at {at}:"]
        lines.extend(self._explain(g, vals).render() for g in shown)
        return "\n".join(lines)

    def _first_false_stated(self, vals: Mapping[str, int]) -> Guard | None:
        at: dict[Dim | Atom | str, DimLike] = {k: v for k, v in vals.items()}
        for g in self.res.stated_guards:
            if _truth_at(g, at) is False:
                return g
        return None

    def _explain(self, g: Guard, vals: Mapping[str, int]) -> Diagnostic:
        """A guard false at ``vals`` as a diagnostic: the operator that needs it, its arguments'
        types and where they came from, and its producer's notes."""
        o = g.origin
        info = self.infos.get(id(g), GuardInfo())
        label = o.label if o is not None else "the program"
        sub = g.cond
        try:
            sub_vals = ", ".join(
                f"{s.name} = {vals[s.name]}" for s in sym_atoms(g.cond) if s.name in vals
            )
        except KeyError:  # pragma: no cover - guarded by the comprehension
            sub_vals = ""
        what = info.message or f"{label} needs `{cond_text(interval_form(sub))}`"
        msg = f"{what}, which is false at {sub_vals}" if sub_vals else f"{what}, which is false"
        notes: list[Note] = []
        call = self._call_of(g)
        if call is not None:
            for i, a in enumerate(call.args):
                n = self._arg_note(a, i)
                if n is not None:
                    notes.append(n)
        notes.extend(info.notes)
        return Diagnostic(g.code, msg, o.span if o is not None else None, tuple(notes), origin=o)

    def _call_of(self, g: Guard) -> Call | None:
        o = g.origin
        if o is None:
            return None
        if isinstance(o.expr, Call):
            return o.expr
        for c in self.res.calls:
            r = self.res.relation_of(c)
            if r is not None and r.origin is o:
                return c
        return None

    def _arg_note(self, a: Any, i: int) -> Note | None:
        try:
            t = self.res.type_of(a)
        except SymshapeError:
            return None
        if isinstance(a, Var):
            bound = self.res._ranges().lets.get(id(a))
            if isinstance(bound, Call):
                name = getattr(bound.callee, "name", type(bound.callee).__name__)
                return Note(f"argument {i + 1}: `{a.name}` is `{t}`, from `{name}`", bound.span)
            return Note(f"argument {i + 1}: `{a.name}` is `{t}`", a.span)
        if isinstance(a, Call):
            name = getattr(a.callee, "name", type(a.callee).__name__)
            return Note(f"argument {i + 1}: `{name}` gives `{t}`", a.span)
        if isinstance(a, Constant):
            return Note(f"argument {i + 1}: a constant `{t}`", a.span)
        return Note(f"argument {i + 1} is `{t}`", getattr(a, "span", None))

    # -- valid_when ------------------------------------------------------------------------------
    @numbered
    def valid_when(self) -> str:
        """See :meth:`InferenceResult.valid_when <symshape.ir.result.InferenceResult.valid_when>`."""
        if self._when is None:
            self._when = self._simplified()
        return self._when

    def _simplified(self) -> str:
        if self.res.status == "error":
            return "False"
        conds: list[C.Cond] = []
        for g in self.guards:
            c = interval_form(g.cond)
            if c is not C.TRUE and c not in conds:
                conds.append(c)
        kept = self._drop_implied(self._prune_disjuncts(self._drop_implied(conds)))
        kept = [absorb_disjuncts(c) for c in kept]
        if not kept:
            return "True"
        if len(kept) == 1:
            return cond_text(kept[0])
        return " and ".join(
            f"({cond_text(c)})" if isinstance(c, C.BoolOp) and c.op == "or" else cond_text(c) for c in kept
        )

    def _prune_disjuncts(self, conds: list[C.Cond]) -> list[C.Cond]:
        """Each ``or`` guard without the alternatives the other guards rule out: under
        ``h >= 8 and w >= 8``, ``(h//8)*(w//8) == 0 or (h//8)*(w//8) == 16`` is the second
        alternative alone. Z3 under a resource limit: what it cannot rule out stays."""
        if len(conds) < 2 or not any(isinstance(c, C.BoolOp) and c.op == "or" for c in conds):
            return conds
        enc = Z3Encoder()
        terms = [enc.cond(c) for c in conds]
        out = list(conds)
        for i, c in enumerate(conds):
            if not (isinstance(c, C.BoolOp) and c.op == "or"):
                continue
            alts = [enc.cond(a) for a in c.args]
            axioms = enc.take_axioms()
            others = [terms[j] for j in range(len(conds)) if j != i]
            keep = [a for a, t in zip(c.args, alts) if z3_check([*axioms, *others, t]) != z3.unsat]
            if keep and len(keep) < len(c.args):
                out[i] = C.any_of(*keep)
        return out

    def _drop_implied(self, conds: list[C.Cond]) -> list[C.Cond]:
        """``conds`` without each one that the others (kept so far) imply; the last first, so the
        earliest stated of equivalent guards stays. Z3 with a timeout: unknown keeps a guard."""
        if len(conds) < 2:
            return conds
        enc = Z3Encoder()
        terms = [enc.cond(c) for c in conds]
        axioms = enc.take_axioms()
        kept = list(range(len(conds)))
        for i in reversed(range(len(conds))):
            others = [terms[j] for j in kept if j != i]
            if z3_check([*axioms, *others, z3.Not(terms[i])]) == z3.unsat:
                kept.remove(i)
        return [conds[i] for i in kept]
