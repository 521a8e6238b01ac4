"""A 12-layer BERT-style encoder as an ONNX model, built with ``onnx.helper`` (no downloads).

The graph is what exporters and onnxruntime's transformer optimizer leave for an encoder with a
dynamic batch and sequence: inputs ``input_ids``, ``position_ids`` and ``attention_mask``, all
``(batch, seq)`` int64; token and position embeddings (``Gather``) and a ``LayerNormalization``;
then per layer a post-norm block of self-attention (``MatMul`` + ``Add`` projections, heads split
by ``Reshape`` to ``[0, 0, heads, head_dim]`` and ``Transpose``, scaled scores plus the additive
padding mask ``(1 - mask) * -10000`` of shape ``(batch, 1, 1, seq)``, ``Softmax``, heads merged by
``Reshape [0, 0, -1]``) and a GELU MLP written out with ``Erf`` as the TorchScript exporter writes
it; ``LayerNormalization`` after both. Output ``last_hidden_state`` is ``(batch, seq, hidden)``.

No node needs shape values (the ``0`` in a ``Reshape`` target copies a dimension), so every peer
can infer the whole model. :func:`path` writes it once per process to a temporary directory.

>>> m = build(layers=2, hidden=32, heads=4, ffn=64, vocab=50, max_pos=16)
>>> len(m.graph.node) == node_count(2), [i.name for i in m.graph.input]
(True, ['input_ids', 'position_ids', 'attention_mask'])
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

__all__ = ["build", "path", "node_count", "NAME", "LAYERS"]

NAME = "transformer12"
LAYERS = 12

_CACHE: dict[tuple[int, ...], str] = {}


def build(
    layers: int = LAYERS,
    hidden: int = 128,
    heads: int = 4,
    ffn: int = 512,
    vocab: int = 1000,
    max_pos: int = 512,
    seed: int = 0,
) -> Any:
    """The encoder as an ``onnx.ModelProto`` (opset 17)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes: list[Any] = []
    inits: list[Any] = []

    def weight(name: str, *shape: int) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=f"/{output}", **attrs))
        return output

    head_dim = hidden // heads
    split = const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge = const("merge_heads", np.array([0, 0, -1], np.int64))
    scale = const("scale", np.array(np.sqrt(head_dim), np.float32))
    one = const("one", np.array(1.0, np.float32))
    neg = const("neg_inf", np.array(-10000.0, np.float32))
    sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = const("half", np.array(0.5, np.float32))
    mask_axes = const("mask_axes", np.array([1, 2], np.int64))

    def layer_norm(x: str, prefix: str) -> str:
        g = const(f"{prefix}.weight", np.ones(hidden, np.float32))
        b = const(f"{prefix}.bias", np.zeros(hidden, np.float32))
        return node("LayerNormalization", [x, g, b], f"{prefix}/ln", axis=-1, epsilon=1e-12)

    def linear(x: str, prefix: str, n_in: int, n_out: int) -> str:
        mm = node("MatMul", [x, weight(f"{prefix}.weight", n_in, n_out)], f"{prefix}/MatMul")
        return node("Add", [mm, weight(f"{prefix}.bias", n_out)], f"{prefix}/Add")

    tok = node("Gather", [weight("embeddings.word", vocab, hidden), "input_ids"], "embeddings/tok")
    pos = node("Gather", [weight("embeddings.position", max_pos, hidden), "position_ids"], "embeddings/pos")
    x = layer_norm(node("Add", [tok, pos], "embeddings/add"), "embeddings.norm")
    m = node("Unsqueeze", ["attention_mask", mask_axes], "mask/unsqueeze")
    m = node("Cast", [m], "mask/cast", to=TensorProto.FLOAT)
    m = node("Mul", [node("Sub", [one, m], "mask/sub"), neg], "mask/bias")

    for i in range(layers):
        p = f"layer.{i}"

        def heads_of(name: str, perm: list[int], x: str = x, p: str = p) -> str:
            h = linear(x, f"{p}.attention.{name}", hidden, hidden)
            h = node("Reshape", [h, split], f"{p}.attention.{name}/Reshape")
            return node("Transpose", [h], f"{p}.attention.{name}/Transpose", perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        s = node("MatMul", [q, k], f"{p}.attention/scores")
        s = node("Div", [s, scale], f"{p}.attention/scaled")
        s = node("Add", [s, m], f"{p}.attention/masked")
        s = node("Softmax", [s], f"{p}.attention/Softmax", axis=-1)
        c = node("MatMul", [s, v], f"{p}.attention/context")
        c = node("Transpose", [c], f"{p}.attention/merge/Transpose", perm=[0, 2, 1, 3])
        c = node("Reshape", [c, merge], f"{p}.attention/merge/Reshape")
        a = linear(c, f"{p}.attention.output", hidden, hidden)
        x = layer_norm(node("Add", [a, x], f"{p}.attention/residual"), f"{p}.attention.norm")
        h = linear(x, f"{p}.intermediate", hidden, ffn)
        e = node("Erf", [node("Div", [h, sqrt2], f"{p}.gelu/Div")], f"{p}.gelu/Erf")
        h = node("Mul", [h, node("Add", [e, one], f"{p}.gelu/Add")], f"{p}.gelu/Mul")
        h = node("Mul", [h, half], f"{p}.gelu/Mul_1")
        o = linear(h, f"{p}.output", ffn, hidden)
        x = layer_norm(node("Add", [o, x], f"{p}.output/residual"), f"{p}.output.norm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="/output"))

    names = ("input_ids", "position_ids", "attention_mask")
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"]) for n in names]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "encoder", ids, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def node_count(layers: int = LAYERS) -> int:
    """The number of nodes of :func:`build`'s model: 34 per layer, 9 around them."""
    return 9 + 34 * layers


def path(layers: int = LAYERS) -> str:
    """The model written to a temporary file (once per process and size)."""
    key = (layers,)
    hit = _CACHE.get(key)
    if hit is not None and os.path.exists(hit):
        return hit
    import onnx

    d = tempfile.mkdtemp(prefix="symshape-bench-")
    p = os.path.join(d, f"{NAME if layers == LAYERS else f'transformer{layers}'}.onnx")
    onnx.save(build(layers), p)
    _CACHE[key] = p
    return p
