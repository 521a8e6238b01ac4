"""How a condition on sizes reads to a person: :func:`cond_text` (``t <= 256`` for ``t < 257``),
the interval a condition on one symbol is (``t == min(1024, t) or t == 1`` is ``t <= 1024``),
and an ``or`` without the alternatives that imply another one. What ``valid_when`` and
``why_invalid`` (:mod:`symshape.ir.validity`) print; Z3 decides, under a resource limit, and
what it cannot decide stays as stated.
"""

from __future__ import annotations

from collections.abc import Sequence

import z3

from symshape.encoding import conds as C  # noqa: N812
from symshape.encoding.dims import AnyDim, Dim, DimVar, Sym
from symshape.encoding.z3 import Z3Encoder
from symshape.solver.simplify import RLIMIT, TIMEOUT_MS

__all__ = ["cond_text", "expr_negated", "interval_form", "absorb_disjuncts", "sym_atoms", "z3_check"]


def z3_check(facts: Sequence[z3.BoolRef]) -> z3.CheckSatResult:
    """Z3's answer on ``facts`` under the simplifier's resource limit (deterministic: the same
    answer on every run, however loaded the machine), unknown when it gives up."""
    s = z3.Solver()
    s.set("rlimit", RLIMIT)
    s.set("timeout", TIMEOUT_MS)
    s.add(*facts)
    try:
        return s.check()
    except z3.Z3Exception:
        return z3.unknown

def cond_text(c: C.Cond) -> str:
    """``c`` as a person writes it: a strict comparison with a constant reads non-strict
    (``t <= 256`` for ``t < 257``, ``t >= 2`` for ``1 < t``), a negated side is turned around
    (``t <= 16`` for ``-t >= -16``) and its constant moves to the other side (``t <= 6`` for
    ``-t + 6 >= 0``); otherwise ``str(c)``. Iterative over ``and``/``or``/``not``."""
    done: list[str] = []  # the texts of the sub-conditions finished so far, in order
    stack: list[tuple[C.Cond, bool]] = [(c, False)]
    while stack:
        x, ready = stack.pop()
        subs: tuple[C.Cond, ...] = (
            x.args if isinstance(x, C.BoolOp) else (x.arg,) if isinstance(x, C.Not) else ()
        )
        if subs and not ready:
            stack.append((x, True))
            stack.extend((y, False) for y in reversed(subs))
            continue
        texts = done[len(done) - len(subs) :]
        del done[len(done) - len(subs) :]
        match x:
            case C.BoolOp(op, xs):
                parts = (f"({t})" if isinstance(y, (C.BoolOp, C.Not)) else t for y, t in zip(xs, texts))
                done.append(f" {op} ".join(parts))
            case C.Not():
                done.append(f"not ({texts[0]})")
            case _:
                done.append(_cmp_text(x))
    return done[0]


def _cmp_text(c: C.Cond) -> str:
    """A comparison (or a constant) as a person writes it (see :func:`cond_text`)."""
    match c:
        case C.Cmp(op, a, b) if op in ("<", "<=") and (a.is_constant != b.is_constant):
            # expr OP k, OP one of <= >=
            if b.is_constant:
                expr, rel, k = a, "<=", b - 1 if op == "<" else b
            else:
                expr, rel, k = b, ">=", a + 1 if op == "<" else a
            if expr_negated(expr):
                expr, k, rel = -expr, -k, "<=" if rel == ">=" else ">="
            c0 = sum(coef for mono, coef in expr.terms if not mono)
            if c0 and expr_negated(-expr):  # the constant to the other side: t <= 6, not t - 6 <= 0
                expr, k = expr - c0, k - c0
            return f"{expr} {rel} {k}"
        case C.Cmp("==", a, b) if b.is_constant and expr_negated(a):
            return f"{-a} == {-b}"
        case C.Cmp(op, a, b) if _shared_terms(a, b):
            # what stands on both sides cancels, each term then on the side where it is added:
            # ``batch*total + past + seq - total - 1 < batch*total`` is ``past + seq <= total``
            d = a - b
            lhs = Dim(tuple(t for t in d.terms if t[1] > 0))
            rhs = -Dim(tuple(t for t in d.terms if t[1] < 0))
            if op in ("==", "!=") and lhs.is_constant:
                lhs, rhs = rhs, lhs
            if lhs.is_constant or rhs.is_constant:  # (then as a bound: ``total >= 2``)
                return _cmp_text(C.Cmp(op, lhs, rhs))
            if op == "<" and rhs.constant_term > 0:
                op, rhs = C.CmpOp.LE, rhs - 1
            return f"{lhs} {op} {rhs}"
        case _:
            return str(c)


