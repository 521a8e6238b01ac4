"""The fast paths that make ``symshape.infer`` of imported CNNs cheaper answer as the general paths
they stand in for: each is compared with the general computation over many generated cases
(hypothesis), or with an oracle (numpy's broadcasting), or program-wide (the same program built
so that it takes the fast path and so that it does not)."""

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
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import ZERO, Dim, as_dim, fresh_dimvar
from symshape.encoding.types import Attrs, IncompleteType, TensorType, TupleType, Type, type_rebuild
from symshape.errors import SymshapeError
from symshape.relations.base import get_relation
from symshape.relations.concat import _total
from symshape.relations.elementwise import _pair, broadcast_shapes
from symshape.solver.bindings import Bindings
from symshape.solver.eager import (
    _constant_shape,
    _EagerCtx,
    _ground_tensor,
    _nonnegative,
    _symbolic_dims,
    eager_outputs,
    is_ground,
)
from symshape.solver.origins import AnnotationOrigin, annotation_origin
from symshape.solver.solve import TypeSolver

N, M = ss.dims("n m")
K = ss.dim("k", min=0)


# -- generated types ------------------------------------------------------------------------------
def _dims() -> st.SearchStrategy[Dim]:
    leaf = st.one_of(
        st.integers(0, 9).map(as_dim),
        st.sampled_from([N, M, K]),
        st.builds(lambda: fresh_dimvar()),  # an unknown: not ground
    )
    return st.one_of(
        leaf,
        st.builds(lambda a, b: a + b, leaf, leaf),
        st.builds(lambda a, b: a - b, leaf, leaf),  # possibly negative
        st.builds(lambda a, c: a * c, leaf, st.integers(1, 4)),
    ).filter(lambda d: not (d.is_constant and int(d) < 0))  # (no tensor has a negative size)


_tensors = st.builds(
    lambda shape, dtype: TensorType(None if shape is None else tuple(shape), dtype),
    st.one_of(st.none(), st.lists(_dims(), max_size=4)),
    st.sampled_from(["float32", "int64", None]),
)
_types: st.SearchStrategy[Type] = st.one_of(
    _tensors,
    st.lists(_tensors, max_size=3).map(lambda fs: TupleType(tuple(fs))),
    st.lists(st.lists(_tensors, max_size=2).map(lambda fs: TupleType(tuple(fs))), max_size=2).map(
        lambda fs: TupleType(tuple(fs))
    ),
    st.just(IncompleteType()),
)


@settings(max_examples=400, deadline=None)
@given(_types)
def test_ground_tensor_says_what_is_ground_and_constant_shape_say(t: Type) -> None:
    g = _ground_tensor(t)
    if g == -1:  # asks the general functions: not a tensor (or tuple of them) of known rank/dtype
        return
    assert g == (0 if not is_ground(t) else 2 if _constant_shape(t) else 1)


@settings(max_examples=400, deadline=None)
@given(_types)
def test_nonnegative_as_the_general_walk(t: Type) -> None:
    if type(t) is IncompleteType or not is_ground(t):
        return  # (only ground outputs are asked)
    general = all(d is None or bounds(d)[0] >= 0 for d in _symbolic_dims(t))
    assert _nonnegative(t) == general


def test_eager_placeholders_never_leave_a_run() -> None:
    # an eager run's outputs are ground: the shared placeholders are never part of them
    x = ss.Tensor((2, 3), "float32")
    for _ in range(3):
        out = eager_outputs(get_relation("batch_norm"), (x, *(ss.Tensor((3,), "float32"),) * 4), Attrs(), 1)
        want = "(Tensor[(2, 3), float32], Tensor[(3,), float32], Tensor[(3,), float32])"
        assert out is not None and str(out[0]) == want


@settings(max_examples=300, deadline=None)
@given(_types, _types)
def test_eager_unify_of_two_types_as_before(a: Type, b: Type) -> None:
    # two types that are not placeholders: equal ones unify, others give up
    ctx = _EagerCtx("r", 1, (IncompleteType("type", -1),))
    if type(a) is IncompleteType or type(b) is IncompleteType:
        return
    try:
        got: Any = ctx.unify(a, b)
    except Exception as e:  # NotEager
        got = type(e).__name__
    assert got == (a if a == b else "NotEager")


# -- relations --------------------------------------------------------------------------------------
_const_shapes = st.lists(st.sampled_from([1, 1, 2, 3, 5]), max_size=4)


