"""Bad input to the public API raises ``SymshapeError`` with a catalogue code, never a raw Python
exception and never a hang (issue 11).

A sweep: every public callable of ``symshape.__all__`` (and the main methods of the objects it
returns) is called with valid arguments, then with each argument replaced in turn by each value of
``BAD``. Each call either succeeds or raises ``SymshapeError`` with a code of ``ERROR_CODES``.
Then the cases named in the issue are checked one by one: those must be *rejected*.
"""

from __future__ import annotations

import inspect
import signal
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import symshape as ss
from symshape.encoding.conds import cond_holds, eq

F = "float32"


class _Junk:
    def __repr__(self) -> str:
        return "<junk>"


BAD: dict[str, Any] = {
    "None": None,
    "int": 3,
    "negative": -1,
    "float": 2.5,
    "bool": True,
    "str": "x y",
    "empty-str": "",
    "bytes": b"a b",
    "list-of-junk": [_Junk()],
    "list-of-none": [None],
    "nested-junk": [[_Junk(), (None, b"")]],
    "dict": {"a": _Junk()},
    "object": _Junk(),
    "expr": ss.var("junk_expr", ss.Tensor((2,), F)),
    "type": ss.Tensor((2,), F),
}


def _sample() -> dict[str, Any]:
    """Fresh valid building blocks (a new call per use, so nothing is bound twice)."""
    n = ss.dim("n")
    t = ss.Tensor((n, 3), F)
    x = ss.var("x", t)
    v = ss.var("v")
    c = ss.var("c", ss.Tensor((), "bool"))
    lst = ss.GlobalTypeVar("List")
    a = ss.TypeVar("a")
    nil = ss.Constructor("Nil", [], lst)
    cons = ss.Constructor("Cons", [a, ss.TypeCall(lst, [a])], lst)
    fn = ss.Function([x], ss.ops.relu(x))
    return {
        "n": n, "t": t, "x": x, "v": v, "c": c, "List": lst, "a": a, "nil": nil, "cons": cons, "fn": fn,
    }  # fmt: skip


Args = tuple[list[Any], dict[str, Any]]

