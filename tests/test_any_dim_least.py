"""A ``?`` a relation gives for a size the run decides may be 0 (``fresh_any(0)``); an
annotation's ``?`` is at least 1. Both print ``?``; the bound is kept through bounds, pickling
(other hash seeds) and the solver's memo keys (two conditions alike but for it are not one)."""

from __future__ import annotations

import pickle

import symshape as ss
from symshape.encoding.conds import ge
from symshape.encoding.dim_bounds import bounds
from symshape.encoding.dims import fresh_any
from symshape.solver.alpha import alpha_key, alpha_types_key


def test_bounds_and_printing() -> None:
    run, ann = fresh_any(0), fresh_any()
    assert (str(run), str(ann)) == ("?", "?")
    assert bounds(run)[0] == 0 and bounds(ann)[0] == 1


def test_pickling_keeps_the_bound() -> None:
    run = fresh_any(0)
    back = pickle.loads(pickle.dumps(run))
    assert back == run and bounds(back)[0] == 0


def test_memo_keys_tell_the_bounds_apart() -> None:
    assert alpha_key("c", [ge(fresh_any(0), 1)]) != alpha_key("c", [ge(fresh_any(), 1)])
    run, ann = ss.Tensor((fresh_any(0),), "int64"), ss.Tensor((fresh_any(),), "int64")
    assert alpha_types_key([run]) != alpha_types_key([ann])
