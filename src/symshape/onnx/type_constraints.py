"""ONNX type constraints: every node's element types against its operator's schema.

An operator's schema (``onnx.defs.get_schema`` at the model's opset) gives each formal input and
output a type: a type variable of ``schema.type_constraints`` (``T`` of ``Min``: ``float16``,
``float32``, ``float64`` before opset 12) or a literal type (``tensor(int64)``). onnxruntime refuses
at load a model one of whose nodes breaks them (``Min`` on ``int64`` at opset 11): so does
:func:`check_type_constraints`, run after inference on the element types then known, with a
``dtype-mismatch`` error at the node naming the input, its type and the allowed ones. A type
variable binds one type across the formals it types (``Add(float32, int64)`` is an error), except
among the entries of a heterogeneous variadic formal (``Loop``'s ``V``). An element type not known
(a type variable left open, a sequence, a value the importer could not build) is not checked.

Checked: the default domain and ``ai.onnx.ml``. Verdicts are cached per operator, opset and
element types (a model repeats few combinations), schemas per operator and opset; the schemas of
the onnx release installed are read from :mod:`symshape.onnx.schema_table` (see
:func:`schema_rule`).

>>> rule = schema_rule("", "Min", 11)
>>> violations(rule, (7, 7)).broken
(('input', 0, 'has element type int64, but Min-8 allows T in {float16, float32, float64}'),)
>>> violations(schema_rule("", "Min", 12), (7, 7))
Verdict(broken=(), outputs=(7,))
>>> violations(schema_rule("", "Add", 14), (1, 7)).broken
(('input', 1, "has element type int64, but input 0 has float32 (both are of Add's type T)"),)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, Final, Literal, NamedTuple

import onnx

from symshape import Diagnostic, TensorType
from symshape.encoding.leaf_types import IncompleteType
from symshape.errors import DTYPE_MISMATCH
from symshape.onnx.context import Value
from symshape.onnx.dtypes import DTYPE_TO_ONNX, elem_type_name
from symshape.onnx.graph import Issue, NodeInfo
from symshape.onnx.spans import OnnxSpan

__all__ = [
    "Formal",
    "Rule",
    "Verdict",
    "schema_rule",
    "violations",
    "check_type_constraints",
    "CHECKED_DOMAINS",
]

#: the domains whose schemas are checked
CHECKED_DOMAINS: Final = frozenset({"", "ai.onnx.ml"})


class Formal(NamedTuple):
    """A formal parameter: its type variable (None for a literal type), the ONNX type strings it
    allows, whether it is variadic, and whether its entries share one type."""

    tvar: str | None
    allowed: frozenset[str]
    variadic: bool
    homogeneous: bool


class Rule(NamedTuple):
    """An operator's formals at one opset, and its name with the schema's version (``Min-8``)."""

    name: str
    inputs: tuple[Formal, ...]
    outputs: tuple[Formal, ...]
    #: per output formal: whether its type is free of the inputs' (a literal type, or a type
    #: variable no input has: ``Cast``'s ``T2``, set by an attribute). The others are checked
    #: through the inputs: a converter keeps an output's type variable bound as the input's.
    free: tuple[bool, ...]

    def free_output(self, i: int) -> bool:
        """Whether output ``i`` is of a free formal (see ``free``)."""
        f = self.free
        return bool(f) and (f[i] if i < len(f) else self.outputs[-1].variadic and f[-1])


def _type_str(et: int) -> str:
    return f"tensor({onnx.TensorProto.DataType.Name(et).lower()})"


#: ``tensor(float)`` and the like, by ONNX element type
_TYPE_STRS: Final[dict[int, str]] = {
    et: _type_str(et) for et in onnx.TensorProto.DataType.values() if et != onnx.TensorProto.UNDEFINED
}
_ELEM_TYPES: Final[dict[str, int]] = {s: et for et, s in _TYPE_STRS.items()}

_SCHEMAS: dict[tuple[str, str, int], Rule | None] = {}
#: per rule (by id): the verdict by input types (and output types, for a rule with free outputs)
_VERDICTS: dict[int, dict[Any, Verdict]] = {}
_VARIADIC: Final = onnx.defs.OpSchema.FormalParameterOption.Variadic


def _formals(params: Sequence[Any], constraints: dict[str, frozenset[str]]) -> tuple[Formal, ...]:
    out = []
    for p in params:
        ts = p.type_str
        tvar = ts if ts in constraints else None
        allowed = constraints[ts] if tvar is not None else frozenset({ts})
        variadic = p.option == _VARIADIC
        out.append(Formal(tvar, allowed, variadic, not variadic or bool(p.is_homogeneous)))
    return tuple(out)


def schema_rule(domain: str, op_type: str, opset: int) -> Rule | None:
    """The rule of ``op_type`` in ``domain`` at ``opset``; None when onnx has no schema for it.

    Read from :mod:`symshape.onnx.schema_table` when it was written from the installed onnx and
    holds the operator and opset (``onnx.defs.get_schema``'s first call builds onnx's whole
    registry: 10 ms), from ``get_schema`` otherwise (an operator registered by the program, an
    opset past onnx's last one). A schema the program replaced (``deregister_schema``, then
    ``register_schema`` at a version the table holds) is not seen."""
    key = (domain, op_type, opset)
    try:
        return _SCHEMAS[key]
    except KeyError:
        pass
    found = _rule_of_table(domain, op_type, opset)
    rule = _rule_of_schema(domain, op_type, opset) if found is _NOT_IN_TABLE else found
    _SCHEMAS[key] = rule
    return rule


def _rule_of_schema(domain: str, op_type: str, opset: int) -> Rule | None:
    """The rule from ``onnx.defs.get_schema``."""
    try:
        s = onnx.defs.get_schema(op_type, max_inclusive_version=opset, domain=domain)
    except onnx.defs.SchemaError:
        return None
    cons = {c.type_param_str: frozenset(c.allowed_type_strs) for c in s.type_constraints}
    return _rule(op_type, s.since_version, _formals(s.inputs, cons), _formals(s.outputs, cons))


def _rule(op_type: str, since: int, ins: tuple[Formal, ...], outs: tuple[Formal, ...]) -> Rule:
    tvars = {f.tvar for f in ins}
    free = tuple(f.tvar is None or f.tvar not in tvars for f in outs)
    return Rule(f"{op_type}-{since}", ins, outs, free if any(free) else ())


def _rule_of_table(domain: str, op_type: str, opset: int) -> Rule | Literal[_Table.UNDECIDED] | None:
    """The rule from :mod:`symshape.onnx.schema_table`; :data:`_NOT_IN_TABLE` when the table
    does not decide (another onnx, an operator or opset it does not hold)."""
    from symshape.onnx import schema_table as table

    versions = table.SCHEMAS.get((domain, op_type))
    if versions is None or table.ONNX_VERSION != onnx.__version__ or opset > table.LAST_OPSET.get(domain, 0):
        return _NOT_IN_TABLE
    found = None
    for version in versions:
        if version[0] > opset:
            break
        found = version
    if found is None:
        return None
    since, ins, outs = found
    return _rule(op_type, since, _table_formals(ins, table.TYPE_SETS), _table_formals(outs, table.TYPE_SETS))


def _table_formals(
    formals: tuple[tuple[str, int, bool, bool], ...], sets: tuple[tuple[str, ...], ...]
) -> tuple[Formal, ...]:
    return tuple(
        Formal(None, frozenset({ts}), variadic, homogeneous)
        if index < 0
        else Formal(ts, frozenset(sets[index]), variadic, homogeneous)
        for ts, index, variadic, homogeneous in formals
    )


def _allowed_text(f: Formal) -> str:
    names = sorted(elem_type_name(_ELEM_TYPES[s]) if s in _ELEM_TYPES else s for s in f.allowed)
    if f.tvar is None:
        return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"
    return f"{f.tvar} in {{{', '.join(names)}}}"


class Verdict(NamedTuple):
    """What :func:`violations` found: the constraints broken (``(side, index, message)``, side
    ``input`` or ``output``), and per output formal the element type its type variable took from
    the inputs (0 when none: a free formal, one left unbound, a heterogeneous one)."""

    broken: tuple[tuple[str, int, str], ...]
    outputs: tuple[int, ...]


def violations(rule: Rule, in_types: tuple[int, ...], out_types: tuple[int, ...] = ()) -> Verdict:
    """The constraints of ``rule`` the element types break (ONNX element types by position, 0
    where not known or absent); one per type variable that takes a type it does not allow."""
    table = _VERDICTS.setdefault(id(rule), {})  # (rules live as long as the cache)
    key: Any = (in_types, out_types) if out_types else in_types
    hit = table.get(key)
    if hit is not None:
        return hit
    bound: dict[str, tuple[str, int]] = {}
    refused: set[tuple[str | None, int]] = set()
    found: list[tuple[str, int, str]] = []
    op = rule.name.rsplit("-", 1)[0]
    for side, formals, types in (("input", rule.inputs, in_types), ("output", rule.outputs, out_types)):
        for i, et in enumerate(types):
            f = _formal(formals, i)
            ts = _TYPE_STRS.get(et)
            if f is None or ts is None or not any(a.startswith("tensor(") for a in f.allowed):
                continue  # (unknown, or a formal of sequences or optionals only)
            name = elem_type_name(et)
            if ts not in f.allowed:
                if f.tvar is None or (f.tvar, et) not in refused:
                    refused.add((f.tvar, et))
                    text = f"has element type {name}, but {rule.name} allows {_allowed_text(f)}"
                    found.append((side, i, text))
                continue
            if f.tvar is None or not f.homogeneous:
                continue
            prev = bound.get(f.tvar)
            if prev is None:
                bound[f.tvar] = (f"{side} {i}", et)
            elif prev[1] != et:
                text = f"has element type {name}, but {prev[0]} has {elem_type_name(prev[1])}"
                found.append((side, i, f"{text} (both are of {op}'s type {f.tvar})"))
    outs = tuple(
        0 if f.tvar is None or not f.homogeneous or f.tvar not in bound else bound[f.tvar][1]
        for f in rule.outputs
    )
    out = table[key] = Verdict(tuple(found), outs if any(outs) else ())
    return out


def _formal(formals: tuple[Formal, ...], i: int) -> Formal | None:
    """The formal of actual ``i`` (the last one when variadic); None past the end."""
    if i < len(formals):
        return formals[i]
    return formals[-1] if formals and formals[-1].variadic else None


class _Dtypes:
    """Element types of values after inference (ONNX element types, 0 when not known), by value
    name in ``memo``."""

    def __init__(self, core: Any) -> None:
        self._core = core
        self._types: dict[int, Any] = core._gen.types
        u = core.solution.solver.unifier
        self._resolved, self._find = u.resolved, u.find
        self.memo: dict[str, int] = {}

    def of(self, v: Value) -> int:
        """``v``'s element type."""
        et = v.elem_type
        if not et:
            t = v._type
            if t is None and not v.materialized:
                t = v.type  # (an initializer no converter built: its type is known)
            if t is None:
                t = self._inferred(v._expr)
            dt = t.dtype if isinstance(t, TensorType) else None
            et = DTYPE_TO_ONNX.get(dt, 0) if isinstance(dt, str) else 0
        self.memo[v.name] = et
        return et

    def _inferred(self, e: Any) -> Any:
        raw = self._types.get(id(e))
        if type(raw) is IncompleteType:
            raw = self._resolved.get(self._find(raw))
        if type(raw) is TensorType and isinstance(raw.dtype, str):
            return raw
        if raw is None:
            return None
        try:
            return self._core.type_of(e)
        except Exception:  # (not part of the inferred program)
            return None


