"""Two guards that cannot both hold: n + 1 broadcasts against 5 and against 4."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n + 1,), "float32"))
a = ss.var("a", ss.Tensor((5,), "float32"))
b = ss.var("b", ss.Tensor((4,), "float32"))
model = ss.Function([x, a, b], ss.Tuple([ss.ops.add(x, a), ss.ops.add(x, b)]))