def _shared_terms(a: Dim, b: Dim) -> bool:
    """Whether ``a`` and ``b`` have a non-constant term in common (the same product of atoms)."""
    monos = {m for m, _ in a.terms if m}
    return any(m in monos for m, _ in b.terms if m)


def expr_negated(d: Dim) -> bool:
    """Whether every non-constant term of ``d`` has a negative coefficient."""
    return bool(d.terms) and all(coef < 0 for mono, coef in d.terms if mono) and not d.is_constant


def interval_form(c: C.Cond) -> C.Cond:
    """``c`` as ``lo <= s <= hi`` (either side left out where the declared range says it) when
    it is a condition on one symbol ``s`` whose true values form one interval; else ``c``.

    The interval's ends come from Z3's optimizer and the equivalence is checked, both with a
    timeout: ``t == min(1024, t) or t == 1 or min(1024, t) == 1`` is ``t <= 1024``."""
    if isinstance(c, C.BoolConst):
        return c
    if isinstance(c, C.Cmp) and all(isinstance(a, Sym) for d in (c.lhs, c.rhs) for a in d.atoms()):
        return c  # linear already: cond_text writes it plainly
    syms = sym_atoms(c)
    if len(syms) != 1:
        return c
    for d in C.cond_dims(c):
        if any(isinstance(a, (AnyDim, DimVar)) for a in d.atoms()):
            return c
    s = syms[0]
    enc = Z3Encoder()
    term, sv = enc.cond(c), enc.atom(s)
    axioms = enc.take_axioms()
    ends: list[int | None] = []
    try:
        for goal in ("min", "max"):
            opt = z3.Optimize()
            opt.set("rlimit", RLIMIT)
            opt.set("timeout", TIMEOUT_MS)
            opt.add(*axioms, term)
            h = opt.minimize(sv) if goal == "min" else opt.maximize(sv)
            if opt.check() != z3.sat:
                return c
            v = opt.lower(h) if goal == "min" else opt.upper(h)
            ends.append(v.as_long() if z3.is_int_value(v) else None)
        lo, hi = ends
        chk = z3.Solver()
        chk.set("rlimit", RLIMIT)
        chk.set("timeout", TIMEOUT_MS)
        chk.add(*axioms, z3.Not(term))
        if lo is not None:
            chk.add(sv >= lo)
        if hi is not None:
            chk.add(sv <= hi)
        if chk.check() != z3.unsat:
            return c
    except z3.Z3Exception:
        return c
    sym_dim = _sym_dim(c, s)
    parts: list[C.Cond] = []
    if lo is not None and lo > s.min:
        parts.append(C.ge(sym_dim, lo))
    if hi is not None and (s.max is None or hi < s.max):
        parts.append(C.le(sym_dim, hi))
    return C.all_of(*parts) if parts else C.TRUE


def _sym_dim(c: C.Cond, s: Sym) -> Dim:
    """The dimension that is the symbol ``s`` (found among ``c``'s)."""
    for d in C.cond_dims(c):
        for x in d.symbols:
            if x.atom is s:
                return x
    raise AssertionError(s)  # pragma: no cover - s is a symbol of c


def sym_atoms(c: C.Cond) -> list[Sym]:
    out: dict[str, Sym] = {}
    for d in C.cond_dims(c):
        for a in d.atoms():
            if isinstance(a, Sym):
                out.setdefault(a.name, a)
    return [out[k] for k in sorted(out)]


def absorb_disjuncts(c: C.Cond) -> C.Cond:
    """An ``or`` without each alternative that implies another one (``n <= 9 or n == 1`` is
    ``n <= 9``); the last first, so the earliest stated of equivalent ones stays. Z3 with a
    timeout: what it cannot prove stays."""
    if not (isinstance(c, C.BoolOp) and c.op == "or"):
        return c
    enc = Z3Encoder()
    terms = [enc.cond(a) for a in c.args]
    axioms = enc.take_axioms()
    kept = list(range(len(terms)))
    for i in reversed(range(len(terms))):
        if any(z3_check([*axioms, terms[i], z3.Not(terms[j])]) == z3.unsat for j in kept if j != i):
            kept.remove(i)
    return c if len(kept) == len(terms) else C.any_of(*(c.args[i] for i in kept))
