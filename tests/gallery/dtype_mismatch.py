"""Adding float32 and int32 tensors of the same shape."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 4), "int32"))
model = ss.Function([x, y], ss.ops.add(x, y))
