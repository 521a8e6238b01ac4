"""Reshape to (n, 7) of a tensor with 6*n elements: only arithmetic shows 6*n != 7*n."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 2, 3), "float32"))
model = ss.Function([x], ss.ops.reshape(x, (n, 7)))
