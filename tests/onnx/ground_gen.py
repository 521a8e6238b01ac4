"""Random small ONNX models over the ground walk's operators, for the agreement test.

:func:`model` builds one model from a ``random.Random``: a graph input of a random constant shape
(sizes named ``N`` and ``S`` in a third of them, now and then a 0 size or another element type),
one to three nodes of the ground operators with random attributes (valid ones as a rule,
out-of-range ones, unknown ones and wrong shapes now and then), and declared output types that
are right, unknown or wrong. About a third of them are models the ground walk answers.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["model"]

_FLOAT = TensorProto.FLOAT
_UNARY = [
    "Relu",
    "Sigmoid",
    "Tanh",
    "Exp",
    "Erf",
    "Identity",
    "Elu",
    "LeakyRelu",
    "HardSigmoid",
    "Neg",
    "HardSwish",
]


class _Builder:
    def __init__(self, rng: random.Random, opset: int) -> None:
        self.rng = rng
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.k = 0

    def name(self, hint: str) -> str:
        self.k += 1
        return f"{hint}{self.k}"

    def dim(self) -> int:
        r = self.rng.random()
        return 0 if r < 0.02 else self.rng.randint(1, 6)

    def shape(self, rank: int | None = None) -> list[int]:
        return [self.dim() for _ in range(self.rng.randint(1, 4) if rank is None else rank)]

    def input(self, shape: list[int], et: int = _FLOAT) -> str:
        name = self.name("in")
        dims: list[Any] = list(shape)
        if self.rng.random() < 0.3:  # symbolic sizes: N and S (also where the walk needs a size)
            dims = [self.rng.choice(["N", "S"]) if self.rng.random() < 0.4 else d for d in dims]
        if self.rng.random() < 0.03:
            et = self.rng.choice([TensorProto.INT64, TensorProto.DOUBLE, TensorProto.FLOAT16])
        self.inputs.append(helper.make_tensor_value_info(name, et, dims))
        return name

    def weight(self, shape: list[int], et: int = _FLOAT) -> str:
        """A constant of ``shape``: a ConstantOfShape of an int64 initializer (as the light
        models' weights), or a float initializer."""
        name = self.name("w")
        r = self.rng.random()
        if r < 0.5:
            zeros = np.zeros(shape, helper.tensor_dtype_to_np_dtype(et))
            t = numpy_helper.from_array(zeros, name)
            if r < 0.1:
                self.nodes.append(helper.make_node("Constant", [], [name], value=t))
            else:
                self.inits.append(t)
            return name
        sname = self.name("shape")
        self.inits.append(numpy_helper.from_array(np.array(shape, np.int64), sname))
        fill = helper.make_tensor("value", et, [1], [0.5] if et != TensorProto.INT64 else [1])
        self.nodes.append(helper.make_node("ConstantOfShape", [sname], [name], value=fill))
        return name

    def ints(self, values: list[int]) -> str:
        """An int64 vector: an initializer, or a Constant node."""
        name = self.name("c")
        t = numpy_helper.from_array(np.array(values, np.int64), name)
        if self.rng.random() < 0.3:
            self.nodes.append(helper.make_node("Constant", [], [name], value=t))
        else:
            self.inits.append(t)
        return name

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> list[str]:
        outs = [self.name("v") for _ in range(n_out)]
        if self.rng.random() < 0.02:
            attrs["bogus"] = 1
        self.nodes.append(helper.make_node(op, inputs, outs, **attrs))
        return outs


def _maybe(rng: random.Random, p: float = 0.5) -> bool:
    return rng.random() < p


def _axis(rng: random.Random, rank: int) -> int:
    return rng.randint(-rank - 1, rank)


def _step(b: _Builder, x: str, shape: list[int]) -> str:
    """One node over ``x`` (of ``shape``, as built: the node's own checks decide)."""
    rng = b.rng
    r = len(shape)
    kind = rng.choice(
        ["unary", "binary", "variadic", "softmax", "lrn", "dropout", "matmul", "gemm", "conv", "pool",
         "global", "bn", "reshape", "flatten", "concat", "unsqueeze", "transpose", "gather", "cast",
         "layernorm", "clip", "prelu", "squeeze", "reduce", "split", "expand", "pad"]
    )  # fmt: skip
    if kind == "unary":
        return b.node(rng.choice(_UNARY), [x])[0]
    if kind == "clip":
        if b.opset < 11:
            return b.node("Clip", [x], **({"min": 0.0, "max": 6.0} if _maybe(rng) else {}))[0]
        bound = [] if _maybe(rng, 0.8) else [1]
        ins = [x] + [b.weight(bound) if _maybe(rng, 0.8) else "" for _ in range(rng.randint(0, 2))]
        return b.node("Clip", ins)[0]
    if kind == "split":
        a = _axis(rng, r)
        k = rng.randint(1, 3)
        d = shape[a] if -r <= a < r else 2
        sizes = None
        if _maybe(rng, 0.4):
            sizes = [rng.randint(1, 2) for _ in range(k - 1)]
            sizes.append(max(1, d - sum(sizes)) if _maybe(rng, 0.8) else 1)
        attrs = {"axis": a}
        if b.opset >= 18 and sizes is None and _maybe(rng, 0.5):
            attrs["num_outputs"] = k
        if b.opset >= 13:
            ins = [x, b.ints(sizes)] if sizes is not None else [x]
            return b.node("Split", ins, n_out=k, **attrs)[rng.randrange(k)]
        if sizes is not None:
            attrs["split"] = sizes
        return b.node("Split", [x], n_out=k, **attrs)[rng.randrange(k)]
    if kind == "expand":
        target = [rng.choice([1, d, 2]) for d in shape]
        if _maybe(rng, 0.3):
            target = [rng.randint(1, 3)] + target
        return b.node("Expand", [x, b.ints(target)])[0] if b.opset >= 8 else x
    if kind == "pad":
        pads = [rng.choice([0, 0, 1, 2, -1]) for _ in range(2 * r)]
        mode = rng.choice(["constant", "constant", "reflect"])
        if b.opset >= 11:
            ins = [x, b.ints(pads)] + ([b.weight([])] if _maybe(rng, 0.3) else [])
            return b.node("Pad", ins, mode=mode)[0]
        return b.node("Pad", [x], pads=pads, mode=mode)[0]
    if kind == "reduce":
        op = rng.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2"])
        axes = [_axis(rng, r) for _ in range(rng.randint(0, 2))]
        attrs: dict[str, Any] = {"keepdims": rng.randint(0, 1)} if _maybe(rng) else {}
        if b.opset >= (13 if op == "ReduceSum" else 18):
            if _maybe(rng, 0.2):
                attrs["noop_with_empty_axes"] = 1
            return b.node(op, [x, b.ints(axes)] if axes else [x], **attrs)[0]
        return b.node(op, [x], **({"axes": axes} if axes else {}), **attrs)[0]
    if kind == "prelu":
        slope = [d if _maybe(rng, 0.7) else 1 for d in shape[rng.randint(0, r) :]]
        if _maybe(rng, 0.1):
            slope = [7] + slope
        return b.node("PRelu", [x, b.weight(slope)])[0]
    if kind == "squeeze":
        axes = sorted({_axis(rng, r) for _ in range(rng.randint(0, 2))})
        if b.opset >= 13:
            return b.node("Squeeze", [x, b.ints(axes)] if axes else [x])[0]
        return b.node("Squeeze", [x], **({"axes": axes} if axes else {}))[0]
    if kind == "binary":
        other = [d if _maybe(rng, 0.7) else rng.choice([1, d + 1]) for d in shape[rng.randint(0, r) :]]
        y = b.weight(other) if _maybe(rng) else b.input(other)
        ins = [x, y] if _maybe(rng) else [y, x]
        return b.node(rng.choice(["Add", "Sub", "Mul", "Div"]), ins)[0]
    if kind == "variadic":
        ins = [x] + [b.weight([1] * r if _maybe(rng) else shape) for _ in range(rng.randint(0, 2))]
        return b.node(rng.choice(["Sum", "Max", "Min", "Mean"]), ins)[0]
    if kind == "softmax":
        attrs = {"axis": _axis(rng, r)} if _maybe(rng, 0.7) else {}
        return b.node(rng.choice(["Softmax", "LogSoftmax"]), [x], **attrs)[0]
    if kind == "lrn":
        return b.node("LRN", [x], size=rng.choice([1, 3, 5, 0]), alpha=0.0001, beta=0.75)[0]
    if kind == "dropout":
        ins = [x] + ([b.weight([])] if _maybe(rng, 0.1) else [])
        return b.node("Dropout", ins, n_out=rng.choice([1, 2]), **({"ratio": 0.3} if b.opset < 12 else {}))[0]
    if kind == "matmul":
        k = shape[-1] if _maybe(rng, 0.8) else shape[-1] + 1
        wshape = ([rng.choice([1, 2])] if _maybe(rng, 0.2) else []) + [k, rng.randint(1, 5)]
        if _maybe(rng, 0.15):
            wshape = [k]
        return b.node("MatMul", [x, b.weight(wshape)])[0]
    if kind == "gemm":
        ta, tb = rng.randint(0, 1), rng.randint(0, 1)
        m_, k_ = (shape + [1, 1])[:2] if r >= 2 else (1, shape[0])
        if ta:
            m_, k_ = k_, m_
        n_ = rng.randint(1, 5)
        w = [n_, k_] if tb else [k_, n_]
        if _maybe(rng, 0.1):
            w[0] += 1
        ins = [x, b.weight(w)]
        if _maybe(rng, 0.7):
            ins.append(b.weight(rng.choice([[n_], [1, n_], [m_, n_], [1], [n_ + 1], [m_, 1]])))
        return b.node("Gemm", ins, transA=ta, transB=tb, alpha=0.5)[0]
    if kind in ("conv", "pool"):
        nd = max(1, r - 2)
        ks = [rng.randint(1, 3) for _ in range(nd)]
        attrs: dict[str, Any] = {}
        if _maybe(rng):
            attrs["strides"] = [rng.randint(1, 3) for _ in range(nd)]
        if _maybe(rng, 0.3):
            attrs["pads"] = [rng.randint(0, 3) for _ in range(2 * nd)]
        if _maybe(rng, 0.2):
            attrs["dilations"] = [rng.randint(1, 2) for _ in range(nd)]
        if _maybe(rng, 0.1):
            attrs["auto_pad"] = rng.choice(["SAME_UPPER", "VALID", "NOTSET"])
        if kind == "pool":
            attrs["kernel_shape"] = ks
            if _maybe(rng, 0.1):
                attrs["ceil_mode"] = 1
            op = rng.choice(["MaxPool", "AveragePool"])
            if op == "AveragePool":
                attrs.pop("dilations", None) if _maybe(rng, 0.8) else None
            n_out = 2 if op == "MaxPool" and _maybe(rng, 0.1) else 1
            return b.node(op, [x], n_out=n_out, **attrs)[0]
        c = shape[1] if r > 1 else 1
        group = rng.choice([1, 1, 1, 2, c])
        m_ = rng.randint(1, 3) * max(1, group)
        w = [m_, max(1, c // max(1, group)) if _maybe(rng, 0.9) else c + 1] + ks
        if _maybe(rng, 0.2):
            attrs["kernel_shape"] = ks if _maybe(rng) else [k + 1 for k in ks]
        ins = [x, b.weight(w)] + ([b.weight([m_] if _maybe(rng, 0.9) else [m_ + 1])] if _maybe(rng) else [])
        return b.node("Conv", ins, group=group, **attrs)[0]
    if kind == "gather":  # an embedding: a table indexed by ids of x's shape
        ids = b.input(shape, rng.choice([TensorProto.INT64, TensorProto.INT64, TensorProto.INT32]))
        if _maybe(rng, 0.1):
            ids = b.ints([0, 1])
        table = b.weight([rng.randint(1, 9), rng.randint(1, 4)][: rng.choice([1, 2, 2])])
        attrs = {"axis": rng.randint(-2, 1)} if _maybe(rng, 0.3) else {}
        return b.node("Gather", [table, ids], **attrs)[0]
    if kind == "cast":  # an integer input of x's shape, through a shape operator, cast and added
        y = b.input(shape, rng.choice([TensorProto.INT64, TensorProto.BOOL]))
        op = rng.choice(["Identity", "Transpose", "Flatten", "Unsqueeze"])
        if op == "Unsqueeze":
            y = b.node(
                op, [y, b.ints([0])] if b.opset >= 13 else [y], **({} if b.opset >= 13 else {"axes": [0]})
            )[0]
        else:
            y = b.node(op, [y])[0]
        to = rng.choice([TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.INT32])
        return b.node("Add", [x, b.node("Cast", [y], to=to)[0]])[0]
    if kind == "layernorm":
        k = rng.randint(1, r)
        scale = [d if _maybe(rng, 0.9) else 1 for d in shape[r - k :]]
        ins = [x, b.weight(scale)] + ([b.weight(scale)] if _maybe(rng) else [])
        attrs = {"axis": rng.randint(-r - 1, r)} if _maybe(rng, 0.5) else {}
        return b.node("LayerNormalization", ins, **attrs)[0]
    if kind == "global":
        return b.node(rng.choice(["GlobalAveragePool", "GlobalMaxPool"]), [x])[0]
    if kind == "bn":
        c = shape[1] if r > 1 else 1
        stats = [b.weight([c] if _maybe(rng, 0.9) else [c + 1]) for _ in range(4)]
        attrs = {"training_mode": 1} if b.opset >= 14 and _maybe(rng, 0.1) else {}
        return b.node("BatchNormalization", [x] + stats, n_out=rng.choice([1, 1, 1, 3]), **attrs)[0]
    if kind == "reshape":
        total = int(np.prod(shape))
        target = [total] if _maybe(rng, 0.3) else [1, total]
        if _maybe(rng):
            target = [0] * min(r, rng.randint(0, r)) + [-1]
        if _maybe(rng, 0.2):
            target = [rng.randint(-2, 4) for _ in range(rng.randint(0, 3))]
        attrs = {"allowzero": rng.randint(0, 1)} if b.opset >= 14 and _maybe(rng, 0.3) else {}
        return b.node("Reshape", [x, b.ints(target)], **attrs)[0]
    if kind == "flatten":
        return b.node("Flatten", [x], **({"axis": _axis(rng, r)} if _maybe(rng) else {}))[0]
    if kind == "concat":
        a = _axis(rng, r)
        others = []
        for _ in range(rng.randint(0, 2)):
            s = list(shape)
            if -r <= a < r:
                s[a] = rng.randint(1, 3)
            if _maybe(rng, 0.1):
                s = s[:-1] if s else [1]
            others.append(b.weight(s))
        return b.node("Concat", [x] + others, axis=a)[0]
    if kind == "unsqueeze":
        axes = sorted({_axis(rng, r + 2) for _ in range(rng.randint(1, 2))})
        if b.opset >= 13:
            return b.node("Unsqueeze", [x, b.ints(axes)])[0]
        return b.node("Unsqueeze", [x], axes=axes)[0]
    perm = list(range(r))
    rng.shuffle(perm)
    if _maybe(rng, 0.1):
        perm = perm[:-1]
    return b.node("Transpose", [x], **({"perm": perm} if perm and _maybe(rng, 0.8) else {}))[0]


def _run_shapes(m: onnx.ModelProto) -> dict[str, list[int]] | None:
    """The shapes onnx's own inference gives (used only to declare outputs), or None."""
    try:
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    except Exception:
        return None
    out: dict[str, list[int]] = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
            out[vi.name] = [d.dim_value for d in t.shape.dim]
    return out


def dims(rng: random.Random) -> dict[str, Any] | None:
    """What a caller passes as ``dims`` (as a rule nothing; an int, a symbol that may be 0)."""
    import symshape as ss

    r = rng.random()
    if r < 0.8:
        return None
    if r < 0.9:
        return {"N": rng.randint(1, 3)}
    return {"N": ss.dim("N", min=rng.choice([0, 1]))}


def model(rng: random.Random) -> onnx.ModelProto:
    """A random model (see the module docstring)."""
    opset = rng.choice([7, 8, 9, 10, 11, 12, 13, 14, 17, 17, 19, 21, 23, 28])
    b = _Builder(rng, opset)
    shape = b.shape(rng.choice([1, 2, 3, 4, 4, 5]))
    x = b.input(shape)
    y = x
    for _ in range(rng.randint(1, 3)):
        y = _step(b, y, shape)
        # the next step guesses the shape: the walk and inference decide
        if rng.random() < 0.5:
            break
    outs = [helper.make_tensor_value_info(y, _FLOAT, None)]
    g = helper.make_graph(b.nodes, "g", b.inputs, outs, b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    r = rng.random()
    if r < 0.4:
        shapes = _run_shapes(m)
        if shapes is not None and y in shapes:
            dims: list[Any] = list(shapes[y])
            if rng.random() < 0.2 and dims:
                dims[rng.randrange(len(dims))] = rng.choice([7, "M", None])
            out = helper.make_tensor_value_info(y, rng.choice([_FLOAT, _FLOAT, TensorProto.DOUBLE]), dims)
            m.graph.output[0].CopyFrom(out)
    return m
