"""Chains of ``N`` ONNX nodes whose converters ask a type the model does not declare (a probe):
``python -m benchmarks.onnx_probe_chains [OPS] [SIZES]`` (defaults ``Resize,CumSum,Mix`` and
``100,200,400,800``) prints the probes and the CPU time of ``symshape.onnx.infer`` (min of 3).

``Mix`` cycles ``Resize, Relu, Pad, Transpose, CumSum``. The input is ``(N, 3, H, W)``, no
``value_info``: every probe's answer comes from inferring the program converted so far, which is
incremental (:mod:`symshape.onnx.probe`): the time grows linearly with ``N``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import symshape.onnx as sso
from symshape.onnx.importer import Importer

__all__ = ["chain", "main"]

#: a node of each kind from value ``a`` to ``b`` (inputs, attributes)
_NODES: dict[str, tuple[str, list[str], dict[str, Any]]] = {
    "Resize": ("Resize", ["", "sc"], {}),
    "CumSum": ("CumSum", ["ax"], {}),
    "Relu": ("Relu", [], {}),
    "Pad": ("Pad", ["pads"], {}),
    "Transpose": ("Transpose", [], {"perm": [0, 1, 3, 2]}),
}
_MIX = ("Resize", "Relu", "Pad", "Transpose", "CumSum")


def chain(op: str, n: int) -> onnx.ModelProto:
    """``n`` nodes of ``op`` (or of the ``Mix`` cycle) in a chain over ``(N, 3, H, W)``."""
    nodes = []
    for i in range(n):
        kind, extra, attrs = _NODES[_MIX[i % len(_MIX)] if op == "Mix" else op]
        nodes.append(helper.make_node(kind, [f"v{i}", *extra], [f"v{i + 1}"], name=f"n{i}", **attrs))
    inits = [
        numpy_helper.from_array(np.ones(4, np.float32), "sc"),
        numpy_helper.from_array(np.array(1, np.int64), "ax"),
        numpy_helper.from_array(np.zeros(8, np.int64), "pads"),
    ]
    x = helper.make_tensor_value_info("v0", TensorProto.FLOAT, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info(f"v{n}", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "chain", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def main(argv: list[str]) -> int:
    ops = argv[0].split(",") if argv else ["Resize", "CumSum", "Mix"]
    sizes = [int(x) for x in argv[1].split(",")] if len(argv) > 1 else [100, 200, 400, 800]
    for op in ops:
        for n in sizes:
            m = chain(op, n)
            imp = Importer(m, "chain")
            imp.run()
            best = float("inf")
            for _ in range(3):
                t = time.process_time()
                res = sso.infer(m)
                best = min(best, time.process_time() - t)
            out = res.type_of(f"v{n}")
            print(f"{op:10s} N={n:4d} probes={imp._probes.count:4d} cpu={best:7.3f}s {res.status} {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