@settings(max_examples=400, deadline=None)
@given(_const_shapes, _const_shapes)
def test_broadcast_of_constants_is_numpys(sa: list[int], sb: list[int]) -> None:
    ta, tb = ss.Tensor(tuple(sa)), ss.Tensor(tuple(sb))
    ctx = _EagerCtx("broadcast", 2, (IncompleteType("type", -1),))
    try:
        want: Any = np.broadcast_shapes(tuple(sa), tuple(sb))
    except ValueError:
        want = "error"
    try:
        got: Any = broadcast_shapes(ctx, ta, tb)
        got = tuple(int(d) for d in got) if got is not None else None
    except Exception:
        got = "error"
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_dims(), _dims()), min_size=1, max_size=4))
def test_broadcast_fast_pairs_as_pair(pairs: list[tuple[Dim, Dim]]) -> None:
    # every dimension pair as _pair answers it (a refusal or a failure on either side alike)
    ta = ss.Tensor(tuple(a for a, _ in pairs))
    tb = ss.Tensor(tuple(b for _, b in pairs))

    def run(f: Any) -> Any:
        ctx = _EagerCtx("broadcast", 2, (IncompleteType("type", -1),))
        try:
            return f(ctx)
        except Exception as e:
            return type(e).__name__

    got = run(lambda ctx: broadcast_shapes(ctx, ta, tb))

    def by_pairs(ctx: Any) -> Any:
        out = []
        for i in range(1, len(pairs) + 1):  # (from the right, as broadcast_shapes)
            r = _pair(ctx, ta.dims[-i], tb.dims[-i], i, ta, tb)
            if r is None:
                return None
            out.append(r)
        return tuple(reversed(out))

    assert got == run(by_pairs)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_dims(), min_size=2, max_size=2), min_size=1, max_size=4), st.integers(0, 1))
def test_concat_total_is_the_sum(shapes: list[list[Dim]], ax: int) -> None:
    fs = [ss.Tensor(tuple(s)) for s in shapes]
    ctx = _EagerCtx("concatenate", 1, (IncompleteType("type", -1),))
    assert _total(ctx, fs, ax) == sum((f.dims[ax] for f in fs), ZERO)


# -- tensor types, origins, admission, resolution ------------------------------------------------------
@pytest.mark.parametrize(
    "shape",
    [(as_dim(-1),), (as_dim(2), as_dim(-3)), (as_dim(-1), "x"), ("x", as_dim(-1)), (2, -1), [3, 4], (N, 2)],
)
def test_tensor_type_checks_as_before(shape: Any) -> None:
    # the written-out constructor raises (or builds) as the dataclass one with its checks did:
    # the general conversion path decides any shape that is not a tuple of Dims
    def general() -> Any:
        try:
            dims = tuple(as_dim(d) for d in shape)
            for d in dims:
                if d.is_constant and int(d) < 0:
                    raise SymshapeError("negative-dim", "negative")
            return dims
        except SymshapeError as e:
            return e.code

    try:
        got: Any = TensorType(shape).shape
    except SymshapeError as e:
        got = e.code
    assert got == general()


@settings(max_examples=200, deadline=None)
@given(_tensors, st.sampled_from(["w", "conv1/x_0", "a b"]))
def test_annotation_origin_label_is_the_eager_one(ann: TensorType, name: str) -> None:
    o = annotation_origin(name, ann, None, None)
    assert type(o) is AnnotationOrigin and o.kind == "annotation" and o.payload is None
    want = f"`{name}` is annotated `{ann}`"
    c = copy.copy(o)  # a copy made before the label was read prints it too
    assert o.label == want and str(o) == want and o.describe() == want
    p = pickle.loads(pickle.dumps(o))
    for x in (c, p):
        assert (x.kind, x.label, x.seq, x.span) == (o.kind, o.label, o.seq, o.span)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.label = "x"  # frozen, as every origin


@settings(max_examples=200, deadline=None)
@given(_tensors)
def test_admit_of_a_settled_tensor_annotation_as_general(t: TensorType) -> None:
    s = TypeSolver()
    o1, o2 = annotation_origin("a", t, None, None), annotation_origin("b", t, None, None)
    a1, a2 = s.admit(t, o1), s.admit(t, o2)
    assert a1 == t and a2 == t
    assert s.sources[id(a1)][1] is o1 and s.sources[id(a2)][1] is o2
    if a1 is t:  # the first admission keeps the object; the second occurrence gets its own
        assert a2 is not t