def check_type_constraints(
    records: Sequence[tuple[NodeInfo, OnnxSpan, Sequence[Value | None]]],
    named: dict[str, Value],
    opsets: dict[str, int],
    core: Any,
    reported: Sequence[Diagnostic],
) -> list[Issue]:
    """``dtype-mismatch`` issues of the converted nodes (``records``: each node, its span and its
    input values, in model order; ``named``: every value by name) that break their schema's type
    constraints, after inference (``core``: its result). A node ``reported`` has an error already
    is skipped.

    An output whose type variable an input binds takes that element type (as onnxruntime infers
    it, and the converters do): only the others are read from the inferred program (``Cast``'s,
    by its attribute), and values no node checked gave a type to."""
    spans = {d.span.what for d in reported if isinstance(d.span, OnnxSpan)}
    dtypes = _Dtypes(core)
    of, memo = dtypes.of, dtypes.memo
    known = memo.get
    plain: dict[str, _Hit | None] = {}  # (the default domain's rules, by operator)
    rules: dict[tuple[str, str], _Hit | None] = {}
    issues: list[Issue] = []
    for info, span, inputs in records:
        # (indexed: unpacking a NamedTuple, a tuple subclass, goes through its iterator)
        op, dom = info[6], info[7]
        hit = plain.get(op, _MISSING) if not dom else rules.get((dom, op), _MISSING)
        if hit is _MISSING:
            hit = _hit(dom, op, opsets)
            if dom:
                rules[(dom, op)] = hit
            else:
                plain[op] = hit
        if hit is None:
            continue
        rule, table, free = hit
        outputs = info[5]
        n = len(inputs)  # (one and two inputs, the common cases, without a list)
        if n == 2:
            a, b = inputs
            ins: tuple[int, ...] = (
                0 if a is None else a.elem_type or known(a.name) or of(a),
                0 if b is None else b.elem_type or known(b.name) or of(b),
            )
        elif n == 1:
            a = inputs[0]
            ins = (0 if a is None else a.elem_type or known(a.name) or of(a),)
        elif n == 3:
            a, b, c = inputs
            ins = (
                0 if a is None else a.elem_type or known(a.name) or of(a),
                0 if b is None else b.elem_type or known(b.name) or of(b),
                0 if c is None else c.elem_type or known(c.name) or of(c),
            )
        else:  # (a loop: a comprehension is a call of its own before Python 3.12)
            got = []
            for v in inputs:
                got.append(0 if v is None else v.elem_type or known(v.name) or of(v))
            ins = tuple(got)
        if free is None:
            verdict = table.get(ins) or violations(rule, ins)
        else:
            outs = tuple([_output_type(of, named, o) if free(i) else 0 for i, o in enumerate(outputs)])
            verdict = table.get((ins, outs) if outs else ins) or violations(rule, ins, outs)
        broken, derived = verdict[0], verdict[1]
        if derived:
            if len(outputs) == 1:
                memo[outputs[0]] = derived[0]
            else:
                last = len(derived) - 1
                for i, o in enumerate(outputs):
                    memo[o] = derived[i if i < last else last]
        if broken and info[3] not in spans:
            what, names = info[3], info[4]
            for side, i, message in broken:
                name = (names if side == "input" else outputs)[i]
                d = Diagnostic(DTYPE_MISMATCH.code, f"{what}: {side} {i} '{name}' {message}", span)
                issues.append(Issue(d, None, "", ()))
    return issues


#: a checked operator's rule, its verdicts (:data:`_VERDICTS`) and, for a rule with free outputs,
#: its ``free_output``
_Hit = tuple[Rule, dict[Any, Verdict], Callable[[int], bool] | None]


def _hit(dom: str, op: str, opsets: dict[str, int]) -> _Hit | None:
    rule = schema_rule(dom, op, opsets.get(dom, 1)) if dom in CHECKED_DOMAINS else None
    if rule is None:
        return None
    table = _VERDICTS.get(id(rule))
    if table is None:
        table = _VERDICTS[id(rule)] = {}
    return rule, table, rule.free_output if rule.free else None


def _output_type(of: Callable[[Value], int], named: dict[str, Value], name: str) -> int:
    v = named.get(name) if name else None
    return 0 if v is None else of(v)


_MISSING: Final[Any] = object()


class _Table(Enum):
    UNDECIDED = 0


#: :func:`_rule_of_table`'s answer when the table does not decide
_NOT_IN_TABLE: Final = _Table.UNDECIDED
