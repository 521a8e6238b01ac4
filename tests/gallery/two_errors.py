"""Two independent conflicts in one program: each is reported once, with its own core."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
w = ss.var("w", ss.Tensor((8, 3), "float32"))
first = ss.ops.add(x, y)
second = ss.ops.matmul(x, w)
model = ss.Function([x, y, w], ss.Tuple([first, second]))
