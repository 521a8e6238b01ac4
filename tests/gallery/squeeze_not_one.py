"""squeeze(axis=1) of a dimension that is 4, not 1."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
model = ss.Function([x], ss.ops.squeeze(x, axis=[1]))
