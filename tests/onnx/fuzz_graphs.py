"""A hypothesis strategy of small random ONNX graphs over symbolic input sizes, for the
differential fuzzer (:mod:`tests.onnx.test_onnx_differential_fuzz`).

A graph has one to three graph inputs whose dimensions are constants or ``dim_param`` symbols
(``a``, ``b``, ``c``, shared across inputs), then 2-6 operator steps (a step may add a few helper
nodes: ``Shape``/``Gather``/``Concat`` building a reshape target, say), each applied to an
earlier value (the latest one: a chain, or any: a DAG). Secondary operands are new graph inputs
shaped after the value they combine with (the same dimension, a 1, another symbol, a constant)
or constants. The generator knows each value's rank and, where it can, its dimensions (``None``
where it cannot): enough to draw plausible attributes; whether the graph runs at a size is the
oracle's business (onnxruntime), never the generator's.

Every node output is a graph output, so that every intermediate shape is compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from onnx import helper
from tests.onnx.fuzz_builder import AVOID, SIZES, SYMBOLS, Builder, Graph, Step
from tests.onnx.fuzz_steps import (
    binary,
    cast,
    concat,
    expand,
    gather,
    gather_elements,
    pad,
    reshape,
    slice_,
    split,
    squeeze,
    tile,
    transpose,
    unary,
    unsqueeze,
)
from tests.onnx.fuzz_steps_nn import (
    compare,
    compress,
    constant_of_shape,
    conv,
    cumsum,
    einsum,
    flatten,
    gather_nd,
    gemm,
    matmul,
    normalize,
    one_hot,
    pool,
    range_,
    reduce,
    resize,
    scatter_elements,
    scatter_nd,
    topk,
    trilu,
    where,
)
from tests.onnx.fuzz_steps_ops import (
    attention,
    center_crop_pad,
    contrib,
    conv_transpose,
    depth_space,
    eye_like,
    grid_sample,
    pool_more,
    resize_computed,
    rnn,
    shape_size,
)
from tests.onnx.fuzz_steps_rt import (
    cumsum_rt,
    gather_rt,
    nonzero,
    one_hot_rt,
    pad_rt,
    reduce_rt,
    reverse_sequence,
    slice_rt,
    squeeze_all,
    tile_rt,
    topk_rt,
    unique,
)

from symshape.onnx.dtypes import to_elem_type

__all__ = ["AVOID", "Graph", "OPS", "SYMBOLS", "graphs"]

OPS: dict[str, Step] = {
    "unary": unary,
    "cast": cast,
    "binary": binary,
    "reshape": reshape,
    "expand": expand,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "transpose": transpose,
    "concat": concat,
    "split": split,
    "slice": slice_,
    "gather": gather,
    "gather_elements": gather_elements,
    "tile": tile,
    "pad": pad,
    "matmul": matmul,
    "gemm": gemm,
    "conv": conv,
    "pool": pool,
    "reduce": reduce,
    "where": where,
    "range": range_,
    "constant_of_shape": constant_of_shape,
    "topk": topk,
    "flatten": flatten,
    "resize": resize,
    "gather_nd": gather_nd,
    "scatter_elements": scatter_elements,
    "scatter_nd": scatter_nd,
    "one_hot": one_hot,
    "compress": compress,
    "compare": compare,
    "normalize": normalize,
    "cumsum": cumsum,
    "trilu": trilu,
    "einsum": einsum,
    "gather_rt": gather_rt,
    "slice_rt": slice_rt,
    "topk_rt": topk_rt,
    "pad_rt": pad_rt,
    "tile_rt": tile_rt,
    "one_hot_rt": one_hot_rt,
    "cumsum_rt": cumsum_rt,
    "reduce_rt": reduce_rt,
    "reverse_sequence": reverse_sequence,
    "nonzero": nonzero,
    "unique": unique,
    "squeeze_all": squeeze_all,
    "depth_space": depth_space,
    "grid_sample": grid_sample,
    "conv_transpose": conv_transpose,
    "pool_more": pool_more,
    "rnn": rnn,
    "attention": attention,
    "contrib": contrib,
    "resize_computed": resize_computed,
    "center_crop_pad": center_crop_pad,
    "eye_like": eye_like,
    "shape_size": shape_size,
}


@st.composite
def graphs(
    draw: Callable[[Any], Any],
    ops: Sequence[str] = tuple(OPS),
    max_steps: int = 6,
    avoid: frozenset[str] = frozenset(),
) -> Graph:
    """A random graph (see the module docstring) and sizes to compare it at, without the
    patterns ``avoid`` (names in :data:`AVOID`)."""
    symbols = tuple(draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, max_size=3, unique=True)))
    opset = draw(st.sampled_from([13, 17, 18, 18, 19, 21]))
    zero = draw(st.integers(0, 4)) == 0  # symbols declared min=0, compared at 0 too
    b = Builder(draw, opset, symbols, avoid, zero)
    for _ in range(draw(st.integers(1, 2))):
        b.new_input("float32", [b.input_dim() for _ in range(draw(st.integers(1, 4)))])
    names: list[str] = []
    for _ in range(draw(st.integers(2, max_steps))):
        x = b.values[-1] if draw(st.booleans()) else draw(st.sampled_from(b.values))
        op = draw(st.sampled_from(list(ops)))
        if OPS[op](b, x) is not None:
            names.append(op)
    ins = [helper.make_tensor_value_info(v.name, to_elem_type(v.dtype), list(v.dims)) for v in b.inputs]
    outs = [helper.make_empty_tensor_value_info(o) for n in b.nodes for o in n.output]
    g = helper.make_graph(b.nodes, "fuzz", ins, outs, b.inits)
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in sorted(b.domains)]
    model = helper.make_model(g, opset_imports=imports)
    model.ir_version = 8 if opset < 21 else 10
    # the symbols often coincide (broadcasts need it): each size takes its values from two
    pool = st.lists(st.sampled_from(((0,) if zero else ()) + SIZES), min_size=2, max_size=2).flatmap(
        lambda vs: st.fixed_dictionaries({s: st.sampled_from(vs) for s in symbols})
    )
    sizes = draw(st.lists(pool, min_size=3, max_size=5))
    inputs = tuple((v.name, v.dtype, tuple(d for d in v.dims if d is not None)) for v in b.inputs)
    return Graph(model, symbols, tuple(sizes), tuple(names), inputs, dict(b.ranges), zero)
