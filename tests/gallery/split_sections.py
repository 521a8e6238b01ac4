"""Splitting 10 columns into 3 equal sections."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 10), "float32"))
model = ss.Function([x], ss.ops.split(x, 3, axis=1))
