"""flatten makes 3 * 4 = 12 columns, which do not broadcast with 5."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
model = ss.Function([x, y], ss.ops.add(ss.ops.flatten(x), y))
