"""The core's cheaper paths of this round against the general ones they stand for:

* a plain copy of a tensor type carries its original's hash (computed once): the same hash the
  constructor's type computes, and a pickled copy drops it;
* the fast broadcast answers with an input type itself when the result has its shape (the eager
  run builds an equal type);
"""

from __future__ import annotations

import pickle
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape.encoding.leaf_types import plain_copy
from symshape.encoding.types import Attrs, TensorType
from symshape.relations import get_relation
from symshape.solver.eager import eager_outputs
from symshape.solver.eager_fast import FAST
from test_eager_fast import _bend, _size

_DTYPES = st.sampled_from(["float32", "float16", "int64", "bool"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_size, max_size=4), _DTYPES, st.booleans())
def test_a_plain_copy_hashes_as_the_constructors_type(shape: list[int], dtype: str, hashed: bool) -> None:
    t = ss.Tensor(tuple(shape), dtype)
    if hashed:
        hash(t)  # (the original's hash cached first, or computed by the copy)
    c = plain_copy(t)
    fresh = TensorType(t.shape, t.dtype)
    assert c == fresh and hash(c) == hash(fresh) == hash(t)
    assert c.__dict__["_hash"] == hash(fresh)  # (set by the copy, not on first use)
    assert {k: v for k, v in c.__dict__.items() if k != "_hash"} == TensorType(t.shape, t.dtype).__dict__
    back = pickle.loads(pickle.dumps(c))
    assert back == c and "_hash" not in back.__dict__ and hash(back) == hash(c)
    # copies of copies keep it; a symbolic shape is copied without it (hashed when first used)
    assert plain_copy(c).__dict__["_hash"] == hash(fresh)
    s = plain_copy(ss.Tensor((ss.dim("n"), 2), dtype))
    assert "_hash" not in s.__dict__


@settings(max_examples=500, deadline=None)
@given(data=st.data(), op=st.sampled_from(["add", "multiply", "broadcast"]))
def test_the_fast_broadcast_answers_with_an_input_of_the_results_shape(data: st.DataObject, op: str) -> None:
    base = data.draw(st.lists(_size, max_size=4))
    sa = _bend(data, base)
    sb = _bend(data, base[data.draw(st.integers(0, len(base))) :])
    if data.draw(st.booleans()):
        sa, sb = sb, sa
    dt = data.draw(_DTYPES)
    a, b = ss.Tensor(sa, dt), ss.Tensor(sb, dt)
    rdef = get_relation(op)
    fast: Any = FAST[rdef]((a, b), Attrs())
    slow = eager_outputs(rdef, (a, b), Attrs(), 1)
    if fast is None:
        return
    assert slow is not None
    want: Any = slow[0]
    assert want == fast and want.__dict__ == TensorType(fast.shape, dt).__dict__
    # an input is the answer exactly when the result has its shape (the first input preferred)
    if want.shape == a.shape:
        assert fast is a
    elif want.shape == b.shape:
        assert fast is b
    else:
        assert fast is not a and fast is not b
