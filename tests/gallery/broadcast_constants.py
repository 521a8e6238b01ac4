"""Broadcasting two different constant dimensions: 4 against 5."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
model = ss.Function([x, y], ss.ops.add(x, y))
