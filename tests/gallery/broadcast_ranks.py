"""Broadcasting tensors of different ranks: each side named by its own dimension index."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((5,), "float32"))
model = ss.Function([x, y], ss.ops.add(x, y))
