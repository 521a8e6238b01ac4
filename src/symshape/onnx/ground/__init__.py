"""The ground path: ONNX models typed in one walk over their nodes, without the program.

A model whose graph inputs are all of constant shapes, or of ``dim_param`` sizes that the rules
never need a condition on (a batch, a sequence length through a transformer), built of the common operators of
convolutional and transformer nets (:data:`~symshape.onnx.ground.walk.RULES`), gets every value's
type from one walk over its nodes (:mod:`symshape.onnx.ground.walk`), without building the program
or running inference. The walk answers only where the answer is ``ok`` without a guard; for
anything else it gives None and :func:`symshape.onnx.infer` takes the full path, which also
answers everything but types on a ground result when first asked (the report, ``valid_at``, the
program: :class:`~symshape.onnx.result.OnnxInferenceResult`).

>>> from onnx import TensorProto, helper
>>> g = helper.make_graph(
...     [helper.make_node("Relu", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
>>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
>>> ground_types(m).entries["y"]
(1, (2, 3))
"""

from __future__ import annotations

from symshape.onnx.ground import elementwise, linalg, nn, reduce, shape  # noqa: F401  (register the rules)
from symshape.onnx.ground.node import Fallback
from symshape.onnx.ground.walk import GroundTypes, ground_types

__all__ = ["Fallback", "GroundTypes", "ground_types"]
