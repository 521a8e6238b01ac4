"""``Dim.has_unknowns`` reads the cached answers of the dimensions inside composite atoms
(dim_atoms.terms_have_unknowns): the same as scanning every atom for a solver unknown."""

from __future__ import annotations

import random

import pytest

from symshape.encoding.dim_atoms import DimVar
from symshape.encoding.dim_expr import Dim, _atom_dim, dmax, dmin, floordiv, mod
from symshape.encoding.dims import dim

n, s = dim("n"), dim("s")


def _random_dim(rng: random.Random, depth: int = 0) -> Dim:
    leaf = rng.choice([n, s, _atom_dim(DimVar(rng.randrange(1, 4))), n + 2])
    r = rng.randrange(6 if depth < 3 else 2)
    if r == 0:
        return leaf
    if r == 1:
        return 3 * leaf + n
    if r == 2:
        return floordiv(_random_dim(rng, depth + 1), s + rng.randrange(1, 3))
    if r == 3:
        return mod(n * s, _random_dim(rng, depth + 1) + 1)
    if r == 4:
        return dmax(_random_dim(rng, depth + 1), _random_dim(rng, depth + 1))
    return dmin(n, _random_dim(rng, depth + 1)) * s


@pytest.mark.parametrize("seed", range(10))
def test_has_unknowns_is_an_unknown_among_the_atoms(seed: int) -> None:
    rng = random.Random(seed)
    seen = set()
    for _ in range(80):
        d = _random_dim(rng)
        want = any(isinstance(a, DimVar) for a in d.atoms())
        assert d.has_unknowns is want
        assert d.has_unknowns is want  # cached
        seen.add(want)
    assert seen == {True, False}
