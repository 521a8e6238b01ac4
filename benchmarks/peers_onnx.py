"""The ONNX peer: the same workloads built with ``onnx.helper``, typed by ``onnx.shape_inference``.

Symbolic dimensions are ``dim_param`` strings (``"n"``, ``"s"``). Weights are graph inputs with
typed shapes rather than initializers (shape inference only needs their types, and ResNet-50's
25 M parameters would dominate the model size). ``infer_shapes`` runs with ``strict_mode=True`` (an
inconsistency raises) and ``data_prop=True`` (so ``Reshape`` back to ``Shape(x)`` keeps ``n`` and
``s``; without it ONNX loses the dimensions after the first reshape).

ONNX does no symbolic arithmetic: ``Reshape`` to ``(-1, 64)`` and a convolution over a symbolic
height produce fresh or unknown dimensions, not ``n*s`` or ``(h - 1)//2 + 1``. The timing covers
building the model and inferring its shapes.
"""

from __future__ import annotations

from typing import Any

from benchmarks.specs import FEATURES, NUM_CLASSES, POOL, ConvSpec, chain_ops, error_index, resnet50

__all__ = ["NAME", "version", "transformer_chain", "resnet50_net"]

NAME = "onnx"
OPSET = 18  # LayerNormalization needs 17


def version() -> str | None:
    """The installed ``onnx`` version, or None when it is missing or does not import."""
    try:
        import onnx
    except Exception:
        return None
    return str(onnx.__version__)


def _value(name: str, shape: list[Any]) -> Any:
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _infer(nodes: list[Any], inputs: list[Any], out: str, inits: list[Any]) -> dict[str, Any]:
    import onnx
    from onnx import TensorProto, helper, shape_inference

    graph = helper.make_graph(
        nodes, "bench", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except onnx.shape_inference.InferenceError as e:
        text = str(e).strip()
        return {"status": "error", "type": None, "message": text.splitlines()[0] if text else "error"}
    t = inferred.graph.output[0].type.tensor_type
    dims = [d.dim_param or (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.shape.dim]
    return {"status": "ok", "type": f"({', '.join(dims)})"}


def transformer_chain(n_ops: int, inject_error: bool = False) -> dict[str, Any]:
    """Workload (a) (and (c) with ``inject_error``): the chain over ``(n, s, 64)``."""
    from onnx import TensorProto, helper

    inputs = [
        _value("x", ["n", "s", 64]),
        _value("w", [64, 64]),
        _value("gamma", [64]),
        _value("beta", [64]),
    ]
    if inject_error:
        inputs.append(_value("w_bad", [65, 64]))
    inits = [helper.make_tensor("flat_shape", TensorProto.INT64, [2], [-1, 64])]
    nodes = [helper.make_node("Shape", ["x"], ["x_shape"])]
    bad = error_index(n_ops) if inject_error else -1
    y = "x"
    for i, name in enumerate(chain_ops(n_ops)):
        o = f"v{i}"
        if name == "matmul":
            nodes.append(helper.make_node("MatMul", [y, "w_bad" if i == bad else "w"], [o]))
        elif name == "add":
            nodes.append(helper.make_node("Add", [y, "x"], [o]))
        elif name == "reshape_flat":
            nodes.append(helper.make_node("Reshape", [y, "flat_shape"], [o]))
        elif name == "reshape_back":
            nodes.append(helper.make_node("Reshape", [y, "x_shape"], [o]))
        elif name == "softmax":
            nodes.append(helper.make_node("Softmax", [y], [o], axis=-1))
        elif name == "layer_norm":
            nodes.append(helper.make_node("LayerNormalization", [y, "gamma", "beta"], [o], axis=-1))
        else:  # pragma: no cover
            raise AssertionError(name)
        y = o
    return _infer(nodes, inputs, y, inits)


def _conv(nodes: list[Any], inputs: list[Any], y: str, c: ConvSpec) -> str:
    from onnx import helper

    w = f"{c.name}.weight"
    bn = [f"{c.name}.bn.{p}" for p in ("gamma", "beta", "mean", "var")]
    inputs.append(_value(w, [c.cout, c.cin, c.kernel, c.kernel]))
    inputs += [_value(p, [c.cout]) for p in bn]
    nodes.append(
        helper.make_node(
            "Conv",
            [y, w],
            [f"{c.name}.out"],
            kernel_shape=[c.kernel, c.kernel],
            strides=[c.stride, c.stride],
            pads=[c.pad] * 4,
        )
    )
    nodes.append(helper.make_node("BatchNormalization", [f"{c.name}.out", *bn], [f"{c.name}.bn.out"]))
    return f"{c.name}.bn.out"


def resnet50_net() -> dict[str, Any]:
    """Workload (b): ResNet-50 over ``(b, 3, h, w)`` with symbolic batch, height and width."""
    from onnx import helper

    stem, blocks = resnet50()
    inputs = [_value("x", ["b", 3, "h", "w"]), _value("fc.weight", [NUM_CLASSES, FEATURES])]
    nodes: list[Any] = []

    def relu(y: str) -> str:
        nodes.append(helper.make_node("Relu", [y], [f"{y}.relu"]))
        return f"{y}.relu"

    y = relu(_conv(nodes, inputs, "x", stem))
    k, st, p = POOL["pool_size"], POOL["stride"], POOL["pad"]
    nodes.append(
        helper.make_node("MaxPool", [y], ["pool"], kernel_shape=[k, k], strides=[st, st], pads=[p] * 4)
    )
    y = "pool"
    for blk in blocks:
        inp = y
        y = relu(_conv(nodes, inputs, y, blk.conv1))
        y = relu(_conv(nodes, inputs, y, blk.conv2))
        y = _conv(nodes, inputs, y, blk.conv3)
        sc = inp if blk.downsample is None else _conv(nodes, inputs, inp, blk.downsample)
        nodes.append(helper.make_node("Add", [y, sc], [f"{blk.name}.add"]))
        y = relu(f"{blk.name}.add")
    nodes.append(helper.make_node("GlobalAveragePool", [y], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], axis=1))
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight"], ["logits"], transB=1))
    return _infer(nodes, inputs, "logits", [])