# name -> valid (positional, keyword) arguments built from a fresh sample
VALID: dict[str, Callable[[dict[str, Any]], Args]] = {
    "Attrs": lambda s: ([{"axis": 1}], {}),
    "Call": lambda s: ([s["fn"], [s["x"]]], {"attrs": {"k": 1}}),
    "Clause": lambda s: ([ss.PatternWildcard(), s["x"]], {}),
    "Constant": lambda s: ([(2, 3), F], {}),
    "Dataflow": lambda s: ([[(s["v"], s["x"])], s["v"]], {}),
    "Expr": lambda s: ([], {}),
    "Function": lambda s: (
        [[s["x"]], s["x"]],
        {"ret_type": s["t"], "type_params": [], "pure": True, "attrs": {}},
    ),
    "GlobalVar": lambda s: (["g"], {}),
    "If": lambda s: ([s["c"], s["x"], s["x"]], {}),
    "Let": lambda s: ([s["v"], s["x"], s["v"]], {}),
    "Match": lambda s: ([s["x"], [ss.Clause(ss.PatternWildcard(), s["x"])]], {"complete": True}),
    "MatchCast": lambda s: ([s["v"], s["x"], s["t"], s["v"]], {}),
    "Module": lambda s: ([], {}),
    "PatternConstructor": lambda s: ([s["nil"], []], {}),
    "PatternTuple": lambda s: ([[ss.PatternWildcard()]], {}),
    "PatternVar": lambda s: ([s["v"]], {}),
    "PatternWildcard": lambda s: ([], {}),
    "Tuple": lambda s: ([[s["x"]]], {}),
    "TupleGetItem": lambda s: ([s["x"], 0], {}),
    "Var": lambda s: (["x", s["t"]], {}),
    "call_pure": lambda s: ([s["fn"], s["x"]], {}),
    "const": lambda s: ([[1.0, 2.0]], {"dtype": F}),
    "infer": lambda s: ([s["fn"]], {"strict": False, "timeout_ms": 1000}),
    "normalize": lambda s: ([s["fn"]], {}),
    "well_formed": lambda s: ([s["fn"]], {}),
    "register_op": lambda s: (["test.bad_input_op", "identity", 1], {"pure": True}),
    "structural_equal": lambda s: ([s["x"], s["x"]], {}),
    "to_dot": lambda s: ([ss.infer(s["fn"])], {}),
    "var": lambda s: (["x", s["t"]], {}),
    "Constructor": lambda s: (["C", [s["t"]], s["List"]], {}),
    "Diagnostic": lambda s: (["shape-mismatch", "message"], {}),
    "Dim": lambda s: ([()], {}),
    "FuncType": lambda s: ([[s["t"]], s["t"]], {"type_params": [], "relations": [], "pure": True}),
    "GlobalTypeVar": lambda s: (["List"], {}),
    "Guard": lambda s: ([eq(s["n"], 3)], {}),
    "IncompleteType": lambda s: (["type"], {}),
    "ObjectType": lambda s: ([], {}),
    "ShapeType": lambda s: ([2], {}),
    "Span": lambda s: (["f.py", 1, 1], {"context": "node 'a' (Relu)"}),
    "span_scope": lambda s: ([ss.Span("f.py", 1)], {}),
    "SymshapeError": lambda s: (["bad-dim", "message"], {}),
    "Tensor": lambda s: ([(s["n"], 3), F], {}),
    "TensorType": lambda s: ([(s["n"], 3), F], {}),
    "TupleType": lambda s: ([[s["t"]]], {}),
    "TypeCall": lambda s: ([s["List"], [s["t"]]], {}),
    "TypeData": lambda s: ([s["List"], [s["a"]], [s["nil"], s["cons"]]], {}),
    "TypeRelation": lambda s: (["broadcast", [s["t"], s["t"], s["t"]]], {"attrs": {}}),
    "TypeSolver": lambda s: ([], {"strict": False, "timeout_ms": 1000}),
    "TypeVar": lambda s: (["a", "type"], {}),
    "dim": lambda s: (["n"], {"min": 1, "max": None}),
    "dims": lambda s: (["n m"], {"min": 1, "max": None}),
    "parse_dim": lambda s: (["n + 1"], {"env": {"n": s["n"]}}),
    "parse_type": lambda s: (["Tensor[(n, 3), float32]"], {"env": {"n": s["n"]}}),
    "register_relation": lambda s: (["test_bad_input.rel", lambda ctx, args, attrs: True], {}),
    "relation": lambda s: (["test_bad_input.rel2"], {}),
    # methods of the objects the API returns
    "Dim.subs": lambda s: ([{s["n"]: 2}], {}),
    "Dim.evaluate": lambda s: ([{s["n"]: 2}], {}),
    "TensorType.subs": lambda s: ([{s["n"]: 2}], {}),
    "Module.__setitem__": lambda s: (["f", s["fn"]], {}),
    "Module.add_type": lambda s: ([ss.TypeData(s["List"], [s["a"]], [s["nil"]])], {}),
    "InferenceResult.type_of": lambda s: ([s["x"]], {}),
    "InferenceResult.with_diagnostics": lambda s: ([[ss.Diagnostic("unsupported-op", "m")]], {}),
    "Note": lambda s: (["message", ss.Span("f.py", 1)], {}),
    "TypeSolver.unify": lambda s: ([s["t"], s["t"]], {}),
    "TypeSolver.add_relation": lambda s: (["broadcast", [s["t"], s["t"], ss.IncompleteType()]], {}),
    "cond_holds": lambda s: ([eq(s["n"], 3), {s["n"]: 3}], {}),
}

