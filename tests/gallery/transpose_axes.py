"""transpose with an axis outside the rank."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
model = ss.Function([x], ss.ops.transpose(x, axes=[0, 2]))
