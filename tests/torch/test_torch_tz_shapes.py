"""Shape calls at empty sizes (session 14, "tz"), each a finding of the torch differential fuzzer
made exact: ``unflatten`` with ``-1`` (torch divides the axis' size alone), ``flatten`` of known
rank (merges: a reshape's ``-1`` is ambiguous where an axis is 0) and of a 0-d tensor (1-d),
``F.pad`` that crops and pads one axis (torch narrows first), ``expand`` with a new leading axis
of 1, ``flatten(-1, 0)`` after ``-x``. Each case is a function of one input with symbolic sizes
(``min=0``); at every size of a grid including 0 and 1, ``valid_at`` is True exactly where eager
torch runs, and where it runs every node's shape is symshape's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from tests.torch.test_torch_tz_empty import Direct, check

CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("unflatten (2, -1) of a 1-wide axis", lambda x: x.view(-1, 1).unflatten(-1, (2, -1)), ("a",)),
    ("unflatten (2, -1)", lambda x: x.unflatten(1, (2, -1)), ("a", "b")),
    ("unflatten (2, -1) of 3", lambda x: x.unflatten(1, (2, -1)), ("a", 3)),
    ("unflatten (-1, 2, 1) from the end", lambda x: x.relu().unflatten(-1, (-1, 2, 1)), ("a", "b")),
    ("unflatten (2, 2)", lambda x: x.unflatten(1, (2, 2)), ("a", "b")),
    ("unflatten (0, -1)", lambda x: x.unflatten(1, (0, -1)), ("a", "b")),
    ("unflatten (n // 2, -1)", lambda x: (x + 1).unflatten(1, (x.shape[1] // 2, -1)), (3, "n")),
    ("flatten(1, -1) of 2-d", lambda x: x.flatten(1, -1), ("a", "a")),
    ("flatten(1) of 3-d", lambda x: x.flatten(1), ("a", "b", "c")),
    ("flatten(2, -1) after unsqueeze", lambda x: x.unsqueeze(0).abs().flatten(2, -1), ("a", "a")),
    ("flatten(0, 0) of 0-d", lambda x: x.sum().flatten(0, 0), ("a",)),
    ("flatten(-1, -1) of 0-d", lambda x: x.sum().flatten(-1, -1), ("a",)),
    ("flatten(0, 0) of 2-d", lambda x: x.relu().flatten(0, 0), ("a", "b")),
    ("flatten(-1, 0) after -x", lambda x: (-x).flatten(-1, 0), ("a",)),
    ("pad (-1, 1)", lambda x: F.pad(x, (-1, 1)), ("a",)),
    ("pad (1, -1)", lambda x: F.pad(x, (1, -1)), ("a", "b")),
    ("pad (0, 0, -1, 2)", lambda x: F.pad(x, (0, 0, -1, 2)), ("a", "b")),
    ("pad (2, -3) by 1.0", lambda x: F.pad(x.relu(), (2, -3), value=1.0), ("a", "b")),
    ("pad (-1, -1)", lambda x: F.pad(x, (-1, -1)), ("a", "b")),
    ("expand(1, -1, -1) after view", lambda x: x.view(-1, 1).expand(1, -1, -1), ("a",)),
    ("flatten(-2, -1) of a 1-d product", lambda x: (x @ x.t()[0]).flatten(-2, -1), ("a", "a")),
    ("flatten(-2, -1) of a 2-d product", lambda x: (x @ x.t()).flatten(-2, -1), ("a", "a")),
    ("expand(1, -1, -1)", lambda x: x.abs().expand(1, -1, -1), ("a", "a")),
    ("expand(1, 2, -1, -1)", lambda x: x.abs().expand(1, 2, -1, -1), ("a", "a")),
    ("expand(1, 1, -1)", lambda x: x.abs().expand(1, 1, -1), ("a", "a")),
]


@pytest.mark.parametrize("name, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_shapes_as_torch(name: str, fn: Callable[..., Any], shape: tuple[Any, ...]) -> None:
    big = len({d for d in shape if isinstance(d, str)}) >= 3
    check(lambda: fn, shape, Direct, range(0, 3) if big else range(0, 5))


def test_unflatten_minus_one_is_refused_where_it_does_not_divide() -> None:
    """torch refuses ``(a, 3).unflatten(1, (2, -1))`` at every ``a``, 0 included."""
    with pytest.raises(RuntimeError):
        torch.zeros(0, 3).unflatten(1, (2, -1))
    import symshape as ss
    import symshape.torch as sst

    a = ss.dim("a", min=0)
    res = sst.infer(Direct(lambda x: x.unflatten(1, (2, -1))), {"x": ss.Tensor((a, 3), "float32")})
    assert res.status == "error", res.report()