# what each name calls (methods are bound to a fresh object of the sample)
TARGETS: dict[str, Callable[[dict[str, Any]], Callable[..., Any]]] = {
    name: (lambda s, name=name: getattr(ss, name)) for name in VALID if hasattr(ss, name)
}
TARGETS.update(
    {
        "Dim.subs": lambda s: (s["n"] + 1).subs,
        "Dim.evaluate": lambda s: (s["n"] + 1).evaluate,
        "TensorType.subs": lambda s: s["t"].subs,
        "Module.__setitem__": lambda s: ss.Module().__setitem__,
        "Module.add_type": lambda s: ss.Module().add_type,
        "InferenceResult.type_of": lambda s: ss.infer(ss.Function([s["x"]], s["x"])).type_of,
        "InferenceResult.with_diagnostics": lambda s: ss.infer(
            ss.Function([s["x"]], s["x"])
        ).with_diagnostics,
        "TypeSolver.unify": lambda s: ss.TypeSolver().unify,
        "TypeSolver.add_relation": lambda s: ss.TypeSolver().add_relation,
        "cond_holds": lambda s: cond_holds,
    }
)

# exported names that are not called with arguments by users, and why
NOT_CALLED = {
    "conds": "a module",
    "ops": "a module (its operators are tested with their relations)",
    "ERROR_CODES": "a mapping",
    "Cond": "a type alias (typing.Union)",
    "Type": "a type alias (typing.Union)",
    "InferenceResult": "made by ss.infer (its methods are swept)",
    "Solution": "made by TypeSolver.solve",
    "Op": "made by ss.register_op (swept); Op.get (ir/op.py) is left to its owner",
    "draw": "draws with matplotlib (display)",
}


def test_every_public_name_is_swept_or_excused() -> None:
    public = set(ss.__all__)
    assert public <= set(VALID) | set(NOT_CALLED), sorted(public - set(VALID) - set(NOT_CALLED))


def _mutations(name: str) -> list[tuple[str, Callable[[], Any]]]:
    out: list[tuple[str, Callable[[], Any]]] = []
    args, kwargs = VALID[name](_sample())
    for i in range(len(args)):
        for bad_name in BAD:
            def call(i: int = i, bad_name: str = bad_name) -> Any:
                s = _sample()
                a, k = VALID[name](s)
                a[i] = BAD[bad_name]
                return TARGETS[name](s)(*a, **k)

            out.append((f"{name}-arg{i}-{bad_name}", call))
    for key in kwargs:
        for bad_name in BAD:
            def call_kw(key: str = key, bad_name: str = bad_name) -> Any:
                s = _sample()
                a, k = VALID[name](s)
                k[key] = BAD[bad_name]
                return TARGETS[name](s)(*a, **k)

            out.append((f"{name}-{key}-{bad_name}", call_kw))
    return out


CASES = [case for name in VALID for case in _mutations(name)]


class _Hang(Exception):
    pass


def _run(fn: Callable[[], Any], seconds: int = 20) -> Any:
    def alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_arguments_are_accepted(name: str) -> None:
    s = _sample()
    a, k = VALID[name](s)
    if name == "Expr":
        with pytest.raises(ss.SymshapeError):
            TARGETS[name](s)(*a, **k)
        return
    _run(lambda: TARGETS[name](s)(*a, **k))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_argument_raises_symshape_error_or_is_accepted(case: tuple[str, Callable[[], Any]]) -> None:
    _, call = case
    try:
        _run(call)
    except ss.SymshapeError as e:
        assert e.code in ss.ERROR_CODES, e.code
        assert f"[{e.code}]" in str(e)


def test_the_sweep_covers_every_argument() -> None:
    # each swept callable's required parameters appear in its valid arguments
    for name, target in TARGETS.items():
        if "." in name or name in ("Expr", "cond_holds"):
            continue
        fn = target(_sample())
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        required = [
            p for p in sig.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]  # fmt: skip
        args, _ = VALID[name](_sample())
        assert len(args) >= len(required), name


# -- the cases named in the issue are rejected ----------------------------------------------------

x_ = ss.var("x", ss.Tensor((2,), F))
f_ = ss.Function([x_], x_)

