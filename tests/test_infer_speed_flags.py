"""The flags and inline paths that let ``symshape.infer`` of imported CNNs skip walks answer as
the walks they stand in for: a tensor type's ``_cshape`` (set by its constructor: a tuple of
constant dimensions and a dtype string) makes the eager memo's ground and nonnegativity tests, the
admission's settled test and the annotation scan answer at once; a dimension's ``_nc``/``_cv``
slots answer its constant tests and comparisons; a tuple's inline hash and resolution, and the
generator's inline handling of a dataflow block's leading weights and of nested operator calls,
agree with the general paths. Each is compared over generated cases with the general walk (the
same type built without the flag, the same tuple nested in another) or program-wide (the same
program built so that it takes the inline path and so that it does not). The result's shortcut for
a binder typed as a tuple of tensor types is checked against ``has_holes``, and an annotation
origin (two slots and a record) against the plain ``Origin`` its fallback makes."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.dims import Dim, as_dim, fresh_dimvar
from symshape.encoding.leaf_types import plain_copy, tensor_settled
from symshape.encoding.types import IncompleteType, TensorType, TupleType, Type
from symshape.ir.program_rels import has_holes
from symshape.solver.bindings import Bindings
from symshape.solver.diagnostics import Origin
from symshape.solver.eager import _ground_tensor, _nonnegative, is_ground
from symshape.solver.origins import _annotation_origin_plain, annotation_origin

N, M = ss.dims("n m")


def _dims() -> st.SearchStrategy[Dim]:
    leaf = st.one_of(
        st.integers(0, 9).map(as_dim), st.sampled_from([N, M]), st.builds(lambda: fresh_dimvar())
    )
    return st.one_of(
        leaf,
        st.builds(lambda a, b: a + b, leaf, leaf),
        st.builds(lambda a, c: a * c, leaf, st.integers(1, 4)),
        st.builds(lambda a: a - 3, leaf),
    ).filter(lambda d: not (d.is_constant and int(d) < 0))


_shapes = st.one_of(
    st.none(),
    st.lists(_dims(), max_size=4).map(tuple),
    st.lists(st.integers(0, 9), max_size=4).map(tuple),  # ints: the converting path
    st.lists(st.integers(0, 9), max_size=4),  # a list: also converted
)
_dtypes = st.sampled_from(["float32", "int64", None])


def _unflagged(t: TensorType) -> TensorType:
    """``t`` as a type built without its constructor (no flag: every walk runs)."""
    c: TensorType = object.__new__(TensorType)
    c.__dict__.update(shape=t.shape, dtype=t.dtype, value=t.value, range=t.range)
    return c


def _constant_tensor(t: TensorType) -> bool:
    return type(t.shape) is tuple and type(t.dtype) is str and all(d.is_constant for d in t.shape)


@settings(max_examples=400, deadline=None)
@given(_shapes, _dtypes, st.booleans())
def test_the_flag_says_constant_shape_and_dtype(shape: Any, dtype: Any, helper: bool) -> None:
    plain = tuple(shape) if type(shape) is list else shape
    t = ss.Tensor(shape, dtype) if helper else TensorType(plain, dtype)
    assert t._cshape == _constant_tensor(t)
    c = plain_copy(t)
    assert c == t and c._cshape == t._cshape
    p = pickle.loads(pickle.dumps(t))
    assert p == t and p._cshape is False  # (not pickled: walked again)


def test_the_flag_of_a_type_with_a_value() -> None:
    t = ss.Tensor((3,), "int64", value=(N, 2, 4))
    assert t._cshape and not tensor_settled(t)  # (the value, not the shape, needs admission)
    assert not ss.Tensor((N,), "int64")._cshape


@settings(max_examples=400, deadline=None)
@given(_shapes, _dtypes, st.integers(0, 2))
def test_flagged_walks_answer_as_the_general_ones(shape: Any, dtype: Any, wrap: int) -> None:
    t = ss.Tensor(shape, dtype)
    u = _unflagged(t)
    assert tensor_settled(t) == tensor_settled(u)
    a: Type = t
    b: Type = u
    for _ in range(wrap):  # inside tuples too
        a, b = TupleType((a, a)), TupleType((b, b))
    assert _ground_tensor(a) == _ground_tensor(b)
    assert is_ground(a) == is_ground(b)
    if is_ground(b):
        assert _nonnegative(a) == _nonnegative(b)


def test_a_weight_annotation_of_constants_is_typed_as_before() -> None:
    # the annotation scan skips the constant shapes: symbols of other annotations are still noted
    x = ss.var("x", ss.Tensor((N, 3)))
    w = ss.var("w", ss.Tensor((4, 3)))
    f = ss.Function([x, w], ss.ops.dense(x, w))
    res = ss.infer(f)
    assert res.status == "ok" and str(res.type_of(f.body)) == "Tensor[(n, 4), float32]"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_shapes, _dtypes), max_size=4))
def test_hash_of_a_tuple_of_tensors_is_the_general_one(parts: list[tuple[Any, Any]]) -> None:
    # a tuple of tensor types is hashed inline; inside another tuple it is hashed by the general
    # walk (children first): equal types, equal hashes, whichever way
    fs = tuple(ss.Tensor(shape, dtype) for shape, dtype in parts)
    nested = TupleType((TupleType(fs),))
    hash(nested)  # (its field's hash is cached by the general walk)
    general = hash(nested.fields[0])
    fresh = TupleType(tuple(plain_copy(f) for f in fs))
    assert hash(fresh) == general and fresh == nested.fields[0]


@settings(max_examples=300, deadline=None)
@given(_dims())
def test_a_dims_nonnegative_constant_flag(d: Dim) -> None:
    want = d.is_constant and int(d) >= 0
    assert d._nc is want and pickle.loads(pickle.dumps(d))._nc is want
    assert (-d)._nc is (d.is_constant and int(d) == 0)


def test_an_out_of_scope_variable_read_in_nested_calls_is_reported_as_at_the_top() -> None:
    # the generator checks the scope of an argument that is not typed, or typed and out of scope;
    # a variable read after its let (typed, out of scope) is unbound, nested or not
    x = ss.var("x", ss.Tensor((N, 3)))
    y = ss.var("y")
    inner = ss.Let(y, ss.ops.relu(x), y)
    reports = []
    for use in (ss.ops.add(y, x), ss.ops.relu(ss.ops.add(ss.ops.relu(y), x))):
        r = ss.infer(ss.Function([x], ss.Tuple([inner, use])))
        assert r.status == "error"
        reports.append([d.message for d in r.errors])
    assert reports[0] == reports[1] and "`y` is unbound" in reports[0][0]


def test_an_integer_weight_bound_to_its_annotation_keeps_its_value() -> None:
    # (the inline path of a weight is for types without a value: an int64 constant's type gains
    # its value as before)
    c = ss.const(np.array([2, 6], np.int64))
    v = ss.var("shape", c.type)
    x = ss.var("x", ss.Tensor((3, 4)))
    f = ss.Function([x], ss.Dataflow([(v, c)], ss.Tuple([v, x])))
    r = ss.infer(f)
    assert r.status == "ok" and str(r.type_of(c)) == "Tensor[(2,), int64] = (2, 6)"


@settings(max_examples=300, deadline=None)
@given(_dims(), _dims(), st.integers(-3, 9))
def test_dim_comparisons_and_constant_value_as_the_terms_say(a: Dim, b: Dim, k: int) -> None:
    # (read from slots set when the dimension is built)
    t = a.terms
    want = 0 if not t else t[0][1] if len(t) == 1 and not t[0][0] else None
    assert a.constant_value == want and a.is_constant is (want is not None)
    assert (a == b) is (a._key == b._key) and (a != b) is (a._key != b._key)
    assert (a == k) is (want == k) and (a != k) is (want != k)


@settings(max_examples=200, deadline=None)
@given(_shapes, _dtypes)
def test_equal_tensor_types_hash_alike(shape: Any, dtype: Any) -> None:
    t = ss.Tensor(shape, dtype)
    u = _unflagged(ss.Tensor(tuple(shape) if type(shape) is list else shape, dtype))
    assert t == u and hash(t) == hash(u) == hash(pickle.loads(pickle.dumps(t)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), _shapes, _dtypes), max_size=5))
def test_resolve_of_a_tuple_of_holes_as_the_general_walk(parts: list[tuple[int, Any, Any]]) -> None:
    # a tuple of tensor types and holes (a concatenation's operand) resolves inline; inside another
    # tuple it is resolved by the general walk: the same fields, the same objects
    b = Bindings()
    fields: list[Type] = []
    for kind, shape, dtype in parts:
        t = ss.Tensor(shape, dtype)
        if kind == 0:
            fields.append(t)  # a tensor type
            continue
        h = IncompleteType()
        fields.append(h)
        if kind == 2:
            b.resolved[h] = t  # a hole standing for a tensor type
        elif kind == 3:  # a hole joined to another, whose class stands for a tensor type
            root = IncompleteType()
            b.parent[h] = root
            b.resolved[root] = t
    tup = TupleType(tuple(fields))
    fast = b.resolve(tup)
    general = b.resolve(TupleType((tup,)))
    assert type(fast) is TupleType and type(general) is TupleType
    (inner,) = general.fields
    assert type(inner) is TupleType and fast == inner
    assert all(x is y for x, y in zip(fast.fields, inner.fields))
    assert (fast is tup) == all(x is y for x, y in zip(fast.fields, tup.fields))


def _weights_block(lead: bool, shared: bool, int_weight: bool) -> tuple[ss.Function, list[Any]]:
    """A dataflow block of weights bound to their own types (leading the block, or after an
    unannotated binding), one constant object bound twice when ``shared``, one int64 weight (its
    type gains a value) when ``int_weight``."""
    x = ss.var("x", ss.Tensor((N, 3)))
    cw = ss.const(np.zeros((4, 3), np.float32))
    cb = ss.const(np.zeros((4,), np.float32))
    w, b = ss.var("w", cw.type), ss.var("b", cb.type)
    binds: list[tuple[Any, Any]] = [(w, cw), (b, cb)]
    if shared:
        b2 = ss.var("b2", cb.type)
        binds.append((b2, cb))
    if int_weight:
        ci = ss.const(np.array([2, 6], np.int64))
        binds.insert(1, (ss.var("s", ci.type), ci))
    d = ss.var("d")
    first = (d, ss.ops.relu(x))
    binds = binds + [first] if lead else [first, *binds]
    y = ss.var("y")
    binds.append((y, ss.ops.add(ss.ops.dense(d, w), b)))
    return ss.Function([x], ss.Dataflow(binds, y)), [v for v, _ in binds]


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("int_weight", [False, True])
def test_leading_weights_are_typed_as_in_the_block(shared: bool, int_weight: bool) -> None:
    # the leading weights of a block are typed when it is entered; after another binding, by the
    # block's walk: the same types, status and guards
    got = []
    for lead in (True, False):
        f, vs = _weights_block(lead, shared, int_weight)
        r = ss.infer(f)
        types = sorted((v.name, str(r.type_of(v))) for v in vs)
        got.append((r.status, types, [str(g) for g in r.guards], str(r.type_of(f))))
    assert got[0] == got[1] and got[0][0] == "ok"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=4), st.booleans())
def test_a_tuple_binder_is_unresolved_when_a_field_holds_a_hole(holes: list[bool], nest: bool) -> None:
    """A binder whose type resolves to a tuple of tensor types is passed over (no hole in it);
    one holding a hole, at any position or nested one level down, is reported as the general
    path reports it (the oracle: the holes of the type the result gives it)."""
    x = ss.var("x", ss.Tensor((2, 3), "float32"))
    ys = [ss.var(f"y{i}") for i in range(len(holes))]
    fields: list[Any] = [y if h else ss.ops.relu(x) for y, h in zip(ys, holes)]
    t = ss.var("t")
    value = ss.Tuple([ss.Tuple(fields), x]) if nest else ss.Tuple(fields)
    res = ss.infer(ss.Function([x, *ys], ss.Let(t, value, x)))
    named = [d for d in res.unresolved if "for `t`" in d.message]
    assert len(named) == int(has_holes(res.type_of(t))) == int(any(holes))


_FIELDS = ("kind", "label", "span", "seq", "payload", "expr")


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["w", "conv1/x_0", "a b"]),
    st.sampled_from([None, ss.Span("m.py", 3, 4)]),
    st.sampled_from([None, 0, "e"]),
    st.booleans(),
)
def test_annotation_origin_reads_as_the_plain_one(name: str, span: Any, expr: Any, read: bool) -> None:
    """An annotation origin (two slots and a record) reads, prints, copies, pickles, replaces and
    refuses assignment as the plain ``Origin`` its fallback makes, field for field."""
    ann = ss.Tensor((2, N), "float32")
    o, plain = annotation_origin(name, ann, span, expr), _annotation_origin_plain(name, ann, span, expr)
    if read:
        assert o.label == plain.label  # (printed before the copies, or by them)
    want = [getattr(plain, f) for f in _FIELDS if f != "seq"]
    for x in (o, copy.copy(o), copy.deepcopy(o), pickle.loads(pickle.dumps(o))):
        got = [getattr(x, f) for f in _FIELDS if f != "seq"]
        assert got[:3] == want[:3] and got[3] == want[3] and x.seq == o.seq and isinstance(x, Origin)
        assert repr(x).replace("AnnotationOrigin(", "Origin(").replace(f"seq={x.seq}", "") == repr(
            plain
        ).replace(f"seq={plain.seq}", "")
        assert x == x and x != plain and hash(x) == object.__hash__(x)  # identity, as every origin
    r = dataclasses.replace(o, label="l", payload=3)
    assert (r.label, r.payload, r.span, r.expr, r.seq) == ("l", 3, span, expr, o.seq)
    for f in _FIELDS:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(o, f, 1)
    object.__setattr__(o, "payload", 7)  # (as the solver numbers a relation's origin)
    assert o.payload == 7 and o.label == plain.label and o.span == span
