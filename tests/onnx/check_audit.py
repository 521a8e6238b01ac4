"""Audit of guard and error texts: ``python -m tests.onnx.check_audit [--limit N] [--op OP]``.

Runs onnx's node cases (each input's first dimension a symbol; then each input's last static
dimension one larger, and each initializer's first axis one entry longer: mismatched sizes, a
wrong initializer shape) and prints every guard and error line grouped by the operator its
origin names. ``own``: that operator is the node's own semantics (``concatenate`` for a Concat);
``built``: a check the converter built out of internal operators, which should say in ONNX terms
what it checks (``NodeContext.checking``: the node's name is then followed by ``: <text>``).
The ``_expanded`` cases (function bodies of ordinary nodes) are left out: slow, and their nodes
are the ones the other cases have.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from node_oracle import case_op, collect_cases, prepare

import symshape as ss
import symshape.onnx as sso

#: the node types whose own semantics an operator is (its guards need no other text)
OWN = {
    "concatenate": {"Concat"},
    "reshape": {"Reshape", "Flatten", "SpaceToDepth", "DepthToSpace"},
    "matmul": {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "ai.onnx.preview.FlexAttention", "Einsum"},
    "take": {"Gather", "GatherElements", "GatherND", "Compress"},
    "bias_add": {"GroupNormalization", "InstanceNormalization", "Conv", "DeformConv"},
    "conv2d": {"Conv", "DeformConv"},
    "add": {"Add", "Sum", "Mean"},
    "minimum": {"Min", "And"},
    "maximum": {"Max", "Or"},
    "not_equal": {"Xor"},
    "multiply": {"Mul"},
    "subtract": {"Sub"},
    "divide": {"Div"},
    "power": {"Pow"},
    "mod": {"Mod"},
    "equal": {"Equal"},
    "greater": {"Greater"},
    "greater_equal": {"GreaterOrEqual"},
    "less": {"Less"},
    "less_equal": {"LessOrEqual"},
    "where": {"Where"},
    "expand": {"Expand"},
    "split": {"Split"},
    "squeeze": {"Squeeze"},
    "arange": {"Range"},
    "batch_norm": {"BatchNormalization"},
    "onnx.bitwise": {"BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor"},
    "onnx.declared": {"Scan"},
    "onnx.split_sum": {"SplitToSequence"},
}
_NODE = re.compile(r"node '[^']*' \(([^)]*)\)(: (?!error))?")


def _symbolic_first(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, ss.Dim]]:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    dims: dict[str, ss.Dim] = {}
    for k, vi in enumerate(m.graph.input):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            ds = vi.type.tensor_type.shape.dim
            if ds and ds[0].HasField("dim_value") and ds[0].dim_value > 0:
                ds[0].Clear()
                ds[0].dim_param = f"s{k}_0"
                dims[f"s{k}_0"] = ss.dim(f"s{k}_0")
    return m, dims


def _variants(model: onnx.ModelProto) -> list[onnx.ModelProto]:
    out = [model]
    for k, vi in enumerate(model.graph.input):
        ds = vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else []
        for a in reversed(range(len(ds))):
            if ds[a].HasField("dim_value"):
                m = onnx.ModelProto()
                m.CopyFrom(model)
                m.graph.input[k].type.tensor_type.shape.dim[a].dim_value += 1
                out.append(m)
                break
    for k, t in enumerate(model.graph.initializer):
        arr = numpy_helper.to_array(t)
        if arr.ndim and arr.shape[0] and arr.dtype != object:
            m = onnx.ModelProto()
            m.CopyFrom(model)
            m.graph.initializer[k].CopyFrom(numpy_helper.from_array(np.concatenate([arr, arr[-1:]]), t.name))
            out.append(m)
    return out


def lines(res: sso.OnnxInferenceResult) -> list[tuple[str, str]]:
    """(the operator its origin names, the line) of every guard and error."""
    out = [(g.origin.label if g.origin else "-", g.describe()) for g in res.guards]
    out += [(e.origin.label if e.origin else "-", e.render(source=False).splitlines()[0]) for e in res.errors]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limit", type=int, default=0, help="only the first N cases")
    ap.add_argument("--op", help="only the cases of this operator")
    args = ap.parse_args(argv)
    groups: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    plain: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    cases = [
        c for c in collect_cases() if "expanded" not in c.name and (not args.op or case_op(c) == args.op)
    ]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for case in cases[: args.limit or None]:
            model, dims = _symbolic_first(prepare(case).model)
            for m in _variants(model):
                for label, text in lines(sso.infer(m, dims=dims)):
                    found = _NODE.search(text)
                    node = found.group(1) if found else "?"
                    kind = "own" if label == "-" or node in OWN.get(label, ()) else "built"
                    groups[(kind, label)][node] += 1
                    if found is None or not found.group(2):
                        plain[(kind, label)][node] += 1
    for (kind, label), nodes in sorted(groups.items(), key=lambda kv: (kv[0][0], -sum(kv[1].values()))):
        left = plain[(kind, label)]
        print(
            f"{kind:5} {label:16} {sum(nodes.values()):5} lines, {sum(left.values()):5} without an ONNX text"
        )
        if kind == "built" and left:
            print("      " + ", ".join(f"{n} ({c})" for n, c in left.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