REJECTED: list[tuple[str, Callable[[], Any], str]] = [
    ("dims(None)", lambda: ss.dims(None), "invalid-argument"),  # type: ignore[arg-type]
    ("dims(3)", lambda: ss.dims(3), "invalid-argument"),  # type: ignore[arg-type]
    ("dims(['a'])", lambda: ss.dims(["a"]), "invalid-argument"),  # type: ignore[arg-type]
    ("dims(b'a b')", lambda: ss.dims(b"a b"), "invalid-argument"),  # type: ignore[arg-type]
    ("dims('n n')", lambda: ss.dims("n n"), "invalid-argument"),
    ("dims('n, n')", lambda: ss.dims("n, m, n"), "invalid-argument"),
    ("dim('n\\n')", lambda: ss.dim("n\n"), "invalid-argument"),
    ("dim(' n')", lambda: ss.dim(" n"), "invalid-argument"),
    ("dim('if')", lambda: ss.dim("if"), "invalid-argument"),
    ("dim('n', min=1.5)", lambda: ss.dim("n", min=1.5), "invalid-argument"),  # type: ignore[arg-type]
    ("TypeVar(3)", lambda: ss.TypeVar(3), "invalid-argument"),  # type: ignore[arg-type]
    ("TypeVar('a b')", lambda: ss.TypeVar("a b"), "invalid-argument"),
    ("TypeVar kind", lambda: ss.TypeVar("a", "nonsense"), "kind-mismatch"),
    ("TupleType(None)", lambda: ss.TupleType(None), "invalid-argument"),  # type: ignore[arg-type]
    ("TupleType(type)", lambda: ss.TupleType(ss.Tensor((2,), F)), "invalid-argument"),  # type: ignore[arg-type]
    ("FuncType(None, t)", lambda: ss.FuncType(None, ss.Tensor((2,), F)), "invalid-argument"),  # type: ignore[arg-type]
    ("FuncType pure", lambda: ss.FuncType([], ss.ObjectType(), pure="yes"), "invalid-argument"),  # type: ignore[arg-type]
    ("TypeCall(3, [])", lambda: ss.TypeCall(3, []), "invalid-argument"),  # type: ignore[arg-type]
    ("TypeRelation args", lambda: ss.TypeRelation("r", [3]), "invalid-argument"),  # type: ignore[list-item]
    ("Constructor belong_to", lambda: ss.Constructor("C", [], "List"), "invalid-argument"),  # type: ignore[arg-type]
    ("TypeData(3, ...)", lambda: ss.TypeData(3, [], []), "invalid-argument"),  # type: ignore[arg-type]
    ("ShapeType(-1)", lambda: ss.ShapeType(-1), "invalid-argument"),
    ("IncompleteType('nonsense')", lambda: ss.IncompleteType("nonsense"), "kind-mismatch"),
    ("IncompleteType(id='a')", lambda: ss.IncompleteType("type", "a"), "invalid-argument"),  # type: ignore[arg-type]
    ("Tuple(None)", lambda: ss.Tuple(None), "invalid-argument"),  # type: ignore[arg-type]
    ("Tuple(x)", lambda: ss.Tuple(x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Function(None, x)", lambda: ss.Function(None, x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Function pure", lambda: ss.Function([], x_, pure="yes"), "invalid-argument"),  # type: ignore[arg-type]
    ("Call(f, None)", lambda: ss.Call(f_, None), "invalid-argument"),  # type: ignore[arg-type]
    ("Call(f, x)", lambda: ss.Call(f_, x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Call attrs", lambda: ss.Call(f_, [x_], attrs=3), "bad-attribute"),  # type: ignore[arg-type]
    ("Constant(shape=3)", lambda: ss.Constant(shape=3), "invalid-argument"),  # type: ignore[arg-type]
    ("Constant(data=[1])", lambda: ss.Constant(data=[1.0]), "invalid-argument"),
    ("Constant(dtype=3)", lambda: ss.Constant((2,), 3), "bad-dtype"),  # type: ignore[arg-type]
    ("Match(x, [3])", lambda: ss.Match(x_, [3]), "invalid-argument"),  # type: ignore[list-item]
    ("Clause(3, x)", lambda: ss.Clause(3, x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Clause(_, 3)", lambda: ss.Clause(ss.PatternWildcard(), 3), "invalid-argument"),  # type: ignore[arg-type]
    ("MatchCast(3, ...)", lambda: ss.MatchCast(3, x_, ss.Tensor((2,), F), x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Let(v, 3, v)", lambda: ss.Let(ss.var("v"), 3, x_), "invalid-argument"),  # type: ignore[arg-type]
    ("If(3, x, x)", lambda: ss.If(3, x_, x_), "invalid-argument"),  # type: ignore[arg-type]
    ("Dataflow([(v, 3)])", lambda: ss.Dataflow([(ss.var("v"), 3)], x_), "invalid-argument"),  # type: ignore[list-item]
    ("PatternTuple([3])", lambda: ss.PatternTuple([3]), "invalid-argument"),  # type: ignore[list-item]
    ("Expr()", lambda: ss.Expr(), "invalid-argument"),
    ("Dim(3)", lambda: ss.Dim(3), "bad-dim"),  # type: ignore[arg-type]
    ("const ragged", lambda: ss.const([[1, 2], [3]]), "invalid-argument"),
    ("const dtype", lambda: ss.const([1], dtype="foo"), "bad-dtype"),
    ("const of str", lambda: ss.const("abc"), "bad-dtype"),
    ("const of object", lambda: ss.const(_Junk()), "bad-dtype"),
    ("const of expr", lambda: ss.const(x_), "invalid-argument"),
    ("parse_dim env=3", lambda: ss.parse_dim("n", env=3), "invalid-argument"),  # type: ignore[arg-type]
    ("parse_dim env value", lambda: ss.parse_dim("n", env={"n": "m"}), "invalid-argument"),  # type: ignore[dict-item]
    ("parse_type env=3", lambda: ss.parse_type("Tensor[?, ?]", env=3), "invalid-argument"),  # type: ignore[arg-type]
    ("cond_holds({})", lambda: cond_holds(eq(ss.dim("n"), 3), {}), "invalid-argument"),
    ("cond_holds(5)", lambda: cond_holds(eq(ss.dim("n"), 3), 5), "invalid-argument"),  # type: ignore[arg-type]
    ("cond_holds value", lambda: cond_holds(eq(ss.dim("n"), 3), {"n": "x"}), "bad-dim"),  # type: ignore[dict-item]
]


@pytest.mark.parametrize("case", REJECTED, ids=[c[0] for c in REJECTED])
def test_issue_cases_are_rejected(case: tuple[str, Callable[[], Any], str]) -> None:
    _, make, code = case
    with pytest.raises(ss.SymshapeError) as e:
        _run(make, 5)
    assert e.value.code == code


def test_symbol_names_read_back_as_themselves() -> None:
    # names the parser once used internally are plain symbols now
    for name in ("__dvar_3", "__any", "d3", "max", "min", "Tensor"):
        d = ss.dim(name)
        assert ss.parse_dim(str(d)) == d
        assert ss.parse_dim(str(d + 1)) == d + 1
        t = ss.Tensor((d, 2), F)
        assert ss.parse_type(str(t)) == t


def test_cond_holds_decides_what_the_assignment_decides() -> None:
    n, m = ss.dims("n m")
    c = ss.conds.any_of(eq(m, 5), eq(n, 1))
    assert cond_holds(c, {n: 1}) is True  # m is not needed
    assert cond_holds(c, {"n": 2, "m": 5}) is True
    assert cond_holds(c, {n: 2, m: 4}) is False
    assert cond_holds(ss.conds.ge(n, 1), {}) is True  # the declaration decides it
    with pytest.raises(ss.SymshapeError) as e:
        cond_holds(c, {n: 2})
    assert e.value.code == "invalid-argument"
    assert "give a value for m" in e.value.message


def test_constant_from_numpy_and_lists() -> None:
    c = ss.const(np.zeros((2, 3), "int64"))
    assert str(c.type) == "Tensor[(2, 3), int64]"
    assert str(ss.const([[1.0, 2.0]]).type) == "Tensor[(1, 2), float32]"
    assert str(ss.Constant(data=np.ones((4,), "bool")).type) == "Tensor[(4,), bool]"