@settings(max_examples=200, deadline=None)
@given(st.lists(_tensors, max_size=4))
def test_resolve_of_a_tuple_of_tensors_is_itself(fs: list[TensorType]) -> None:
    t = TupleType(tuple(fs))
    b = Bindings()
    r = b.resolve(t)
    assert r is t and r == type_rebuild(t, [b.resolve(f) for f in fs])


# -- whole programs: the fast generation paths against the general ones ----------------------------------
def _model(shape_n: Any, bind: str) -> tuple[ss.Function, list[Any]]:
    """A small CNN block three ways: weights bound to annotated variables in a dataflow block and
    calls nested (``nested``), every call bound (``flat``), or through lets (``lets``: the general
    path of the generator)."""
    x = ss.var("x", ss.Tensor((shape_n, 3, 8, 8), "float32"))
    w = np.zeros((4, 3, 3, 3), np.float32)
    cw = ss.const(w)
    scale = ss.const(np.ones((4,), np.float32))
    vw = ss.var("w", cw.type)
    vs = ss.var("s", scale.type)

    def body(get: Any) -> Any:
        c = get(ss.ops.conv2d(x, vw, padding=(1, 1)))
        bn = get(ss.ops.batch_norm(c, vs, vs, vs, vs)[0])
        e = get(ss.ops.expand_dims(get(ss.ops.expand_dims(vs, axis=1)), axis=2))
        m = get(ss.ops.multiply(bn, e))
        r = get(ss.ops.relu(m))
        cat = get(ss.ops.concatenate(ss.Tuple([r, c]), axis=1))
        return ss.ops.add(cat, cat)

    if bind == "lets":
        binds: list[tuple[Any, Any]] = []

        def get(v: Any) -> Any:
            u = ss.var(f"t{len(binds)}")
            binds.append((u, v))
            return u

        out = body(get)
        for u, v in reversed(binds):
            out = ss.Let(u, v, out)
        return ss.Function([x], ss.Let(vw, cw, ss.Let(vs, scale, out))), [x]
    flat: list[tuple[Any, Any]] = [(vw, cw), (vs, scale)]

    def bind_all(v: Any) -> Any:
        if bind == "nested":
            return v
        u = ss.var(f"t{len(flat)}")
        flat.append((u, v))
        return u

    out = body(bind_all)
    return ss.Function([x], ss.Dataflow(flat, out)), [x]


@pytest.mark.parametrize("n", [2, N])
def test_generation_paths_agree(n: Any) -> None:
    got = {}
    for how in ("nested", "flat", "lets"):
        f, _ = _model(n, how)
        r = ss.infer(f)
        got[how] = (r.status, str(r.type_of(f)), [str(g) for g in r.guards])
    assert got["nested"] == got["flat"] == got["lets"]
    assert got["nested"][0] == "ok"


def test_weight_bound_to_its_annotation_is_typed_once() -> None:
    # a weight's constant whose type is its variable's annotation (how the ONNX importer binds
    # them) and one with an equal annotation object of its own: same types, same report
    w = np.zeros((4, 3), np.float32)
    c = ss.const(w)
    x = ss.var("x", ss.Tensor((N, 3), "float32"))
    results = []
    for ann in (c.type, ss.Tensor((4, 3), "float32")):
        v = ss.var("w", ann)
        f = ss.Function([x], ss.Dataflow([(v, c)], ss.ops.dense(x, v)))
        r = ss.infer(f)
        results.append((r.status, str(r.type_of(f)), r.report()))
    assert results[0] == results[1] and results[0][0] == "ok"


def test_weight_of_a_wrong_shape_still_reports_its_annotation() -> None:
    # the lazy label of a weight's annotation is what the report prints
    x = ss.var("x", ss.Tensor((N, 3), "float32"))
    c = ss.const(np.zeros((4, 5), np.float32))
    v = ss.var("w", c.type)
    r = ss.infer(ss.Function([x], ss.Dataflow([(v, c)], ss.ops.dense(x, v))))
    assert r.status == "error"
    assert "`w` is annotated `Tensor[(4, 5), float32]`" in r.report()


def test_tuple_index_attributes_are_shared() -> None:
    from symshape.ir.infer import _index_attrs

    a, la = _index_attrs(0)
    b, lb = _index_attrs(0)
    assert a is b and la == lb == "tuple index .0" and a == Attrs({"index": 0})
