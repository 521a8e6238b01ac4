"""The converters, one module per operator family; importing this package registers them all."""

from symshape.onnx.ops import elementwise, shape

__all__ = ["elementwise", "shape"]
