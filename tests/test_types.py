"""Types: construction, the printed forms of design section 2, parse_type round trips, bad input."""

from __future__ import annotations

import pytest

import symshape as ss
from symshape.encoding.dims import dmax

n, m = ss.dims("n m")
a, b, c = ss.TypeVar("a"), ss.TypeVar("b"), ss.TypeVar("c")
s_shape = ss.TypeVar("s", "shape")
d_dtype = ss.TypeVar("d", "dtype")
k_dim = ss.TypeVar("k", "dim")
List = ss.GlobalTypeVar("List")
T = ss.Tensor
ENV: dict[str, object] = {"n": n, "m": m, "List": List}

PRINTED = [
    (T((n, 3), "float32"), "Tensor[(n, 3), float32]"),
    (T((n,), "float32"), "Tensor[(n,), float32]"),
    (T((), "int32"), "Tensor[(), int32]"),
    (T(None, "float32"), "Tensor[?, float32]"),
    (T((n, 3), None), "Tensor[(n, 3), ?]"),
    (T(None, None), "Tensor[?, ?]"),
    (T((12 * n, (n - 1) // 2 + 1), "bool"), "Tensor[(12*n, (n - 1)//2 + 1), bool]"),
    (T((dmax(n, m), n % 4, -(n // 2) + 2 * m), "int64"), "Tensor[(max(m, n), n % 4, 2*m - n//2), int64]"),
    (ss.TupleType([]), "()"),
    (ss.TupleType([T((2,), "int32")]), "(Tensor[(2,), int32],)"),
    (ss.TupleType([T((n, 3)), T((1,), "bool")]), "(Tensor[(n, 3), float32], Tensor[(1,), bool])"),
    (ss.TupleType([ss.TupleType([]), ss.TupleType([a])]), "((), (a,))"),
    (ss.FuncType([T((n,))], T((n,))), "fn(Tensor[(n,), float32]) -> Tensor[(n,), float32]"),
    (ss.FuncType([], ss.TupleType([])), "fn() -> ()"),
    (
        ss.FuncType([a, b], c, [a, b, c], [ss.TypeRelation("broadcast", [a, b, c])]),
        "fn<a, b, c>(a, b) -> c where broadcast(a, b, c)",
    ),
    (ss.FuncType([a], a, [a], pure=False), "fn[impure]<a>(a) -> a"),
    (
        ss.FuncType([T((2,))], T((2,)), pure=False),
        "fn[impure](Tensor[(2,), float32]) -> Tensor[(2,), float32]",
    ),
    (
        ss.FuncType([T(s_shape, d_dtype)], T(s_shape, d_dtype), [s_shape, d_dtype]),
        "fn<s: shape, d: dtype>(Tensor[s, d]) -> Tensor[s, d]",
    ),
    (ss.FuncType([k_dim], k_dim, [k_dim]), "fn<k: dim>(k) -> k"),
    (
        ss.FuncType([a, b], b, [a, b], [ss.TypeRelation("flatten", [a, b], {"axis": 2})]),
        "fn<a, b>(a, b) -> b where flatten(a, b; axis=2)",
    ),
    (
        ss.FuncType(
            [a, b], b, [a, b], [ss.TypeRelation("identity", [a, a]), ss.TypeRelation("identity", [b, b])]
        ),
        "fn<a, b>(a, b) -> b where identity(a, a), identity(b, b)",
    ),
    (ss.FuncType([], ss.FuncType([a], a, [a])), "fn() -> (fn<a>(a) -> a)"),
    (ss.FuncType([ss.FuncType([a], a, [a])], a, [a]), "fn<a>(fn<a>(a) -> a) -> a"),
    (ss.TypeCall(List, [T((2,), "int32")]), "List[Tensor[(2,), int32]]"),
    (ss.TypeCall(List, [ss.TypeCall(List, [a])]), "List[List[a]]"),
    (ss.ObjectType(), "Object"),
    (ss.ShapeType(2), "Shape[2]"),
    (ss.ShapeType(), "Shape[?]"),
    (ss.ShapeType(0), "Shape[0]"),
    (a, "a"),
]


@pytest.mark.parametrize(("t", "printed"), [p for p in PRINTED ], ids=lambda x: str(x))
def test_printed_forms(t: ss.Type, printed: str) -> None:
    assert str(t) == printed


@pytest.mark.parametrize("t", [p[0] for p in PRINTED], ids=str)
def test_parse_type_round_trip(t: ss.Type) -> None:
    assert ss.parse_type(str(t), ENV) == t
    # and printing the parse gives the same text
    assert str(ss.parse_type(str(t), ENV)) == str(t)


def test_parse_type_without_env_declares_symbols() -> None:
    assert ss.parse_type("Tensor[(n, 3), float32]") == T((n, 3), "float32")
    assert ss.parse_type("Tensor[(n, 3), float32]", {"n": n}) == T((n, 3), "float32")
    assert ss.parse_type("  ( Tensor[( n , 3 ), float32] , )  ") == ss.TupleType([T((n, 3))])
    assert ss.parse_type("(Tensor[(2,), int32])") == T((2,), "int32")  # parentheses, not a tuple


def test_parse_type_with_env_types() -> None:
    t = ss.parse_type("List[a]", {"List": List})
    assert t == ss.TypeCall(List, [a])
    x = T((n,))
    assert ss.parse_type("(x, x)", {"x": x}) == ss.TupleType([x, x])


def test_holes_print_and_compare_by_identity() -> None:
    h1, h2 = ss.IncompleteType(), ss.IncompleteType()
    assert str(h1).startswith("?t")
    assert str(h1) != str(h2)
    assert h1 != h2
    assert h1 == h1
    assert ss.TupleType([h1]) == ss.TupleType([h1])
    assert ss.TupleType([h1]) != ss.TupleType([h2])
    # within one parse the same hole id is the same hole
    t = ss.parse_type("(?t900, ?t900, ?t901)")
    assert isinstance(t, ss.TupleType)
    assert t.fields[0] is t.fields[1]
    assert t.fields[0] is not t.fields[2]


def test_tensor_accessors() -> None:
    t = T((n, 3), "float32")
    assert t.shape == (n, 3)
    assert t.dtype == "float32"
    assert t.ndim == 2
    assert T(None, "float32").ndim is None
    assert T((), "int32").ndim == 0
    assert t.subs({n: 2}) == T((2, 3), "float32")
    assert str(t.subs({n: 2})) == "Tensor[(2, 3), float32]"
    assert ss.TupleType([t, t]).subs({"n": 5}) == ss.TupleType([T((5, 3))] * 2)
    assert ss.FuncType([t], t).subs({n: 1}) == ss.FuncType([T((1, 3))], T((1, 3)))
    # tensors are structural and hashable; the shape is normalized to dimensions
    assert T([n, 3], "float32") == t
    assert hash(T((n * 3 * 4,))) == hash(T((12 * n,)))
    assert isinstance(T((3,)).shape[0], ss.Dim)


def test_typevar_kinds() -> None:
    assert ss.TypeVar("a").kind == "type"
    for kind in ("type", "shape", "dim", "dtype"):
        assert ss.TypeVar("x", kind).kind == kind
    with pytest.raises(ss.SymshapeError) as e:
        ss.TypeVar("x", "nat")
    assert e.value.code == "kind-mismatch"
    with pytest.raises(ss.SymshapeError) as e:
        T(ss.TypeVar("x", "dtype"), "float32")
    assert e.value.code == "kind-mismatch"
    with pytest.raises(ss.SymshapeError) as e:
        T((2,), ss.TypeVar("x", "shape"))  # type: ignore[arg-type]
    assert e.value.code == "kind-mismatch"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Tensor[(n, 3), floaty]", "bad-dtype"),
        ("Tensor[(n, 3)]", "parse-error"),
        ("Tensor[(n, 3), float32", "parse-error"),
        ("Tensor[(n +, 3), float32]", "parse-error"),
        ("Tensor[(, 3), float32]", "parse-error"),
        ("Tensor[(-1,), float32]", "negative-dim"),
        ("(Tensor[(2,), int32]", "parse-error"),
        ("fn(a) ->", "parse-error"),
        ("fn(a) b", "parse-error"),
        ("Shape[x]", "parse-error"),
        ("Object Object", "parse-error"),
        ("", "parse-error"),
        ("123", "parse-error"),
    ],
)
def test_parse_type_errors(text: str, code: str) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        ss.parse_type(text)
    assert e.value.code == code


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda: ss.TupleType([3]), "invalid-argument"),
        (lambda: ss.FuncType([T((2,))], "x"), "invalid-argument"),
        (lambda: ss.FuncType([], a, ["a"]), "invalid-argument"),
        (lambda: ss.TypeCall(List, [n]), "invalid-argument"),
        (lambda: ss.parse_type(None), "parse-error"),
        (lambda: T((2,), "float128"), "bad-dtype"),
        (lambda: ss.TypeSolver().add_relation("broadcast", [T((2,)), 3]), "invalid-argument"),
        (lambda: ss.TypeSolver().unify(T((2,)), "x"), "invalid-argument"),
        (lambda: ss.TypeSolver().add_relation("broadcast", [T((2,)), T((2,))], attrs=[1]), "bad-attribute"),
    ],
)
def test_bad_type_input(make: object, code: str) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        make()  # type: ignore[operator]
    assert e.value.code == code
