"""A hypothesis strategy of small random ``nn.Module`` programs over symbolic input sizes, for the
PyTorch differential fuzzer (:mod:`tests.torch.test_torch_tf_differential_fuzz`).

A program has one to three inputs whose dimensions are constants or symbols (``a``, ``b``,
``c``, shared across inputs; declared ``min=0`` in some programs), then 2-6 steps, each applied
to an earlier value (the latest one: a chain, or any: a DAG). Secondary operands are new inputs
shaped after the value they combine with (the same dimension, a 1, another symbol, a constant),
earlier values, Python scalars or 0-d tensors. Every value is returned, so that every
intermediate is compared (the oracle records every fx node anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from tests.torch.fuzz_torch_builder import SIZES, SYMBOLS, Builder, Program, Step
from tests.torch.fuzz_torch_steps import (
    binary,
    cast,
    cat,
    expand,
    flatten,
    index,
    narrow,
    permute,
    reshape,
    slice_,
    split,
    squeeze,
    unary,
    unsqueeze,
)
from tests.torch.fuzz_torch_steps_nn import (
    conv,
    cumsum,
    embedding,
    gather,
    interpolate,
    linear,
    matmul,
    norm,
    pad,
    pool,
    reduce,
    softmax,
    topk,
    where,
)

__all__ = ["DIM_OPS", "OPS", "Program", "programs"]

#: steps that take a dim of their value (torch wraps dims 0 and -1 of a 0-d tensor)
DIM_OPS = frozenset(
    {
        "permute",
        "squeeze",
        "split",
        "narrow",
        "slice",
        "index",
        "reduce",
        "softmax",
        "cumsum",
        "topk",
        "gather",
        "flatten",
        "cat",
        "expand",
        "pad",
    }
)

OPS: dict[str, Step] = {
    "unary": unary,
    "cast": cast,
    "binary": binary,
    "reshape": reshape,
    "flatten": flatten,
    "permute": permute,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "expand": expand,
    "cat": cat,
    "split": split,
    "narrow": narrow,
    "slice": slice_,
    "index": index,
    "matmul": matmul,
    "linear": linear,
    "reduce": reduce,
    "softmax": softmax,
    "cumsum": cumsum,
    "topk": topk,
    "where": where,
    "gather": gather,
    "embedding": embedding,
    "conv": conv,
    "pool": pool,
    "norm": norm,
    "pad": pad,
    "interpolate": interpolate,
}


@st.composite
def programs(
    draw: Callable[[Any], Any],
    ops: Sequence[str] = tuple(OPS),
    max_steps: int = 6,
    avoid: frozenset[str] = frozenset(),
) -> Program:
    """A random program (see the module docstring) and sizes to compare it at, without the
    patterns ``avoid``."""
    symbols = tuple(draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, max_size=3, unique=True)))
    zero = draw(st.integers(0, 3)) == 0  # symbols declared min=0, compared at 0 too
    b = Builder(draw, symbols, avoid, zero)
    for _ in range(draw(st.integers(1, 2))):
        b.new_input("float32", [b.input_dim() for _ in range(draw(st.integers(1, 4)))])
    names: list[str] = []
    for _ in range(draw(st.integers(2, max_steps))):
        x = b.values[-1] if draw(st.booleans()) else draw(st.sampled_from(b.values))
        op = draw(st.sampled_from(list(ops)))
        if x.rank == 0 and op in DIM_OPS and "zero-d-dims" in avoid:
            continue
        if OPS[op](b, x) is not None:
            names.append(op)
    # the symbols often coincide (broadcasts need it): each size takes its values from two
    pool = st.lists(st.sampled_from(((0,) if zero else ()) + SIZES), min_size=2, max_size=2).flatmap(
        lambda vs: st.fixed_dictionaries({s: st.sampled_from(vs) for s in symbols})
    )
    sizes = draw(st.lists(pool, min_size=3, max_size=5))
    edges = [{s: 1 for s in symbols}] + ([{s: 0 for s in symbols}] if zero else [])
    return Program(b.source(), tuple(b.inputs), symbols, tuple(edges + sizes), tuple(names), zero)
